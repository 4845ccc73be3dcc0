/*
 * test_core_psn.c - PSN behaviour end to end through two cores: rollover,
 * duplicates, reordering, lost ACKs and READ responses, ghosts, window,
 * time-wait. (Packet-by-packet tests with the test encoder come later.)
 */
#include "srn_test.h"
#include "lib/core_pair.h"
#include "lib/srn_tenc.h"

#include <stdlib.h>

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)

static const uint64_t *ctr(struct cp_pair *cp, int side) { return srn_dev_counters(cp->dev[side]); }

static struct cp_pair *pair_with(struct cp_qp *a, struct cp_qp *b, const struct cp_qp_opts *o)
{
	struct cp_pair *cp = cp_new(NULL);
	if (cp && cp_connect(cp, SRN_QPT_RC, a, b, o) != 0) {
		cp_free(cp);
		return NULL;
	}
	return cp;
}

SRN_TEST(test_psn_01_rollover_from_fffff0_both_sides)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	o.sq_psn[0] = 0xFFFFF0;
	o.sq_psn[1] = 0xFFFFFE;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	static uint8_t s[1024], d[1024], back[1024];
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *mback = cp_reg(cp, 0, back, sizeof(back), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	for (int i = 0; i < 12; i++) {
		cp_fill(s, sizeof(s), (uint32_t)i);
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, (uint64_t)i, s, 1024, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 100 + (uint64_t)i, back, 1000, mback, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
		cp_run(cp);
		CHECK(memcmp(s, d, 1024) == 0);
		CHECK(memcmp(s, back, 1000) == 0);
		struct srn_cqe c[2];
		CHECK_EQ(srn_cq_poll(a.scq, c, 2), 2);
		CHECK_EQ(c[0].status, SRN_WC_SUCCESS);
		CHECK_EQ(c[1].status, SRN_WC_SUCCESS);
	}
	/* 12 * (4 + 4) PSNs from 0xFFFFF0 */
	struct srn_qp_attr at;
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRANSMIT_PKTS], 0);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DUP_REQUESTS], 0);
	srn_qp_query(a.qp, &at);
	CHECK_EQ(at.qp_state, SRN_QPS_RTS);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

static enum cp_action dup_all(struct cp_pair *cp, int dir, uint64_t idx, const uint8_t *pkt,
			      size_t len, void *arg)
{
	(void)cp; (void)idx; (void)pkt; (void)len; (void)arg;
	return dir == 0 ? CP_DUP : CP_PASS;
}

SRN_TEST(test_psn_08_10_duplicates_not_executed_twice)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	cp->filter = dup_all;
	static uint8_t s[600], d[600], rb[600];
	uint64_t counter = 10, res = 0;
	cp_fill(s, sizeof(s), 21);
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *mres = cp_reg(cp, 0, &res, 8, SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *mc = cp_reg(cp, 1, &counter, 8, ALL_ACC);
	struct srn_mr *mrb = cp_reg(cp, 1, rb, sizeof(rb), ALL_ACC);
	struct srn_mr_info ci, rbi;
	srn_mr_info(mc, &ci);
	srn_mr_info(mrb, &rbi);
	CHECK_EQ(cp_post_recv(&b, 1, d, sizeof(d), md), 0);
	CHECK_EQ(cp_post_recv(&b, 2, d, sizeof(d), md), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 1, s, 600, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	struct srn_mr_info resi;
	srn_mr_info(mres, &resi);
	struct srn_sge asge = { (uintptr_t)&res, 8, resi.lkey };
	struct srn_send_wr awr;
	memset(&awr, 0, sizeof(awr));
	awr.wr_id = 2;
	awr.opcode = SRN_WR_ATOMIC_FETCH_AND_ADD;
	awr.send_flags = SRN_SEND_SIGNALED;
	awr.remote_addr = (uintptr_t)&counter;
	awr.rkey = ci.rkey;
	awr.compare_add = 1;
	awr.sg_list = &asge;
	awr.num_sge = 1;
	CHECK_EQ(srn_qp_post_send(a.qp, &awr, cp->now), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 3, s, 600, ms, (uintptr_t)rb, rbi.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK_EQ(counter, 11);      /* executed once (PSN-10) */
	CHECK_EQ(res, 10);
	CHECK(memcmp(rb, s, 600) == 0);
	CHECK(memcmp(d, s, 600) == 0);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);   /* one receive consumed (PSN-08) */
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(c.byte_len, 600);
	CHECK_EQ(cp_poll1(b.rcq, &c), 0);
	struct srn_cqe sc[4];
	CHECK_EQ(srn_cq_poll(a.scq, sc, 4), 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(sc[i].wr_id, (uint64_t)i + 1);
		CHECK_EQ(sc[i].status, SRN_WC_SUCCESS);
	}
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DUP_REQUESTS], 3 + 1 + 3);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DUP_ATOMIC_REPLAY], 1);
	CHECK(ctr(cp, 0)[SRN_CTR_DUP_ACKS] >= 1);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* swap packet 1 and 2 of direction 0 */
