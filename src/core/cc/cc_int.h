/*
 * cc_int.h - internal structures of the CC engine (not for other modules).
 *
 * Files, one job each:
 *   cc_util.c      PRNG, WRED curve, flow hash, name tables
 *   cc_fifo.c      bounded event rings (TX / RX event FIFOs)
 *   cc_slice.c     the fig. 9 slice FSM (pure transition function)
 *   cc_cam.c       flow → processor CAM
 *   cc_ff.c        coalescing unit and FF array (processor × class)
 *   cc_ctxstore.c  per-flow context store: LRU cache + backing hash table
 *   cc_engine.c    creation, inputs (post, firmware), outputs, observation
 *   cc_step.c      the clocked part: selector, arbiter, processors
 *   cc_pacer.c     per-flow token-bucket pacer of the TX pipe (CC-10)
 *   cc_probe.c     RTT probe contents and delay arithmetic (CC-12)
 *   cc_np.c        notification point: CNP at most once per interval (CC-13)
 *   cc_dcqcn.c, cc_timely.c  built-in algorithms, only against cc_algo.h
 */
#ifndef SRN_CC_INT_H
#define SRN_CC_INT_H

#include "srn_cc.h"

/* ---- event FIFO ---------------------------------------------------------- */
struct srn_cc_fifo_ent {
	struct srn_cc_ev ev;
	srn_ts t_in;          /* when it was posted: the selector never takes it earlier */
};
struct srn_cc_fifo {
	struct srn_cc_fifo_ent *ring;
	uint32_t cap, head, count;
};
int  srn_cc_fifo_push(struct srn_cc_fifo *f, const struct srn_cc_ev *ev, srn_ts t_in); /* 0 / SRN_ENOMEM */
const struct srn_cc_fifo_ent *srn_cc_fifo_peek(const struct srn_cc_fifo *f);
void srn_cc_fifo_pop(struct srn_cc_fifo *f);

/* ---- CAM ----------------------------------------------------------------- */
struct srn_cc_cam {
	uint32_t *flow;       /* search field, one per processor */
	uint8_t  *valid;
	uint32_t n;
};
int  srn_cc_cam_lookup(const struct srn_cc_cam *c, uint32_t flow_id, uint32_t *proc); /* 0 / SRN_ENOENT */
void srn_cc_cam_write(struct srn_cc_cam *c, uint32_t proc, uint32_t flow_id);
void srn_cc_cam_clear(struct srn_cc_cam *c, uint32_t proc);

/* ---- FF array ------------------------------------------------------------ */
/* Merge ev into e (CC-07): bytes summed, count, first SN kept, last SN and
 * timestamps updated, RTT timestamps and FW data of the latest event kept. */
void srn_cc_ff_merge(struct srn_cc_ff_entry *e, const struct srn_cc_ev *ev);

/* ---- context store ------------------------------------------------------- */
struct srn_cc_flow_rec {
	struct softrnic_cc_ctx ctx;
	uint32_t flow_id;
	uint32_t rate_kbps;
	uint32_t algo_gen;          /* engine's algo_gen when the context was initialised */
};
struct srn_cc_cline {               /* one cache line */
	struct srn_cc_flow_rec rec;
	uint64_t lru;               /* last use stamp */
	uint8_t valid, pinned;
};
struct srn_cc_bslot {               /* one backing-store slot (open addressing) */
	struct srn_cc_flow_rec rec;
	uint8_t used;
};
struct srn_cc_ctxstore {
	struct srn_cc_cline *cache;
	uint32_t n_cache;
	struct srn_cc_bslot *store;
	uint32_t store_mask;        /* table size - 1 (power of two) */
	uint32_t store_count, store_max;
	uint64_t stamp;
};
enum srn_cc_ctx_src { SRN_CC_CTX_HIT, SRN_CC_CTX_RELOAD, SRN_CC_CTX_NEW };
/* Bring flow's record into the cache and pin it. Evicts the LRU unpinned
 * line to the backing store if needed. Returns the line index, or
 * SRN_EBUSY if every line is pinned. Bumps CTX_* counters. */
int  srn_cc_ctx_acquire(struct srn_cc_ctxstore *s, uint32_t flow_id, enum srn_cc_ctx_src *src,
			uint64_t *ctr);
void srn_cc_ctx_release(struct srn_cc_ctxstore *s, uint32_t line);
struct srn_cc_flow_rec *srn_cc_ctx_find(struct srn_cc_ctxstore *s, uint32_t flow_id,
					bool *in_cache);
int  srn_cc_ctx_remove(struct srn_cc_ctxstore *s, uint32_t flow_id); /* 0/SRN_EBUSY/SRN_ENOENT */

/* ---- slices and processors ----------------------------------------------- */
struct srn_cc_slice {
	enum srn_cc_slice_state state;
	srn_ts arb_since;           /* when it entered ARB */
	uint32_t nonempty;          /* bit per class with a non-empty FF entry */
};
struct srn_cc_proc {
	bool running, blocked;      /* blocked: rate FIFO full at completion */
	bool publish;
	uint32_t flow_id, flow_hash, line;
	srn_ts started, done_at;
	uint32_t invocations;
	uint64_t runs;
	struct softrnic_cc_result res;
};

/* ---- engine -------------------------------------------------------------- */
struct srn_cc_engine {
	struct srn_cc_cfg cfg;
	struct srn_mem mem;
	uint64_t ctr[SRN_CC_CTR_MAX];
	struct srn_cc_prng prng;

	struct srn_cc_fifo txq, rxq;
	bool fw_valid;                       /* FW event unit: one register */
	struct srn_cc_ev fw_ev;
	srn_ts fw_t_in;
	uint32_t rr_next;                    /* selector: 0 TX, 1 RX, 2 FW */

	bool pending_valid;                  /* selected event waiting (CAM miss / full entry) */
	struct srn_cc_ev pending;
	bool sel_stalled;                    /* pending cannot be placed until something changes */

	struct srn_cc_cam cam;
	struct srn_cc_slice *slice;
	struct srn_cc_ff_entry *ff;          /* [proc * n_classes + class] */
	uint64_t *trans;                     /* [slice][from][to] */
	uint32_t arb_next;                   /* arbiter round-robin pointer */
	uint32_t n_arb;                      /* slices in ARB */

	struct srn_cc_proc *proc;
	struct srn_cc_ctxstore cs;

	struct srn_cc_rate_update *rq;       /* rate-update FIFO */
	uint32_t rq_head, rq_count;

	uint32_t algo_gen;                   /* bumped by srn_cc_set_algo (CC-14) */
	srn_ts sel_free, arb_free;           /* next cycle the selector / arbiter may act */
	srn_ts now;                          /* latest time seen */
};

/* cc_step.c */
void srn_cc_slice_input(struct srn_cc_engine *eng, uint32_t s, enum srn_cc_slice_input in, srn_ts t);
int  srn_cc_rq_push(struct srn_cc_engine *eng, const struct srn_cc_rate_update *u);

#endif /* SRN_CC_INT_H */
