/*
 * core_int.h - internal structures of the deterministic transport core.
 *
 * Module map (one job each):
 *   dev.c    device, QPN table (time-wait, PSN-19), receive dispatch (ICRC,
 *            parse, source check W-05, ECN/CNP), output scheduler, counters,
 *            event queues
 *   timer.c  per-QP deadlines in a binary min-heap (O(log n), no allocation)
 *   mr.c     protection table (keys = index << 8 | generation)
 *   cq.c     completion queues        srq.c  shared receive queues
 *   qp.c     QP create/modify/query/destroy, flush, post_send/post_recv
 *   req.c    requester: WQE -> request packets, PSN assignment, retry
 *   comp.c   completer: ACK/NAK/READ response/atomic ACK processing
 *   resp.c   responder: ePSN check, execution, duplicates, response queue
 *
 * Nothing here allocates per packet: every buffer is sized at object creation.
 */
#ifndef SRN_CORE_INT_H
#define SRN_CORE_INT_H

#include <string.h>
#include "srn_core.h"
#include "cc/srn_cc_pipe.h"

#define SRN_PSN_WINDOW      (1u << 23)     /* PSN-04: max outstanding PSNs */
#define SRN_UD_MTU          4096u
#define SRN_GRH_LEN         40u

/* ---- intrusive doubly linked list ---- */
struct srn_list { struct srn_list *next, *prev; };
static inline void srn_list_init(struct srn_list *l) { l->next = l->prev = l; }
static inline bool srn_list_empty(const struct srn_list *l) { return l->next == l; }
static inline bool srn_list_linked(const struct srn_list *n) { return n->next != NULL && n->next != n; }
static inline void srn_list_add_tail(struct srn_list *h, struct srn_list *n)
{
	n->prev = h->prev; n->next = h; h->prev->next = n; h->prev = n;
}
static inline void srn_list_del(struct srn_list *n)
{
	n->prev->next = n->next; n->next->prev = n->prev; n->next = n->prev = n;
}
#define srn_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- timers ---- */
enum srn_timer_kind { SRN_TIMER_RTO, SRN_TIMER_RNR, SRN_TIMER_PACE, SRN_TIMER_ACK, SRN_TIMER_KINDS };
/* a QP that sent a request this recently counts as a two-way (ping-pong) QP */
#define SRN_ACK_DELAY_PEER_NS (1000ull * 1000)
struct srn_timer {
	srn_ts   deadline;
	uint32_t idx;           /* heap position, UINT32_MAX when not armed */
	uint8_t  kind;
	struct srn_qp *qp;
};
struct srn_theap { struct srn_timer **h; uint32_t n, cap; };
void srn_timer_init(struct srn_timer *t, struct srn_qp *qp, uint8_t kind);
void srn_timer_set(struct srn_dev *dev, struct srn_timer *t, srn_ts deadline);
void srn_timer_cancel(struct srn_dev *dev, struct srn_timer *t);
static inline bool srn_timer_armed(const struct srn_timer *t) { return t->idx != UINT32_MAX; }

/* ---- memory regions ---- */
struct srn_mr {
	struct srn_dev *dev;
	uint32_t key, pdn, access, idx;
	uint8_t *addr;
	uint64_t iova, length;
	uint32_t n_mw;                  /* memory windows bound to it (mw.c) */
};
/* lookup by key; NULL if stale/unknown */
struct srn_mr *srn_mr_lookup(struct srn_dev *dev, uint32_t key);
/* translate [va, va+len) of key under pdn with the access bits; NULL on any
 * failure (key, PD, bounds, access). len 0 is allowed (returns non-NULL). */
uint8_t *srn_mr_xlate(struct srn_dev *dev, uint32_t key, uint32_t pdn, uint64_t va,
		      uint64_t len, uint32_t access);

/* ---- completion queue ---- */
struct srn_cq {
	struct srn_dev *dev;
	struct srn_list node;
	struct srn_cqe *ring;
	uint32_t cap, head, n;
	uint32_t refcnt;
	bool armed, armed_sol, in_ev, overflowed;
	struct srn_cq *ev_next;
	void *user;
};
/* push a CQE (counts COMPLETIONS / COMPLETION_ERRORS / DROP_CQ_OVERFLOW) */
void srn_cq_push(struct srn_cq *cq, const struct srn_cqe *cqe, bool solicited);

