/*
 * test_sim.c - CC-16: the discrete-event simulator (src/sim). Scheduler
 * order, scenario language, framing, the wire delay line, a 2-host
 * transfer through the real core and the switch model, line-rate
 * throughput, a 2:1 bottleneck queue and its ECN marking, determinism of
 * the CSV, Jain/quantile arithmetic and the SVG writer.
 */
#include <stdlib.h>
#include <string.h>

#include "srn_test.h"
#include "sim/sim_int.h"

static int parse(struct srn_sim_scen *sc, const char *text, char *err, size_t errlen)
{
	srn_sim_scen_init(sc);
	return srn_sim_scen_parse(sc, text, strlen(text), err, errlen);
}

/* run a scenario text to its end; csv (optional) gets the time series */
static struct srn_sim *run(struct srn_sim_scen *sc, const char *text, FILE *csv)
{
	char err[512] = "";
	if (parse(sc, text, err, sizeof(err))) {
		fprintf(stderr, "  scenario: %s\n", err);
		return NULL;
	}
	struct srn_sim *sim;
	if (srn_sim_new(&sim, sc, err, sizeof(err))) {
		fprintf(stderr, "  sim: %s\n", err);
		return NULL;
	}
	srn_sim_set_csv(sim, csv);
	srn_sim_run_until(sim, sc->duration);
	return sim;
}

SRN_TEST(test_cc_16_sched_orders_by_time_then_kind_then_index)
{
	struct srn_sim_sched s;
	REQUIRE(srn_sim_sched_init(&s, 8) == 0);
	/* ids 0..7 with (kind, index) keys given in a scrambled order */
	static const struct { enum srn_sim_ev k; uint32_t i; srn_ts t; } src[8] = {
		{ SRN_SIM_EV_TX, 1, 100 }, { SRN_SIM_EV_FABRIC, 0, 100 }, { SRN_SIM_EV_TX, 0, 100 },
		{ SRN_SIM_EV_SAMPLE, 0, 50 }, { SRN_SIM_EV_WIRE, 3, 100 }, { SRN_SIM_EV_TIMER, 2, 200 },
		{ SRN_SIM_EV_START, 0, 0 }, { SRN_SIM_EV_WIRE, 1, 100 },
	};
	for (uint32_t id = 0; id < 8; id++)
		srn_sim_sched_key(&s, id, src[id].k, src[id].i);
	for (int id = 7; id >= 0; id--)
		srn_sim_sched_set(&s, (uint32_t)id, src[id].t);
	/* move one later and back, remove one */
	srn_sim_sched_set(&s, 5, 10);
	srn_sim_sched_set(&s, 5, 200);
	srn_sim_sched_set(&s, 3, SRN_TS_NEVER);
	static const uint32_t want[7] = { 6, 1, 7, 4, 2, 0, 5 };
	for (int k = 0; k < 7; k++) {
		uint32_t id = 99;
		srn_ts t = srn_sim_sched_top(&s, &id);
		CHECK_EQ(id, want[k]);
		CHECK_EQ(t, src[id].t);
		srn_sim_sched_set(&s, id, SRN_TS_NEVER);
	}
	uint32_t id;
	CHECK(srn_sim_sched_top(&s, &id) == SRN_TS_NEVER);
	srn_sim_sched_free(&s);
}

SRN_TEST(test_cc_16_sched_heap_random_against_sorted)
{
	struct srn_sim_sched s;
	enum { N = 500 };
	REQUIRE(srn_sim_sched_init(&s, N) == 0);
	struct srn_fabric_rng r;
	srn_fabric_rng_seed(&r, 42);
	for (uint32_t i = 0; i < N; i++)
		srn_sim_sched_key(&s, i, (enum srn_sim_ev)(i % 6), i);
	for (int round = 0; round < 5000; round++) {
		uint32_t id = (uint32_t)srn_sim_rng_below(&r, N);
		srn_ts t = srn_sim_rng_below(&r, 10) == 0 ? SRN_TS_NEVER : srn_sim_rng_below(&r, 1000);
		srn_sim_sched_set(&s, id, t);
	}
	srn_ts lt = 0;
	uint64_t lk = 0;
	uint32_t n = 0, id;
	srn_ts t;
	while ((t = srn_sim_sched_top(&s, &id)) != SRN_TS_NEVER) {
		CHECK(t > lt || (t == lt && s.key[id] > lk) || n == 0);
		lt = t;
		lk = s.key[id];
		srn_sim_sched_set(&s, id, SRN_TS_NEVER);
		n++;
	}
	CHECK(n > 0 && n <= N);
	srn_sim_sched_free(&s);
}

