/*
 * srn_cc.h - the congestion-control engine of source 004 (CC-01..CC-13),
 * deterministic and sans-I/O.
 *
 *   TX pipe ──► TX event FIFO ─(WRED per type)─┐
 *   RX pipe ──► RX event FIFO ─(WRED per type)─┼─► round-robin selector ─► type→class
 *   FW/host ──► FW event unit (no FIFO) ───────┘            │
 *                                                          ▼
 *        CCP control: CAM (flow → processor), one slice (fig. 9 FSM) per
 *        processor, coalescing into the FF array (processor × class),
 *        arbiter (one grant per cycle), flow-ID hash
 *                                                          │
 *                                                          ▼
 *        CCP: farm of N processors + context store (cache + backing store)
 *                                                          │
 *                                                          ▼
 *        TX rate-update FIFO ─► TX pipe (per-flow pacer, RTT probes)
 *
 * Driving loop (the runtime, the simulator, tests):
 *
 *     srn_cc_post_event(eng, &ev, now);                  // from TX/RX pipes, FW
 *     if (srn_cc_expiry(eng) <= now) srn_cc_handle_expiry(eng, now);
 *     while (srn_cc_pop_rate_update(eng, &upd) == 0)
 *             tx_pipe_apply(&upd);                       // pacer rate, RTT probe
 *
 * Time: every function that may change state takes `now` (ns). The engine
 * models a CCC clock (cfg.cycle_ns: the selector moves one event and the
 * arbiter grants one processor per cycle) and CC processors that take
 * cfg.proc_ns per algorithm invocation (+ cfg.ctx_miss_ns when a context
 * comes from the backing store). The algorithm is called when a processor
 * is granted; its result reaches the rate-update FIFO when the processor's
 * completion deadline passes. The engine never reads a clock and allocates
 * memory only in srn_cc_engine_new.
 *
 * Errors: functions returning int return 0 or a negative enum srn_err.
 */
#ifndef SRN_CC_H
#define SRN_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/srn_core.h"
#include "softrnic/cc_algo.h"

#define SRN_CC_MAX_PROCS 256u

/* ------------------------------------------------------------------------ */
/* Events as the pipes post them (source 004, table 2).                      */
struct srn_cc_ev {
	uint8_t  type;        /* enum softrnic_cc_ev_type */
	uint32_t flow_id;
	uint32_t sn;          /* sequence number (PSN for RoCE) */
	uint32_t bytes;       /* TX: bytes sent in the burst */
	uint32_t fw_data;     /* FW: opaque payload */
	srn_ts   ts;          /* when it happened (RTT: the response's arrival, T4) */
	srn_ts   rtt_t1, rtt_t2, rtt_t3; /* RTT: the probe's three timestamps */
};

extern const char *const srn_cc_ev_type_names[SOFTRNIC_CC_EV_NTYPES];
/* true for the types that enter the TX FIFO (TX, RTT_SENT); RX FIFO: CNP,
 * NACK, ACK, RTT; FW goes to the firmware event unit. */
bool srn_cc_ev_is_tx(unsigned type);

/* ------------------------------------------------------------------------ */
/* Slice state machine (source 004 fig. 9; CC-06).                           */
enum srn_cc_slice_state {
	SRN_CC_SLICE_IDLE,
	SRN_CC_SLICE_ARB,
	SRN_CC_SLICE_BUSY,
	SRN_CC_SLICE_MORE_WORK_A,
	SRN_CC_SLICE_FW,
	SRN_CC_SLICE_MORE_WORK_B,
	SRN_CC_SLICE_NSTATES
};
extern const char *const srn_cc_slice_state_names[SRN_CC_SLICE_NSTATES];

/* The inputs of the slice FSM. */
enum srn_cc_slice_input {
	SRN_CC_IN_EVENT,       /* an event for this slice's flow arrived (merged) */
	SRN_CC_IN_GRANT,       /* the arbiter granted the processor */
	SRN_CC_IN_DONE,        /* the processor signalled completion */
	SRN_CC_IN_FW_OVERRIDE, /* firmware asserts FW-override */
	SRN_CC_IN_FW_RELEASE,  /* firmware asserts FW-release */
	SRN_CC_IN_N
};
extern const char *const srn_cc_slice_input_names[SRN_CC_IN_N];