/* ---- receive queues (own RQ and SRQ share the ring) ---- */
struct srn_rwqe { uint64_t wr_id; uint32_t num_sge; struct srn_sge *sge; };
struct srn_rq {
	struct srn_rwqe *ring;
	struct srn_sge *sges;
	uint32_t cap, max_sge, head, n;
};
int  srn_rq_alloc(struct srn_dev *dev, struct srn_rq *rq, uint32_t cap, uint32_t max_sge);
void srn_rq_free(struct srn_dev *dev, struct srn_rq *rq);
int  srn_rq_post(struct srn_rq *rq, const struct srn_recv_wr *wr);
/* pop into out (out->sge must have room for rq->max_sge) */
bool srn_rq_pop(struct srn_rq *rq, struct srn_rwqe *out);

struct srn_srq {
	struct srn_dev *dev;
	struct srn_list node;
	struct srn_rq rq;
	uint32_t pdn, max_wr, max_sge, limit;
	uint32_t refcnt;
	void *user;
};
bool srn_srq_take(struct srn_srq *srq, struct srn_rwqe *out);

/* ---- send WQE ---- */
enum srn_wqe_state {
	SRN_WQE_POSTED,      /* not a single packet sent yet */
	SRN_WQE_SENDING,     /* some packets sent */
	SRN_WQE_SENT,        /* every request packet sent, waiting for ACK/response */
	SRN_WQE_DONE,        /* acknowledged / answered */
};
struct srn_swqe {
	struct srn_send_wr wr;          /* sg_list and ah point into this WQE */
	struct srn_ah_attr ah;
	struct srn_sge *sge;            /* max_send_sge entries */
	uint8_t **host;                 /* resolved host pointers of sge[] */
	uint8_t *inl;                   /* inline copy (max_inline_data) */
	uint32_t length;
	uint32_t npsn;                  /* PSNs consumed (READ: response packets) */
	uint32_t first_psn, last_psn;
	uint32_t rd_bytes;              /* READ: bytes placed so far */
	uint8_t  state;                 /* enum srn_wqe_state */
	uint8_t  err_status;            /* local error found when starting it */
	bool     resolved, counted_rd;
	bool     is_inline;
};

/* ---- responder saved READ/ATOMIC results (PSN-09/10) ---- */
enum srn_res_type { SRN_RES_NONE, SRN_RES_READ, SRN_RES_ATOMIC };
struct srn_res {
	uint8_t  type;
	uint32_t first_psn, last_psn;
	uint64_t va;
	uint32_t rkey, len;
	uint64_t orig;
	uint32_t msn;
	bool     answered;      /* its last response packet has been sent once */
};

/* ---- responder output queue (generated lazily at srn_dev_send time) ---- */
enum srn_rsp_type { SRN_RSP_NONE, SRN_RSP_ACK, SRN_RSP_NAK, SRN_RSP_READ, SRN_RSP_ATOMIC };
struct srn_rsp {
	uint8_t  type;
	uint8_t  syn;           /* AETH syndrome */
	bool     first, dup;    /* READ: next packet is the first of this answer */
	uint32_t psn, msn;
	uint64_t va, orig;
	uint32_t rkey, left;    /* READ: bytes still to send */
	srn_ts   t;             /* ACK: when it was queued (cfg.ack_delay_ns) */
	uint32_t txseq;         /* ACK: the QP's req_tx_seq then */
};

/* ---- state machines ---- */
enum srn_req_state { SRN_REQ_ST_IDLE, SRN_REQ_ST_RNR_WAIT, SRN_REQ_ST_ERROR, SRN_REQ_ST_NSTATES };
extern const char *const srn_req_state_names[SRN_REQ_ST_NSTATES];
enum srn_resp_state { SRN_RESP_ST_IDLE, SRN_RESP_ST_SEND, SRN_RESP_ST_WRITE, SRN_RESP_ST_UC_DROP,
		      SRN_RESP_ST_ERROR, SRN_RESP_ST_NSTATES };
extern const char *const srn_resp_state_names[SRN_RESP_ST_NSTATES];