SRN_TEST(test_cc_16_units)
{
	srn_ts t;
	uint64_t v;
	double p;
	CHECK(srn_sim_parse_time("1.5us", 5, &t) == 0 && t == 1500);
	CHECK(srn_sim_parse_time("10ms", 4, &t) == 0 && t == 10000000);
	CHECK(srn_sim_parse_time("0", 1, &t) == 0 && t == 0);
	CHECK(srn_sim_parse_time("2s", 2, &t) == 0 && t == 2000000000ull);
	CHECK(srn_sim_parse_time("10", 2, &t) == SRN_EINVAL);
	CHECK(srn_sim_parse_time("1xs", 3, &t) == SRN_EINVAL);
	CHECK(srn_sim_parse_rate("40g", 3, &v) == 0 && v == 40000000000ull);
	CHECK(srn_sim_parse_rate("2.5gbps", 7, &v) == 0 && v == 2500000000ull);
	CHECK(srn_sim_parse_rate("0g", 2, &v) == SRN_EINVAL);
	CHECK(srn_sim_parse_bytes("5k", 2, &v) == 0 && v == 5120);
	CHECK(srn_sim_parse_bytes("1m", 2, &v) == 0 && v == 1048576);
	CHECK(srn_sim_parse_bytes("1.5m", 4, &v) == SRN_EINVAL);
	CHECK(srn_sim_parse_prob("0.01", 4, &p) == 0 && p == 0.01);
	CHECK(srn_sim_parse_prob("1.5", 3, &p) == SRN_EINVAL);
}

SRN_TEST(test_cc_16_scenario_good)
{
	struct srn_sim_scen sc;
	char err[512] = "";
	int rc = parse(&sc,
		"# comment line\n"
		"hosts 17\n"
		"link default rate=40g delay=1us buffer=1m kmin=5k kmax=200k pmax=0.01\n"
		"link 0 out.rate=10g in.delay=2us   # trailing comment\n"
		"flow 1 -> 0 start=0 size=inf\n"
		"flow 2 -> 0 start=1.5ms size=4m msg=1m depth=2\n"
		"cc none\n"
		"mtu 1024\n"
		"duration 10ms\n"
		"sample 10us\n"
		"window 5ms 10ms\n"
		"qp timeout=12 retry=5 inflight=256 ack=8\n"
		"seed 7\n", err, sizeof(err));
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "  %s\n", err);
	CHECK_EQ(sc.nhosts, 17);
	CHECK_EQ(sc.nflows, 2);
	CHECK_EQ(sc.flow[1].src, 2);
	CHECK_EQ(sc.flow[1].start, 1500000);
	CHECK_EQ(sc.flow[1].size, 4u << 20);
	CHECK_EQ(sc.flow[1].msg, 1u << 20);
	CHECK_EQ(sc.flow[1].depth, 2);
	CHECK_EQ(sc.flow[0].size, SRN_SIM_SIZE_INF);
	CHECK_EQ(sc.mtu, 1024);
	CHECK_EQ(sc.seed, 7);
	CHECK_EQ(sc.qp_timeout, 12);
	CHECK_EQ(sc.inflight, 256);
	struct srn_sim_link_cfg l;
	srn_sim_scen_link(&sc, 0, SRN_SIM_OUT, &l);
	CHECK_EQ(l.rate_bps, 10000000000ull);
	CHECK_EQ(l.kmin, 5120);
	CHECK_EQ(l.kmax, 204800);
	CHECK_EQ(l.buffer, 1u << 20);
	CHECK_EQ(l.delay, 1000);
	srn_sim_scen_link(&sc, 0, SRN_SIM_IN, &l);
	CHECK_EQ(l.rate_bps, 40000000000ull);
	CHECK_EQ(l.delay, 2000);
	CHECK_EQ(l.kmax, 0);       /* marking is a switch output knob */
	srn_sim_scen_link(&sc, 5, SRN_SIM_OUT, &l);
	CHECK_EQ(l.rate_bps, 40000000000ull);
	srn_ts t0, t1;
	srn_sim_scen_window(&sc, &t0, &t1);
	CHECK_EQ(t0, 5000000);
	CHECK_EQ(t1, 10000000);
	srn_sim_scen_free(&sc);
}

