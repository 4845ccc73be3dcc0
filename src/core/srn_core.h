/*
 * srn_core.h - the deterministic RNIC core (sans-I/O).
 *
 * The core takes packets, doorbells (post_send/post_recv) and the current
 * time as inputs and produces packets, completions, events and timer
 * deadlines. It never reads a clock, opens a socket, sleeps, starts a thread
 * or calls malloc directly (memory comes from struct srn_mem hooks, and only
 * at object creation, never per packet).
 *
 * Driving loop of a runtime (the real-time runtime, the simulator, tests):
 *
 *     srn_dev_recv(dev, pkt, len, &meta, now);     // for each received datagram
 *     srn_qp_post_send(qp, &wr, now);              // doorbells from the application
 *     while ((n = srn_dev_send(dev, buf, cap, &meta, now)) > 0)
 *             transmit(buf, n, &meta);
 *     if (now >= srn_dev_expiry(dev)) srn_dev_handle_expiry(dev, now);
 *     while ((cq = srn_dev_next_cq_event(dev))) notify(cq);
 *     while (srn_dev_next_async_event(dev, &ev) == 0) deliver(&ev);
 *
 * Threading: a device and everything in it is single-threaded; the runtime
 * serialises calls (e.g. with one lock per device).
 *
 * Numeric values of enums that mirror verbs (QP types, states, access flags,
 * WR opcodes and flags, WC status/opcodes, attribute masks, MTU) are
 * identical to <infiniband/verbs.h>; src/verbs static-asserts that.
 *
 * Errors: functions returning int return 0 or a negative enum srn_err.
 */
#ifndef SRN_CORE_H
#define SRN_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#include "../wire/srn_wire.h"

typedef uint64_t srn_ts;            /* nanoseconds, monotonic, from the driver */
#define SRN_TS_NEVER UINT64_MAX

enum srn_err {
	SRN_OK          = 0,
	SRN_EINVAL      = -1,   /* bad argument            -> EINVAL  */
	SRN_ENOMEM      = -2,   /* allocation failed / queue full -> ENOMEM */
	SRN_ESTATE      = -3,   /* wrong object state      -> EINVAL  */
	SRN_EBUSY       = -4,   /* object still in use     -> EBUSY   */
	SRN_ENOENT      = -5,   /* no such object/key      -> ENOENT  */
	SRN_EAGAIN      = -6,   /* nothing available       -> EAGAIN  */
	SRN_ERANGE      = -7,   /* value out of range      -> EINVAL  */
	SRN_EDROP       = -8,   /* packet dropped (counted) */
};
const char *srn_strerror(int err);

/* allocator hooks (ngtcp2 style); NULL members mean libc-free defaults are NOT
 * available in core: the driver must provide them. */
struct srn_mem {
	void *(*calloc)(size_t n, size_t size, void *user);
	void (*free)(void *p, void *user);
	void *user;
};

/* ------------------------------------------------------------------------ */
/* Counters: one array per device, indexed by enum srn_ctr, with a name table.
 * The runtime publishes the array in shared memory for `softrnic stats`.    */