struct srn_qp {
	struct srn_dev *dev;
	struct srn_list node;           /* dev->qps */
	struct srn_list ready;          /* dev->ready (output scheduler) */
	uint32_t qpn, slot;
	struct srn_qp_init init;
	struct srn_qp_attr attr;
	uint32_t mtu;                   /* path MTU in bytes */

	/* send queue */
	struct srn_swqe *sq;
	uint32_t sq_cap, sq_n;
	uint64_t sq_head, sq_cur, sq_tail; /* monotonic: head oldest uncompleted, cur being sent */
	struct {
		uint8_t  state;          /* enum srn_req_state */
		uint32_t psn;            /* PSN of the next packet to send (cursor) */
		uint32_t max_psn;        /* high-water mark: next never-used PSN (PSN-15) */
		uint32_t pkt;            /* packet index within sq[sq_cur] */
		uint32_t rd_atomic;      /* outstanding READ/ATOMIC WQEs */
		uint8_t  retry_left, rnr_left;
		uint32_t retry_psn;      /* PSN of the retried request */
		bool     retrying;
		bool     drain_notified;
		struct srn_timer rto, rnr;
	} req;
	struct {
		uint32_t psn;            /* oldest unacknowledged PSN */
		uint32_t msn, credits;   /* last seen in an AETH (PSN-18) */
		uint32_t implicit_psn;   /* comp.psn at which a go-back (sequence NAK or
					  * missing READ/ATOMIC response) was started; no
					  * second one from it before progress or a timeout */
		bool     implicit_done;
	} comp;

	/* receive side */
	struct srn_rq rq;
	struct {
		uint8_t  state;          /* enum srn_resp_state */
		uint32_t epsn, msn;
		bool     nak_sent;       /* PSN-12: one sequence NAK per gap */
		uint32_t since_ack;
		/* SEND in progress */
		struct srn_rwqe wqe;
		bool     have_wqe;
		uint32_t offset;
		/* WRITE in progress */
		uint64_t wr_va;
		uint32_t wr_rkey, wr_left, wr_len;
		uint32_t last_psn;       /* last executed PSN (PSN-08 ACK value) */
		struct srn_res *res;     /* saved READ/ATOMIC ring */
		uint32_t res_cap, res_next;
		struct srn_rsp *q;       /* response queue */
		uint32_t q_cap, q_head, q_n;
	} resp;

	/* delayed ACK (cfg.ack_delay_ns) */
	srn_ts   req_tx_last;            /* the requester's last request packet */
	uint32_t req_tx_seq;             /* request packets sent (wraps) */
	struct srn_timer ack_timer;      /* SRN_TIMER_ACK: a held ACK is due */

	/* congestion notification */
	bool     cnp_pending;
	srn_ts   cnp_last;
	bool     cnp_sent_once;
	uint32_t cnp_dqpn;
	uint8_t  cnp_dgid[16];

	/* congestion control (cong.c): only on a device with cfg.cc, RC/UC */
	struct {
		bool     on;             /* this QP is a paced flow (flow ID = qpn) */
		bool     probe_pending;  /* the engine asked for an RTT probe */
		bool     probe_out;      /* probe probe_seq sent, not answered yet */
		uint32_t probe_seq;      /* sequence of the last probe sent */
		struct srn_cc_pacer pacer;
		struct srn_timer pace;   /* SRN_TIMER_PACE: the pacer allows the next packet */
	} cc;
};

/* ---- device ---- */
struct srn_dev {
	struct srn_dev_cfg cfg;
	uint64_t ctr[SRN_CTR_MAX];
	srn_ts now;                     /* latest time seen (for calls without one) */
	struct srn_qp **qpt;            /* slot -> qp, QPN = slot + 2 */
	srn_ts *qpn_free_at;            /* PSN-19: slot reusable from this time */
	bool *qpn_used;                 /* slot ever used (time-wait applies) */
	uint32_t qpn_cursor;
	struct srn_mr **mrt;
	uint8_t *mr_gen;
	uint32_t next_pdn;
	struct srn_list qps, cqs, srqs;
	struct srn_list ready;
	struct srn_theap timers;
	struct srn_cq *cqev_head, *cqev_tail;
	struct srn_async_event *aev;
	uint32_t aev_head, aev_n, aev_cap;
	struct srn_cong *cc;            /* NULL: no congestion control */
	struct srn_mwt *mwt;            /* memory windows (mw.c); made at the first */
};

