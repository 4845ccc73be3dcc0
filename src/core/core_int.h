/*
 * core_int.h - internal structures of the deterministic transport core.
 *
 * Modules, bottom-up (each file calls only files listed above it, so the
 * core has no call loop; docs/architecture.md draws it):
 *
 *   ctr.c      counter and state names, srn_strerror
 *   timer.c    deadlines in one min-heap per device; each timer has an owner
 *              and a callback
 *   event.c    async events and CQ notifications waiting for the driver
 *   mr.c       protection table (keys, PD, bounds, access)
 *   qptab.c    QPN table: allocation with time-wait (PSN-19), lookup
 *   sched.c    the output scheduler's ready list
 *   path.c     the addressing of a packet to a peer (flow entropy, ECN, TTL)
 *   cq.c       completion queues          srq.c  receive rings and SRQs
 *   place.c    data between packets and registered memory (gather, scatter)
 *   rspq.c     a responder's queue of responses to send
 *   cqe.c      completions of send and receive WQEs
 *   qpstate.c  a QP's error state: flush, fail, SQ drained
 *   mw.c       memory windows: bind, invalidate, rkey translation (MR or window)
 *   cnp.c      notification point: ECN-CE seen -> CNP (CC-13)
 *   cong.c     congestion control in the transport: engine, pacer, probes
 *   exec.c     execution of requests at a responder (SEND/WRITE placement,
 *              READ/ATOMIC with their saved results) - shared by transports
 *   respout.c  response packets from the response queue
 *   resp.c     the RC and UC responder state machines
 *   reqpkt.c   a request packet from (WQE, packet index)
 *   req.c      the requester: which packet next, retry, timers
 *   comp.c     the completer: ACK/NAK/READ response/atomic ACK processing
 *   xmit.c     a QP's output in order: CNP, probe, responses, requests
 *   rc.c uc.c ud.c   the transports: one srn_transport_ops each
 *   qp.c       QP create/modify/query/destroy and the doorbells
 *   recv.c     srn_dev_recv: ICRC, parse, demux, generic checks
 *   send.c     srn_dev_send: probe answers, then the ready QPs
 *   dev.c      device create/destroy, timers' expiry
 *
 * A QP is split into its common part (rings, attributes), a requester +
 * completer context (the send side of one connection: struct srn_reqctx)
 * and a responder context (struct srn_respctx), so that a transport can
 * hold a context per peer (a DC target holds one responder context per
 * initiator). A transport is a const struct srn_transport_ops chosen at
 * QP creation; nothing outside rc.c/uc.c/ud.c and QP creation asks which
 * transport a QP uses.
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
/* a QP that sent a request this recently counts as a two-way (ping-pong) QP */
#define SRN_ACK_DELAY_PEER_NS (1000ull * 1000)

struct srn_reqctx;
struct srn_respctx;

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

/* ---- timers (timer.c) ---- */
struct srn_timer;
/* called when the timer fires (it is disarmed first); now = the expiry call's time */
typedef void (*srn_timer_fn)(struct srn_timer *t, srn_ts now);
struct srn_timer {
	srn_ts   deadline;
	uint32_t idx;           /* heap position, UINT32_MAX when not armed */
	srn_timer_fn fn;
	void    *owner;
};
struct srn_theap { struct srn_timer **h; uint32_t n, cap; };
#define SRN_QP_TIMERS 4u        /* timers a QP owns: RTO, RNR, pace, delayed ACK */
void   srn_timer_init(struct srn_timer *t, srn_timer_fn fn, void *owner);
/* arm or move; SRN_TS_NEVER cancels. false if the heap is full (never for
 * the timers the heap was sized for) */
bool   srn_timer_set(struct srn_theap *hp, struct srn_timer *t, srn_ts deadline);
void   srn_timer_cancel(struct srn_theap *hp, struct srn_timer *t);
srn_ts srn_timer_next(const struct srn_theap *hp);      /* SRN_TS_NEVER if none */
void   srn_timer_run(struct srn_theap *hp, srn_ts now);  /* fire every due timer */
static inline bool srn_timer_armed(const struct srn_timer *t) { return t->idx != UINT32_MAX; }

/* ---- events for the driver (event.c) ---- */
void srn_dev_async(struct srn_dev *dev, enum srn_async_type type, struct srn_qp *qp,
		   struct srn_srq *srq, struct srn_cq *cq);
void srn_cq_notify(struct srn_cq *cq);
void srn_dev_forget_obj(struct srn_dev *dev, const void *obj); /* purge events naming obj */