#define SRN_COUNTERS(X) \
	X(TX_PKTS)            X(TX_BYTES)          X(RX_PKTS)            X(RX_BYTES) \
	X(TX_REQ_PKTS)        X(TX_RESP_PKTS)      X(TX_ACKS)            X(TX_CNPS) \
	X(RETRANSMIT_PKTS)    X(RETRY_TIMEOUTS)    X(RNR_RETRIES) \
	X(TX_NAK_SEQ)         X(TX_NAK_RNR)        X(TX_NAK_INV_REQ)     X(TX_NAK_REM_ACCESS) \
	X(TX_NAK_REM_OP)      X(RX_NAK_SEQ)        X(RX_NAK_RNR)         X(RX_NAK_OTHER) \
	X(DUP_REQUESTS)       X(DUP_READ_REEXEC)   X(DUP_ATOMIC_REPLAY)  X(OOS_REQ_DROPPED) \
	X(DUP_ACKS)           X(GHOST_ACKS)        X(RX_ECN_CE)          X(RX_CNPS) \
	X(RETRY_EXC_ERR)      X(RNR_RETRY_EXC_ERR) X(COMPLETIONS)        X(COMPLETION_ERRORS) \
	X(UC_MSG_DROPPED)     X(UD_DROPPED_NO_RECV) X(RD_ATOMIC_WAIT) \
	X(DROP_MALFORMED)     X(DROP_BAD_ICRC)     X(DROP_UNKNOWN_QPN)   X(DROP_BAD_SRC) \
	X(DROP_BAD_STATE)     X(DROP_BAD_OPCODE)   X(DROP_BAD_QKEY)      X(DROP_BAD_PKEY) \
	X(DROP_BAD_LENGTH)    X(DROP_CQ_OVERFLOW)    X(DROP_RESP_QUEUE_FULL) \
	X(TX_NAK_RD_ATOMIC_EXC) \
	X(CC_EVENTS)          X(CC_EVENT_DROPS)    X(CC_RATE_UPDATES)    X(CC_RATE_STALE) \
	X(CC_PACE_WAITS)      X(CC_RATE_KBPS_LAST) X(CC_ALGO_SWAPS) \
	X(TX_RTT_PROBES)      X(RX_RTT_PROBES)     X(TX_RTT_RESPONSES)   X(RX_RTT_RESPONSES) \
	X(DROP_RTT_PROBE)     X(RX_NAK_SEQ_REPEAT)  X(RX_ICRC_OTHER_ID)    X(ACKS_DELAYED)

enum srn_ctr {
#define SRN_CTR_ENUM(n) SRN_CTR_##n,
	SRN_COUNTERS(SRN_CTR_ENUM)
#undef SRN_CTR_ENUM
	SRN_CTR_MAX
};
extern const char *const srn_ctr_names[SRN_CTR_MAX]; /* lower-case, e.g. "tx_pkts" */

/* ------------------------------------------------------------------------ */
/* Values mirroring verbs.                                                    */
enum srn_qp_type  { SRN_QPT_RC = 2, SRN_QPT_UC = 3, SRN_QPT_UD = 4 };
enum srn_qp_state { SRN_QPS_RESET, SRN_QPS_INIT, SRN_QPS_RTR, SRN_QPS_RTS,
		    SRN_QPS_SQD, SRN_QPS_SQE, SRN_QPS_ERR };
extern const char *const srn_qp_state_names[7];

enum srn_access {       /* IBV_ACCESS_* */
	SRN_ACCESS_LOCAL_WRITE   = 1,
	SRN_ACCESS_REMOTE_WRITE  = 1 << 1,
	SRN_ACCESS_REMOTE_READ   = 1 << 2,
	SRN_ACCESS_REMOTE_ATOMIC = 1 << 3,
	SRN_ACCESS_MW_BIND       = 1 << 4,   /* MR: windows may be bound to it */
	SRN_ACCESS_ZERO_BASED    = 1 << 5,   /* type 2 window: addresses from 0 */
};