static void expect_bad(const char *text, const char *want1, const char *want2)
{
	struct srn_sim_scen sc;
	char err[512] = "";
	int rc = parse(&sc, text, err, sizeof(err));
	CHECK_EQ(rc, SRN_EINVAL);
	if (!strstr(err, want1) || (want2 && !strstr(err, want2))) {
		fprintf(stderr, "  for %s\n  got '%s', want '%s' and '%s'\n", text, err, want1,
			want2 ? want2 : "");
		srn_test_failed_checks++;
	}
	srn_sim_scen_free(&sc);
}

SRN_TEST(test_cc_16_scenario_bad_names_line_and_token)
{
	expect_bad("hosts 3\nflow 1 -> 9\n", "line 2", "'9'");
	expect_bad("hosts 3\nflow 1 => 0\n", "line 2", "flow SRC -> DST");
	expect_bad("flow 1 -> 0\n", "line 1", "before 'hosts");
	expect_bad("hosts 3\nlink default rate=fast\n", "line 2", "'rate=fast'");
	expect_bad("hosts 3\nlink default colour=red\n", "line 2", "'colour'");
	expect_bad("hosts 3\nflow 1 -> 0 size=-1\n", "line 2", "'size=-1'");
	expect_bad("hosts 3\nflow 1 -> 1\n", "line 2", "two different hosts");
	expect_bad("hosts 3\nflow 1 -> 0\nmtu 1000\n", "line 3", "'1000'");
	expect_bad("hosts 3\nflow 1 -> 0\nduration ten\n", "line 3", "'ten'");
	expect_bad("hosts 3\nbogus 1\n", "line 2", "'bogus'");
	expect_bad("hosts 3\nhosts 4\n", "line 2", "twice");
	expect_bad("hosts 3\nflow 1 -> 0\ncc cubic\n", "'cubic'", "unknown algorithm");
	expect_bad("hosts 3\n", "no 'flow'", NULL);
	expect_bad("hosts 3\nflow 1 -> 0\nlink 0 kmin=9k kmax=5k\n", "kmin", "kmax");
	expect_bad("hosts 3\nflow 1 -> 0 start=20ms\nduration 10ms\n", "line 2", "after the end");
	expect_bad("hosts 3\nflow 1 -> 0\nqp retry=9\n", "line 3", "'retry=9'");
}

SRN_TEST(test_cc_16_frame_roundtrip_is_valid_ipv4)
{
	uint8_t pkt[SRN_SIM_HDR + 64];
	for (int i = 0; i < 64; i++)
		pkt[SRN_SIM_HDR + i] = (uint8_t)i;
	struct srn_pkt_meta m = { .ecn = 2, .dscp = 26, .ttl = 64, .l4 = { .src = 49153, .dst = 4791 } };
	m.src_gid[10] = m.src_gid[11] = m.dst_gid[10] = m.dst_gid[11] = 0xff;
	srn_put32(m.src_gid + 12, srn_sim_host_ipv4(1));
	srn_put32(m.dst_gid + 12, srn_sim_host_ipv4(0));
	size_t len = srn_sim_frame_wrap(pkt, 64, &m);
	CHECK_EQ(len, SRN_SIM_HDR + 64);
	CHECK(srn_fabric_ipv4_valid(pkt, len));
	CHECK_EQ(srn_get32(pkt + 16), 0x0a000001u);
	struct srn_pkt_meta b;
	const uint8_t *p;
	size_t plen;
	REQUIRE(srn_sim_frame_unwrap(pkt, len, &b, &p, &plen));
	CHECK_EQ(plen, 64);
	CHECK(p == pkt + SRN_SIM_HDR);
	CHECK(memcmp(b.src_gid, m.src_gid, 16) == 0 && memcmp(b.dst_gid, m.dst_gid, 16) == 0);
	CHECK_EQ(b.l4.src, 49153);
	CHECK_EQ(b.l4.dst, 4791);
	CHECK_EQ(b.ecn, 2);
	CHECK_EQ(b.dscp, 26);
	pkt[3]++;   /* total length no longer matches */
	CHECK(!srn_sim_frame_unwrap(pkt, len, &b, &p, &plen));
}

