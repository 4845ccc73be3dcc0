/*
 * cc_engine_bench.c - events per second through the CC engine (source 004
 * CCC/CCP model) on one core, with and without coalescing.
 *
 * Workload: F flows, each sending TX bursts; every 16th event an ACK and
 * every 64th a CNP, posted in batches of 64 events at the same simulated
 * time, then handle_expiry and drain of the rate-update FIFO, then the
 * simulated clock advances. The engine runs DCQCN (ConnectX parameters).
 * Wall time is measured around the whole loop (the engine itself never
 * reads a clock). Reported: posted events/s, events that reached a
 * processor (algorithm invocations), WRED drops.
 *
 *   cc /work/main/bench/cc_engine_bench.c ... ; ./cc_engine_bench [events]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "core/cc/srn_cc.h"

static void *b_calloc(size_t n, size_t s, void *u) { (void)u; return calloc(n, s); }
static void b_free(void *p, void *u) { (void)u; free(p); }

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct result { double evps, wall_s; uint64_t calls, drops, stalls, updates; };

static struct result run(bool coalesce, uint32_t flows, uint64_t n_events, srn_ts step_ns)
{
	struct srn_mem mem = { b_calloc, b_free, NULL };
	struct srn_cc_cfg c;
	srn_cc_cfg_default(&c);
	c.coalesce = coalesce;
	struct srn_cc_engine *e;
	struct result r = { 0 };
	if (srn_cc_engine_new(&e, &c, &mem))
		return r;
	srn_ts now = 0;
	uint64_t posted = 0, updates = 0;
	uint32_t x = 12345;
	double t0 = wall();
	while (posted < n_events) {
		for (int b = 0; b < 64; b++, posted++) {
			x = x * 1664525u + 1013904223u;
			struct srn_cc_ev ev = { .type = SOFTRNIC_CC_EV_TX, .flow_id = (x >> 8) % flows,
						.sn = (uint32_t)posted, .bytes = 4096, .ts = now };
			if (posted % 64 == 63)
				ev.type = SOFTRNIC_CC_EV_CNP;
			else if (posted % 16 == 15)
				ev.type = SOFTRNIC_CC_EV_ACK;
			srn_cc_post_event(e, &ev, now);
		}
		if (srn_cc_expiry(e) <= now)
			srn_cc_handle_expiry(e, now);
		struct srn_cc_rate_update u;
		while (srn_cc_pop_rate_update(e, &u) == 0)
			updates++;
		now += step_ns;
	}
	now += 1000000;
	srn_cc_handle_expiry(e, now);
	double t1 = wall();
	const uint64_t *ctr = srn_cc_counters(e);
	r.wall_s = t1 - t0;
	r.evps = posted / r.wall_s;
	r.calls = ctr[SRN_CC_CTR_ALGO_CALLS];
	r.drops = ctr[SRN_CC_CTR_WRED_DROPS];
	r.stalls = ctr[SRN_CC_CTR_COALESCE_STALLS] + ctr[SRN_CC_CTR_CAM_STALLS];
	r.updates = updates;
	srn_cc_engine_del(e);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 4000000;
	printf("CC engine: 16 processors, 1 ns CCC cycle, 100 ns/invocation, 64-line context cache, DCQCN (ConnectX)\n");
	printf("batches of 64 events; simulated time step per batch as shown\n\n");
	printf("%-10s %6s %9s %12s %14s %12s %10s %9s\n", "coalesce", "flows", "step_ns",
	       "events", "events/s", "algo_calls", "drops", "stalls");
	static const struct { uint32_t flows; srn_ts step; } w[] = {
		{ 16, 6400 }, { 16, 400 }, { 1024, 6400 }, { 1024, 400 },
	};
	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		for (int co = 1; co >= 0; co--) {
			struct result r = run(co, w[i].flows, n, w[i].step);
			printf("%-10s %6u %9llu %12llu %14.0f %12llu %10llu %9llu\n", co ? "on" : "off",
			       w[i].flows, (unsigned long long)w[i].step, (unsigned long long)n, r.evps,
			       (unsigned long long)r.calls, (unsigned long long)r.drops,
			       (unsigned long long)r.stalls);
		}
	}
	return 0;
}
