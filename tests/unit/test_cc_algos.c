/*
 * test_cc_algos.c - the algorithm API (CC-14) and the built-in algorithms
 * (CC-15): DCQCN cuts on CNP and recovers toward its target; TIMELY
 * decreases on a positive RTT gradient or above Thigh and increases below
 * Tlow (with HAI after N negative gradients).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "srn_test.h"
#include "core/cc/srn_cc.h"
#include "core/cc/cc_algos.h"

static void *t_calloc(size_t n, size_t s, void *u) { (void)u; return calloc(n, s); }
static void t_free(void *p, void *u) { (void)u; free(p); }
static const struct srn_mem mem = { t_calloc, t_free, NULL };

#define US 1000ull
#define G  SOFTRNIC_CC_KBPS_PER_GBPS
#define M  SOFTRNIC_CC_KBPS_PER_MBPS

/* ---- a user algorithm written only against <softrnic/cc_algo.h> -------- */
struct aimd_ctx { uint32_t cnps, acks; uint64_t last_ts; };
SOFTRNIC_CC_CTX_CHECK(struct aimd_ctx);
static void aimd_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
		      struct softrnic_cc_result *res)
{
	SOFTRNIC_CC_CTX_PRIV(ctx, struct aimd_ctx)->last_ts = fi->now;
	res->rate_kbps = fi->default_rate_kbps;
}
static void aimd_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
		       struct softrnic_cc_result *res)
{
	struct aimd_ctx *a = SOFTRNIC_CC_CTX_PRIV(ctx, struct aimd_ctx);
	a->last_ts = ev->now;
	if (ev->type_mask & (1u << SOFTRNIC_CC_EV_CNP)) {
		a->cnps += ev->count;
		res->rate_kbps /= 2;
	}
	if (ev->type_mask & (1u << SOFTRNIC_CC_EV_ACK)) {
		a->acks += ev->count;
		res->rate_kbps += ev->count * 1000;     /* +1 Mbit/s per ACK */
	}
}
static const struct softrnic_cc_algo aimd = {
	SOFTRNIC_CC_ABI_VERSION, sizeof(struct aimd_ctx), "aimd", aimd_init, aimd_event, NULL,
};

static void post(struct srn_cc_engine *e, unsigned type, uint32_t flow, srn_ts t, uint32_t bytes)
{
	struct srn_cc_ev ev = { .type = (uint8_t)type, .flow_id = flow, .ts = t, .bytes = bytes };
	CHECK_EQ(srn_cc_post_event(e, &ev, t), 0);
}

static int last_rate(struct srn_cc_engine *e, uint32_t *rate)
{
	struct srn_cc_rate_update u;
	int n = 0;
	while (srn_cc_pop_rate_update(e, &u) == 0) {
		*rate = u.rate_kbps;
		n++;
	}
	return n;
}