SRN_TEST(test_cc_16_wire_is_a_fifo_with_delay)
{
	struct srn_sim_wire w;
	REQUIRE(srn_sim_wire_init(&w, 40000000000ull, 1000, 4300) == 0);
	uint8_t pkt[4300];
	struct srn_fabric_rng r;
	srn_fabric_rng_seed(&r, 3);
	uint64_t pushed = 0, popped = 0;
	srn_ts now = 0;
	/* packets enter at the line rate and leave after the delay */
	for (int i = 0; i < 20000; i++) {
		size_t len = 48 + (size_t)srn_sim_rng_below(&r, 4200);
		memset(pkt, (int)(pushed & 0xff), len);
		pkt[0] = (uint8_t)len;
		CHECK(srn_sim_wire_push(&w, now, pkt, len));
		pushed++;
		now += srn_sim_ser_time(40000000000ull, len);
		while (srn_sim_wire_head(&w) <= now) {
			size_t l;
			const uint8_t *q = srn_sim_wire_peek(&w, &l);
			CHECK_EQ(q[0], (uint8_t)l);
			CHECK_EQ(q[l - 1], (uint8_t)(popped & 0xff));
			srn_sim_wire_pop(&w);
			popped++;
		}
	}
	CHECK(pushed - popped < 20);
	CHECK_EQ(w.overflows, 0);
	srn_sim_wire_free(&w);
}

SRN_TEST(test_cc_16_two_hosts_deliver_exactly_the_bytes_posted)
{
	struct srn_sim_scen sc;
	struct srn_sim *sim = run(&sc,
		"hosts 2\n"
		"link default rate=10g delay=2us\n"
		"flow 1 -> 0 start=100us size=1m msg=64k depth=3\n"
		"mtu 1024\nduration 3ms\nsample 100us\nseed 5\n", NULL);
	REQUIRE(sim);
	struct srn_sim_flow_result r;
	srn_sim_flow_result(sim, 0, &r);
	CHECK(r.done);
	CHECK(!r.failed);
	CHECK_EQ(r.rx_bytes, 1u << 20);
	CHECK_EQ(r.acked_bytes, 1u << 20);
	CHECK_EQ(r.wrs_posted, 16);
	CHECK_EQ(r.wrs_done, 16);
	/* 1 MiB at 10 Gbit/s with ~5% headers takes ~0.88 ms */
	CHECK(r.fct > 800000 && r.fct < 1000000);
	/* the sink holds the sender's data: the real core placed it */
	CHECK(memcmp(sim->host[0].sink_buf, sim->host[1].src_buf, 65536) == 0);
	/* the receiver completed nothing (WRITEs), the sender exactly 16 */
	const uint64_t *c1 = srn_dev_counters(sim->host[1].dev);
	CHECK_EQ(c1[SRN_CTR_COMPLETIONS], 16);
	CHECK_EQ(c1[SRN_CTR_RETRANSMIT_PKTS], 0);
	struct srn_sim_metrics m;
	srn_sim_metrics(sim, &m);
	CHECK_EQ(m.flows_done, 1);
	CHECK_EQ(m.fct_max, r.fct);
	CHECK_EQ(m.drops, 0);
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);
}