enum srn_wr_opcode {    /* IBV_WR_* */
	SRN_WR_RDMA_WRITE = 0, SRN_WR_RDMA_WRITE_WITH_IMM = 1, SRN_WR_SEND = 2,
	SRN_WR_SEND_WITH_IMM = 3, SRN_WR_RDMA_READ = 4, SRN_WR_ATOMIC_CMP_AND_SWP = 5,
	SRN_WR_ATOMIC_FETCH_AND_ADD = 6, SRN_WR_LOCAL_INV = 7, SRN_WR_BIND_MW = 8,
	SRN_WR_SEND_WITH_INV = 9,
};
enum srn_send_flags {   /* IBV_SEND_* */
	SRN_SEND_FENCE = 1, SRN_SEND_SIGNALED = 2, SRN_SEND_SOLICITED = 4, SRN_SEND_INLINE = 8,
};
enum srn_wc_status {    /* IBV_WC_* status */
	SRN_WC_SUCCESS, SRN_WC_LOC_LEN_ERR, SRN_WC_LOC_QP_OP_ERR, SRN_WC_LOC_EEC_OP_ERR,
	SRN_WC_LOC_PROT_ERR, SRN_WC_WR_FLUSH_ERR, SRN_WC_MW_BIND_ERR, SRN_WC_BAD_RESP_ERR,
	SRN_WC_LOC_ACCESS_ERR, SRN_WC_REM_INV_REQ_ERR, SRN_WC_REM_ACCESS_ERR, SRN_WC_REM_OP_ERR,
	SRN_WC_RETRY_EXC_ERR, SRN_WC_RNR_RETRY_EXC_ERR, SRN_WC_LOC_RDD_VIOL_ERR,
	SRN_WC_REM_INV_RD_REQ_ERR, SRN_WC_REM_ABORT_ERR, SRN_WC_INV_EECN_ERR,
	SRN_WC_INV_EEC_STATE_ERR, SRN_WC_FATAL_ERR, SRN_WC_RESP_TIMEOUT_ERR, SRN_WC_GENERAL_ERR,
};
enum srn_wc_opcode {    /* IBV_WC_* opcode */
	SRN_WC_SEND = 0, SRN_WC_RDMA_WRITE = 1, SRN_WC_RDMA_READ = 2, SRN_WC_COMP_SWAP = 3,
	SRN_WC_FETCH_ADD = 4, SRN_WC_BIND_MW = 5, SRN_WC_LOCAL_INV = 6,
	SRN_WC_RECV = 128, SRN_WC_RECV_RDMA_WITH_IMM = 129,
};
enum srn_wc_flags {     /* IBV_WC_* flags */
	SRN_WC_GRH = 1, SRN_WC_WITH_IMM = 2, SRN_WC_WITH_INV = 8,
};
enum srn_qp_attr_mask { /* IBV_QP_* */
	SRN_QP_STATE = 1 << 0, SRN_QP_CUR_STATE = 1 << 1, SRN_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	SRN_QP_ACCESS_FLAGS = 1 << 3, SRN_QP_PKEY_INDEX = 1 << 4, SRN_QP_PORT = 1 << 5,
	SRN_QP_QKEY = 1 << 6, SRN_QP_AV = 1 << 7, SRN_QP_PATH_MTU = 1 << 8, SRN_QP_TIMEOUT = 1 << 9,
	SRN_QP_RETRY_CNT = 1 << 10, SRN_QP_RNR_RETRY = 1 << 11, SRN_QP_RQ_PSN = 1 << 12,
	SRN_QP_MAX_QP_RD_ATOMIC = 1 << 13, SRN_QP_ALT_PATH = 1 << 14, SRN_QP_MIN_RNR_TIMER = 1 << 15,
	SRN_QP_SQ_PSN = 1 << 16, SRN_QP_MAX_DEST_RD_ATOMIC = 1 << 17, SRN_QP_PATH_MIG_STATE = 1 << 18,
	SRN_QP_CAP = 1 << 19, SRN_QP_DEST_QPN = 1 << 20,
};
enum srn_async_type {   /* IBV_EVENT_* */
	SRN_EV_CQ_ERR = 0, SRN_EV_QP_FATAL = 1, SRN_EV_QP_REQ_ERR = 2, SRN_EV_QP_ACCESS_ERR = 3,
	SRN_EV_COMM_EST = 4, SRN_EV_SQ_DRAINED = 5, SRN_EV_PATH_MIG = 6, SRN_EV_PATH_MIG_ERR = 7,
	SRN_EV_DEVICE_FATAL = 8, SRN_EV_PORT_ACTIVE = 9, SRN_EV_PORT_ERR = 10, SRN_EV_LID_CHANGE = 11,
	SRN_EV_PKEY_CHANGE = 12, SRN_EV_SM_CHANGE = 13, SRN_EV_SRQ_ERR = 14,
	SRN_EV_SRQ_LIMIT_REACHED = 15, SRN_EV_QP_LAST_WQE_REACHED = 16,
};

/* Packet metadata exchanged with the driver: struct srn_pkt_meta (L3
 * addresses, ECN/DSCP/TTL and the opaque L4 token) is the wire module's
 * (srn_wire.h), since only the RoCEv2 encapsulation interprets it. */

/* ------------------------------------------------------------------------ */
/* Device                                                                     */
struct srn_dev;
struct srn_cc_cfg;              /* src/core/cc/srn_cc.h */
struct srn_cc_engine;
struct softrnic_cc_algo;        /* include/softrnic/cc_algo.h */
struct srn_qp;
struct srn_cq;
struct srn_srq;
struct srn_mr;