/* CC-14 */
SRN_TEST(test_cc_14_user_algorithm_fixed_api)
{
	struct srn_cc_cfg c;
	srn_cc_cfg_default(&c);
	c.algo = &aimd;
	c.default_rate_kbps = 10 * G;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	uint32_t rate = 0;
	post(e, SOFTRNIC_CC_EV_TX, 5, 0, 4096);
	srn_cc_handle_expiry(e, 10 * US);
	CHECK_EQ(last_rate(e, &rate), 1);
	CHECK_EQ(rate, 10 * G);
	post(e, SOFTRNIC_CC_EV_CNP, 5, 20 * US, 0);
	srn_cc_handle_expiry(e, 30 * US);
	CHECK_EQ(last_rate(e, &rate), 1);
	CHECK_EQ(rate, 5 * G);
	for (int i = 0; i < 3; i++)
		post(e, SOFTRNIC_CC_EV_ACK, 5, 40 * US, 0);
	srn_cc_handle_expiry(e, 50 * US);
	CHECK(last_rate(e, &rate) >= 1);      /* one run, or two if the processor was busy */
	CHECK(rate >= 5 * G + 1000 && rate <= 5 * G + 3000);   /* coalesced or not */
	struct srn_cc_flow_state fs;
	REQUIRE(srn_cc_flow_state(e, 5, &fs) == 0);
	CHECK_EQ(SOFTRNIC_CC_CTX_PRIV(&fs.ctx, struct aimd_ctx)->cnps, 1);
	CHECK_EQ(SOFTRNIC_CC_CTX_PRIV(&fs.ctx, struct aimd_ctx)->acks, 3);
	srn_cc_engine_del(e);
	/* the engine refuses an algorithm built for another ABI or context size */
	struct softrnic_cc_algo bad = aimd;
	bad.abi_version = 99;
	c.algo = &bad;
	CHECK_EQ(srn_cc_engine_new(&e, &c, &mem), SRN_EINVAL);
	bad = aimd;
	bad.ctx_size = SOFTRNIC_CC_CTX_SIZE + 1;
	CHECK_EQ(srn_cc_engine_new(&e, &c, &mem), SRN_EINVAL);
	CHECK(sizeof(struct softrnic_cc_ctx) == 64 && SOFTRNIC_CC_CTX_SIZE >= 48);
	CHECK(srn_cc_algo_dcqcn.ctx_size <= SOFTRNIC_CC_CTX_SIZE);
	CHECK(srn_cc_algo_timely.ctx_size <= SOFTRNIC_CC_CTX_SIZE);
}

/* DCQCN through the engine: a sender at line rate gets a CNP, its rate is
 * cut to about half, then recovers toward the target as it keeps sending */
static void dcqcn_cut_and_recover(const struct softrnic_cc_algo *algo, uint32_t want_after_1ms)
{
	struct srn_cc_cfg c;
	srn_cc_cfg_default(&c);
	c.algo = algo;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	uint32_t rate = 0;
	post(e, SOFTRNIC_CC_EV_TX, 1, 0, 65536);
	srn_cc_handle_expiry(e, 1 * US);
	CHECK_EQ(last_rate(e, &rate), 1);
	CHECK_EQ(rate, 100 * G);                     /* new flow: default = line rate */
	post(e, SOFTRNIC_CC_EV_CNP, 1, 5 * US, 0);
	srn_cc_handle_expiry(e, 6 * US);
	CHECK_EQ(last_rate(e, &rate), 1);
	CHECK(rate >= 49 * G && rate <= 51 * G);     /* RC *= 1 - alpha/2, alpha ~ 1 */
	uint32_t prev = rate, at_1ms = 0;
	/* keep sending: one TX event per 10 us carrying what the rate allows */
	for (srn_ts t = 10 * US; t <= 5000 * US; t += 10 * US) {
		post(e, SOFTRNIC_CC_EV_TX, 1, t, (uint32_t)((uint64_t)prev * 10 * US / 8000000));
		srn_cc_handle_expiry(e, t + 1 * US);
		uint32_t r = prev;
		last_rate(e, &r);
		CHECK(r >= prev);                        /* recovery never cuts */
		prev = r;
		if (t == 1000 * US)
			at_1ms = r;
	}
	CHECK(at_1ms >= want_after_1ms);
	CHECK(prev >= 99 * G);                       /* back near the target (line rate) */
	CHECK(prev <= 100 * G);
	/* sustained congestion much later (alpha has decayed): a CNP every
	 * 10 us; every cut lowers the rate, alpha builds up again */
	uint32_t r2 = prev, first_cut = 0;
	for (int i = 0; i < 50; i++) {
		srn_ts t = 5100 * US + (srn_ts)i * 10 * US;
		post(e, SOFTRNIC_CC_EV_CNP, 1, t, 0);
		srn_cc_handle_expiry(e, t + 1 * US);
		uint32_t r = r2;
		last_rate(e, &r);
		CHECK(r <= r2);
		if (!first_cut && r < r2)
			first_cut = r2 - r;
		r2 = r;
	}
	CHECK(first_cut > 0);
	CHECK(first_cut < prev / 2);          /* smaller than the first cut: alpha decayed */
	CHECK(r2 < prev - prev / 5);
	srn_cc_engine_del(e);
}