SRN_TEST(test_cc_16_throughput_is_line_rate_within_2_percent)
{
	struct srn_sim_scen sc;
	struct srn_sim *sim = run(&sc,
		"hosts 2\n"
		"link default rate=25g delay=1us buffer=1m\n"
		"flow 1 -> 0 size=inf\n"
		"mtu 4096\nduration 4ms\nsample 10us\nwindow 1ms 4ms\n", NULL);
	REQUIRE(sim);
	struct srn_sim_metrics m;
	srn_sim_metrics(sim, &m);
	CHECK(m.util > 0.98 && m.util <= 1.0001);
	double want = 25.0 * srn_sim_payload_efficiency(4096);
	struct srn_sim_flow_result r;
	srn_sim_flow_result(sim, 0, &r);
	CHECK(r.win_gbps > want * 0.98 && r.win_gbps < want * 1.02);
	CHECK(m.converged);
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);
}

static const char *const two_to_one =
	"hosts 3\n"
	"link default rate=40g delay=1us buffer=2m kmin=%s kmax=%s pmax=0.1\n"
	"flow 1 -> 0 size=inf\nflow 2 -> 0 size=inf\n"
	"mtu 4096\nduration 3ms\nsample 10us\nwindow 1ms 3ms\n";

SRN_TEST(test_cc_16_queue_builds_at_2_to_1_and_marks_above_kmin)
{
	char text[512];
	struct srn_sim_scen sc;
	snprintf(text, sizeof(text), two_to_one, "5k", "200k");
	struct srn_sim *sim = run(&sc, text, NULL);
	REQUIRE(sim);
	struct srn_sim_metrics m;
	srn_sim_metrics(sim, &m);
	CHECK_EQ(m.bottleneck, 0);
	CHECK(m.q_p50 > 100 * 1024);         /* two 40G senders into one 40G port */
	CHECK(m.ecn_marks > 0);
	CHECK(m.util > 0.99);
	CHECK(m.jain > 0.95);                /* round robin through one queue */
	uint64_t qmax = m.q_max;
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);

	/* a kmin above anything the queue reaches: no mark at all */
	char kmin[32];
	snprintf(kmin, sizeof(kmin), "%llu", (unsigned long long)qmax + 8192);
	snprintf(text, sizeof(text), two_to_one, kmin, "1900k");
	sim = run(&sc, text, NULL);
	REQUIRE(sim);
	srn_sim_metrics(sim, &m);
	CHECK(m.q_max <= qmax + 8192);
	CHECK_EQ(m.ecn_marks, 0);
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);

	/* two 10G senders into a 40G port: no standing queue, no mark */
	sim = run(&sc,
		"hosts 3\nlink default rate=10g kmin=5k kmax=200k pmax=0.1\nlink 0 out.rate=40g\n"
		"flow 1 -> 0 size=inf\nflow 2 -> 0 size=inf\nduration 2ms\n", NULL);
	REQUIRE(sim);
	srn_sim_metrics(sim, &m);
	CHECK(m.q_max <= 2 * (4096 + 128));   /* at most two packets meet */
	CHECK_EQ(m.ecn_marks, 0);
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);
}

static char *run_csv(const char *text, size_t *len)
{
	struct srn_sim_scen sc;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct srn_sim *sim = run(&sc, text, f);
	fclose(f);
	if (sim)
		srn_sim_del(sim);
	srn_sim_scen_free(&sc);
	return buf;
}

SRN_TEST(test_cc_16_same_seed_gives_identical_csv)
{
	const char *a = "hosts 9\nlink default rate=40g delay=1us buffer=256k kmin=5k kmax=100k pmax=0.2\n"
			"flow 1 -> 0\nflow 2 -> 0\nflow 3 -> 0\nflow 4 -> 0\nflow 5 -> 0 start=200us\n"
			"flow 6 -> 0 size=512k\nflow 7 -> 0\nflow 8 -> 0\nduration 2ms\nsample 10us\nseed 11\n";
	size_t l1, l2;
	char *c1 = run_csv(a, &l1), *c2 = run_csv(a, &l2);
	REQUIRE(c1 && c2);
	CHECK(l1 > 1000);
	CHECK_EQ(l1, l2);
	CHECK(l1 == l2 && memcmp(c1, c2, l1) == 0);
	/* the run had drops and marks, i.e. the random and lossy paths ran */
	CHECK(strstr(c1, "host0_drops") != NULL);
	free(c1);
	free(c2);
}

/* Time to converge on constructed series: 2 flows, fair share 10 each
 * (band 9..11), except where noted. */