struct srn_dev_cfg {
	uint8_t  gid[16];             /* this device's RoCEv2 GID (IPv4-mapped) */
	/* L4 tokens (for RoCEv2: UDP source ports) the port can send from; the
	 * core picks one per flow by hash (W-02) and copies it into meta.l4.
	 * None: srn_roce_l4_default. */
	const struct srn_l4 *l4;
	uint32_t n_l4;
	uint32_t max_qp;              /* QP table size (QPN space 2..max_qp+1 + time-wait) */
	uint32_t max_mr;
	uint32_t max_mw;              /* memory windows; 0 = default 4096 (max_mr +
				       * max_mw <= 2^24: windows' keys follow the MRs') */
	uint32_t max_qp_wr;           /* per-queue limit for max_send_wr/max_recv_wr */
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t max_cqe;
	uint32_t max_rd_atomic;       /* per-QP outstanding READ/ATOMIC limit (both directions) */
	srn_ts   qpn_timewait;        /* PSN-19: a QPN is not reused before this has passed */
	uint32_t ack_coalesce;        /* responder sends an ACK at least every N request packets */
	/* Delayed ACK for ping-pong traffic: a responder whose QP sent a request
	 * of its own within SRN_ACK_DELAY_PEER_NS holds a lone ACK up to this
	 * long, so it leaves together with that QP's next request (the peer,
	 * polling for the ACK, then receives both at once). A READ response,
	 * atomic ACK or NAK is never held. 0 (the default) = off. */
	uint32_t ack_delay_ns;
	uint32_t cnp_interval_ns;     /* min gap between CNPs per QP (CC-13), 0 = default 50us */
	uint32_t qpn_seed;            /* first QPN handed out (deterministic) */
	struct srn_mem mem;
	/* Added by the core: requester flow control. A requester never lets more
	 * than this many PSNs (request packets, plus the response packets an
	 * outstanding RDMA READ expects) be unacknowledged, so a burst of large
	 * messages cannot overflow socket buffers on either side; a single
	 * message larger than the limit is still sent when nothing else is
	 * outstanding. Never more than 2^23 (PSN-04). 0 = default 1024. */
	uint32_t max_inflight_pkts;
	/* Congestion control (CC-01..CC-13, docs/cc.md "In the transport").
	 * NULL (the default): none - no engine, no pacing, no RTT probes (a
	 * probe packet is dropped as an unknown opcode); the notification point
	 * (CNP on ECN-CE) works either way. Otherwise the device creates one
	 * srn_cc engine with a copy of *cc (cc->algo: DCQCN, TIMELY or a loaded
	 * algorithm; srn_dev_cc_cfg_default fills a device-sized one), every RC
	 * and UC QP is a flow (flow ID = its QPN) paced at the rate the engine
	 * gives it, and the device answers and sends RTT probes. */
	const struct srn_cc_cfg *cc;
	uint32_t cc_wire_overhead;    /* bytes per packet the pacer adds for the headers
				       * below the BTH; 0 = 28 (IPv4 + UDP) */
	uint32_t cc_burst_bytes;      /* pacer bucket; 0 = one full-MTU packet */
};
void srn_dev_cfg_default(struct srn_dev_cfg *cfg);
/* An engine configuration for a device: srn_cc_cfg_default with the
 * processors instantaneous (cycle, processor and context-miss times 0, so
 * every event is handled within the call that posts it), 8 processors, a
 * 64-line context cache, a backing store of max_qp flows, the given line
 * rate (default rate of new flows = line rate) and algorithm. */
void srn_dev_cc_cfg_default(struct srn_cc_cfg *cc, const struct softrnic_cc_algo *algo,
			    uint32_t max_qp, uint32_t line_rate_kbps);

int  srn_dev_new(struct srn_dev **out, const struct srn_dev_cfg *cfg);
void srn_dev_del(struct srn_dev *dev);   /* frees every object still in it */

/* Input: one received RoCEv2 UDP payload (BTH..ICRC). Checks the ICRC, parses,
 * dispatches to the QP. Returns 0, or SRN_EDROP if dropped (and counted). */
int srn_dev_recv(struct srn_dev *dev, const uint8_t *pkt, size_t len,
		 const struct srn_pkt_meta *meta, srn_ts now);

/* Output: writes the next packet to send (BTH..ICRC, ICRC computed for
 * meta->ip_id = 0, DF set) into buf; returns its length, or 0 if there is
 * nothing to send now. buf needs room for the largest packet:
 * SRN_MAX_PKT bytes. Fills meta (addresses, ports, ECN). */