/* CC-15 */
SRN_TEST(test_cc_15_dcqcn_connectx_cut_on_cnp_then_recovery)
{
	dcqcn_cut_and_recover(&srn_cc_algo_dcqcn, 80 * G);
}

/* CC-15 */
SRN_TEST(test_cc_15_dcqcn_paper_cut_on_cnp_then_recovery)
{
	dcqcn_cut_and_recover(&srn_cc_algo_dcqcn_paper, 98 * G);
}

/* CC-15 */
SRN_TEST(test_cc_15_dcqcn_stages_fast_recovery_then_additive)
{
	/* paper set, driven directly: after a cut, 5 timer periods of fast
	 * recovery halve the gap to RT each; then additive increase raises RT */
	const struct srn_cc_dcqcn_params *p = &srn_cc_dcqcn_params_paper;
	struct softrnic_cc_ctx ctx = { 0 };
	struct softrnic_cc_result res = { .rate_kbps = 40 * G };
	struct softrnic_cc_flow_info fi = { .now = 0, .line_rate_kbps = 100 * G, .params = p };
	srn_cc_dcqcn_init(&ctx, &fi, &res);
	struct softrnic_cc_event ev = { .type = SOFTRNIC_CC_EV_CNP, .type_mask = 1u << SOFTRNIC_CC_EV_CNP,
		.count = 1, .now = 0, .line_rate_kbps = 100 * G, .min_rate_kbps = 1 * M, .params = p };
	srn_cc_dcqcn_event(&ctx, &ev, &res);
	struct srn_cc_dcqcn_ctx *d = SOFTRNIC_CC_CTX_PRIV(&ctx, struct srn_cc_dcqcn_ctx);
	CHECK_EQ(res.rate_kbps, 20 * G);              /* alpha = 1: halve */
	CHECK_EQ(d->rt_kbps, 40 * G);
	CHECK_EQ(d->alpha, 1u << 20);                 /* (1-g)*1 + g = 1 */
	ev.type = SOFTRNIC_CC_EV_TX;
	ev.type_mask = 1u << SOFTRNIC_CC_EV_TX;
	uint32_t want = 20 * G;
	for (int k = 1; k <= 5; k++) {                /* fast recovery */
		ev.now = (uint64_t)k * p->timer_ns;
		srn_cc_dcqcn_event(&ctx, &ev, &res);
		want = (want + 40 * G) / 2;
		CHECK_EQ(res.rate_kbps, want);
		CHECK_EQ(d->rt_kbps, 40 * G);
	}
	ev.now = 6 * p->timer_ns;                     /* additive: RT += R_AI */
	srn_cc_dcqcn_event(&ctx, &ev, &res);
	CHECK_EQ(d->rt_kbps, 40 * G + p->ai_kbps);
	CHECK_EQ(res.rate_kbps, (want + 40 * G + p->ai_kbps) / 2);
	CHECK(d->alpha < 1u << 20);                   /* decayed over 6 K periods */
	/* byte counter: B bytes make one byte stage */
	uint16_t bc = d->bc_stage;
	ev.bytes = p->byte_counter;
	srn_cc_dcqcn_event(&ctx, &ev, &res);
	CHECK_EQ(d->bc_stage, bc + 1);
}

/* A DCQCN sender at 1 Gbit/s line rate that sends 35 us worth of bytes every
 * 35 us and gets a CNP every `gap` ns until `cnp_end`: its rate at `sample`
 * (filled per 35 us step: sample[k] = rate at k * 35 us). */