/* ---- memory regions (mr.c) ---- */
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

/* ---- completion queue (cq.c) ---- */
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

/* ---- receive queues (srq.c; own RQ and SRQ share the ring) ---- */
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

/* ---- send queue ---- */
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
/* the ring: head = oldest uncompleted, tail = next free (monotonic indexes) */
struct srn_sq {
	struct srn_swqe *ring;
	uint32_t cap, n;
	uint64_t head, tail;
};
static inline struct srn_swqe *srn_sq_at(const struct srn_sq *sq, uint64_t i) { return &sq->ring[i % sq->cap]; }
static inline bool srn_wqe_is_atomic(const struct srn_swqe *w)
{
	return w->wr.opcode == SRN_WR_ATOMIC_CMP_AND_SWP || w->wr.opcode == SRN_WR_ATOMIC_FETCH_AND_ADD;
}
static inline bool srn_wqe_is_rd_atomic(const struct srn_swqe *w)
{
	return w->wr.opcode == SRN_WR_RDMA_READ || srn_wqe_is_atomic(w);
}
/* a local operation: runs at the requester in SQ order, no packet (mw.c) */
static inline bool srn_wqe_is_local(const struct srn_swqe *w)
{
	return w->wr.opcode == SRN_WR_BIND_MW || w->wr.opcode == SRN_WR_LOCAL_INV;
}

/* ---- responder saved READ/ATOMIC results (PSN-09/10; exec.c) ---- */
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

/* ---- responder output queue (rspq.c; packets built lazily by respout.c) ---- */
enum srn_rsp_type { SRN_RSP_NONE, SRN_RSP_ACK, SRN_RSP_NAK, SRN_RSP_READ, SRN_RSP_ATOMIC };
struct srn_rsp {
	uint8_t  type;
	uint8_t  syn;           /* AETH syndrome */
	bool     first, dup;    /* READ: next packet is the first of this answer */
	uint32_t psn, msn;
	uint64_t va, orig;
	uint32_t rkey, left;    /* READ: bytes still to send */
	srn_ts   t;             /* ACK: when it was queued (cfg.ack_delay_ns) */
	uint32_t txseq;         /* ACK: the QP's request counter then */
};
struct srn_rspq {
	struct srn_rsp *q;
	uint32_t cap, head, n;
};

/* ---- per-message progress at a responder ---- */
enum srn_rmsg_kind { SRN_RMSG_NONE, SRN_RMSG_SEND, SRN_RMSG_WRITE };
struct srn_rmsg {
	uint8_t  kind;          /* what is in progress */
	uint32_t msn;           /* the MSN this message completes with */
	bool     have_wqe;      /* SEND / WRITE_IMM: the receive WQE it consumed */
	struct srn_rwqe wqe;
	uint32_t offset;        /* SEND: bytes placed */
	uint64_t va;            /* WRITE: next address, key, bytes left, total */
	uint32_t rkey, left, len;
};

/* the other end of a connection */
struct srn_peer {
	uint32_t qpn;
	struct srn_ah_attr ah;
};

/* ---- the send side of one connection: requester + completer ---- */
enum srn_req_state { SRN_REQ_ST_IDLE, SRN_REQ_ST_RNR_WAIT, SRN_REQ_ST_ERROR, SRN_REQ_ST_NSTATES };
extern const char *const srn_req_state_names[SRN_REQ_ST_NSTATES];
struct srn_reqctx {
	struct srn_qp *qp;
	struct srn_peer peer;
	uint64_t cur;            /* SQ index of the WQE being sent */
	uint8_t  state;          /* enum srn_req_state */
	uint32_t psn;            /* PSN of the next packet to send (cursor) */
	uint32_t max_psn;        /* high-water mark: next never-used PSN (PSN-15) */
	uint32_t pkt;            /* packet index within sq[cur] */
	uint32_t rd_atomic;      /* outstanding READ/ATOMIC WQEs */
	uint8_t  retry_left, rnr_left;
	uint32_t retry_psn;      /* PSN of the retried request */
	bool     retrying;
	bool     drain_notified;
	struct srn_timer rto, rnr;
	struct {
		uint32_t psn;            /* oldest unacknowledged PSN */
		uint32_t msn, credits;   /* last seen in an AETH (PSN-18) */
		uint32_t implicit_psn;   /* comp.psn at which a go-back (sequence NAK or
					  * missing READ/ATOMIC response) was started; no
					  * second one from it before progress or a timeout */
		bool     implicit_done;
	} comp;
	/* delayed ACK of the same QP's responder (cfg.ack_delay_ns) */
	srn_ts   tx_last;        /* the last request packet */
	uint32_t tx_seq;         /* request packets sent (wraps) */
};

