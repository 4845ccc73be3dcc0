/*
 * cc_algos.h - parameters of the built-in algorithms (CC-15). The
 * algorithms themselves (cc_dcqcn.c, cc_timely.c) include only this header
 * and <softrnic/cc_algo.h>: they are written exactly as a user's would be.
 * See docs/cc.md for the parameter sets and where they come from.
 */
#ifndef SRN_CC_ALGOS_H
#define SRN_CC_ALGOS_H

#include "softrnic/cc_algo.h"

/* DCQCN reaction point (Zhu et al., SIGCOMM'15), integer fixed point.
 * Parameters in Q10 (1024 = 1.0); the context keeps alpha in Q20. */
struct srn_cc_dcqcn_params {
	uint32_t g_q10;               /* alpha gain g, in 1/1024 */
	uint32_t initial_alpha_q10;   /* alpha set at the first CNP */
	uint64_t alpha_period_ns;     /* alpha update timer (paper K) */
	uint8_t  alpha_on_cnp;        /* 1: alpha = (1-g)a + g at each CNP, K restarts (paper);
				       * 0: once per period, +g if a CNP came in it (ConnectX) */
	uint8_t  clamp_target_always; /* 1: RT = RC at every cut (paper); 0: only after an
				       * increase stage (ConnectX clamp_tgt_rate=0,
				       * clamp_tgt_rate_after_time_inc=1) */
	uint64_t min_dec_interval_ns; /* at most one cut per interval (ConnectX
				       * rate_reduce_monitor_period); 0: every CNP cuts */
	uint32_t max_dec_pct;         /* largest single cut in % (ConnectX rpg_min_dec_fac) */
	uint64_t timer_ns;            /* rate increase timer T */
	uint64_t byte_counter;        /* rate increase byte counter B (bytes) */
	uint32_t f_stages;            /* F: fast-recovery stages before additive increase */
	uint32_t ai_kbps;             /* R_AI */
	uint32_t hai_kbps;            /* R_HAI */
	uint32_t rate_on_first_cnp_kbps; /* 0: the first CNP cuts like any other */
	uint32_t increase_min_use_pct; /* softrnic addition, 0 = off (paper, ConnectX): a
				       * timer period raises the rate (and counts as a
				       * stage) only if the flow sent at least this % of
				       * RC * T in it, so the rate of a flow that the host
				       * does not let send at RC does not grow past use */
};
extern const struct srn_cc_dcqcn_params srn_cc_dcqcn_params_connectx;
extern const struct srn_cc_dcqcn_params srn_cc_dcqcn_params_paper;
extern const struct srn_cc_dcqcn_params srn_cc_dcqcn_params_sw;   /* software datapath */
void srn_cc_dcqcn_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
		       struct softrnic_cc_result *res);
void srn_cc_dcqcn_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
			struct softrnic_cc_result *res);

/* DCQCN per-flow state (56 of the 64 context bytes). */
struct srn_cc_dcqcn_ctx {
	uint64_t alpha_ts;            /* start of the current alpha period */
	uint64_t timer_ts;            /* start of the current rate-increase timer period */
	uint64_t last_dec_ts;         /* last rate cut */
	uint64_t byte_cnt;            /* bytes towards the next byte-counter stage */
	uint32_t rc_kbps, rt_kbps;    /* current and target rate */
	uint32_t alpha;               /* Q20: 1 << 20 = 1.0 */
	uint16_t bc_stage, t_stage;   /* byte-counter and timer stages since the last cut */
	uint32_t period_bytes;        /* bytes sent in the current timer period */
	uint8_t  active;              /* a CNP has been seen: timers run */
	uint8_t  cnp_in_period;
	uint8_t  dec_pending;
	uint8_t  pad;
};

/* TIMELY (Mittal et al., SIGCOMM'15): RTT-gradient rate control. */
struct srn_cc_timely_params {
	uint64_t t_low_ns;            /* below: additive increase */
	uint64_t t_high_ns;           /* above: multiplicative decrease by Thigh/RTT */
	uint64_t min_rtt_ns;          /* gradient normaliser */
	uint32_t add_step_kbps;       /* delta */
	uint32_t beta_q10;            /* multiplicative decrease factor beta, Q10 */
	uint32_t ewma_alpha_q10;      /* weight of the new RTT difference, Q10 */
	uint32_t hai_n;               /* N: negative gradients in a row before HAI, and the step multiplier */
	uint64_t probe_timeout_ns;    /* ask again if a probe got no answer */
	uint8_t  fast_start;          /* first sample below t_low: jump to line rate */
	uint32_t seg_bytes;           /* 0: next probe as soon as an answer arrives (one
				       * sample per RTT); else one sample per seg_bytes
				       * sent, as TIMELY samples once per completed segment */
};
extern const struct srn_cc_timely_params srn_cc_timely_params_paper;
extern const struct srn_cc_timely_params srn_cc_timely_params_seg;   /* + 64 KB segments */
void srn_cc_timely_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
			struct softrnic_cc_result *res);
void srn_cc_timely_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
			 struct softrnic_cc_result *res);

/* TIMELY per-flow state (40 of the 64 context bytes). */
struct srn_cc_timely_ctx {
	uint64_t last_req_ts;         /* when the outstanding probe was requested */
	int64_t  rtt_diff_ns;         /* EWMA of successive RTT differences */
	uint32_t prev_rtt_ns;
	uint32_t last_rtt_ns;
	uint32_t neg_count;           /* gradients <= 0 in a row */
	uint32_t samples;
	uint8_t  waiting;             /* a probe is outstanding */
	uint8_t  pad[7];
	uint64_t seg_sent;            /* bytes sent since the last sample (seg_bytes) */
};

#endif /* SRN_CC_ALGOS_H */