#define SW_STEP (35 * US)
#define SW_STEPS 1200                         /* 42 ms */
static void dcqcn_cnp_train(const struct srn_cc_dcqcn_params *p, uint64_t gap, uint64_t cnp_end,
			    uint32_t *sample)
{
	struct softrnic_cc_ctx ctx = { 0 };
	struct softrnic_cc_result res = { .rate_kbps = 1 * G };
	struct softrnic_cc_flow_info fi = { .now = 0, .line_rate_kbps = 1 * G, .params = p };
	srn_cc_dcqcn_init(&ctx, &fi, &res);
	struct softrnic_cc_event ev = { .count = 1, .line_rate_kbps = 1 * G, .min_rate_kbps = 1 * M,
					.params = p };
	for (int k = 0; k < SW_STEPS; k++) {
		uint64_t t = (uint64_t)k * SW_STEP;
		bool cnp = t < cnp_end && t / gap != (t + SW_STEP) / gap;
		ev.type = cnp ? SOFTRNIC_CC_EV_CNP : SOFTRNIC_CC_EV_TX;
		ev.type_mask = 1u << ev.type;
		ev.now = t;
		ev.bytes = cnp ? 0 : (uint32_t)((uint64_t)res.rate_kbps * SW_STEP / 8000000);
		srn_cc_dcqcn_event(&ctx, &ev, &res);
		sample[k] = res.rate_kbps;
	}
}

static uint32_t mean_rate(const uint32_t *s, int from, int to)
{
	uint64_t sum = 0;
	for (int k = from; k < to; k++)
		sum += s[k];
	return (uint32_t)(sum / (uint64_t)(to - from));
}

/* CC-15: the software-datapath set (dcqcn-sw, docs/cc.md "On the real
 * datapath"). On softrnic's datapath a marked flow gets a CNP about every
 * 350 us (one per receive batch), not every 50 us. With the paper's timers
 * (K = T = 55 us) the ~6 timer periods between two CNPs recover each cut
 * before the next CNP: under sustained marking the flow stays near line
 * rate. With K = T = 2 ms a flow that keeps getting CNPs never increases,
 * so each cut holds; once the CNPs stop it waits T, recovers towards its
 * target (fast recovery) and then adds R_AI per T. */
SRN_TEST(test_cc_15_dcqcn_sw_keeps_cuts_with_a_cnp_every_350us)
{
	static uint32_t paper[SW_STEPS], sw[SW_STEPS], sw1ms[SW_STEPS];
	const uint64_t end = 20000 * US;               /* CNPs for 20 ms */
	const int end_k = (int)(end / SW_STEP);
	dcqcn_cnp_train(&srn_cc_dcqcn_params_paper, 350 * US, end, paper);
	dcqcn_cnp_train(&srn_cc_dcqcn_params_sw, 350 * US, end, sw);
	dcqcn_cnp_train(&srn_cc_dcqcn_params_sw, 1000 * US, end, sw1ms);
	/* paper timers: the cuts do not hold - the flow averages more than
	 * 80 % of line rate over 2..20 ms of CNPs every 350 us */
	CHECK(mean_rate(paper, 2000 * US / SW_STEP, end_k) > 800 * M);
	/* software set: never an increase while CNPs come (every 350 us or
	 * every 1 ms, both shorter than T), and every CNP cuts */
	int cuts = 0;
	for (int k = 1; k < end_k; k++) {
		CHECK(sw[k] <= sw[k - 1]);
		CHECK(sw1ms[k] <= sw1ms[k - 1]);
		cuts += sw1ms[k] < sw1ms[k - 1];
	}
	CHECK(cuts >= 9);                               /* the rate reaches its floor */
	CHECK(sw[2000 * US / SW_STEP] < 100 * M);       /* 6 cuts by 2 ms */
	CHECK(sw1ms[2000 * US / SW_STEP] < 300 * M);    /* 2 cuts of ~1/2 */
	/* after the last CNP: nothing for one T, then fast recovery towards the
	 * target (clamped to the rate at the last cut), then R_AI per T */
	const struct srn_cc_dcqcn_params *p = &srn_cc_dcqcn_params_sw;
	int last = end_k - 1, t_k = (int)(p->timer_ns / SW_STEP);
	CHECK_EQ(sw[last + t_k - 1], sw[last]);
	CHECK(sw[SW_STEPS - 1] > sw[last]);
	uint32_t gain = sw[SW_STEPS - 1] - sw[last];
	uint64_t periods = (uint64_t)(SW_STEPS - 1 - last) * SW_STEP / p->timer_ns;
	CHECK(gain <= periods * p->ai_kbps);            /* additive: at most R_AI per T */
	/* the published sets keep their values (docs/cc.md tables) */
	CHECK_EQ(srn_cc_dcqcn_params_paper.timer_ns, 55 * US);
	CHECK_EQ(srn_cc_dcqcn_params_paper.alpha_period_ns, 55 * US);
	CHECK_EQ(srn_cc_dcqcn_params_paper.g_q10, 4);
	CHECK_EQ(srn_cc_dcqcn_params_connectx.timer_ns, 300 * US);
	CHECK_EQ(p->timer_ns, 2000 * US);
	CHECK_EQ(p->alpha_period_ns, 2000 * US);
	CHECK_EQ(p->g_q10, 64);
	CHECK_EQ(p->ai_kbps, srn_cc_dcqcn_params_paper.ai_kbps);
	CHECK_EQ(p->f_stages, srn_cc_dcqcn_params_paper.f_stages);
	CHECK(strcmp(srn_cc_algo_dcqcn_sw.name, "dcqcn-sw") == 0);
	CHECK(srn_cc_algo_dcqcn_sw.params == p);
}

