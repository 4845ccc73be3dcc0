/*
 * srn_fabric_rng.h - the seeded PRNG of the fabric emulator, also used by the
 * simulator: xoshiro256** (Blackman & Vigna) seeded by splitmix64. Pure
 * functions of the state: the same seed gives the same stream everywhere.
 */
#ifndef SRN_FABRIC_RNG_H
#define SRN_FABRIC_RNG_H

#include <stdint.h>

struct srn_fabric_rng { uint64_t s[4]; };
void     srn_fabric_rng_seed(struct srn_fabric_rng *r, uint64_t seed);
uint64_t srn_fabric_rng_next(struct srn_fabric_rng *r);
/* uniform in [0, n) (n > 0), Lemire's multiply-shift */
uint64_t srn_fabric_rng_below(struct srn_fabric_rng *r, uint64_t n);
uint64_t srn_fabric_splitmix64(uint64_t *state);

#endif /* SRN_FABRIC_RNG_H */