/* ---- the receive side of one connection: responder ---- */
enum srn_resp_seq { SRN_RESP_SEQ_IDLE, SRN_RESP_SEQ_SEND, SRN_RESP_SEQ_WRITE, SRN_RESP_SEQ_UC_DROP,
		    SRN_RESP_SEQ_ERROR, SRN_RESP_SEQ_N };
extern const char *const srn_resp_seq_names[SRN_RESP_SEQ_N];
struct srn_respctx {
	struct srn_qp *qp;
	struct srn_peer peer;
	uint8_t  seq;            /* enum srn_resp_seq: the message sequence in progress */
	uint32_t epsn, msn;
	bool     nak_sent;       /* PSN-12: one sequence NAK per gap */
	uint32_t since_ack;
	uint32_t last_psn;       /* last executed PSN (PSN-08 ACK value) */
	struct srn_rmsg *msgs;   /* messages in progress, slot msn % nmsgs */
	uint32_t nmsgs;
	struct srn_res *res;     /* saved READ/ATOMIC ring */
	uint32_t res_cap, res_next;
	struct srn_rspq out;     /* responses waiting for the wire */
	struct srn_timer ack_timer;   /* a held ACK is due */
};
/* the message that the next request packet belongs to (in order: MSN + 1) */
static inline struct srn_rmsg *srn_resp_cur(struct srn_respctx *rc)
{
	return &rc->msgs[((rc->msn + 1) & SRN_MSN_MASK) % rc->nmsgs];
}

/* ---- notification point (cnp.c) ---- */
struct srn_cnp {
	bool     pending;
	bool     sent_once;
	srn_ts   last;
	uint32_t dqpn;
	uint8_t  dgid[16];
};

/* ---- transports ---- */
struct srn_transport_ops {
	const char *name;
	enum srn_qp_type type;
	uint32_t op_mask;        /* SRN_M_RC/UC/UD: the opcodes it accepts */
	uint32_t wr_ops;         /* 1 << SRN_WR_*: the work requests it can post */
	bool reliable;           /* ACK/NAK, retry, PSN window, max_rd_atomic, fence */
	bool connected;          /* one peer: source checked, path MTU from modify */
	bool srq_ok;             /* may take receive WQEs from an SRQ */
	bool paced;              /* a CC flow on a device with congestion control */
	bool per_wr_address;     /* every WR names its destination (AH, QPN, QKey) */
	uint32_t max_msg;        /* largest message in bytes (0: 2^31) */
	/* the QP's next packet (srn_dev_send) and whether it has one */
	ssize_t (*emit)(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta,
			srn_ts now);
	bool (*has_output)(const struct srn_qp *qp);
	/* a request packet addressed to qp (generic checks passed) */
	void (*recv_req)(struct srn_qp *qp, const struct srn_pkt *p,
			 const struct srn_pkt_meta *meta, size_t len, srn_ts now);
	/* a response packet (ACK, NAK, READ response, atomic ACK); NULL: dropped */
	void (*recv_resp)(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now);
	/* requester: opcode, destination QPN, DETH and addressing of packet k
	 * of w (last: it is the WQE's last packet) */
	void (*req_address)(struct srn_qp *qp, const struct srn_swqe *w, uint32_t k, bool last,
			    struct srn_pkt *p, struct srn_pkt_meta *meta);
};
extern const struct srn_transport_ops srn_rc_ops, srn_uc_ops, srn_ud_ops;

