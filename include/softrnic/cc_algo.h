/*
 * softrnic/cc_algo.h - the programmable congestion-control algorithm API
 * (requirement CC-14; source 004, "user programmability": a fixed context
 * structure, a fixed input API and a fixed output API).
 *
 * A congestion-control algorithm is two plain C functions:
 *
 *   void my_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
 *                struct softrnic_cc_result *res);
 *   void my_algo(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
 *                struct softrnic_cc_result *res);
 *
 * described by a `struct softrnic_cc_algo`. The engine (the CCC/CCP model of
 * source 004) calls `init` once when it meets a flow it has no context for,
 * and `on_event` each time a CC processor is given a (possibly coalesced)
 * event of that flow. Between calls the algorithm keeps all of its per-flow
 * state in the fixed-size context; it has no other memory.
 *
 * Rules for algorithm code (they make it runnable on a CC processor, in the
 * simulator and in the NIC alike):
 *  - no libc calls, no global mutable state, no floating point needed (all
 *    built-in algorithms use integer fixed point so that every run is
 *    bit-for-bit repeatable); time comes only from the event (ns);
 *  - per-flow state lives in `ctx` (SOFTRNIC_CC_CTX_SIZE bytes, zeroed
 *    before `init`), read-only parameters in `*params`;
 *  - the result is the flow's new rate and an optional RTT probe request.
 *
 * Context size: 64 bytes. DOCA PCC (BlueField-3) gives an algorithm 48
 * bytes; we give 64 because (a) it is one cache line, so a context is read
 * and written by the context store as one unit (source 004: "context reads
 * and writes complete in 1 to 4 clock cycles"), and (b) DCQCN with lazy
 * timers needs three 64-bit timestamps, a byte counter, two rates, alpha and
 * stage counters: 56 bytes, more than DOCA's 48 (DOCA keeps timers in
 * firmware; a softrnic processor keeps them in the context). TIMELY uses 40.
 * A power of two also keeps the backing store's records aligned.
 *
 * Units: rates in kbit/s (uint32: up to ~4.29 Tbit/s), times in ns (uint64),
 * byte counts in bytes.
 *
 * This header depends on nothing but <stdint.h>; user algorithms include
 * only it.
 */
#ifndef SOFTRNIC_CC_ALGO_H
#define SOFTRNIC_CC_ALGO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOFTRNIC_CC_ABI_VERSION 1u
#define SOFTRNIC_CC_CTX_SIZE    64u

/* Event types the CCC receives (source 004, "event types", seven of them). */
enum softrnic_cc_ev_type {
	SOFTRNIC_CC_EV_TX       = 0, /* TX pipe sent a packet burst (bytes)            */
	SOFTRNIC_CC_EV_RTT_SENT = 1, /* a TX burst that carried an RTT probe request   */
	SOFTRNIC_CC_EV_CNP      = 2, /* congestion notification packet received       */
	SOFTRNIC_CC_EV_NACK     = 3, /* NACK received (explicit or out-of-sequence)    */
	SOFTRNIC_CC_EV_ACK      = 4, /* ACK received                                   */
	SOFTRNIC_CC_EV_RTT      = 5, /* RTT probe response received (T1, T2, T3)       */
	SOFTRNIC_CC_EV_FW       = 6, /* firmware / host injected event                 */
	SOFTRNIC_CC_EV_NTYPES   = 7
};
/* Event classes: the type-to-class table maps the seven types onto at most
 * eight classes (a 3-bit class ID, source 004 table 1). */
#define SOFTRNIC_CC_MAX_CLASSES 8u

/* The per-flow context: opaque to the engine, owned by the algorithm. */
struct softrnic_cc_ctx {
	union {
		unsigned char bytes[SOFTRNIC_CC_CTX_SIZE];
		uint64_t      u64[SOFTRNIC_CC_CTX_SIZE / 8];
	} u;
};