/* Pure transition function: the next state, or SRN_CC_SLICE_NSTATES when
 * the input is not accepted in that state (fig. 9 has no such edge). A
 * DONE outside BUSY/MORE_WORK_A is accepted and leaves the state unchanged
 * ("if the FSM is still BUSY..."). */
enum srn_cc_slice_state srn_cc_slice_next(enum srn_cc_slice_state s, enum srn_cc_slice_input in);

/* ------------------------------------------------------------------------ */
/* Configuration                                                              */
struct srn_cc_wred {
	uint32_t th1;         /* below: never drop */
	uint32_t th2;         /* at or above: always drop; linear in between */
};

typedef void (*srn_cc_trace_fn)(void *user, uint32_t slice, enum srn_cc_slice_state from,
				enum srn_cc_slice_state to, enum srn_cc_slice_input in, srn_ts t);

struct srn_cc_cfg {
	uint32_t n_procs;           /* CC processors = slices = CAM entries, 1..256 */
	uint32_t tx_fifo_depth;     /* TX event FIFO entries */
	uint32_t rx_fifo_depth;     /* RX event FIFO entries */
	struct srn_cc_wred wred[SOFTRNIC_CC_EV_NTYPES]; /* per type (FW entry unused) */
	uint8_t  type_class[SOFTRNIC_CC_EV_NTYPES];     /* type → class table */
	uint32_t n_classes;         /* 1..8 (source 004 uses 5) */
	bool     coalesce;          /* false: an FF entry holds one event; the next
				     * one for a full entry waits at the selector */
	uint32_t ctx_cache_entries; /* fast context cache (>= n_procs), LRU */
	uint32_t ctx_store_flows;   /* backing store capacity (flows) */
	srn_ts   cycle_ns;          /* CCC clock period (0: infinitely fast) */
	srn_ts   proc_ns;           /* processor time per algorithm invocation */
	srn_ts   ctx_miss_ns;       /* extra processor time on a context cache miss */
	uint32_t rate_fifo_depth;   /* TX rate-update FIFO entries */
	uint32_t line_rate_kbps;
	uint32_t min_rate_kbps;
	uint32_t default_rate_kbps; /* CC-11: rate of a new flow */
	bool     new_flow_rtt_request; /* CC-11: a new flow asks for an RTT probe */
	uint64_t seed;              /* PRNG seed (WRED, CAM random choice) */
	const struct softrnic_cc_algo *algo;
	srn_cc_trace_fn on_transition; /* optional: every slice transition */
	void *trace_user;
};
/* Defaults: 16 processors, FIFOs of 256 with WRED TH1/TH2 = 192/256 for
 * TX/RTT_SENT/ACK, 224/256 for CNP/NACK/RTT; 5 classes (TX+RTT_SENT, CNP,
 * NACK, ACK, RTT+FW); coalescing on; cache 64, store 65536 flows;
 * cycle 1 ns (1 GHz CCC), 100 ns per invocation, 200 ns context miss;
 * line rate 100 Gbit/s, min 1 Mbit/s, default rate = line rate; DCQCN
 * (ConnectX parameter set). */
void srn_cc_cfg_default(struct srn_cc_cfg *cfg);

/* ------------------------------------------------------------------------ */
/* Counters                                                                   */
#define SRN_CC_COUNTERS(X) \
	X(EV_POSTED)        X(TX_FIFO_IN)        X(RX_FIFO_IN)        X(FW_IN) \
	X(FW_BUSY_REJECTS)  X(WRED_DROPS)        X(FIFO_OVERFLOW) \
	X(DROP_TX)          X(DROP_RTT_SENT)     X(DROP_CNP)          X(DROP_NACK) \
	X(DROP_ACK)         X(DROP_RTT) \
	X(SEL_TX)           X(SEL_RX)            X(SEL_FW) \
	X(CAM_HITS)         X(CAM_MISSES)        X(CAM_STALLS)        X(CAM_WRITES) \
	X(COALESCED)        X(COALESCE_STALLS)   X(GRANTS) \
	X(PROC_RUNS)        X(ALGO_CALLS)        X(PROC_DONE) \
	X(CTX_HITS)         X(CTX_MISSES)        X(CTX_RELOADS)       X(CTX_EVICTIONS) \
	X(NEW_FLOWS)        X(CTX_STORE_FULL) \
	X(RATE_UPDATES)     X(RATE_FIFO_STALLS)  X(RATE_CLAMPED)      X(RTT_REQUESTS) \
	X(FW_OVERRIDES)     X(FW_RELEASES)       X(FW_RATE_SETS)      X(BAD_SIGNALS) \
	X(DONE_IGNORED)     X(ALGO_SWAPS)        X(CTX_REINITS)

