/*
 * cc_util.c - deterministic PRNG, the WRED curve of source 004 fig. 7, the
 * flow-ID hash and the engine's name tables.
 */
#include "cc_int.h"

const char *const srn_cc_ev_type_names[SOFTRNIC_CC_EV_NTYPES] = {
	"tx", "rtt_sent", "cnp", "nack", "ack", "rtt", "fw",
};

const char *const srn_cc_ctr_names[SRN_CC_CTR_MAX] = {
#define SRN_CC_CTR_NAME(n) [SRN_CC_CTR_##n] = #n,
	SRN_CC_COUNTERS(SRN_CC_CTR_NAME)
#undef SRN_CC_CTR_NAME
};

bool srn_cc_ev_is_tx(unsigned type)
{
	return type == SOFTRNIC_CC_EV_TX || type == SOFTRNIC_CC_EV_RTT_SENT;
}

/* splitmix64 turns any seed (even 0) into a good non-zero state */
void srn_cc_prng_seed(struct srn_cc_prng *p, uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	p->s = z ? z : 0x2545f4914f6cdd1dull;
}

uint64_t srn_cc_prng_next(struct srn_cc_prng *p)
{
	uint64_t x = p->s;               /* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	p->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint32_t srn_cc_prng_below(struct srn_cc_prng *p, uint32_t n)
{
	/* multiply-high of the top 32 bits: bias < n / 2^32 */
	return (uint32_t)(((srn_cc_prng_next(p) >> 32) * (uint64_t)n) >> 32);
}

uint32_t srn_cc_wred_prob_ppm(const struct srn_cc_wred *w, uint32_t occ)
{
	if (occ < w->th1)
		return 0;
	if (occ >= w->th2)
		return 1000000;
	return (uint32_t)((uint64_t)(occ - w->th1) * 1000000u / (w->th2 - w->th1));
}

bool srn_cc_wred_drop(const struct srn_cc_wred *w, uint32_t occ, struct srn_cc_prng *p)
{
	if (occ < w->th1)
		return false;
	if (occ >= w->th2)
		return true;
	/* P = (occ - th1) / (th2 - th1), exactly, with one draw */
	return srn_cc_prng_below(p, w->th2 - w->th1) < occ - w->th1;
}

uint32_t srn_cc_flow_hash(uint32_t x)
{
	/* murmur3 fmix32: cheap, bijective, avalanching */
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x;
}
