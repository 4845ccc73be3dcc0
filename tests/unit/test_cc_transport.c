/*
 * test_cc_transport.c - the CC engine wired into the transport core
 * (src/core/cong.c): two real srn_dev joined by core_pair, a hand-advanced
 * clock. Events from the TX and RX pipes (CC-01, CC-02), rate updates into
 * per-QP pacers (CC-09, CC-10), new flows at the default rate with an RTT
 * probe (CC-11), probe timestamps answered at once (CC-12), CNPs addressed
 * to the sender's flow at most once per interval (CC-13), swapping the
 * algorithm of a running device (CC-14), and CC off = no change.
 */
#include "srn_test.h"
#include "lib/core_pair.h"
#include "core/core_int.h"
#include "core/cc/srn_cc.h"

#include <stdlib.h>

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ)

/* ---- test algorithms, written only against softrnic/cc_algo.h ---------- */

/* records what it is given: event counts per type, the last RTT timestamps */
struct rec_ctx {
	uint32_t n[SOFTRNIC_CC_EV_NTYPES];    /* 28 bytes */
	uint32_t pad;
	uint64_t t1, t2, t3, t4;              /* 32 bytes */
};
SOFTRNIC_CC_CTX_CHECK(struct rec_ctx);

static uint32_t fixed_kbps = 1000000;      /* 1 Gbit/s */

static void rec_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
		     struct softrnic_cc_result *res)
{
	(void)ctx;
	(void)fi;
	res->rate_kbps = *(const uint32_t *)fi->params;
}

static void rec_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
		      struct softrnic_cc_result *res)
{
	struct rec_ctx *r = SOFTRNIC_CC_CTX_PRIV(ctx, struct rec_ctx);
	r->n[ev->type] += ev->count;        /* the device engine never coalesces across types */
	if (ev->type_mask & (1u << SOFTRNIC_CC_EV_RTT)) {
		r->t1 = ev->rtt_t1;
		r->t2 = ev->rtt_t2;
		r->t3 = ev->rtt_t3;
		r->t4 = ev->rtt_t4;
	}
	res->rate_kbps = *(const uint32_t *)ev->params;
}

static const struct softrnic_cc_algo algo_fixed = {
	SOFTRNIC_CC_ABI_VERSION, sizeof(struct rec_ctx), "fixed-rec", rec_init, rec_event, &fixed_kbps,
};

/* ---- pairs ----------------------------------------------------------------- */

static struct srn_cc_cfg cc_cfg;
static bool cc_side[2];

static void tune_cc(struct srn_dev_cfg *cfg, int which)
{
	if (cc_side[which])
		cfg->cc = &cc_cfg;
}

static struct cp_pair *pair_with(const struct softrnic_cc_algo *algo, bool a, bool b)
{
	srn_dev_cc_cfg_default(&cc_cfg, algo, 64, 40u * SOFTRNIC_CC_KBPS_PER_GBPS);
	cc_side[0] = a;
	cc_side[1] = b;
	return cp_new(tune_cc);
}

struct txlog {
	uint64_t req_pkts, req_bytes;
	srn_ts first, last;
	uint64_t probes_req, probes_resp, cnps;
	uint8_t resp[SRN_CC_PROBE_PKT_LEN];
	uint32_t cnp_dqpn;
};

static void tap(struct cp_pair *cp, int dir, const uint8_t *pkt, size_t len,
		const struct srn_pkt_meta *meta, void *arg)
{
	(void)meta;
	struct txlog *l = arg;
	if (dir != 0) {
		if (pkt[0] == SRN_OP_CC_PROBE_RESP) {
			l->probes_resp++;
			memcpy(l->resp, pkt, len < sizeof(l->resp) ? len : sizeof(l->resp));
		}
		if (pkt[0] == SRN_OP_CNP) {
			l->cnps++;
			l->cnp_dqpn = srn_get24(pkt + 5);
		}
		return;
	}
	if (pkt[0] == SRN_OP_CC_PROBE_REQ) {
		l->probes_req++;
		return;
	}
	if (pkt[0] <= SRN_OP_RC_SEND_ONLY_INV && pkt[0] != SRN_OP_RC_ACKNOWLEDGE) {
		if (!l->req_pkts)
			l->first = cp->now;
		l->last = cp->now;
		l->req_pkts++;
		l->req_bytes += len + 28;
	}
}