enum srn_cc_ctr {
#define SRN_CC_CTR_ENUM(n) SRN_CC_CTR_##n,
	SRN_CC_COUNTERS(SRN_CC_CTR_ENUM)
#undef SRN_CC_CTR_ENUM
	SRN_CC_CTR_MAX
};
extern const char *const srn_cc_ctr_names[SRN_CC_CTR_MAX]; /* lower-case */

/* ------------------------------------------------------------------------ */
/* Engine                                                                     */
struct srn_cc_engine;

/* Returns SRN_EINVAL for a bad configuration, SRN_ENOMEM if an allocation
 * fails (nothing leaks). */
int  srn_cc_engine_new(struct srn_cc_engine **out, const struct srn_cc_cfg *cfg,
		       const struct srn_mem *mem);
void srn_cc_engine_del(struct srn_cc_engine *eng);

/* Input. TX/RTT_SENT go to the TX FIFO, CNP/NACK/ACK/RTT to the RX FIFO,
 * each through its WRED; FW to the firmware event unit.
 * Returns 0 (queued), SRN_EDROP (WRED dropped it; counted), SRN_EBUSY (FW
 * event while the previous one is not consumed yet), SRN_EINVAL. */
int srn_cc_post_event(struct srn_cc_engine *eng, const struct srn_cc_ev *ev, srn_ts now);

/* Earliest time anything is due (SRN_TS_NEVER if idle); run handle_expiry
 * when it is <= now. */
srn_ts srn_cc_expiry(const struct srn_cc_engine *eng);
void   srn_cc_handle_expiry(struct srn_cc_engine *eng, srn_ts now);

/* Output: the TX rate-update FIFO (CC-10). 0 or SRN_EAGAIN when empty. */
struct srn_cc_rate_update {
	uint32_t flow_id;
	uint32_t rate_kbps;
	bool     rtt_request;
	uint32_t proc_id;     /* UINT32_MAX for firmware-set rates */
	srn_ts   ts;          /* when it entered the FIFO */
};
int srn_cc_pop_rate_update(struct srn_cc_engine *eng, struct srn_cc_rate_update *upd);

/* Firmware (CC-06): override / release the slice of processor `proc`;
 * SRN_ESTATE (counted as BAD_SIGNALS) when fig. 9 has no such edge. */
int srn_cc_fw_override(struct srn_cc_engine *eng, uint32_t proc, srn_ts now);
int srn_cc_fw_release(struct srn_cc_engine *eng, uint32_t proc, srn_ts now);
/* Firmware computing a rate in software (while it overrides): straight into
 * the rate-update FIFO. SRN_ENOMEM if the FIFO is full. */
int srn_cc_fw_set_rate(struct srn_cc_engine *eng, uint32_t flow_id, uint32_t rate_kbps,
		       bool rtt_request, srn_ts now);

/* Replace the algorithm while the engine runs (CC-14). The algorithm is
 * checked as at creation (ABI version, context size, on_event): SRN_EINVAL
 * and the old one stays. On success the new one is called for every run
 * from now on; each flow's context is re-initialised at its next run as a
 * new flow's (zeroed, default rate, RTT request, the new algorithm's init):
 * contexts written by the old algorithm are never handed to the new one.
 * O(1): the contexts are marked stale by a generation number, not walked.
 * Processor runs already granted finish with the results they computed. */
int srn_cc_set_algo(struct srn_cc_engine *eng, const struct softrnic_cc_algo *algo);
const struct softrnic_cc_algo *srn_cc_algo(const struct srn_cc_engine *eng);

/* FW programs the type-to-class table (CC-04). */
int srn_cc_set_type_class(struct srn_cc_engine *eng, unsigned type, unsigned class_id);
int srn_cc_type_class(const struct srn_cc_engine *eng, unsigned type);

/* A flow went away (QP destroyed): forget its context. SRN_EBUSY while a
 * processor runs it, SRN_ENOENT if unknown. */
int srn_cc_flow_del(struct srn_cc_engine *eng, uint32_t flow_id);

