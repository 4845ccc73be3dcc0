/*
 * cc_dcqcn.c - DCQCN reaction point (Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments", SIGCOMM'15) as a softrnic CC algorithm.
 *
 * Written only against <softrnic/cc_algo.h>: integer fixed point, no libc.
 * Timers (alpha update K, rate increase T) are lazy: a CC processor only
 * runs when an event arrives, so every run first replays the timer periods
 * that have elapsed up to ev->now, then applies the event:
 *   CNP: cut  RT = RC; RC = RC * (1 - alpha/2); alpha rises by g
 *   TX bytes: byte counter B; every B bytes one increase stage
 *   timer: every T one increase stage
 *   increase: fast recovery (both stage counts < F): RC = (RC + RT) / 2;
 *             additive (either >= F): RT += R_AI, then RC = (RC + RT) / 2;
 *             hyper (both > F): RT += R_HAI, then RC = (RC + RT) / 2.
 * Before its first CNP a flow runs at its start rate and no timer runs.
 */
#include "cc_algos.h"

SOFTRNIC_CC_CTX_CHECK(struct srn_cc_dcqcn_ctx);

#define US 1000ull

/* ConnectX (mlx5) firmware defaults, as documented by NVIDIA for DCQCN
 * (rpg_* / dce_tcp_* / rate_reduce_monitor_period), see docs/cc.md */
const struct srn_cc_dcqcn_params srn_cc_dcqcn_params_connectx = {
	.g_q10 = 1024 - 1019,            /* dce_tcp_g = 1019: alpha *= 1019/1024 */
	.initial_alpha_q10 = 1023,       /* initial_alpha_value */
	.alpha_period_ns = 1 * US,       /* dce_tcp_rtt */
	.alpha_on_cnp = 0,
	.clamp_target_always = 0,        /* clamp_tgt_rate = 0, ..._after_time_inc = 1 */
	.min_dec_interval_ns = 4 * US,   /* rate_reduce_monitor_period */
	.max_dec_pct = 50,               /* rpg_min_dec_fac */
	.timer_ns = 300 * US,            /* rpg_time_reset */
	.byte_counter = 32767ull * 64,   /* rpg_byte_reset (64-byte units) */
	.f_stages = 1,                   /* rpg_threshold */
	.ai_kbps = 5 * 1000,             /* rpg_ai_rate 5 Mbit/s */
	.hai_kbps = 50 * 1000,           /* rpg_hai_rate 50 Mbit/s */
	.rate_on_first_cnp_kbps = 0,
};

/* The SIGCOMM'15 paper's parameters (g = 1/256, K = T = 55 us, B = 10 MB,
 * F = 5, R_AI = 40 Mbit/s); R_HAI is our choice (see docs/cc.md). */
const struct srn_cc_dcqcn_params srn_cc_dcqcn_params_paper = {
	.g_q10 = 4,
	.initial_alpha_q10 = 1024,
	.alpha_period_ns = 55 * US,
	.alpha_on_cnp = 1,
	.clamp_target_always = 1,
	.min_dec_interval_ns = 0,
	.max_dec_pct = 50,
	.timer_ns = 55 * US,
	.byte_counter = 10ull * 1000 * 1000,
	.f_stages = 5,
	.ai_kbps = 40 * 1000,
	.hai_kbps = 200 * 1000,
	.rate_on_first_cnp_kbps = 0,
};

/* A software datapath (softrnic processes behind `softrnic fabric`): the
 * paper's algorithm and its R_AI / R_HAI / B / F / largest cut, with the
 * timers scaled to the datapath's control loop. The paper picks K and T a
 * little above the NP's CNP interval N = 50 us, so that a flow that is
 * still getting CNPs never increases and alpha decays only after a CNP-free
 * period. On this datapath CNPs reach a sender once per receive batch in
 * which the receiver saw a CE mark (100 us - 1 ms apart while marked) and
 * the loop delay (mark -> CNP at the sender) is 0.3-1 ms; K = T = 2 ms is
 * about twice that. g = 1/16 keeps alpha's time constant K/g = 32 ms of the
 * order of the paper's (55 us * 256 = 14 ms) instead of stretching it 36
 * times. Measured and explained in docs/cc.md ("On the real datapath"). */