static int64_t conv(const double (*r)[2], uint32_t n, uint32_t first, double share1)
{
	double rate[64 * 2], share[64 * 2];
	for (uint32_t k = 0; k < n; k++) {
		rate[2 * k] = r[k][0];
		rate[2 * k + 1] = r[k][1];
		share[2 * k] = 10;
		share[2 * k + 1] = k < first ? -1 : share1;
	}
	return srn_sim_converge_sample(rate, share, n, 2, first);
}

SRN_TEST(test_cc_16_converge_time_on_constructed_series)
{
	/* settles at sample 6 after a transient; a single outlier (sample 11)
	 * and a run of 4 "out" samples (14..17) do not undo it: 6 */
	static const double a[20][2] = {
		{ 20, 0 }, { 2, 18 }, { 16, 4 }, { 13, 7 }, { 10, 10 }, { 12, 8 },
		{ 10, 10 }, { 9.5, 10.5 }, { 10.9, 9.1 }, { 10, 10 }, { 9, 11 },
		{ 14, 6 }, { 10, 10 }, { 10, 10 }, { 15, 5 }, { 15, 5 }, { 15, 5 },
		{ 15, 5 }, { 10, 10 }, { 10, 10 } };
	CHECK_EQ(conv(a, 20, 0, 10), 6);
	/* measured from `first`: samples before it do not count - from sample 7
	 * on the in-band runs are 4 (7..10), 2 and 2 samples long: never */
	CHECK_EQ(conv(a, 20, 7, 10), -1);
	/* the fair transient of a lockout: fair for 5 samples right after the
	 * join, then one flow starves for good: never (the old "first run of 5"
	 * rule said sample 1) */
	static const double b[16][2] = {
		{ 20, 0 }, { 10, 10 }, { 10, 10 }, { 10, 10 }, { 10, 10 }, { 10, 10 },
		{ 20, 0 }, { 20, 0 }, { 20, 0 }, { 20, 0 }, { 20, 0 }, { 20, 0 },
		{ 0, 20 }, { 0, 20 }, { 10, 10 }, { 10, 10 } };
	CHECK_EQ(conv(b, 16, 1, 10), -1);
	/* ... and if the flows settle again for 5 samples, that is the answer */
	static const double c[17][2] = {
		{ 20, 0 }, { 10, 10 }, { 10, 10 }, { 10, 10 }, { 10, 10 }, { 10, 10 },
		{ 20, 0 }, { 20, 0 }, { 20, 0 }, { 20, 0 }, { 20, 0 },
		{ 10, 10 }, { 10, 10 }, { 10, 10 }, { 10, 10 }, { 10, 10 }, { 11, 9 } };
	CHECK_EQ(conv(c, 17, 1, 10), 11);
	/* 4 in-band samples at the end are not enough: never */
	CHECK_EQ(conv(c, 15, 1, 10), -1);
	/* a stable but unfair split (12 / 8, 20% off) never converges */
	static const double d[10][2] = {
		{ 12, 8 }, { 12, 8 }, { 12, 8 }, { 12, 8 }, { 12, 8 }, { 12, 8 },
		{ 12, 8 }, { 12, 8 }, { 12, 8 }, { 12, 8 } };
	CHECK_EQ(conv(d, 10, 0, 10), -1);
	/* unequal shares (flow 1's share 8: its own band 7.2..8.8): converged at 0;
	 * an inactive flow (share < 0: flow 1 before `first`) is ignored */
	CHECK_EQ(conv(d, 10, 0, 8), -1);      /* flow 0 at 12 is 20% over 10 */
	static const double e[6][2] = {
		{ 10, 99 }, { 10, 8 }, { 10.5, 7.5 }, { 9.5, 8.5 }, { 10, 8 }, { 10, 8 } };
	CHECK_EQ(conv(e, 6, 1, 8), 1);
	/* no sample at or after `first`: never */
	CHECK_EQ(conv(e, 6, 6, 8), -1);
}