/* ------------------------------------------------------------------------ */
/* Observation (tests, `softrnic stats`, the simulator).                     */
const uint64_t *srn_cc_counters(const struct srn_cc_engine *eng);
uint32_t srn_cc_n_procs(const struct srn_cc_engine *eng);
enum srn_cc_slice_state srn_cc_slice_state_of(const struct srn_cc_engine *eng, uint32_t slice);
/* how many times slice `slice` (or all slices if UINT32_MAX) went from → to */
uint64_t srn_cc_transitions(const struct srn_cc_engine *eng, uint32_t slice,
			    enum srn_cc_slice_state from, enum srn_cc_slice_state to);
/* CAM: search by flow (0 and *proc, or SRN_ENOENT), direct read by proc */
int srn_cc_cam_search(const struct srn_cc_engine *eng, uint32_t flow_id, uint32_t *proc);
int srn_cc_cam_read(const struct srn_cc_engine *eng, uint32_t proc, uint32_t *flow_id);

struct srn_cc_ff_entry {       /* one FF-array entry: coalesced events (CC-07) */
	uint32_t count;
	uint16_t type_mask;
	uint8_t  last_type;
	uint32_t sn_first, sn_last;
	uint64_t bytes;
	srn_ts   ts_first, ts_last;
	srn_ts   rtt_t1, rtt_t2, rtt_t3, rtt_t4;
	uint32_t fw_data;
};
int srn_cc_ff_read(const struct srn_cc_engine *eng, uint32_t proc, uint32_t class_id,
		   struct srn_cc_ff_entry *out);

uint32_t srn_cc_fifo_depth(const struct srn_cc_engine *eng, bool tx);
bool     srn_cc_fw_pending(const struct srn_cc_engine *eng);
uint32_t srn_cc_rate_fifo_depth(const struct srn_cc_engine *eng);
bool     srn_cc_selector_stalled(const struct srn_cc_engine *eng);

struct srn_cc_proc_info {
	bool     running;
	uint32_t flow_id;
	uint32_t flow_hash;
	srn_ts   started, done_at;
	uint32_t invocations;       /* algorithm calls in the current/last run */
	uint64_t runs;              /* runs since creation */
};
int srn_cc_proc_info(const struct srn_cc_engine *eng, uint32_t proc, struct srn_cc_proc_info *out);

/* Flow state as the context store holds it (cache first, then backing). */
struct srn_cc_flow_state {
	uint32_t rate_kbps;
	bool     in_cache;
	struct softrnic_cc_ctx ctx;
};
int srn_cc_flow_state(const struct srn_cc_engine *eng, uint32_t flow_id, struct srn_cc_flow_state *out);

/* ------------------------------------------------------------------------ */
/* Building blocks, exposed for tests and other engines.                     */

/* WRED drop probability in parts per million at occupancy `occ`
 * (source 004 fig. 7): 0 below th1, (occ-th1)/(th2-th1) up to th2, 1 above. */
uint32_t srn_cc_wred_prob_ppm(const struct srn_cc_wred *w, uint32_t occ);

/* Deterministic PRNG (splitmix64 seeded, xorshift64*). */
struct srn_cc_prng { uint64_t s; };
void     srn_cc_prng_seed(struct srn_cc_prng *p, uint64_t seed);
uint64_t srn_cc_prng_next(struct srn_cc_prng *p);
uint32_t srn_cc_prng_below(struct srn_cc_prng *p, uint32_t n);   /* uniform in [0, n) */
/* WRED decision: true = drop */
bool srn_cc_wred_drop(const struct srn_cc_wred *w, uint32_t occ, struct srn_cc_prng *p);

/* Flow-ID hash handed to the processor with the flow ID (CC-08). */
uint32_t srn_cc_flow_hash(uint32_t flow_id);

/* Built-in algorithms (CC-15), see cc_algos.h for their parameters. */
extern const struct softrnic_cc_algo srn_cc_algo_dcqcn;        /* ConnectX defaults */
extern const struct softrnic_cc_algo srn_cc_algo_dcqcn_paper;  /* SIGCOMM'15 set */
extern const struct softrnic_cc_algo srn_cc_algo_dcqcn_sw;     /* timers scaled to a software datapath */
extern const struct softrnic_cc_algo srn_cc_algo_timely;       /* SIGCOMM'15 set */
extern const struct softrnic_cc_algo srn_cc_algo_timely_seg;   /* + one sample per 64 KB */

#endif /* SRN_CC_H */
