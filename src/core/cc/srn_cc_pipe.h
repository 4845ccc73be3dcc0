/*
 * srn_cc_pipe.h - congestion-control helpers of the TX and RX pipes, beside
 * the engine: the per-flow pacer (CC-10), RTT probe contents and delay
 * arithmetic (CC-12), and the notification point's CNP limiter (CC-13).
 * All deterministic: time is passed in (ns).
 */
#ifndef SRN_CC_PIPE_H
#define SRN_CC_PIPE_H

#include "srn_cc.h"

/* ---- pacer: token bucket in bytes, refilled at the flow's rate ---------- */
/* Tokens are kept in units of 1/8,000,000 byte so that rate_kbps * dt_ns
 * adds exactly (1 kbit/s for 1 ns = 1/8e6 byte): no drift over time. */
#define SRN_CC_PACER_UNIT 8000000ll
struct srn_cc_pacer {
	uint32_t rate_kbps;
	uint32_t burst_bytes;       /* bucket depth */
	int64_t  tokens;            /* may go negative after an oversized send */
	srn_ts   last;
};
void   srn_cc_pacer_init(struct srn_cc_pacer *p, uint32_t rate_kbps, uint32_t burst_bytes, srn_ts now);
void   srn_cc_pacer_set_rate(struct srn_cc_pacer *p, uint32_t rate_kbps, srn_ts now);
/* earliest time >= now at which `bytes` may be sent (SRN_TS_NEVER at rate 0);
 * a send larger than the bucket waits for a full bucket */
srn_ts srn_cc_pacer_next_send_time(const struct srn_cc_pacer *p, uint32_t bytes, srn_ts now);
/* account a send of `bytes` at `now` */
void   srn_cc_pacer_on_send(struct srn_cc_pacer *p, uint32_t bytes, srn_ts now);

/* ---- RTT probe (source 004 fig. 4) -------------------------------------- */
/* Contents (big-endian), SRN_CC_PROBE_LEN bytes:
 *   0 u8  version (1)    1 u8 kind (0 request, 1 response)   2 u16 reserved (0)
 *   4 u32 flow ID        8 u32 sequence
 *  12 u64 T1 (sender transmit)  20 u64 T2 (responder receive)  28 u64 T3 (responder transmit)
 * How the contents travel on the wire (which RoCEv2 packet carries them) is
 * the transport's and docs/wire.md's business. */
#define SRN_CC_PROBE_LEN     36u
#define SRN_CC_PROBE_VERSION 1u
enum srn_cc_probe_kind { SRN_CC_PROBE_REQ = 0, SRN_CC_PROBE_RESP = 1 };
struct srn_cc_probe {
	uint8_t  kind;
	uint32_t flow_id, seq;
	srn_ts   t1, t2, t3;
};
/* returns the length written, 0 if cap is too small */
size_t srn_cc_probe_build_req(uint8_t *buf, size_t cap, uint32_t flow_id, uint32_t seq, srn_ts t1);
/* 0, or SRN_EINVAL if short / wrong version / unknown kind */
int    srn_cc_probe_parse(const uint8_t *buf, size_t len, struct srn_cc_probe *out);
/* responding NIC: answer at once, stamping T2 (arrival) and T3 (departure).
 * Returns the response length, 0 if req is not a valid request or cap is too small. */
size_t srn_cc_probe_answer(const uint8_t *req, size_t len, srn_ts t2, srn_ts t3,
			   uint8_t *out, size_t cap);

struct srn_cc_rtt_sample {
	int64_t  forward_ns;        /* T2 - T1 (includes the clock offset between NICs) */
	uint64_t responder_ns;      /* T3 - T2 (responder clock only) */
	int64_t  return_ns;         /* T4 - T3 (includes minus the clock offset) */
	uint64_t rtt_ns;            /* (T4 - T1) - (T3 - T2): offset-free network RTT */
};
/* sender: delays from a response received at t4. SRN_EINVAL if T3 < T2 or
 * the network RTT would be negative. */
int  srn_cc_probe_delays(const struct srn_cc_probe *resp, srn_ts t4, struct srn_cc_rtt_sample *out);
/* the RTT engine event for a response received at t4 */
void srn_cc_probe_event(const struct srn_cc_probe *resp, srn_ts t4, struct srn_cc_ev *ev);

/* ---- notification point: CNP on ECN-CE, at most one per flow per interval */
struct srn_cc_np {
	srn_ts   last_cnp;
	bool     sent_any;
	uint64_t ce_seen, cnps_sent, cnps_suppressed;
};
void srn_cc_np_init(struct srn_cc_np *np);
/* a CE-marked packet of this flow arrived at `now`: true = send a CNP now */
bool srn_cc_np_on_ce(struct srn_cc_np *np, srn_ts now, srn_ts interval);

#endif /* SRN_CC_PIPE_H */