SRN_TEST(test_cc_16_jain_and_quantile_arithmetic)
{
	double eq[4] = { 5, 5, 5, 5 }, one[4] = { 1, 0, 0, 0 }, x[3] = { 1, 2, 3 };
	CHECK(srn_sim_jain(eq, 4) == 1.0);
	CHECK(srn_sim_jain(one, 4) == 0.25);
	CHECK(srn_sim_jain(x, 3) > 36.0 / 42.0 - 1e-12 && srn_sim_jain(x, 3) < 36.0 / 42.0 + 1e-12);
	CHECK(srn_sim_jain(x, 0) == 1.0);
	uint64_t v[100];
	for (int i = 0; i < 100; i++)
		v[i] = (uint64_t)(100 - i);   /* 100..1 */
	CHECK_EQ(srn_sim_quantile(v, 100, 0.5), 50);
	CHECK_EQ(srn_sim_quantile(v, 100, 0.99), 99);
	CHECK_EQ(srn_sim_quantile(v, 100, 1.0), 100);
	uint64_t w[1] = { 7 };
	CHECK_EQ(srn_sim_quantile(w, 1, 0.99), 7);
	CHECK(srn_sim_svg_tick_step(10, 5) == 2);
	CHECK(srn_sim_svg_tick_step(0.9, 6) == 0.2);
	CHECK(srn_sim_svg_tick_step(37, 8) == 5);
}

/* a small well-formedness check: every tag closes in order, quotes balance */
static bool xml_balanced(const char *s)
{
	const char *stack[64];
	size_t sl[64];
	int depth = 0;
	if (strncmp(s, "<?xml", 5) != 0)
		return false;
	s = strstr(s, "?>");
	if (!s)
		return false;
	for (s += 2; *s; s++) {
		if (*s != '<')
			continue;
		const char *e = strchr(s, '>');
		if (!e)
			return false;
		int q = 0;
		for (const char *p = s; p < e; p++)
			q += *p == '"';
		if (q % 2)
			return false;
		if (s[1] == '/') {
			size_t n = strcspn(s + 2, " >");
			if (depth == 0 || sl[depth - 1] != n || strncmp(stack[depth - 1], s + 2, n))
				return false;
			depth--;
		} else if (e[-1] != '/') {
			if (depth == 64)
				return false;
			stack[depth] = s + 1;
			sl[depth] = strcspn(s + 1, " >");
			depth++;
		}
		s = e;
	}
	return depth == 0;
}

SRN_TEST(test_cc_16_svg_is_well_formed)
{
	double x[3] = { 0, 1, 2 }, y[3] = { 0, 10, 5 };
	struct srn_sim_svg_series s[2] = { { "a <&> \"b\"", x, y, 3 }, { "c", x, x, 3 } };
	struct srn_sim_svg_hline hl[1] = { { "kmin", 4 } };
	struct srn_sim_svg_plot p = { .title = "T & t", .xlabel = "time (ms)", .ylabel = "y",
				      .s = s, .ns = 2, .hl = hl, .nhl = 1 };
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	CHECK_EQ(srn_sim_svg_write(f, &p), 0);
	fclose(f);
	REQUIRE(buf);
	CHECK(xml_balanced(buf));
	CHECK(strstr(buf, "a &lt;&amp;&gt; &quot;b&quot;") != NULL);
	CHECK(strstr(buf, "<polyline") != NULL);
	CHECK(strstr(buf, ">time (ms)</text>") != NULL);
	free(buf);

	/* the plots of a real run too */
	struct srn_sim_scen sc;
	struct srn_sim *sim = run(&sc, "hosts 3\nlink default kmin=5k kmax=200k pmax=0.01\n"
				  "flow 1 -> 0\nflow 2 -> 0 start=1ms\nduration 2ms\n", NULL);
	REQUIRE(sim);
	for (int k = 0; k < 2; k++) {
		buf = NULL;
		f = open_memstream(&buf, &len);
		CHECK_EQ(k ? srn_sim_plot_queue(sim, f) : srn_sim_plot_rate(sim, f), 0);
		fclose(f);
		CHECK(buf && xml_balanced(buf));
		CHECK(buf && strstr(buf, k ? "kmax 200 KiB" : "flow 1 (2-&gt;0)") != NULL);
		free(buf);
	}
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);
}

int main(void) { return srn_test_main(); }