/* View the context as the algorithm's own struct (8-byte aligned). */
#define SOFTRNIC_CC_CTX_PRIV(ctx, type) ((type *)(void *)(ctx)->u.bytes)
#define SOFTRNIC_CC_CTX_CHECK(type) \
	_Static_assert(sizeof(type) <= SOFTRNIC_CC_CTX_SIZE, #type " exceeds SOFTRNIC_CC_CTX_SIZE")

/* What a CC processor receives: one event, or several events of the same
 * flow and class merged by the coalescing unit (source 004, FF array). */
struct softrnic_cc_event {
	uint8_t  type;            /* enum softrnic_cc_ev_type of the last event merged */
	uint8_t  class_id;        /* class from the type-to-class table */
	uint16_t type_mask;       /* bit (1 << type) for every type merged */
	uint32_t flow_id;
	uint32_t flow_hash;       /* hash of flow_id computed by CCP control */
	uint32_t proc_id;         /* processor running this event */
	uint32_t count;           /* number of events merged (>= 1) */
	uint32_t sn_first;        /* sequence number of the first event merged */
	uint32_t sn_last;         /* sequence number of the last event merged */
	uint32_t fw_data;         /* payload of a firmware event (last one merged) */
	uint64_t bytes;           /* TX bytes summed over merged TX/RTT_SENT events */
	uint64_t ts_first;        /* timestamp (ns) of the first event merged */
	uint64_t ts_last;         /* timestamp (ns) of the last event merged */
	uint64_t now;             /* time (ns) at which the processor runs */
	uint64_t rtt_t1;          /* RTT probe: sender's transmit time (sender clock) */
	uint64_t rtt_t2;          /* responder's receive time (responder clock) */
	uint64_t rtt_t3;          /* responder's transmit time (responder clock) */
	uint64_t rtt_t4;          /* sender's receive time of the response (sender clock) */
	uint32_t cur_rate_kbps;   /* rate the flow is paced at when the run starts */
	uint32_t line_rate_kbps;  /* port rate: the engine clamps results to it */
	uint32_t min_rate_kbps;   /* the engine clamps results to at least this */
	uint32_t reserved;
	const void *params;       /* the algorithm's read-only parameter block */
};

/* What it returns. The engine presets rate_kbps to the current rate and
 * rtt_request to 0 before the first event of a run; an algorithm changes
 * only what it decides. */
struct softrnic_cc_result {
	uint32_t rate_kbps;       /* new rate for the flow */
	uint8_t  rtt_request;     /* 1: ask the TX pipe to send an RTT probe */
	uint8_t  reserved[3];
};

/* Handed to init for a flow the engine has no context for (new, or lost). */
struct softrnic_cc_flow_info {
	uint32_t flow_id;
	uint32_t flow_hash;
	uint32_t default_rate_kbps; /* engine's default rate for new flows (CC-11) */
	uint32_t line_rate_kbps;
	uint32_t min_rate_kbps;
	uint32_t reserved;
	uint64_t now;
	const void *params;
};

typedef void (*softrnic_cc_init_fn)(struct softrnic_cc_ctx *ctx,
				    const struct softrnic_cc_flow_info *fi,
				    struct softrnic_cc_result *res);
typedef void (*softrnic_cc_event_fn)(struct softrnic_cc_ctx *ctx,
				     const struct softrnic_cc_event *ev,
				     struct softrnic_cc_result *res);

struct softrnic_cc_algo {
	uint32_t abi_version;       /* SOFTRNIC_CC_ABI_VERSION */
	uint32_t ctx_size;          /* bytes of ctx the algorithm uses (<= CTX_SIZE) */
	const char *name;
	softrnic_cc_init_fn  init;  /* may be NULL: context stays zeroed */
	softrnic_cc_event_fn on_event;
	const void *params;         /* passed as fi->params / ev->params */
};

#define SOFTRNIC_CC_KBPS_PER_MBPS 1000u
#define SOFTRNIC_CC_KBPS_PER_GBPS 1000000u

#ifdef __cplusplus
}
#endif
#endif /* SOFTRNIC_CC_ALGO_H */
