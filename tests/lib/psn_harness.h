/*
 * psn_harness.h - packet-level harness for ONE side of a connection.
 *
 * One srn_dev with one QP (RC, UC or UD) talking to a fake peer that the
 * test plays by hand: the test injects packets built with the test-only
 * encoder (tests/lib/srn_tenc, independent of src/wire) with a correct ICRC
 * and the peer's source address, advances a fake clock, and collects every
 * packet the core emits, decoded with srn_tenc_parse (the ICRC of every
 * emitted packet is checked too).
 *
 *   struct ph *h = ph_new(&(struct ph_opts){ .type = SRN_QPT_RC, .rq_psn = 0xFFFFF0 });
 *   ph_send_only(h, ph_rq(h, 0), "abc", 3, true);     // request at ePSN + 0
 *   PH_EXPECT_ACK(h, ph_rq(h, 0), SRN_AETH_ACK, 1);    // ACK, PSN, MSN 1
 *   PH_EXPECT_NONE(h);
 *   ph_free(h);
 *
 * PSNs relative to the connection (lwIP's seqno_offset style): ph_rq(h, off)
 * is the peer's start PSN + off (what the responder of the QP expects),
 * ph_sq(h, off) the QP's own start PSN + off (what its requester sends).
 * ph_epsn / ph_sq_next read the core's current values.
 *
 * Assertions report through srn_test.h (they count as failed CHECKs and
 * print the caller's file:line).
 */
#ifndef SRN_PSN_HARNESS_H
#define SRN_PSN_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "core/srn_core.h"
#include "lib/srn_tenc.h"

#define PH_OUTCAP 4096u       /* emitted packets kept until the test reads them */
#define PH_PEER_QPN 0x0abcdeu /* the fake peer's QPN */

struct ph_opts {
	enum srn_qp_type type;        /* default RC (0 -> RC) */
	uint32_t sq_psn;              /* the QP's start PSN (PSN-02) */
	uint32_t rq_psn;              /* the peer's start PSN = initial ePSN (PSN-06) */
	uint8_t  path_mtu;            /* 1..5; 0 -> 1 (256 bytes) */
	uint8_t  timeout;             /* 0 -> 14; use ph_opts.no_timeout for "infinite" */
	bool     no_timeout;
	uint8_t  retry_cnt, rnr_retry, min_rnr_timer;
	bool     retry_set;           /* false: retry_cnt = rnr_retry = 7 */
	uint8_t  max_rd_atomic;       /* initiator depth; 0 -> 4 */
	uint8_t  max_dest_rd_atomic;  /* responder depth; 0 -> 4 */
	uint32_t access;              /* 0 -> all remote rights */
	uint32_t max_send_wr, max_recv_wr;  /* 0 -> 256 */
	uint32_t cq_size;             /* 0 -> 4096 */
	uint32_t max_inflight_pkts;   /* device config; 0 -> default */
	uint32_t dev_max_rd_atomic;   /* device config; 0 -> 16 */
	uint32_t ack_coalesce;        /* device config; 0 -> default */
	uint32_t ack_delay_ns;        /* device config; 0 -> off */
	bool     sq_sig_all;
};

struct ph_pkt {
	uint8_t data[SRN_MAX_PKT];
	size_t len;
	struct srn_pkt_meta meta;
	struct srn_tenc_pkt p;        /* decoded; p.payload points into data */
};

struct ph {
	struct srn_dev *dev;
	struct srn_dev_cfg cfg;
	srn_ts now;
	uint32_t pd;
	struct srn_cq *scq, *rcq;
	struct srn_qp *qp;
	uint32_t qpn;
	struct ph_opts o;
	uint8_t my_ip[4], peer_ip[4];
	uint16_t peer_sport;
	struct ph_pkt *out;           /* ring of emitted packets */
	uint32_t out_head, out_n;
	uint64_t emitted;             /* packets ever collected */
	struct ph_pkt last;           /* the packet the last ph_next returned */
};

/* create the device, CQs and a QP moved RESET->INIT->RTR->RTS (UD: to RTS) */
struct ph *ph_new(const struct ph_opts *o);
void ph_free(struct ph *h);

/* PSN of the peer's request stream / of the QP's own request stream */
uint32_t ph_rq(const struct ph *h, int32_t off);
uint32_t ph_sq(const struct ph *h, int32_t off);
/* current core values (white box, for relative building only) */
uint32_t ph_epsn(const struct ph *h);
uint32_t ph_sq_next(const struct ph *h);
uint32_t ph_msn(const struct ph *h);          /* responder MSN */
uint32_t ph_comp_psn(const struct ph *h);     /* oldest unacknowledged PSN */
uint32_t ph_max_psn(const struct ph *h);      /* high-water mark (next never-used PSN) */
uint32_t ph_credits(const struct ph *h);      /* credits taken from the last AETH */
uint32_t ph_comp_msn(const struct ph *h);     /* MSN taken from the last AETH */