static inline void srn_ctr_inc(struct srn_dev *dev, enum srn_ctr c) { dev->ctr[c]++; }
static inline void *srn_mem_calloc(struct srn_dev *dev, size_t n, size_t sz)
{
	return dev->cfg.mem.calloc(n ? n : 1, sz ? sz : 1, dev->cfg.mem.user);
}
static inline void srn_mem_free(struct srn_dev *dev, void *p)
{
	if (p)
		dev->cfg.mem.free(p, dev->cfg.mem.user);
}
static inline void srn_dev_tick(struct srn_dev *dev, srn_ts now)
{
	if (now > dev->now && now != SRN_TS_NEVER)
		dev->now = now;
}

/* ---- congestion control glue (cong.c) ---- */
/* RTT probe packet (docs/wire.md "RTT probe"): BTH with a vendor-specific
 * opcode + the probe contents of srn_cc_pipe.h + ICRC */
#define SRN_OP_CC_PROBE_REQ   0xC0
#define SRN_OP_CC_PROBE_RESP  0xC1
#define SRN_CC_PROBE_PKT_LEN  (SRN_BTH_LEN + SRN_CC_PROBE_LEN + SRN_ICRC_LEN)
#define SRN_CC_ANSWERS        64u      /* probe answers waiting for the wire */
struct srn_cc_answer {
	uint32_t qpn;                   /* local QP the request was addressed to */
	uint32_t dqpn;                  /* requester's QPN (the probe's flow ID) */
	uint8_t  dgid[16];
	uint8_t  req[SRN_CC_PROBE_LEN];
	srn_ts   t2;                    /* arrival */
};
struct srn_cong {
	struct srn_cc_cfg cfg;
	struct srn_cc_engine *eng;
	uint32_t overhead, burst;
	struct srn_cc_answer ans[SRN_CC_ANSWERS];
	uint32_t ans_head, ans_n;
};
static inline bool srn_is_cc_probe(uint8_t opcode)
{
	return opcode == SRN_OP_CC_PROBE_REQ || opcode == SRN_OP_CC_PROBE_RESP;
}
int  srn_cong_new(struct srn_dev *dev);                 /* at srn_dev_new if cfg.cc */
void srn_cong_del(struct srn_dev *dev);
void srn_cong_qp_init(struct srn_qp *qp, srn_ts now);   /* at QP creation */
void srn_cong_qp_del(struct srn_qp *qp);                /* at QP destruction */
/* TX pipe: may qp send a request packet now? If not, arms its pace timer. */
bool srn_cong_may_send(struct srn_qp *qp, srn_ts now);
bool srn_cong_held(const struct srn_qp *qp);            /* pace timer in the future */
void srn_cong_on_tx(struct srn_qp *qp, const uint8_t *pkt, size_t len, srn_ts now);
/* RX pipe events */
void srn_cong_on_cnp(struct srn_qp *qp, srn_ts now);
void srn_cong_on_aeth(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now);
/* probe packets (after the ICRC check): SRN_OK or SRN_EDROP (counted) */
int  srn_cong_recv_probe(struct srn_dev *dev, const uint8_t *pkt, size_t len,
			 const struct srn_pkt_meta *meta, srn_ts now);
ssize_t srn_cong_emit_answer(struct srn_dev *dev, uint8_t *buf, size_t cap,
			     struct srn_pkt_meta *meta, srn_ts now);
ssize_t srn_cong_emit_probe(struct srn_qp *qp, uint8_t *buf, size_t cap,
			    struct srn_pkt_meta *meta, srn_ts now);
srn_ts srn_cong_expiry(const struct srn_dev *dev);
void   srn_cong_handle_expiry(struct srn_dev *dev, srn_ts now);

/* dev.c */
void srn_dev_async(struct srn_dev *dev, enum srn_async_type type, struct srn_qp *qp,
		   struct srn_srq *srq, struct srn_cq *cq);
