/*
 * test_cc_sim.c - CC-16 with congestion control running in the simulated
 * hosts' real cores: the published behaviours of docs/cc.md, from the very
 * scenario files under sim/scenarios/ the document shows.
 *   (a) two DCQCN flows on a 40 Gbit/s bottleneck share it fairly
 *   (b) N:1 incast (N = 2, 8, 16) under DCQCN: queue bounded near Kmax,
 *       the bottleneck busy
 *   (c) TIMELY with per-segment RTT samples settles unfairly (Zhu et al.,
 *       CoNEXT'16); with one sample per RTT the same scenario is fair
 *   (d) dcqcn-sw (`cc dcqcn-sw`) in the setup of the real datapath test
 *       (test_cc_datapath.sh, 2:1 at 1 Gbit/s): CNPs cut both senders'
 *       rates, the queue stays near the marking thresholds, no loss
 */
#include <stdlib.h>
#include <string.h>

#include "srn_test.h"
#include "sim/sim_int.h"

static char *slurp(const char *name)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/sim/scenarios/%s", SRN_SOURCE_DIR, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* the device counters of the first hosts of the last run_file */
#define CTR_HOSTS 4u
static uint64_t dev_ctr[CTR_HOSTS][SRN_CTR_MAX];

/* run a scenario file (+ override lines) to its end and take its metrics */
static int run_file(const char *name, const char *extra, struct srn_sim_metrics *m,
		    struct srn_sim_flow_result *fr, uint32_t nfr)
{
	char *text = slurp(name);
	if (!text) {
		fprintf(stderr, "  cannot read sim/scenarios/%s\n", name);
		return -1;
	}
	struct srn_sim_scen sc;
	char err[512] = "";
	srn_sim_scen_init(&sc);
	if (srn_sim_scen_parse(&sc, text, strlen(text), err, sizeof(err)) ||
	    (extra && srn_sim_scen_parse(&sc, extra, strlen(extra), err, sizeof(err)))) {
		fprintf(stderr, "  %s: %s\n", name, err);
		srn_sim_scen_free(&sc);
		return -1;
	}
	struct srn_sim *sim;
	if (srn_sim_new(&sim, &sc, err, sizeof(err))) {
		fprintf(stderr, "  %s: %s\n", name, err);
		srn_sim_scen_free(&sc);
		return -1;
	}
	srn_sim_run_until(sim, sc.duration);
	srn_sim_metrics(sim, m);
	for (uint32_t i = 0; i < nfr && i < m->nflows; i++)
		srn_sim_flow_result(sim, i, &fr[i]);
	memset(dev_ctr, 0, sizeof(dev_ctr));
	for (uint32_t h = 0; h < CTR_HOSTS && h < sim->nhosts; h++)
		memcpy(dev_ctr[h], srn_dev_counters(sim->host[h].dev), sizeof(dev_ctr[h]));
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);
	return 0;
}

SRN_TEST(test_cc_16_a_two_dcqcn_flows_converge_to_a_fair_share)
{
	struct srn_sim_metrics m;
	struct srn_sim_flow_result fr[2];
	REQUIRE(run_file("cc_dcqcn_2flows.sim", NULL, &m, fr, 2) == 0);
	fprintf(stderr, "  (a) jain %.4f util %.4f q p99 %llu flows %.2f / %.2f Gbit/s\n", m.jain,
		m.util, (unsigned long long)m.q_p99, fr[0].win_gbps, fr[1].win_gbps);
	CHECK_EQ(m.jain_n, 2);
	CHECK(m.jain >= 0.9);
	CHECK(m.util >= 0.9);
	CHECK_EQ(m.drops, 0);
	CHECK(m.cnps > 0);                      /* DCQCN reacted to marks */
	CHECK(m.q_p99 <= 2 * 200 * 1024);       /* the queue stays near kmax */
	for (int i = 0; i < 2; i++)
		CHECK(fr[i].win_gbps > 15.0 && fr[i].win_gbps < 25.0);
	/* the same scenario without congestion control fills the 2 MiB buffer */
	struct srn_sim_metrics n;
	REQUIRE(run_file("cc_dcqcn_2flows.sim", "cc none\nduration 20ms\nwindow 10ms 20ms\n", &n,
			 fr, 2) == 0);
	CHECK(n.q_p50 > 4 * m.q_p99);
}

static void incast(uint32_t N)
{
	char name[64];
	snprintf(name, sizeof(name), "cc_incast%u_dcqcn.sim", N);
	struct srn_sim_metrics m;
	struct srn_sim_flow_result fr[16];
	REQUIRE(run_file(name, NULL, &m, fr, 16) == 0);
	fprintf(stderr, "  (b) %u:1 jain %.4f util %.4f q p50 %llu p99 %llu\n", N, m.jain, m.util,
		(unsigned long long)m.q_p50, (unsigned long long)m.q_p99);
	CHECK_EQ(m.jain_n, N);
	CHECK(m.util >= 0.90);
	/* bounded around the marking thresholds: p99 within 1.5 x kmax, far
	 * below the 2 MiB buffer */
	CHECK(m.q_p99 <= 3 * 200 * 1024 / 2);
	CHECK(m.q_p50 <= 200 * 1024);
	CHECK(m.jain >= 0.9);
	for (uint32_t i = 0; i < N; i++)
		CHECK(!fr[i].failed);
}