static enum cp_action delay_one(struct cp_pair *cp, int dir, uint64_t idx, const uint8_t *pkt,
				size_t len, void *arg)
{
	(void)cp; (void)pkt; (void)len;
	uint64_t *which = arg;
	return dir == 0 && idx == *which ? CP_DELAY : CP_PASS;
}

/* packets 1 and 2 swapped: 2 arrives first (gap at 1: NAK), 1 is executed,
 * 3 then finds a new gap at 2 (it was dropped): a second NAK. Exactly one
 * NAK per gap, data intact after go-back-N. */
SRN_TEST(test_psn_12_reorder_one_nak_per_gap)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	uint64_t which = 1;
	cp->filter = delay_one;
	cp->filter_arg = &which;
	static uint8_t s[2560], d[2560];
	cp_fill(s, sizeof(s), 22);
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	/* post and move all 10 packets before the responder answers */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 2560, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK(memcmp(s, d, 2560) == 0);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_NAK_SEQ], 2);
	/* 2 dropped first; then 3..9 while waiting for the retry of 2 (no NAKs) */
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_OOS_REQ_DROPPED], 1 + 7);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(cp_poll1(a.scq, &c), 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

struct drop_dir { int dir; uint64_t idx; };
static enum cp_action drop_one(struct cp_pair *cp, int dir, uint64_t idx, const uint8_t *pkt,
			       size_t len, void *arg)
{
	(void)cp; (void)pkt; (void)len;
	struct drop_dir *d = arg;
	return dir == d->dir && idx == d->idx ? CP_DROP : CP_PASS;
}

SRN_TEST(test_psn_08_15_lost_ack_duplicate_acked_by_latest_psn)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	struct drop_dir dd = { 1, 0 };    /* the first ACK */
	cp->filter = drop_one;
	cp->filter_arg = &dd;
	uint8_t s[32], d[32];
	struct srn_mr *ms = cp_reg(cp, 0, s, 32, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 32, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 32, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRY_TIMEOUTS], 1);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DUP_REQUESTS], 1);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_ACKS], 2);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(cp_poll1(a.scq, &c), 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_09_lost_read_response_reread_from_missing_psn)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	struct drop_dir dd = { 1, 2 };    /* third READ response */
	cp->filter = drop_one;
	cp->filter_arg = &dd;
	static uint8_t back[2000], rsrc[2000];
	cp_fill(rsrc, sizeof(rsrc), 23);
	struct srn_mr *mb = cp_reg(cp, 0, back, sizeof(back), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *mr = cp_reg(cp, 1, rsrc, sizeof(rsrc), ALL_ACC);
	struct srn_mr_info ri;
	srn_mr_info(mr, &ri);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 1, back, 2000, mb, (uintptr_t)rsrc, ri.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK(memcmp(back, rsrc, 2000) == 0);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DUP_READ_REEXEC], 1);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRY_TIMEOUTS], 0);   /* found by the gap, not a timeout */
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.byte_len, 2000);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_05_ghost_and_duplicate_acks_dropped)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[8], d[8];
	struct srn_mr *ms = cp_reg(cp, 0, s, 8, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 8, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 8, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	/* requester sent PSN 0x100; comp.psn = 0x101 = max */
	const uint8_t *src = cp->cfg[1].gid + 12, *dst = cp->cfg[0].gid + 12;
	struct srn_pkt_meta m;
	memset(&m, 0, sizeof(m));
	memcpy(m.src_gid, cp->cfg[1].gid, 16);
	memcpy(m.dst_gid, cp->cfg[0].gid, 16);
	m.l4.src = 50000;
	m.l4.dst = 4791;
	struct srn_tenc_pkt p;
	uint8_t buf[128];
	uint32_t psns[3] = { 0x100, 0x101, 0x900000 };  /* dup, ghost (beyond max), far */
	for (int i = 0; i < 3; i++) {
		srn_tenc_init(&p, SRN_OP_RC_ACKNOWLEDGE);
		p.dqpn = srn_qp_num(a.qp);
		p.psn = psns[i];
		p.syndrome = 0x1f;
		p.msn = 77;
		size_t n = srn_tenc_build(buf, sizeof(buf), &p, src, dst, 50000, 4791, 0);
		CHECK_EQ(srn_dev_recv(cp->dev[0], buf, n, &m, cp->now), 0);
	}
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_DUP_ACKS], 2);     /* 0x100 and 0x900000 (behind) */
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_GHOST_ACKS], 1);
	CHECK_EQ(cp_poll1(a.scq, &c), 0);
	CHECK_EQ(srn_qp_state(a.qp), SRN_QPS_RTS);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* PSN-04 / flow control: never more than max_inflight_pkts unacknowledged */