static int write_bytes(struct cp_pair *cp, struct cp_qp *a, uint8_t *src, uint8_t *dst,
		       uint32_t len, uint64_t wr_id)
{
	struct srn_mr *ms = cp_reg(cp, 0, src, len, 0);
	struct srn_mr *md = cp_reg(cp, 1, dst, len, ALL_ACC);
	if (!ms || !md)
		return -1;
	struct srn_mr_info ib;
	srn_mr_info(md, &ib);
	return cp_post_send(cp, a, SRN_WR_RDMA_WRITE, wr_id, src, len, ms, (uintptr_t)dst, ib.rkey,
			    SRN_SEND_SIGNALED);
}

static const uint64_t *ccc(struct cp_pair *cp, int side)
{
	return srn_cc_counters(srn_dev_cc_engine(cp->dev[side]));
}

/* ---- tests ---------------------------------------------------------------- */

SRN_TEST(test_cc_10_pacer_holds_a_qp_at_the_engine_rate)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	struct cp_pair *cp = pair_with(&algo_fixed, true, true);
	REQUIRE(cp);
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 5;                             /* 4096 */
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, &o) == 0);
	struct txlog log = { 0 };
	cp->tap = tap;
	cp->tap_arg = &log;
	cp_fill(src, sizeof(src), 3);
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	int jumps = cp_run(cp);
	CHECK(memcmp(src, dst, sizeof(src)) == 0);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(log.req_pkts, 256);
	CHECK_EQ(srn_qp_cc_rate(a.qp), fixed_kbps);
	/* the first packet goes at once (a new flow's bucket is full); each
	 * later one waits for its bytes at 1 Gbit/s: the span is the wire time
	 * of all but the last packet's worth of credit */
	double expect_ns = (double)(log.req_bytes - (4096 + 48 + 28)) * 8.0 / 1.0;
	double got_ns = (double)(log.last - log.first);
	CHECK(got_ns > expect_ns * 0.99 && got_ns < expect_ns * 1.01);
	/* the clock only jumped to pace deadlines: one per held packet, no spinning */
	const uint64_t *d0 = srn_dev_counters(cp->dev[0]);
	CHECK(d0[SRN_CTR_CC_PACE_WAITS] >= 255);
	CHECK(jumps >= 255 && jumps < 300);
	CHECK_EQ(d0[SRN_CTR_CC_RATE_KBPS_LAST], fixed_kbps);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_cc_10_held_qp_reports_no_output_and_its_deadline)
{
	static uint8_t src[64 * 1024], dst[64 * 1024];
	struct cp_pair *cp = pair_with(&algo_fixed, true, true);
	REQUIRE(cp);
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 5;
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, &o) == 0);
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	cp_pump(cp);                                /* what may go now, goes */
	CHECK(!srn_dev_has_output(cp->dev[0]));
	srn_ts e = srn_dev_expiry(cp->dev[0]);
	CHECK(e > cp->now);
	CHECK(e - cp->now <= 2 * (4096 + 48 + 28) * 8);  /* within two packets at 1 Gbit/s */
	uint8_t buf[SRN_MAX_PKT];
	struct srn_pkt_meta m;
	CHECK_EQ(srn_dev_send(cp->dev[0], buf, sizeof(buf), &m, e - 1), 0);
	srn_dev_handle_expiry(cp->dev[0], e);
	CHECK(srn_dev_send(cp->dev[0], buf, sizeof(buf), &m, e) > 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_cc_11_new_flow_default_rate_then_rtt_probe_answered)
{
	static uint8_t src[8192], dst[8192];
	struct cp_pair *cp = pair_with(&srn_cc_algo_dcqcn, true, true);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	CHECK_EQ(srn_qp_cc_rate(a.qp), 40u * SOFTRNIC_CC_KBPS_PER_GBPS);   /* default rate */
	CHECK_EQ(srn_qp_cc_rate(b.qp), 40u * SOFTRNIC_CC_KBPS_PER_GBPS);
	struct txlog log = { 0 };
	cp->tap = tap;
	cp->tap_arg = &log;
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	cp_run(cp);
	CHECK_EQ(ccc(cp, 0)[SRN_CC_CTR_NEW_FLOWS], 1);
	CHECK_EQ(ccc(cp, 0)[SRN_CC_CTR_RTT_REQUESTS], 1);
	CHECK_EQ(log.probes_req, 1);
	CHECK_EQ(log.probes_resp, 1);
	const uint64_t *d0 = srn_dev_counters(cp->dev[0]), *d1 = srn_dev_counters(cp->dev[1]);
	CHECK_EQ(d0[SRN_CTR_TX_RTT_PROBES], 1);
	CHECK_EQ(d1[SRN_CTR_RX_RTT_PROBES], 1);
	CHECK_EQ(d1[SRN_CTR_TX_RTT_RESPONSES], 1);
	CHECK_EQ(d0[SRN_CTR_RX_RTT_RESPONSES], 1);
	CHECK_EQ(d0[SRN_CTR_DROP_RTT_PROBE] + d1[SRN_CTR_DROP_RTT_PROBE], 0);
	/* DCQCN without a CNP keeps the default rate */
	CHECK_EQ(srn_qp_cc_rate(a.qp), 40u * SOFTRNIC_CC_KBPS_PER_GBPS);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* drive the probe by hand: T1 at send, T2 at arrival, T3 when the answer
 * leaves (before the responder's own queued output), T4 at its arrival */
SRN_TEST(test_cc_12_probe_t1_t2_t3_t4_and_answer_jumps_the_queue)
{
	static uint8_t src[4096], dst[4096], s2[16384], d2[16384];
	struct cp_pair *cp = pair_with(&algo_fixed, true, true);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	/* b has data of its own queued towards a */
	struct srn_mr *ms = cp_reg(cp, 1, s2, sizeof(s2), 0);
	struct srn_mr *md = cp_reg(cp, 0, d2, sizeof(d2), ALL_ACC);
	struct srn_mr_info im;
	srn_mr_info(md, &im);
	REQUIRE(cp_post_send(cp, &b, SRN_WR_RDMA_WRITE, 9, s2, sizeof(s2), ms, (uintptr_t)d2,
			     im.rkey, 0) == 0);
	static uint8_t buf[SRN_MAX_PKT], probe[SRN_MAX_PKT], ans[SRN_MAX_PKT];
	struct srn_pkt_meta m, pm, am;
	srn_ts t0 = cp->now;
	/* a: the first data packet, whose TX event makes the engine ask for a probe */
	ssize_t n = srn_dev_send(cp->dev[0], buf, sizeof(buf), &m, t0);
	REQUIRE(n > 0);
	CHECK(buf[0] != SRN_OP_CC_PROBE_REQ);
	ssize_t pn = 0;
	for (int i = 0; i < 8 && !pn; i++) {
		n = srn_dev_send(cp->dev[0], probe, sizeof(probe), &pm, t0);
		if (n > 0 && probe[0] == SRN_OP_CC_PROBE_REQ)
			pn = n;
	}
	REQUIRE(pn == SRN_CC_PROBE_PKT_LEN);
	CHECK_EQ(srn_get24(probe + 5), srn_qp_num(b.qp));     /* to the peer QP */
	CHECK_EQ(srn_dev_recv(cp->dev[1], probe, (size_t)pn, &pm, t0 + 5000), 0);
	/* the answer comes out before b's queued WRITE packets */
	n = srn_dev_send(cp->dev[1], ans, sizeof(ans), &am, t0 + 7000);
	REQUIRE(n == SRN_CC_PROBE_PKT_LEN);
	CHECK_EQ(ans[0], SRN_OP_CC_PROBE_RESP);
	CHECK_EQ(srn_get24(ans + 5), srn_qp_num(a.qp));       /* to the sender's QP */
	struct srn_cc_probe pr;
	REQUIRE(srn_cc_probe_parse(ans + SRN_BTH_LEN, SRN_CC_PROBE_LEN, &pr) == 0);
	CHECK_EQ(pr.kind, SRN_CC_PROBE_RESP);
	CHECK_EQ(pr.flow_id, srn_qp_num(a.qp));
	CHECK_EQ(pr.t1, t0);
	CHECK_EQ(pr.t2, t0 + 5000);
	CHECK_EQ(pr.t3, t0 + 7000);
	CHECK_EQ(srn_dev_recv(cp->dev[0], ans, (size_t)n, &am, t0 + 12000), 0);
	/* the algorithm got the four timestamps */
	struct srn_cc_flow_state fs;
	REQUIRE(srn_cc_flow_state(srn_dev_cc_engine(cp->dev[0]), srn_qp_num(a.qp), &fs) == 0);
	const struct rec_ctx *r = (const struct rec_ctx *)(const void *)fs.ctx.u.bytes;
	CHECK_EQ(r->t1, t0);
	CHECK_EQ(r->t2, t0 + 5000);
	CHECK_EQ(r->t3, t0 + 7000);
	CHECK_EQ(r->t4, t0 + 12000);
	CHECK_EQ(r->n[SOFTRNIC_CC_EV_RTT], 1);
	CHECK(r->n[SOFTRNIC_CC_EV_RTT_SENT] == 1);
	/* a stale or replayed answer is dropped and counted */
	CHECK_EQ(srn_dev_recv(cp->dev[0], ans, (size_t)n, &am, t0 + 13000), SRN_EDROP);
	CHECK_EQ(srn_dev_counters(cp->dev[0])[SRN_CTR_DROP_RTT_PROBE], 1);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_cc_12_probe_from_a_spoofed_source_or_truncated_is_dropped)
{
	struct cp_pair *cp = pair_with(&algo_fixed, true, true);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	static uint8_t probe[SRN_MAX_PKT];
	struct srn_pkt_meta pm;
	/* build a legitimate probe from a, then alter it */
	a.qp->cc.probe_pending = true;
	srn_qp_sched(a.qp);
	ssize_t n = srn_dev_send(cp->dev[0], probe, sizeof(probe), &pm, cp->now);
	REQUIRE(n == SRN_CC_PROBE_PKT_LEN);
	struct srn_pkt_meta bad = pm;
	bad.src_gid[15] ^= 1;
	uint64_t drops = srn_dev_counters(cp->dev[1])[SRN_CTR_DROP_RTT_PROBE];
	CHECK_EQ(srn_dev_recv(cp->dev[1], probe, (size_t)n, &bad, cp->now), SRN_EDROP);
	CHECK_EQ(srn_dev_counters(cp->dev[1])[SRN_CTR_DROP_BAD_ICRC] +
		 srn_dev_counters(cp->dev[1])[SRN_CTR_DROP_RTT_PROBE], drops + 1);
	CHECK_EQ(srn_dev_recv(cp->dev[1], probe, (size_t)n - 4, &pm, cp->now), SRN_EDROP);
	CHECK_EQ(srn_dev_counters(cp->dev[1])[SRN_CTR_RX_RTT_PROBES], 0);
	CHECK_EQ(srn_dev_recv(cp->dev[1], probe, (size_t)n, &pm, cp->now), 0);
	CHECK_EQ(srn_dev_counters(cp->dev[1])[SRN_CTR_RX_RTT_PROBES], 1);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_cc_13_cnp_once_per_interval_to_the_sender_flow_and_dcqcn_cuts)
{
	static uint8_t src[256 * 1024], dst[256 * 1024];
	struct cp_pair *cp = pair_with(&srn_cc_algo_dcqcn, true, true);
	REQUIRE(cp);
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 5;
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, &o) == 0);
	struct txlog log = { 0 };
	cp->tap = tap;
	cp->tap_arg = &log;
	cp->mark_ce[0] = true;                      /* the switch marks a's packets CE */
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	srn_ts start = cp->now;
	cp_run(cp);
	srn_ts span = cp->now - start;
	const uint64_t *d0 = srn_dev_counters(cp->dev[0]), *d1 = srn_dev_counters(cp->dev[1]);
	CHECK(d1[SRN_CTR_RX_ECN_CE] >= 64);
	/* at most one CNP per 50 us interval of the run (+1 for the first) */
	CHECK(log.cnps >= 1);
	CHECK(log.cnps <= span / 50000 + 1);
	CHECK_EQ(log.cnps, d1[SRN_CTR_TX_CNPS]);
	CHECK_EQ(log.cnp_dqpn, srn_qp_num(a.qp));             /* the sender's QPN */
	CHECK_EQ(d0[SRN_CTR_RX_CNPS], log.cnps);
	/* each CNP reached the sender's flow as a CNP event and DCQCN cut its rate */
	CHECK(ccc(cp, 0)[SRN_CC_CTR_ALGO_CALLS] > 0);
	CHECK(srn_qp_cc_rate(a.qp) < 40u * SOFTRNIC_CC_KBPS_PER_GBPS);
	CHECK(d0[SRN_CTR_CC_RATE_UPDATES] >= 1);
	CHECK(memcmp(src, dst, sizeof(src)) == 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

static enum cp_action drop_third(struct cp_pair *cp, int dir, uint64_t idx, const uint8_t *pkt,
				 size_t len, void *arg)
{
	(void)cp;
	(void)len;
	(void)arg;
	(void)pkt;
	return dir == 0 && idx == 3 ? CP_DROP : CP_PASS;
}

SRN_TEST(test_cc_02_ack_nack_tx_events_reach_the_algorithm)
{
	static uint8_t src[64 * 1024], dst[64 * 1024];
	struct cp_pair *cp = pair_with(&algo_fixed, true, true);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	cp->filter = drop_third;                    /* a gap: the responder NAKs */
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	cp_run(cp);
	CHECK(memcmp(src, dst, sizeof(src)) == 0);
	const uint64_t *d0 = srn_dev_counters(cp->dev[0]);
	CHECK(d0[SRN_CTR_RX_NAK_SEQ] >= 1);
	struct srn_cc_flow_state fs;
	REQUIRE(srn_cc_flow_state(srn_dev_cc_engine(cp->dev[0]), srn_qp_num(a.qp), &fs) == 0);
	const struct rec_ctx *r = (const struct rec_ctx *)(const void *)fs.ctx.u.bytes;
	CHECK_EQ(r->n[SOFTRNIC_CC_EV_TX], d0[SRN_CTR_TX_REQ_PKTS]);
	CHECK(r->n[SOFTRNIC_CC_EV_ACK] >= 1);
	CHECK_EQ(r->n[SOFTRNIC_CC_EV_NACK], d0[SRN_CTR_RX_NAK_SEQ]);
	CHECK_EQ(r->n[SOFTRNIC_CC_EV_CNP], 0);
	/* every event the device posted reached the engine (CC-01: a call, no drop) */
	CHECK_EQ(d0[SRN_CTR_CC_EVENT_DROPS], 0);
	CHECK_EQ(d0[SRN_CTR_CC_EVENTS], ccc(cp, 0)[SRN_CC_CTR_TX_FIFO_IN] + ccc(cp, 0)[SRN_CC_CTR_RX_FIFO_IN]);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_cc_14_swap_algorithm_in_a_running_device)
{
	static uint8_t src[64 * 1024], dst[64 * 1024];
	struct cp_pair *cp = pair_with(&srn_cc_algo_dcqcn, true, true);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	cp_run(cp);
	CHECK_EQ(srn_qp_cc_rate(a.qp), 40u * SOFTRNIC_CC_KBPS_PER_GBPS);
	/* a refused algorithm: the old one keeps running */
	struct softrnic_cc_algo bad = algo_fixed;
	bad.abi_version = 99;
	CHECK_EQ(srn_dev_cc_set_algo(cp->dev[0], &bad, cp->now), SRN_EINVAL);
	CHECK(srn_cc_algo(srn_dev_cc_engine(cp->dev[0])) == &srn_cc_algo_dcqcn);
	CHECK_EQ(srn_dev_counters(cp->dev[0])[SRN_CTR_CC_ALGO_SWAPS], 0);
	/* the fixed-rate one takes over at the flow's next event */
	CHECK_EQ(srn_dev_cc_set_algo(cp->dev[0], &algo_fixed, cp->now), 0);
	CHECK_EQ(srn_dev_counters(cp->dev[0])[SRN_CTR_CC_ALGO_SWAPS], 1);
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 2) == 0);
	cp_run(cp);
	CHECK_EQ(srn_qp_cc_rate(a.qp), fixed_kbps);
	CHECK_EQ(ccc(cp, 0)[SRN_CC_CTR_CTX_REINITS], 1);
	CHECK(memcmp(src, dst, sizeof(src)) == 0);
	/* a device without CC has nothing to swap */
	CHECK_EQ(srn_dev_cc_set_algo(cp->dev[0], NULL, cp->now), SRN_EINVAL);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
	cp = pair_with(&srn_cc_algo_dcqcn, false, false);
	REQUIRE(cp);
	CHECK_EQ(srn_dev_cc_set_algo(cp->dev[0], &algo_fixed, cp->now), SRN_ESTATE);
	CHECK(srn_dev_cc_engine(cp->dev[0]) == NULL);
	cp_free(cp);
}