SRN_TEST(test_cc_16_b_incast_2_queue_bounded_link_busy) { incast(2); }
SRN_TEST(test_cc_16_b_incast_8_queue_bounded_link_busy) { incast(8); }
SRN_TEST(test_cc_16_b_incast_16_queue_bounded_link_busy) { incast(16); }

SRN_TEST(test_cc_16_c_timely_settles_unfairly_per_segment_fair_per_rtt)
{
	struct srn_sim_metrics m;
	struct srn_sim_flow_result fr[2];
	REQUIRE(run_file("cc_timely_unfair.sim", NULL, &m, fr, 2) == 0);
	double hi = fr[0].win_gbps > fr[1].win_gbps ? fr[0].win_gbps : fr[1].win_gbps;
	double lo = fr[0].win_gbps > fr[1].win_gbps ? fr[1].win_gbps : fr[0].win_gbps;
	fprintf(stderr, "  (c) timely-seg %.2f / %.2f Gbit/s (ratio %.3f) jain %.4f util %.4f\n",
		fr[0].win_gbps, fr[1].win_gbps, hi / lo, m.jain, m.util);
	CHECK(m.util >= 0.9);                   /* settled: the link is full ... */
	CHECK(hi / lo >= 1.15);                 /* ... and split unevenly */
	/* one sample per RTT for both flows: the same scenario is fair */
	REQUIRE(run_file("cc_timely_unfair.sim", "cc timely\nduration 60ms\nwindow 30ms 60ms\n", &m,
			 fr, 2) == 0);
	hi = fr[0].win_gbps > fr[1].win_gbps ? fr[0].win_gbps : fr[1].win_gbps;
	lo = fr[0].win_gbps > fr[1].win_gbps ? fr[1].win_gbps : fr[0].win_gbps;
	fprintf(stderr, "  (c) timely     %.2f / %.2f Gbit/s (ratio %.3f) jain %.4f\n",
		fr[0].win_gbps, fr[1].win_gbps, hi / lo, m.jain);
	CHECK(hi / lo < 1.05);
	CHECK(m.util >= 0.9);
}

SRN_TEST(test_cc_16_d_dcqcn_sw_2to1_at_1g_cuts_rates_queue_near_kmin)
{
	struct srn_sim_metrics m;
	struct srn_sim_flow_result fr[2];
	REQUIRE(run_file("cc_dcqcn_sw_2to1_1g.sim", NULL, &m, fr, 2) == 0);
	fprintf(stderr, "  (d) dcqcn-sw jain %.4f util %.4f q p50 %llu p99 %llu max %llu cnps %llu "
		"flows %.3f / %.3f Gbit/s\n", m.jain, m.util, (unsigned long long)m.q_p50,
		(unsigned long long)m.q_p99, (unsigned long long)m.q_max,
		(unsigned long long)m.cnps, fr[0].win_gbps, fr[1].win_gbps);
	/* the receiver (host 0) turned marks into CNPs; both senders (hosts
	 * 1, 2) got them and dcqcn-sw cut their rates below the 1g line rate */
	CHECK(m.ecn_marks > 0);
	CHECK(dev_ctr[0][SRN_CTR_TX_CNPS] > 0);
	for (int h = 1; h <= 2; h++) {
		fprintf(stderr, "  (d) host %d: rx_cnps %llu cc_rate_updates %llu cc_rate_kbps_last %llu\n",
			h, (unsigned long long)dev_ctr[h][SRN_CTR_RX_CNPS],
			(unsigned long long)dev_ctr[h][SRN_CTR_CC_RATE_UPDATES],
			(unsigned long long)dev_ctr[h][SRN_CTR_CC_RATE_KBPS_LAST]);
		CHECK(dev_ctr[h][SRN_CTR_RX_CNPS] > 0);
		CHECK(dev_ctr[h][SRN_CTR_CC_RATE_UPDATES] > 0);
		CHECK(dev_ctr[h][SRN_CTR_CC_RATE_KBPS_LAST] > 0);
		CHECK(dev_ctr[h][SRN_CTR_CC_RATE_KBPS_LAST] < 1000u * 1000u);
	}
	/* the queue near the marking thresholds (kmin 10 KiB, kmax 50 KiB of a
	 * 512 KiB buffer), no loss, the link busy, a fair share */
	CHECK_EQ(m.drops, 0);
	CHECK_EQ(m.timeouts, 0);
	CHECK(m.q_p99 <= 50 * 1024);
	CHECK(m.q_max <= 128 * 1024);
	CHECK(m.util >= 0.85);
	CHECK_EQ(m.jain_n, 2);
	CHECK(m.jain >= 0.9);
	/* the same scenario without congestion control fills the buffer */
	struct srn_sim_metrics n;
	REQUIRE(run_file("cc_dcqcn_sw_2to1_1g.sim", "cc none\n", &n, fr, 2) == 0);
	fprintf(stderr, "  (d) cc none: q p50 %llu drops %llu\n", (unsigned long long)n.q_p50,
		(unsigned long long)n.drops);
	CHECK(n.q_p50 > 8 * m.q_p99);
	CHECK(n.drops > 0);
}

int main(void) { return srn_test_main(); }