const struct srn_cc_dcqcn_params srn_cc_dcqcn_params_sw = {
	.g_q10 = 64,
	.initial_alpha_q10 = 1024,
	.alpha_period_ns = 2000 * US,
	.alpha_on_cnp = 1,
	.clamp_target_always = 1,
	.min_dec_interval_ns = 0,
	.max_dec_pct = 50,
	.timer_ns = 2000 * US,
	.byte_counter = 10ull * 1000 * 1000,
	.f_stages = 5,
	.ai_kbps = 40 * 1000,
	.hai_kbps = 200 * 1000,
	.rate_on_first_cnp_kbps = 0,
	.increase_min_use_pct = 75,
};

#define MAX_CATCHUP 64u   /* bound on replayed periods per run (hot path stays O(1)) */
/* alpha is kept in Q20 (parameters are Q10): with ConnectX's g = 5/1024
 * and 1 us periods a Q10 alpha would truncate to 0 before it can build up */
#define ALPHA_SHIFT 20
#define ALPHA_ONE   (1u << ALPHA_SHIFT)

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

static void increase(struct srn_cc_dcqcn_ctx *d, const struct srn_cc_dcqcn_params *p,
		     uint32_t line)
{
	uint32_t lo = min_u32(d->t_stage, d->bc_stage), hi = max_u32(d->t_stage, d->bc_stage);
	uint64_t rt = d->rt_kbps;
	if (lo > p->f_stages)
		rt += p->hai_kbps;             /* hyper increase */
	else if (hi >= p->f_stages)
		rt += p->ai_kbps;              /* additive increase */
	if (rt > line)                         /* else: fast recovery, RT unchanged */
		rt = line;
	d->rt_kbps = (uint32_t)rt;
	d->rc_kbps = (uint32_t)(((uint64_t)d->rc_kbps + rt) / 2);
}

static void cut(struct srn_cc_dcqcn_ctx *d, const struct srn_cc_dcqcn_params *p, uint64_t now,
		uint32_t min_rate)
{
	if (p->clamp_target_always || d->bc_stage || d->t_stage)
		d->rt_kbps = d->rc_kbps;
	uint64_t red = ((uint64_t)d->rc_kbps * d->alpha) >> (ALPHA_SHIFT + 1);   /* RC * alpha / 2 */
	uint64_t cap = (uint64_t)d->rc_kbps * p->max_dec_pct / 100;
	if (red > cap)
		red = cap;
	uint32_t rc = d->rc_kbps - (uint32_t)red;
	d->rc_kbps = rc < min_rate ? min_rate : rc;
	d->byte_cnt = 0;
	d->bc_stage = d->t_stage = 0;
	d->timer_ts = now;
	d->period_bytes = 0;
	d->last_dec_ts = now;
	d->dec_pending = 0;
}

/* did the flow send at least increase_min_use_pct % of RC * T in a timer
 * period in which it sent `bytes`? (always, if the check is off) */
static int used_enough(const struct srn_cc_dcqcn_ctx *d, const struct srn_cc_dcqcn_params *p,
		       uint64_t bytes)
{
	if (!p->increase_min_use_pct)
		return 1;
	/* bytes * 8e6 / T_ns kbit/s >= RC * pct / 100 */
	return bytes * 8000000ull * 100 >= (uint64_t)d->rc_kbps * p->timer_ns * p->increase_min_use_pct;
}

/* alpha = (1 - g) * alpha (+ g); alpha in Q20, g in Q10 */
static uint32_t alpha_step(uint32_t alpha, uint32_t g, int raise)
{
	uint64_t a = ((uint64_t)alpha * (1024 - g) + (raise ? (uint64_t)g << ALPHA_SHIFT : 0)) / 1024;
	return a > ALPHA_ONE ? ALPHA_ONE : (uint32_t)a;
}