#define SRN_MAX_PKT (SRN_BTH_LEN + SRN_RETH_LEN + SRN_ATMETH_LEN + SRN_IMMDT_LEN + 4096 + 4 + SRN_ICRC_LEN + 64)
ssize_t srn_dev_send(struct srn_dev *dev, uint8_t *buf, size_t cap,
		     struct srn_pkt_meta *meta, srn_ts now);
/* true if srn_dev_send would produce a packet */
bool srn_dev_has_output(const struct srn_dev *dev);

/* Timers: earliest deadline of any timer in the device (SRN_TS_NEVER if none). */
srn_ts srn_dev_expiry(const struct srn_dev *dev);
void   srn_dev_handle_expiry(struct srn_dev *dev, srn_ts now);

/* Congestion control of a device created with cfg.cc (NULL otherwise). */
const struct srn_cc_engine *srn_dev_cc_engine(const struct srn_dev *dev);
/* Swap the algorithm while the device runs (CC-14; srn_cc_set_algo): every
 * flow is re-initialised by the new algorithm at its next event.
 * SRN_ESTATE if the device has no congestion control, SRN_EINVAL for an
 * algorithm the engine refuses (the old one keeps running). */
int srn_dev_cc_set_algo(struct srn_dev *dev, const struct softrnic_cc_algo *algo, srn_ts now);

/* Counters (array of SRN_CTR_MAX). */
const uint64_t *srn_dev_counters(const struct srn_dev *dev);
uint64_t *srn_dev_counters_mut(struct srn_dev *dev); /* for the runtime (RX drops before core) */

/* Events for the driver. */
struct srn_cq *srn_dev_next_cq_event(struct srn_dev *dev); /* armed CQ got a CQE */
struct srn_async_event {
	enum srn_async_type type;
	struct srn_qp  *qp;   /* for QP events */
	struct srn_srq *srq;  /* for SRQ events */
	struct srn_cq  *cq;   /* for CQ events */
};
int srn_dev_next_async_event(struct srn_dev *dev, struct srn_async_event *ev); /* 0 or SRN_EAGAIN */

/* ------------------------------------------------------------------------ */
/* Memory regions (protection table). PDs are plain numbers to the core.    */
uint32_t srn_pd_alloc(struct srn_dev *dev);      /* returns pdn >= 1 */

struct srn_mr_info {
	uint32_t lkey, rkey, pdn, access;
	uint8_t *addr;        /* process address of the region start */
	uint64_t iova;        /* address the keys are checked against */
	uint64_t length;
};
int  srn_mr_reg(struct srn_dev *dev, uint32_t pdn, void *addr, uint64_t iova,
		uint64_t length, uint32_t access, struct srn_mr **out);
/* ibv_rereg_mr: change PD, translation and access of mr in place; its
 * lkey/rkey stay the same (every Linux provider keeps them, and a peer
 * holding the rkey keeps access). Same checks as srn_mr_reg, and SRN_EBUSY
 * while memory windows are bound to it; on an error nothing changes. */
int  srn_mr_rereg(struct srn_dev *dev, struct srn_mr *mr, uint32_t pdn, void *addr,
		  uint64_t iova, uint64_t length, uint32_t access);
void srn_mr_info(const struct srn_mr *mr, struct srn_mr_info *info);
/* SRN_EBUSY while memory windows are bound to it (IBA 10.6.7.2.6) */
int  srn_mr_dereg(struct srn_dev *dev, struct srn_mr *mr);

/* ------------------------------------------------------------------------ */
/* Memory windows (mw.c): remote access to part of an MR, granted by a bind
 * and revoked by an invalidation, per request (IBA 10.6.7).
 *  - type 1: bound with a BIND_MW WR whose bind.rkey the verbs layer makes
 *    (ibv_bind_mw); usable through any QP of the window's PD; a bind of
 *    length 0 unbinds; never invalidated by LOCAL_INV / SEND_WITH_INV.
 *  - type 2 (2B): bound with a BIND_MW WR (the caller picks the low 8 bits
 *    of the rkey) through a QP of the window's PD, only while it is free;
 *    then usable only through that QP; invalidated by LOCAL_INV on a QP of
 *    its PD or by a SEND_WITH_INV arriving on that QP; may be zero based.
 * A window's rkey has index bits above the MRs' (max_mr + slot) << 8, so a
 * responder tells the two apart by the key. A bind or invalidation that
 * breaks a rule completes with SRN_WC_MW_BIND_ERR and changes nothing (the
 * QP then goes to ERR as after any local error). Bound windows keep their
 * MR from being deregistered or re-registered (SRN_EBUSY). Requests
 * through an invalid, unbound or out-of-bounds window are remote access
 * errors (NAK, the responder QP to ERR). A QP destroyed with type 2 windows
 * bound to it invalidates them. */
