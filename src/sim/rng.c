/*
 * rng.c - the simulator's seeded PRNG: xoshiro256** seeded by splitmix64.
 * Used for what the simulator itself draws (initial PSNs, QPN seeds);
 * the switch has its own per-link generators seeded from the same seed.
 */
#include "sim_int.h"

static uint64_t splitmix64(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void srn_sim_rng_seed(struct srn_sim_rng *r, uint64_t seed)
{
	uint64_t st = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&st);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t srn_sim_rng_next(struct srn_sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t srn_sim_rng_below(struct srn_sim_rng *r, uint64_t n)
{
	/* rejection sampling: unbiased and platform independent */
	uint64_t lim = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = srn_sim_rng_next(r);
	while (x >= lim);
	return x % n;
}
