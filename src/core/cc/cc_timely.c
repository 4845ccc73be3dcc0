/*
 * cc_timely.c - TIMELY (Mittal et al., "TIMELY: RTT-based Congestion
 * Control for the Datacenter", SIGCOMM'15) as a softrnic CC algorithm,
 * fed by the RTT probes of source 004 (network RTT = (T4-T1) - (T3-T2)).
 *
 * Per RTT sample (paper, Algorithm 1):
 *   new_rtt_diff = rtt - prev_rtt; prev_rtt = rtt
 *   rtt_diff = (1 - a) * rtt_diff + a * new_rtt_diff
 *   gradient = rtt_diff / minRTT
 *   rtt < Tlow:        rate += delta
 *   rtt > Thigh:       rate *= 1 - beta * (1 - Thigh / rtt)
 *   gradient <= 0:     rate += N * delta   (N = 5 after 5 such in a row: HAI)
 *   else:              rate *= 1 - beta * gradient   (gradient capped at 1)
 * Integer fixed point, no libc. After each answer it asks for the next
 * probe (one outstanding); a probe unanswered for probe_timeout_ns is asked
 * for again on the next event.
 */
#include "cc_algos.h"

SOFTRNIC_CC_CTX_CHECK(struct srn_cc_timely_ctx);

#define US 1000ull

const struct srn_cc_timely_params srn_cc_timely_params_paper = {
	.t_low_ns = 50 * US,
	.t_high_ns = 500 * US,
	.min_rtt_ns = 20 * US,
	.add_step_kbps = 10 * 1000,      /* 10 Mbit/s */
	.beta_q10 = 819,                 /* 0.8 */
	.ewma_alpha_q10 = 896,           /* 0.875 */
	.hai_n = 5,
	.probe_timeout_ns = 1000 * US,   /* softrnic choice */
	.fast_start = 1,                 /* softrnic choice (CC-11) */
	.seg_bytes = 0,
};

/* The paper's sampling: one RTT sample per completed 64 KB segment, so a
 * flow is updated in proportion to its rate (the property behind the
 * unfairness Zhu et al. analyse, CoNEXT'16) */
const struct srn_cc_timely_params srn_cc_timely_params_seg = {
	.t_low_ns = 50 * US,
	.t_high_ns = 500 * US,
	.min_rtt_ns = 20 * US,
	.add_step_kbps = 10 * 1000,
	.beta_q10 = 819,
	.ewma_alpha_q10 = 896,
	.hai_n = 5,
	.probe_timeout_ns = 1000 * US,
	.fast_start = 1,
	.seg_bytes = 64 * 1024,
};

static uint32_t add_rate(uint32_t rate, uint64_t add, uint32_t line)
{
	uint64_t r = (uint64_t)rate + add;
	return r > line ? line : (uint32_t)r;
}

static uint32_t sub_rate(uint32_t rate, uint64_t sub, uint32_t min)
{
	uint64_t r = sub >= rate ? 0 : rate - sub;
	return r < min ? min : (uint32_t)r;
}

/* rate * beta * (1 - Thigh / rtt) */
static uint64_t high_cut(uint32_t rate, const struct srn_cc_timely_params *p, uint64_t rtt)
{
	uint64_t frac_q16 = ((rtt - p->t_high_ns) << 16) / rtt;    /* 1 - Thigh/rtt */
	return (((uint64_t)rate * p->beta_q10) >> 10) * frac_q16 >> 16;
}