static void run_timers(struct srn_cc_dcqcn_ctx *d, const struct srn_cc_dcqcn_params *p,
		       uint64_t now, uint32_t line)
{
	if (p->alpha_period_ns && now >= d->alpha_ts + p->alpha_period_ns) {
		uint64_t n = (now - d->alpha_ts) / p->alpha_period_ns;
		d->alpha = alpha_step(d->alpha, p->g_q10, d->cnp_in_period);
		d->cnp_in_period = 0;
		for (uint64_t i = 1; i < n && d->alpha; i++) {
			if (i >= 16 * MAX_CATCHUP) {   /* long idle: alpha has decayed away */
				d->alpha = 0;
				break;
			}
			d->alpha = alpha_step(d->alpha, p->g_q10, 0);
		}
		d->alpha_ts += n * p->alpha_period_ns;
	}
	if (p->timer_ns && now >= d->timer_ts + p->timer_ns) {
		uint64_t n = (now - d->timer_ts) / p->timer_ns;
		uint64_t k = n < MAX_CATCHUP ? n : MAX_CATCHUP;
		for (uint64_t i = 0; i < k; i++) {
			/* the bytes since timer_ts were all sent in the first of the
			 * n periods: a TX event in a later one would have run us */
			if (!used_enough(d, p, i == 0 ? d->period_bytes : 0))
				continue;
			increase(d, p, line);
			if (d->t_stage < UINT16_MAX)
				d->t_stage++;
		}
		d->period_bytes = 0;
		d->timer_ts += n * p->timer_ns;
	}
}

void srn_cc_dcqcn_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
		       struct softrnic_cc_result *res)
{
	struct srn_cc_dcqcn_ctx *d = SOFTRNIC_CC_CTX_PRIV(ctx, struct srn_cc_dcqcn_ctx);
	d->rc_kbps = d->rt_kbps = res->rate_kbps;   /* the engine's default rate */
	d->alpha = 0;
	(void)fi;
}

void srn_cc_dcqcn_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
			struct softrnic_cc_result *res)
{
	const struct srn_cc_dcqcn_params *p = ev->params;
	struct srn_cc_dcqcn_ctx *d = SOFTRNIC_CC_CTX_PRIV(ctx, struct srn_cc_dcqcn_ctx);
	uint64_t now = ev->now;
	uint32_t line = ev->line_rate_kbps;
	int cnp = (ev->type_mask >> SOFTRNIC_CC_EV_CNP) & 1;

	d->rc_kbps = res->rate_kbps;       /* firmware may have set the rate */
	if (d->rt_kbps < d->rc_kbps)
		d->rt_kbps = d->rc_kbps;
	if (!d->active) {
		if (!cnp)
			return;
		/* first CNP: start the DCQCN machinery */
		d->active = 1;
		d->alpha = p->initial_alpha_q10 << (ALPHA_SHIFT - 10);
		d->alpha_ts = now;
		d->cnp_in_period = 0;
		if (p->rate_on_first_cnp_kbps) {
			d->rc_kbps = d->rt_kbps = p->rate_on_first_cnp_kbps;
			d->timer_ts = d->last_dec_ts = now;
		} else {
			cut(d, p, now, ev->min_rate_kbps);
			if (p->alpha_on_cnp)
				d->alpha = alpha_step(d->alpha, p->g_q10, 1);
		}
		res->rate_kbps = d->rc_kbps;
		return;
	}
	run_timers(d, p, now, line);
	if (cnp) {
		if (p->alpha_on_cnp) {
			if (!p->min_dec_interval_ns || now - d->last_dec_ts >= p->min_dec_interval_ns)
				cut(d, p, now, ev->min_rate_kbps);
			else
				d->dec_pending = 1;
			d->alpha = alpha_step(d->alpha, p->g_q10, 1);
			d->alpha_ts = now;
		} else {
			d->cnp_in_period = 1;
			if (!p->min_dec_interval_ns || now - d->last_dec_ts >= p->min_dec_interval_ns)
				cut(d, p, now, ev->min_rate_kbps);
			else
				d->dec_pending = 1;
		}
	} else if (d->dec_pending && now - d->last_dec_ts >= p->min_dec_interval_ns) {
		cut(d, p, now, ev->min_rate_kbps);
	}
	if (ev->bytes) {
		uint64_t pb = (uint64_t)d->period_bytes + ev->bytes;
		d->period_bytes = pb > UINT32_MAX ? UINT32_MAX : (uint32_t)pb;
	}
	if (ev->bytes && p->byte_counter) {
		d->byte_cnt += ev->bytes;
		for (uint32_t i = 0; d->byte_cnt >= p->byte_counter; i++) {
			d->byte_cnt -= p->byte_counter;
			if (i < MAX_CATCHUP) {
				increase(d, p, line);
				if (d->bc_stage < UINT16_MAX)
					d->bc_stage++;
			}
		}
	}
	res->rate_kbps = d->rc_kbps;
}