/* A flow cut once to RC = 500 Mbit/s (1 Gbit/s line, alpha = 1) that then
 * sends `use_pct` % of RC, one TX event per 35 us, for 40 ms: its rate. */
static uint32_t dcqcn_after_cut_using(const struct srn_cc_dcqcn_params *p, uint32_t use_pct)
{
	struct softrnic_cc_ctx ctx = { 0 };
	struct softrnic_cc_result res = { .rate_kbps = 1 * G };
	struct softrnic_cc_flow_info fi = { .now = 0, .line_rate_kbps = 1 * G, .params = p };
	srn_cc_dcqcn_init(&ctx, &fi, &res);
	struct softrnic_cc_event ev = { .type = SOFTRNIC_CC_EV_CNP, .type_mask = 1u << SOFTRNIC_CC_EV_CNP,
		.count = 1, .now = 0, .line_rate_kbps = 1 * G, .min_rate_kbps = 1 * M, .params = p };
	srn_cc_dcqcn_event(&ctx, &ev, &res);
	CHECK_EQ(res.rate_kbps, 500 * M);
	ev.type = SOFTRNIC_CC_EV_TX;
	ev.type_mask = 1u << SOFTRNIC_CC_EV_TX;
	for (uint64_t t = SW_STEP; t <= 40000 * US; t += SW_STEP) {
		ev.now = t;
		ev.bytes = (uint32_t)((uint64_t)res.rate_kbps * SW_STEP / 8000000 * use_pct / 100);
		srn_cc_dcqcn_event(&ctx, &ev, &res);
	}
	return res.rate_kbps;
}

/* CC-15: dcqcn-sw's increase check (increase_min_use_pct = 75): a timer
 * period raises the rate only if the flow sent at least 75 % of RC * T in
 * it. A sender whose host does not let it send at its rate (measured on the
 * real datapath: a starved sender at 130-400 Mbit/s whose DCQCN rate had
 * climbed to line rate, then sent at line rate when it got the CPU back)
 * keeps its rate; the paper's timer raises it regardless. */
SRN_TEST(test_cc_15_dcqcn_sw_rate_of_a_host_limited_flow_does_not_grow)
{
	const struct srn_cc_dcqcn_params *sw = &srn_cc_dcqcn_params_sw;
	CHECK_EQ(sw->increase_min_use_pct, 75);
	CHECK_EQ(srn_cc_dcqcn_params_paper.increase_min_use_pct, 0);
	CHECK_EQ(srn_cc_dcqcn_params_connectx.increase_min_use_pct, 0);
	CHECK_EQ(dcqcn_after_cut_using(sw, 30), 500 * M);     /* no stage, no increase */
	CHECK_EQ(dcqcn_after_cut_using(sw, 70), 500 * M);
	uint32_t full = dcqcn_after_cut_using(sw, 100);
	CHECK(full > 950 * M);                                /* 20 T: recovered */
	CHECK(dcqcn_after_cut_using(sw, 80) > 900 * M);
	/* the paper's set has no such check: it recovers while sending 30 % */
	CHECK(dcqcn_after_cut_using(&srn_cc_dcqcn_params_paper, 30) > 950 * M);
}