enum srn_mw_type { SRN_MW_TYPE_1 = 1, SRN_MW_TYPE_2 = 2 };
struct srn_mw;
/* SRN_EINVAL for a bad type or pdn 0, SRN_ENOMEM when the table is full */
int  srn_mw_alloc(struct srn_dev *dev, uint32_t pdn, enum srn_mw_type type, struct srn_mw **out);
/* unbinds (invalidates) and frees */
int  srn_mw_dealloc(struct srn_dev *dev, struct srn_mw *mw);
struct srn_mw_info {
	uint32_t handle;      /* names the window in a BIND_MW WR (never changes) */
	uint32_t rkey;        /* current rkey */
	uint32_t pdn, type, access;
	bool     bound;       /* valid with a non-zero length */
	uint64_t addr, length;
};
void srn_mw_info(const struct srn_mw *mw, struct srn_mw_info *info);

/* ------------------------------------------------------------------------ */
/* Completion queues                                                          */
struct srn_cqe {
	uint64_t wr_id;
	uint8_t  status;        /* enum srn_wc_status */
	uint8_t  opcode;        /* enum srn_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_be;        /* immediate data, network order, or invalidated rkey (host) */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;      /* enum srn_wc_flags */
	uint16_t pkey_index;
	uint8_t  sl;
	uint8_t  src_gid[16];   /* UD: sender's GID (for the GRH the verbs layer writes) */
	uint8_t  dst_gid[16];
	srn_ts   ts;            /* completion time: the device's clock (the time of
				 * the driver call that produced it), ns */
};

int  srn_cq_new(struct srn_dev *dev, uint32_t ncqe, void *user, struct srn_cq **out);
int  srn_cq_del(struct srn_cq *cq);           /* SRN_EBUSY if QPs still use it */
int  srn_cq_poll(struct srn_cq *cq, struct srn_cqe *out, int n); /* number polled */
void srn_cq_arm(struct srn_cq *cq, bool solicited_only);
int  srn_cq_resize(struct srn_cq *cq, uint32_t ncqe);
uint32_t srn_cq_capacity(const struct srn_cq *cq);
/* Remove every CQE of QP qpn from cq; the other CQEs keep their order.
 * Returns how many were removed. (A QP moved to RESET: its old flush and
 * error completions must not be polled after it is reconnected.) */
uint32_t srn_cq_purge_qp(struct srn_cq *cq, uint32_t qpn);
void *srn_cq_user(const struct srn_cq *cq);

/* ------------------------------------------------------------------------ */
/* Shared receive queues                                                      */
struct srn_sge { uint64_t addr; uint32_t length; uint32_t lkey; };
struct srn_recv_wr { uint64_t wr_id; const struct srn_sge *sg_list; uint32_t num_sge; };

struct srn_srq_init { uint32_t pdn; uint32_t max_wr; uint32_t max_sge; uint32_t srq_limit; void *user; };
int  srn_srq_new(struct srn_dev *dev, const struct srn_srq_init *init, struct srn_srq **out);
int  srn_srq_del(struct srn_srq *srq);        /* SRN_EBUSY if QPs still use it */
int  srn_srq_post(struct srn_srq *srq, const struct srn_recv_wr *wr);
/* arm the limit event: SRQ_LIMIT_REACHED fires once when fewer than limit WQEs remain */
int  srn_srq_set_limit(struct srn_srq *srq, uint32_t limit);
void srn_srq_query(const struct srn_srq *srq, uint32_t *max_wr, uint32_t *max_sge, uint32_t *limit);
void *srn_srq_user(const struct srn_srq *srq);