static uint32_t on_sample(struct srn_cc_timely_ctx *t, const struct srn_cc_timely_params *p,
			  uint64_t rtt, uint32_t rate, const struct softrnic_cc_event *ev)
{
	uint32_t line = ev->line_rate_kbps, min = ev->min_rate_kbps;
	if (rtt > UINT32_MAX)
		rtt = UINT32_MAX;
	t->last_rtt_ns = (uint32_t)rtt;
	if (t->samples++ == 0) {
		t->prev_rtt_ns = (uint32_t)rtt;
		t->rtt_diff_ns = 0;
		if (rtt < p->t_low_ns)
			return p->fast_start ? line : add_rate(rate, p->add_step_kbps, line);
		if (rtt > p->t_high_ns)
			return sub_rate(rate, high_cut(rate, p, rtt), min);
		return add_rate(rate, p->add_step_kbps, line);
	}
	int64_t new_diff = (int64_t)rtt - (int64_t)t->prev_rtt_ns;
	t->prev_rtt_ns = (uint32_t)rtt;
	t->rtt_diff_ns += (new_diff - t->rtt_diff_ns) * (int64_t)p->ewma_alpha_q10 / 1024;

	if (rtt < p->t_low_ns) {
		t->neg_count = 0;
		return add_rate(rate, p->add_step_kbps, line);
	}
	if (rtt > p->t_high_ns) {
		t->neg_count = 0;
		return sub_rate(rate, high_cut(rate, p, rtt), min);
	}
	int64_t grad_q16 = t->rtt_diff_ns * 65536 / (int64_t)(p->min_rtt_ns ? p->min_rtt_ns : 1);
	if (grad_q16 <= 0) {
		t->neg_count++;
		uint64_t n = t->neg_count >= p->hai_n ? p->hai_n : 1;
		return add_rate(rate, n * p->add_step_kbps, line);
	}
	t->neg_count = 0;
	if (grad_q16 > 65536)
		grad_q16 = 65536;
	uint64_t cut = (((uint64_t)rate * p->beta_q10) >> 10) * (uint64_t)grad_q16 >> 16;
	return sub_rate(rate, cut, min);
}

void srn_cc_timely_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
			struct softrnic_cc_result *res)
{
	struct srn_cc_timely_ctx *t = SOFTRNIC_CC_CTX_PRIV(ctx, struct srn_cc_timely_ctx);
	t->waiting = 1;                 /* the engine asks for the first probe */
	t->last_req_ts = fi->now;
	res->rtt_request = 1;
}

void srn_cc_timely_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
			 struct softrnic_cc_result *res)
{
	const struct srn_cc_timely_params *p = ev->params;
	struct srn_cc_timely_ctx *t = SOFTRNIC_CC_CTX_PRIV(ctx, struct srn_cc_timely_ctx);
	int rtt_ev = (ev->type_mask >> SOFTRNIC_CC_EV_RTT) & 1;

	if (rtt_ev && ev->rtt_t4 >= ev->rtt_t1 && ev->rtt_t3 >= ev->rtt_t2 &&
	    ev->rtt_t4 - ev->rtt_t1 > ev->rtt_t3 - ev->rtt_t2) {
		uint64_t rtt = (ev->rtt_t4 - ev->rtt_t1) - (ev->rtt_t3 - ev->rtt_t2);
		res->rate_kbps = on_sample(t, p, rtt, res->rate_kbps, ev);
		if (p->seg_bytes) {
			t->waiting = 0;         /* next sample after seg_bytes more */
			t->seg_sent = 0;
			return;
		}
		res->rtt_request = 1;   /* keep one probe in flight */
		t->waiting = 1;
		t->last_req_ts = ev->now;
		return;
	}
	if (p->seg_bytes && !t->waiting) {
		t->seg_sent += ev->bytes;       /* TX / RTT_SENT bytes (0 for others) */
		if (t->seg_sent >= p->seg_bytes) {
			res->rtt_request = 1;
			t->waiting = 1;
			t->last_req_ts = ev->now;
			t->seg_sent = 0;
		}
		return;
	}
	if (t->waiting && ev->now - t->last_req_ts >= p->probe_timeout_ns) {
		res->rtt_request = 1;   /* the probe or its answer was lost */
		t->last_req_ts = ev->now;
	}
}