static void timely_sample(struct softrnic_cc_ctx *ctx, struct softrnic_cc_result *res,
			  uint64_t now, uint64_t rtt)
{
	struct softrnic_cc_event ev = { .type = SOFTRNIC_CC_EV_RTT,
		.type_mask = 1u << SOFTRNIC_CC_EV_RTT, .count = 1, .now = now,
		.rtt_t1 = now - rtt - 300, .rtt_t2 = 7000, .rtt_t3 = 7300, .rtt_t4 = now,
		.line_rate_kbps = 100 * G, .min_rate_kbps = 1 * M,
		.params = &srn_cc_timely_params_paper };
	res->rtt_request = 0;
	srn_cc_timely_event(ctx, &ev, res);
	CHECK_EQ(res->rtt_request, 1);              /* next probe */
}

/* CC-15 */
SRN_TEST(test_cc_15_timely_gradient_thresholds_hai)
{
	const struct srn_cc_timely_params *p = &srn_cc_timely_params_paper;
	struct softrnic_cc_ctx ctx = { 0 };
	struct softrnic_cc_result res = { .rate_kbps = 10 * G };
	struct softrnic_cc_flow_info fi = { .now = 0, .params = p };
	srn_cc_timely_init(&ctx, &fi, &res);
	uint64_t t = 1000 * US;
	timely_sample(&ctx, &res, t, 100 * US);       /* first, inside [Tlow, Thigh]: +delta */
	CHECK_EQ(res.rate_kbps, 10 * G + p->add_step_kbps);
	/* rising RTT: positive gradient, multiplicative decrease */
	uint32_t r = res.rate_kbps;
	for (uint64_t rtt = 120; rtt <= 200; rtt += 20) {
		timely_sample(&ctx, &res, t += 100 * US, rtt * US);
		CHECK(res.rate_kbps < r);
		r = res.rate_kbps;
	}
	/* above Thigh: rate *= 1 - beta * (1 - Thigh/rtt) */
	timely_sample(&ctx, &res, t += 100 * US, 600 * US);
	double want = r * (1.0 - 0.8 * (1.0 - 500.0 / 600.0));
	CHECK(res.rate_kbps > want * 0.995 && res.rate_kbps < want * 1.005);
	/* below Tlow: additive increase by delta */
	r = res.rate_kbps;
	timely_sample(&ctx, &res, t += 100 * US, 30 * US);
	CHECK_EQ(res.rate_kbps, r + p->add_step_kbps);

	/* falling RTT inside the band: +delta, then HAI (N * delta) after N in a row */
	struct softrnic_cc_ctx c2 = { 0 };
	struct softrnic_cc_result r2 = { .rate_kbps = 5 * G };
	srn_cc_timely_init(&c2, &fi, &r2);
	t = 1000 * US;
	timely_sample(&c2, &r2, t, 300 * US);
	for (int i = 1; i <= 7; i++) {
		uint32_t before = r2.rate_kbps;
		timely_sample(&c2, &r2, t += 100 * US, (300 - 10 * (uint64_t)i) * US);
		uint32_t step = i >= (int)p->hai_n ? p->hai_n * p->add_step_kbps : p->add_step_kbps;
		CHECK_EQ(r2.rate_kbps - before, step);
	}
	/* a non-RTT event with no probe answer for too long asks again */
	struct softrnic_cc_event tx = { .type = SOFTRNIC_CC_EV_TX, .type_mask = 1u << SOFTRNIC_CC_EV_TX,
		.count = 1, .now = t + p->probe_timeout_ns, .params = p };
	r2.rtt_request = 0;
	srn_cc_timely_event(&c2, &tx, &r2);
	CHECK_EQ(r2.rtt_request, 1);
	r2.rtt_request = 0;
	tx.now += 1;
	srn_cc_timely_event(&c2, &tx, &r2);
	CHECK_EQ(r2.rtt_request, 0);
}

int main(void) { return srn_test_main(); }
