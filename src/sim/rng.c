/*
 * rng.c - the simulator's own draws (initial PSNs, QPN seeds) on the fabric's
 * seeded generator; the switch has its own per-link generators seeded from
 * the same scenario seed.
 */
#include "sim_int.h"

uint64_t srn_sim_rng_below(struct srn_fabric_rng *r, uint64_t n)
{
	/* rejection sampling: unbiased and platform independent */
	uint64_t lim = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = srn_fabric_rng_next(r);
	while (x >= lim);
	return x % n;
}
