/*
 * rng.c - the fabric's PRNG: xoshiro256** (Blackman & Vigna), seeded by
 * splitmix64, and fixed-point Bernoulli draws. One generator per link, so a
 * link's random stream depends only on its own seed and its own packets.
 */
#include "fabric_int.h"

uint64_t srn_fabric_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void srn_fabric_rng_seed(struct srn_fabric_rng *r, uint64_t seed)
{
	uint64_t st = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = srn_fabric_splitmix64(&st);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t srn_fabric_rng_next(struct srn_fabric_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t srn_fabric_rng_below(struct srn_fabric_rng *r, uint64_t n)
{
	/* Lemire's multiply-shift; the bias (< n / 2^64) is irrelevant here */
	return (uint64_t)(((unsigned __int128)srn_fabric_rng_next(r) * n) >> 64);
}

uint64_t srn_fabric_prob_fixed(double p)
{
	if (!(p > 0.0))                 /* also NaN */
		return 0;
	if (p >= 1.0)
		return SRN_FABRIC_P_ONE;
	return (uint64_t)(p * (double)SRN_FABRIC_P_ONE);
}

bool srn_fabric_rng_chance(struct srn_fabric_rng *r, uint64_t p)
{
	if (p == 0)
		return false;
	if (p >= SRN_FABRIC_P_ONE)
		return true;
	return (srn_fabric_rng_next(r) >> 1) < p;
}