static void tune_inflight(struct srn_dev_cfg *c, int which) { (void)which; c->max_inflight_pkts = 8; }
static enum cp_action drop_dir1(struct cp_pair *cp, int dir, uint64_t idx, const uint8_t *pkt,
				size_t len, void *arg)
{
	(void)cp; (void)idx; (void)pkt; (void)len; (void)arg;
	return dir == 1 ? CP_DROP : CP_PASS;
}

SRN_TEST(test_psn_04_window_limits_unacked_packets)
{
	struct cp_pair *cp = cp_new(tune_inflight);
	REQUIRE(cp);
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, &o) == 0);
	cp->filter = drop_dir1;
	static uint8_t s[4096], d[4096];
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 4096, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_pump(cp);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_TX_REQ_PKTS], 8);
	/* ACKs flow again: the rest goes out and completes */
	cp->filter = NULL;
	cp_run(cp);
	CHECK(memcmp(s, d, 4096) == 0);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

static void tune_small(struct srn_dev_cfg *c, int which)
{
	(void)which;
	c->max_qp = 2;
	c->qpn_timewait = 5000000;
}

SRN_TEST(test_psn_19_qpn_not_reused_before_timewait)
{
	struct cp_pair *cp = cp_new(tune_small);
	REQUIRE(cp);
	struct srn_cq *cq;
	REQUIRE(srn_cq_new(cp->dev[0], 16, NULL, &cq) == 0);
	struct srn_qp_init init = { .type = SRN_QPT_RC, .pdn = cp->pd[0], .send_cq = cq, .recv_cq = cq,
				    .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 };
	struct srn_qp *q1, *q2, *q3;
	REQUIRE(srn_qp_new(cp->dev[0], &init, &q1) == 0);
	REQUIRE(srn_qp_new(cp->dev[0], &init, &q2) == 0);
	uint32_t n1 = srn_qp_num(q1);
	CHECK(n1 != srn_qp_num(q2));
	CHECK_EQ(srn_qp_new(cp->dev[0], &init, &q3), SRN_ENOMEM);
	CHECK_EQ(srn_cq_del(cq), SRN_EBUSY);
	CHECK_EQ(srn_qp_del(q1, cp->now), 0);
	/* q1's QPN is in time-wait */
	CHECK_EQ(srn_qp_new(cp->dev[0], &init, &q3), SRN_ENOMEM);
	cp->now += 5000000;
	srn_dev_handle_expiry(cp->dev[0], cp->now);
	REQUIRE(srn_qp_new(cp->dev[0], &init, &q3) == 0);
	CHECK_EQ(srn_qp_num(q3), n1);
	/* a packet for a destroyed QPN is counted as unknown */
	CHECK_EQ(srn_qp_del(q2, cp->now), 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_06_epsn_only_set_on_rtr)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_RTS;
	at.rq_psn = 0x777;
	CHECK_EQ(srn_qp_modify(b.qp, &at, SRN_QP_STATE | SRN_QP_RQ_PSN, cp->now), 0);
	srn_qp_query(b.qp, &at);
	CHECK_EQ(at.rq_psn, 0x100);
	/* traffic still flows with the original ePSN */
	uint8_t s[8] = "1234567", d[8];
	struct srn_mr *ms = cp_reg(cp, 0, s, 8, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 8, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 8, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK(memcmp(s, d, 8) == 0);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_OOS_REQ_DROPPED], 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
