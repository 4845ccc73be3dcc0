/* conf_int.h - value parsers of the configuration language (conf_val.c). */
#ifndef SRN_FABRIC_CONF_INT_H
#define SRN_FABRIC_CONF_INT_H

#include "srn_fabric.h"

#define SRN_FABRIC_VAL_MAX_TIME 1000000000000000ull /* 10^15 ns */
#define SRN_FABRIC_VAL_MAX_RATE 1000000000000000ull /* 10^15 bit/s */

/* Each parses exactly s[0..n) and returns 0, SRN_EINVAL (syntax) or
 * SRN_ERANGE (too large). */
int srn_fabric_val_time(const char *s, size_t n, srn_ts *out);     /* 10us, 1.5ms, 2s, 0 */
int srn_fabric_val_rate(const char *s, size_t n, uint64_t *out);   /* 10g, 2.5g, 100m, 1000 */
int srn_fabric_val_bytes(const char *s, size_t n, uint32_t *out);  /* 256k, 1m, 4096 */
int srn_fabric_val_prob(const char *s, size_t n, double *out);     /* 0.01, 1%, 1 */
int srn_fabric_val_u64(const char *s, size_t n, uint64_t *out);    /* 42, 0x2a */

#endif