void srn_cq_notify(struct srn_cq *cq);
void srn_qp_sched(struct srn_qp *qp);          /* put on the ready list if it has output */
void srn_qp_unsched(struct srn_qp *qp);
void srn_dev_forget_obj(struct srn_dev *dev, const void *obj); /* purge events naming obj */

/* qp.c */
struct srn_qp *srn_qp_lookup(struct srn_dev *dev, uint32_t qpn);
void srn_qp_to_err(struct srn_qp *qp);          /* move to ERR and flush */
bool srn_qp_has_output(const struct srn_qp *qp);
void srn_qp_send_cqe(struct srn_qp *qp, struct srn_swqe *w, uint8_t status, bool force);
uint32_t srn_qp_npsn(const struct srn_qp *qp, uint32_t len);
/* fill transmit metadata for a destination */
void srn_qp_fill_meta(const struct srn_qp *qp, const struct srn_ah_attr *ah, uint32_t dqpn,
		      struct srn_pkt_meta *meta);
/* finish a packet: headers already in buf[0..hdr), payload appended by
 * caller at buf+hdr of paylen bytes; writes pad + ICRC; returns total len */
size_t srn_pkt_finalize(uint8_t *buf, size_t hdr, uint32_t paylen, const struct srn_pkt_meta *meta);
static inline struct srn_swqe *srn_sq_at(const struct srn_qp *qp, uint64_t i) { return &qp->sq[i % qp->sq_cap]; }
void srn_qp_check_drained(struct srn_qp *qp);

/* req.c */
bool   srn_req_can_send(const struct srn_qp *qp);
ssize_t srn_req_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now);
void   srn_req_rewind(struct srn_qp *qp, uint32_t psn);
void   srn_req_timer_update(struct srn_qp *qp, srn_ts now, bool restart);
void   srn_req_on_timer(struct srn_qp *qp, uint8_t kind, srn_ts now);
void   srn_req_reset(struct srn_qp *qp);
bool   srn_wqe_is_rd_atomic(const struct srn_swqe *w);
uint64_t srn_rnr_timer_ns(uint8_t code);
uint64_t srn_rto_ns(uint8_t timeout);

/* comp.c */
void srn_comp_recv(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now);
void srn_comp_fail(struct srn_qp *qp, uint8_t status);

/* mw.c: memory windows (the hooks of req/comp/resp/qp/dev) */
static inline bool srn_wqe_is_local(const struct srn_swqe *w)
{
	return w->wr.opcode == SRN_WR_BIND_MW || w->wr.opcode == SRN_WR_LOCAL_INV;
}
/* the requester reached a BIND_MW / LOCAL_INV WQE at its cursor: executes it
 * once (a retry passes over it), completes it at once when nothing before
 * it is outstanding; false if the WQE failed (MW_BIND_ERR pending) */
bool srn_mw_req_exec(struct srn_qp *qp, struct srn_swqe *w);
/* a FENCEd local WQE waits until everything before it completed */
bool srn_mw_req_fenced(const struct srn_qp *qp, const struct srn_swqe *w);
/* complete the executed local WQEs that reached the head of the SQ */
void srn_mw_comp_head(struct srn_qp *qp);
/* responder: host address of [va, va+len) under rkey (an MR's or a window's)
 * for a request arriving on qp with the access bits; NULL on any violation */
uint8_t *srn_rkey_xlate(struct srn_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
			uint32_t access);
/* SEND_WITH_INV: may rkey be invalidated by a request arriving on qp? / do it */
bool srn_mw_remote_inv_ok(struct srn_qp *qp, uint32_t rkey);
void srn_mw_remote_inv(struct srn_qp *qp, uint32_t rkey);
void srn_mw_qp_gone(struct srn_qp *qp);         /* srn_qp_del: its type 2 windows */
void srn_mw_dev_del(struct srn_dev *dev);       /* srn_dev_del, before the MRs go */

/* resp.c */
void srn_resp_recv(struct srn_qp *qp, const struct srn_pkt *p, const struct srn_pkt_meta *meta,
		   size_t pktlen, srn_ts now);
ssize_t srn_resp_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now);
void srn_resp_reset(struct srn_qp *qp);
void srn_resp_purge_for_err(struct srn_qp *qp);

#endif /* SRN_CORE_INT_H */