SRN_TEST(test_cc_off_no_engine_no_pacing_probe_is_an_unknown_opcode)
{
	static uint8_t src[256 * 1024], dst[256 * 1024];
	/* a has CC (sends a probe), b has none (drops it as before) */
	struct cp_pair *cp = pair_with(&algo_fixed, true, false);
	REQUIRE(cp);
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 5;
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, &o) == 0);
	CHECK_EQ(srn_qp_cc_rate(b.qp), 0);
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 1) == 0);
	cp_run(cp);
	CHECK(memcmp(src, dst, sizeof(src)) == 0);
	const uint64_t *d1 = srn_dev_counters(cp->dev[1]);
	CHECK_EQ(d1[SRN_CTR_DROP_BAD_OPCODE], srn_dev_counters(cp->dev[0])[SRN_CTR_TX_RTT_PROBES]);
	CHECK_EQ(d1[SRN_CTR_RX_RTT_PROBES] + d1[SRN_CTR_CC_EVENTS] + d1[SRN_CTR_CC_PACE_WAITS], 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
	/* neither side: the transfer needs no timer at all and no CC counter moves */
	cp = pair_with(&algo_fixed, false, false);
	REQUIRE(cp);
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, &o) == 0);
	REQUIRE(write_bytes(cp, &a, src, dst, sizeof(src), 2) == 0);
	CHECK_EQ(cp_run(cp), 0);
	CHECK(memcmp(src, dst, sizeof(src)) == 0);
	for (int side = 0; side < 2; side++) {
		const uint64_t *d = srn_dev_counters(cp->dev[side]);
		for (int k = SRN_CTR_CC_EVENTS; k <= SRN_CTR_DROP_RTT_PROBE; k++)
			CHECK_EQ(d[k], 0);
	}
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