/* ------------------------------------------------------------------------ */
/* Queue pairs                                                                */
struct srn_ah_attr {
	uint8_t  dgid[16];
	uint8_t  sgid_index;
	uint8_t  hop_limit;
	uint8_t  traffic_class;
	uint32_t flow_label;
	uint8_t  sl;
	uint8_t  port_num;
};

struct srn_qp_init {
	enum srn_qp_type type;
	uint32_t pdn;
	struct srn_cq *send_cq, *recv_cq;
	struct srn_srq *srq;                /* NULL: own RQ */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
	bool sq_sig_all;
	void *user;
};

struct srn_qp_attr {
	enum srn_qp_state qp_state, cur_qp_state;
	uint8_t  path_mtu;          /* 1..5 */
	uint32_t qkey;
	uint32_t rq_psn, sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint16_t pkey_index;
	uint8_t  port_num;
	uint8_t  timeout;           /* 4.096us * 2^timeout, 0 = infinite */
	uint8_t  retry_cnt;         /* 0..7; 7 is NOT infinite */
	uint8_t  rnr_retry;         /* 0..7; 7 = infinite */
	uint8_t  min_rnr_timer;     /* IBA RNR timer code 0..31 */
	uint8_t  max_rd_atomic;     /* as initiator */
	uint8_t  max_dest_rd_atomic;/* as responder */
	bool     sq_draining;
	bool     en_sqd_async_notify;
	struct srn_ah_attr ah;
	/* capabilities (query only) */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
};

int  srn_qp_new(struct srn_dev *dev, const struct srn_qp_init *init, struct srn_qp **out);
/* Apply attributes. The verbs layer has already validated the mask for the
 * transition (src/verbs/qp_transition.c); the core re-checks the state
 * transition itself and returns SRN_ESTATE if illegal. Moving to ERR flushes
 * all outstanding WRs; RESET empties the queues. */
int  srn_qp_modify(struct srn_qp *qp, const struct srn_qp_attr *attr, uint32_t mask, srn_ts now);
void srn_qp_query(const struct srn_qp *qp, struct srn_qp_attr *attr);
int  srn_qp_del(struct srn_qp *qp, srn_ts now);  /* QPN enters time-wait (PSN-19) */
/* Before srn_qp_del: an ACK held by cfg.ack_delay_ns is due now (the peer
 * must not retry into a destroyed QP). True if the QP has responses to send:
 * pump srn_dev_send before deleting it. */
bool srn_qp_release_acks(struct srn_qp *qp);
uint32_t srn_qp_num(const struct srn_qp *qp);
/* rate (kbit/s) the QP's pacer runs at; 0 if the QP is not paced (CC off, UD) */
uint32_t srn_qp_cc_rate(const struct srn_qp *qp);
enum srn_qp_state srn_qp_state(const struct srn_qp *qp);
void *srn_qp_user(const struct srn_qp *qp);

struct srn_send_wr {
	uint64_t wr_id;
	uint8_t  opcode;            /* enum srn_wr_opcode */
	uint32_t send_flags;        /* enum srn_send_flags */
	uint32_t imm_be;            /* immediate data (network order) */
	uint32_t invalidate_rkey;   /* SEND_WITH_INV, LOCAL_INV */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add, swap;
	/* UD */
	const struct srn_ah_attr *ah;
	uint32_t remote_qpn, remote_qkey;
	const struct srn_sge *sg_list;
	uint32_t num_sge;
	/* BIND_MW (no SGEs): window handle, its new rkey (index bits unchanged),
	 * the MR (lkey; 0 with length 0 = unbind a type 1 window), the range
	 * (an MR iova) and the window's access (REMOTE_* | ZERO_BASED) */
	struct {
		uint32_t mw_handle, rkey, mr_lkey, access;
		uint64_t addr, length;
	} bind;
};
/* Validates and queues one WR (inline data is copied now). Returns
 * SRN_ENOMEM if the SQ is full, SRN_EINVAL for bad opcode/sge count/inline
 * size, SRN_ESTATE if the QP state does not allow posting. */
int srn_qp_post_send(struct srn_qp *qp, const struct srn_send_wr *wr, srn_ts now);
int srn_qp_post_recv(struct srn_qp *qp, const struct srn_recv_wr *wr);

#endif /* SRN_CORE_H */