/* inject a packet from the peer (dqpn filled in, ICRC computed);
 * returns srn_dev_recv's result. ecn: IP ECN bits (2 = ECT(0)). */
int ph_inject(struct ph *h, const struct srn_tenc_pkt *p);
int ph_inject_ecn(struct ph *h, const struct srn_tenc_pkt *p, uint8_t ecn);

/* request builders (the peer as requester) */
int ph_send(struct ph *h, uint8_t opcode, uint32_t psn, const void *data, uint32_t len, bool ackreq);
int ph_write(struct ph *h, uint8_t opcode, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t dmalen,
	     const void *data, uint32_t len, bool ackreq);
int ph_read(struct ph *h, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len);
int ph_atomic(struct ph *h, uint8_t opcode, uint32_t psn, uint64_t va, uint32_t rkey,
	      uint64_t swap_add, uint64_t cmp);
/* response builders (the peer as responder) */
int ph_ack(struct ph *h, uint32_t psn, uint8_t syndrome, uint32_t msn);
int ph_read_resp(struct ph *h, uint8_t opcode, uint32_t psn, uint32_t msn, const void *data, uint32_t len);
int ph_atomic_ack(struct ph *h, uint32_t psn, uint32_t msn, uint64_t orig);

/* clock */
void ph_advance(struct ph *h, srn_ts ns);     /* now += ns, fire due timers */
void ph_set_time(struct ph *h, srn_ts t);      /* now = t, fire due timers */
srn_ts ph_expiry(const struct ph *h);          /* srn_dev_expiry */

/* output: collect everything the device wants to send now */
uint32_t ph_collect(struct ph *h);
uint32_t ph_collect_n(struct ph *h, uint32_t max);   /* at most max packets */
uint32_t ph_pending(struct ph *h);              /* collect, then count unread */
/* next emitted packet (NULL if none); the pointer stays valid until the next call */
const struct ph_pkt *ph_next(struct ph *h);
void ph_discard(struct ph *h);                  /* collect and drop all unread */

/* memory */
struct srn_mr *ph_reg(struct ph *h, void *buf, size_t len, uint32_t access, uint32_t *key);

/* send WRs (the QP as requester) */
int ph_post(struct ph *h, uint8_t opcode, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey,
	    uint64_t raddr, uint32_t rkey, uint32_t flags);
int ph_post_atomic(struct ph *h, uint8_t opcode, uint64_t wr_id, uint64_t *res, uint32_t lkey,
		   uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap, uint32_t flags);
int ph_post_recv(struct ph *h, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey);

/* completions */
int ph_poll(struct srn_cq *cq, struct srn_cqe *out, int n);
uint64_t ph_ctr(const struct ph *h, enum srn_ctr c);

/* ---- assertions (file:line of the caller) ---- */
const struct ph_pkt *ph_expect_(struct ph *h, int opcode, int64_t psn, const char *f, int l);
const struct ph_pkt *ph_expect_aeth_(struct ph *h, int opcode, int64_t psn, int syn, int64_t msn,
				     const char *f, int l);
void ph_expect_none_(struct ph *h, const char *f, int l);
void ph_expect_cqe_(struct srn_cq *cq, uint64_t wr_id, int status, int opcode, const char *f, int l);
void ph_expect_no_cqe_(struct srn_cq *cq, const char *f, int l);

/* next packet has this opcode and PSN (psn < 0: any); returns it or NULL */
#define PH_EXPECT(h, op, psn) ph_expect_((h), (op), (psn), __FILE__, __LINE__)
/* next packet is opcode with an AETH: syndrome (< 0: any), MSN (< 0: any) */
#define PH_EXPECT_AETH(h, op, psn, syn, msn) ph_expect_aeth_((h), (op), (psn), (syn), (msn), __FILE__, __LINE__)
#define PH_EXPECT_ACK(h, psn, msn) \
	ph_expect_aeth_((h), SRN_OP_RC_ACKNOWLEDGE, (psn), SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID), (msn), __FILE__, __LINE__)
#define PH_EXPECT_NAK(h, psn, code, msn) \
	ph_expect_aeth_((h), SRN_OP_RC_ACKNOWLEDGE, (psn), SRN_AETH_SYN(SRN_AETH_NAK, (code)), (msn), __FILE__, __LINE__)
#define PH_EXPECT_RNR(h, psn, timer, msn) \
	ph_expect_aeth_((h), SRN_OP_RC_ACKNOWLEDGE, (psn), SRN_AETH_SYN(SRN_AETH_RNR_NAK, (timer)), (msn), __FILE__, __LINE__)
#define PH_EXPECT_NONE(h) ph_expect_none_((h), __FILE__, __LINE__)
#define PH_EXPECT_CQE(cq, wr_id, status, opcode) ph_expect_cqe_((cq), (wr_id), (status), (opcode), __FILE__, __LINE__)
#define PH_EXPECT_NO_CQE(cq) ph_expect_no_cqe_((cq), __FILE__, __LINE__)

#endif /* SRN_PSN_HARNESS_H */
