/*
 * cc_ctl.h - congestion control of a running device (CC-14): the device's
 * CC setting from the environment and the control socket through which
 * `softrnic cc load` swaps a signed algorithm into it. See cc_ctl.c.
 */
#ifndef SRN_RT_CC_CTL_H
#define SRN_RT_CC_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "core/srn_core.h"

struct srn_rt_dev;
struct srn_rt_devcfg;

#define SRN_CC_KEY_LEN   32u          /* HMAC-SHA256 key bytes (hex in the key file) */
#define SRN_CC_MAC_LEN   32u
#define SRN_CC_CTL_PREFIX "softrnic-cc."  /* <stats dir>/softrnic-cc.NAME.PID.sock */
#define SRN_CC_SYMBOL    "softrnic_cc_algo" /* the struct softrnic_cc_algo a .so exports */

/* Before srn_dev_new: SOFTRNIC_CC=none|dcqcn|dcqcn-paper|dcqcn-sw|timely|
 * timely-seg (default none), SOFTRNIC_CC_RATE=line rate (e.g. 100g, default
 * 100g), SOFTRNIC_CC_BURST=depth of each QP's pacer bucket (e.g. 16k; with an
 * algorithm only), SOFTRNIC_CC_KEY=key file. Sets dc->cc for an algorithm.
 * 0, or a negative errno for a bad value (the message is printed). */
int  srn_rt_cc_config(struct srn_rt_dev *rd, const struct srn_rt_devcfg *cfg,
		      struct srn_dev_cfg *dc);
/* After the device runs: open its control socket and start its thread. */
void srn_rt_cc_start(struct srn_rt_dev *rd);
/* Before the core is deleted: stop the thread, remove the socket. Loaded
 * algorithms stay mapped until the process exits. */
void srn_rt_cc_stop(struct srn_rt_dev *rd);

/* Shared with `softrnic cc` (tools/softrnic/cmd_cc.c). */
int srn_cc_key_read(const char *path, uint8_t key[SRN_CC_KEY_LEN], char *err, size_t errlen);
/* HMAC-SHA256 (OpenSSL libcrypto) of len bytes; 0 or -1 */
int srn_cc_mac(const uint8_t key[SRN_CC_KEY_LEN], const uint8_t *data, size_t len,
	       uint8_t mac[SRN_CC_MAC_LEN]);
/* hex <-> bytes; 0 or -1 */
int  srn_cc_unhex(const char *s, size_t slen, uint8_t *out, size_t n);
void srn_cc_hex(const uint8_t *in, size_t n, char *out /* 2n+1 */);
/* whole file into a malloc'd buffer; NULL + errno */
uint8_t *srn_cc_read_file(const char *path, size_t *len, size_t max);

#endif