/* ---- QP ---- */
struct srn_qp {
	struct srn_dev *dev;
	const struct srn_transport_ops *ops;
	struct srn_list node;           /* dev->qps */
	struct srn_list ready;          /* dev->ready (output scheduler) */
	uint32_t qpn, slot;
	struct srn_qp_init init;
	struct srn_qp_attr attr;
	uint32_t mtu;                   /* path MTU in bytes */
	struct srn_sq sq;
	struct srn_rq rq;               /* own receive queue (no SRQ) */
	struct srn_reqctx req;
	struct srn_respctx resp;
	struct srn_cnp cnp;
	/* congestion control (cong.c): only on a device with cfg.cc, paced transports */
	struct {
		bool     on;             /* this QP is a paced flow (flow ID = qpn) */
		bool     probe_pending;  /* the engine asked for an RTT probe */
		bool     probe_out;      /* probe probe_seq sent, not answered yet */
		uint32_t probe_seq;      /* sequence of the last probe sent */
		struct srn_cc_pacer pacer;
		struct srn_timer pace;   /* the pacer allows the next packet */
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
/* packets of a message of len bytes at the QP's path MTU (at least 1) */
static inline uint32_t srn_qp_npsn(const struct srn_qp *qp, uint32_t len)
{
	return len == 0 ? 1 : (uint32_t)(((uint64_t)len + qp->mtu - 1) / qp->mtu);
}
static inline bool srn_qp_is_sending_state(const struct srn_qp *qp)
{
	return qp->attr.qp_state == SRN_QPS_RTS || qp->attr.qp_state == SRN_QPS_SQD;
}

/* ---- qptab.c ---- */
/* a free QPN slot (round robin, skipping slots in time-wait), or UINT32_MAX */
uint32_t srn_qptab_find_slot(struct srn_dev *dev);
void srn_qptab_insert(struct srn_dev *dev, struct srn_qp *qp, uint32_t slot);
void srn_qptab_remove(struct srn_dev *dev, struct srn_qp *qp);  /* enters time-wait */
struct srn_qp *srn_qp_lookup(struct srn_dev *dev, uint32_t qpn);

/* ---- sched.c: the output scheduler's ready list ---- */
void srn_qp_sched(struct srn_qp *qp);          /* put on the ready list if it has output */
void srn_qp_unsched(struct srn_qp *qp);
bool srn_qp_has_output(const struct srn_qp *qp);
void srn_sched_timer_fn(struct srn_timer *t, srn_ts now);  /* a timer that only reschedules */

/* ---- path.c ---- */
/* addressing of a packet from qp (qpn) to the peer at ah / dqpn */
void srn_path_meta(const struct srn_qp *qp, const struct srn_ah_attr *ah, uint32_t dqpn,
		   struct srn_pkt_meta *meta);

/* ---- place.c: data between packets and memory ---- */
/* resolve a send WQE's local SGEs to host pointers; false on a protection error */
bool srn_place_resolve(struct srn_qp *qp, struct srn_swqe *w);
/* copy len bytes at message offset off out of / into a send WQE's buffers */
void srn_place_gather(const struct srn_swqe *w, uint32_t off, uint8_t *dst, uint32_t len);
void srn_place_scatter(struct srn_swqe *w, uint32_t off, const uint8_t *src, uint32_t len);
/* place len bytes at offset off of a receive WQE under pdn: every check
 * before a byte is copied. 0, SRN_ERANGE (does not fit) or SRN_EINVAL
 * (local protection error). */
int  srn_place_rwqe(struct srn_dev *dev, uint32_t pdn, const struct srn_rwqe *w, uint32_t off,
		    const uint8_t *src, uint32_t len);

/* ---- rspq.c ---- */
int  srn_rspq_alloc(struct srn_dev *dev, struct srn_rspq *q, uint32_t cap);
void srn_rspq_free(struct srn_dev *dev, struct srn_rspq *q);
struct srn_rsp *srn_rspq_push(struct srn_rspq *q, uint8_t type);  /* NULL if full */
struct srn_rsp *srn_rspq_tail(struct srn_rspq *q);
void srn_rspq_pop(struct srn_rspq *q);
bool srn_rspq_space(const struct srn_rspq *q, uint32_t n);
void srn_rspq_purge_for_err(struct srn_rspq *q);     /* all but NAKs */
void srn_rspq_preempt_from(struct srn_rspq *q, uint32_t psn); /* PSN-09 */

/* ---- cqe.c ---- */
/* a send WQE's completion (unsignaled successes are skipped unless force) */
void srn_cqe_send(struct srn_qp *qp, struct srn_swqe *w, uint8_t status, bool force);
/* complete the WQE at the SQ head: CQE, rd_atomic bookkeeping, head++ */
void srn_sq_complete_head(struct srn_qp *qp, uint8_t status, bool force);
void srn_cqe_recv_flush(struct srn_qp *qp, uint64_t wr_id);
/* a receive completion of the message m at a connected responder */
void srn_cqe_recv(struct srn_respctx *rc, struct srn_rmsg *m, uint8_t status, uint8_t opcode,
		  uint32_t byte_len, uint32_t flags, uint32_t imm, bool se);

/* ---- qpstate.c ---- */
void srn_qp_to_err(struct srn_qp *qp);          /* move to ERR and flush */
/* the WQE at the head fails with status (it completes in error), then ERR */
void srn_qp_fail(struct srn_qp *qp, uint8_t status);
void srn_qp_check_drained(struct srn_qp *qp);   /* SQD: SQ_DRAINED once empty */

/* ---- mw.c: memory windows (the hooks of req/comp/exec/respout/qp/dev) ---- */
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

/* ---- cnp.c ---- */
/* an ECN-CE marked packet p arrived at qp: a CNP is due (at most one per
 * interval, CC-13) to the sender (dqpn) */
void    srn_cnp_note(struct srn_qp *qp, uint32_t dqpn, const struct srn_pkt_meta *meta, srn_ts now);
ssize_t srn_cnp_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta);

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

/* ---- exec.c: executing requests at a responder ---- */
enum srn_exec {
	SRN_EXEC_OK, SRN_EXEC_RNR, SRN_EXEC_INV_REQ, SRN_EXEC_ACCESS, SRN_EXEC_ACCESS_INV,
	SRN_EXEC_OP_ERR, SRN_EXEC_LEN_ERR, SRN_EXEC_BUSY, SRN_EXEC_RD_ATOMIC_EXC,
	SRN_EXEC_INV_RKEY,   /* SEND_WITH_INV of a key this QP may not invalidate */
};
/* opcode sequence and length checks, then the operation */
enum srn_exec srn_exec_request(struct srn_respctx *rc, const struct srn_pkt *p);
/* the receive WQE of message m (taken from the RQ or SRQ if it has none) */
bool srn_exec_take_rwqe(struct srn_respctx *rc, struct srn_rmsg *m);
uint32_t srn_exec_recv_pdn(const struct srn_qp *qp);
/* saved READ/ATOMIC results */
struct srn_res *srn_res_find(struct srn_respctx *rc, uint8_t type, uint32_t psn);
void srn_res_answered(struct srn_respctx *rc, uint8_t type, uint32_t last_psn);
/* response queue entries */
bool srn_resp_queue_ack(struct srn_respctx *rc, uint32_t psn);
void srn_resp_queue_nak(struct srn_respctx *rc, uint8_t syn, uint32_t psn);

/* ---- respout.c ---- */
ssize_t srn_resp_emit(struct srn_respctx *rc, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta,
		      srn_ts now);

/* ---- resp.c: the RC and UC responder state machines ---- */
void srn_resp_rc(struct srn_respctx *rc, const struct srn_pkt *p);
void srn_resp_uc(struct srn_respctx *rc, const struct srn_pkt *p);
void srn_resp_reset(struct srn_respctx *rc);

/* ---- reqpkt.c ---- */
/* Build packet k of WQE w (its PSN is w->first_psn + k) into buf: headers,
 * payload gathered from the WQE, pad, ICRC. *last: the WQE's last packet.
 * Returns the length, or 0 if buf is too small. Pure in (w, k): a
 * retransmission is byte-identical. */
size_t srn_reqpkt_build(struct srn_qp *qp, const struct srn_swqe *w, uint32_t k, uint8_t *buf,
			size_t cap, struct srn_pkt_meta *meta, bool *last);
/* connected transports (RC, UC): opcode from the WQE, destination = peer */
void srn_reqpkt_address_connected(struct srn_qp *qp, const struct srn_swqe *w, uint32_t k,
				  bool last, struct srn_pkt *p, struct srn_pkt_meta *meta);

/* ---- req.c: the requester ---- */
bool    srn_req_can_send(const struct srn_qp *qp);
ssize_t srn_req_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now);
void    srn_req_rewind(struct srn_reqctx *rq, uint32_t psn);
void    srn_req_timer_update(struct srn_reqctx *rq, srn_ts now, bool restart);
void    srn_req_rto_fn(struct srn_timer *t, srn_ts now);
void    srn_req_rnr_fn(struct srn_timer *t, srn_ts now);
void    srn_req_reset(struct srn_reqctx *rq);
uint64_t srn_rnr_timer_ns(uint8_t code);
uint64_t srn_rto_ns(uint8_t timeout);

/* ---- comp.c ---- */
void srn_comp_recv(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now);

/* ---- xmit.c ---- */
/* the next packet of qp in order: CNP, RTT probe, responses (delayed ACK),
 * requests (paced) */
ssize_t srn_xmit_qp(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now);
bool    srn_xmit_has_output(const struct srn_qp *qp);

#endif /* SRN_CORE_INT_H */
