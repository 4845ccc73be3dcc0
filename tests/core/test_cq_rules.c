/*
 * test_cq_rules.c - completion queues: a QP moved to RESET takes its
 * completions out of its CQs, the other QPs' completions stay in order
 * (V-03, issue 11 item 3); every CQE carries its completion time (item 6).
 */
#include "srn_test.h"
#include "lib/core_pair.h"

static void to_state(struct cp_pair *cp, struct srn_qp *qp, enum srn_qp_state s)
{
	struct srn_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	CHECK_EQ(srn_qp_modify(qp, &a, SRN_QP_STATE, cp->now), 0);
}

/* V-03: ERR flushes a QP's WRs into a CQ it shares with another QP; RESET
 * removes exactly those CQEs (send and receive CQ), the other QP's CQEs
 * keep their order, also across the ring's wrap */
SRN_TEST(test_v03_reset_purges_only_its_cqes_order_kept)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	/* two QPs x and y share one send CQ and one receive CQ */
	struct srn_cq *scq, *rcq;
	REQUIRE(srn_cq_new(cp->dev[0], 8, NULL, &scq) == 0);
	REQUIRE(srn_cq_new(cp->dev[0], 8, NULL, &rcq) == 0);
	struct srn_qp_init in;
	memset(&in, 0, sizeof(in));
	in.type = SRN_QPT_RC;
	in.pdn = cp->pd[0];
	in.send_cq = scq;
	in.recv_cq = rcq;
	in.max_send_wr = in.max_recv_wr = 8;
	in.max_send_sge = in.max_recv_sge = 1;
	struct srn_qp *qx, *qy;
	REQUIRE(srn_qp_new(cp->dev[0], &in, &qx) == 0);
	REQUIRE(srn_qp_new(cp->dev[0], &in, &qy) == 0);
	static uint8_t buf[64];
	struct srn_mr *m = cp_reg(cp, 0, buf, sizeof(buf), SRN_ACCESS_LOCAL_WRITE);
	REQUIRE(m);
	struct srn_mr_info mi;
	srn_mr_info(m, &mi);
	struct srn_sge sge = { (uintptr_t)buf, 64, mi.lkey };
	struct srn_recv_wr rw = { 0, &sge, 1 };
	struct srn_send_wr sw;
	memset(&sw, 0, sizeof(sw));
	sw.opcode = SRN_WR_SEND;
	sw.sg_list = &sge;
	sw.num_sge = 1;
	/* both in INIT: post receives alternately x, y, x, y ... then ERR
	 * flushes them; to make the ring wrap first take 5 CQEs out */
	to_state(cp, qx, SRN_QPS_INIT);
	to_state(cp, qy, SRN_QPS_INIT);
	for (int i = 0; i < 5; i++) {
		rw.wr_id = 100 + (uint64_t)i;
		CHECK_EQ(srn_qp_post_recv(qy, &rw), 0);
	}
	to_state(cp, qy, SRN_QPS_ERR);      /* 5 flushes */
	struct srn_cqe e[8];
	CHECK_EQ(srn_cq_poll(rcq, e, 5), 5);                         /* head at 5 */
	to_state(cp, qy, SRN_QPS_RESET);
	to_state(cp, qy, SRN_QPS_INIT);
	for (int i = 0; i < 3; i++) {
		rw.wr_id = 10 + (uint64_t)i;                         /* x: 10, 11, 12 */
		CHECK_EQ(srn_qp_post_recv(qx, &rw), 0);
		rw.wr_id = 20 + (uint64_t)i;                         /* y: 20, 21, 22 */
		CHECK_EQ(srn_qp_post_recv(qy, &rw), 0);
	}
	/* x flushes first (10,11,12), then y (20,21,22): ring slots 5,6,7,0,1,2 */
	to_state(cp, qx, SRN_QPS_ERR);
	to_state(cp, qy, SRN_QPS_ERR);
	/* x's send queue: a WR posted in ERR completes with a flush at once */
	sw.wr_id = 30;
	CHECK_EQ(srn_qp_post_send(qx, &sw, cp->now), 0);
	sw.wr_id = 40;
	CHECK_EQ(srn_qp_post_send(qy, &sw, cp->now), 0);
	/* RESET x: its 3 receive flushes and 1 send flush go; y's stay in order */
	to_state(cp, qx, SRN_QPS_RESET);
	int n = srn_cq_poll(rcq, e, 8);
	CHECK_EQ(n, 3);
	for (int i = 0; i < n && i < 3; i++) {
		CHECK_EQ(e[i].wr_id, 20 + (uint64_t)i);
		CHECK_EQ(e[i].qp_num, srn_qp_num(qy));
		CHECK_EQ(e[i].status, SRN_WC_WR_FLUSH_ERR);
	}
	n = srn_cq_poll(scq, e, 8);
	CHECK_EQ(n, 1);
	CHECK_EQ(e[0].wr_id, 40);
	/* the purge of an empty CQ and of a QP with nothing in it removes nothing */
	CHECK_EQ(srn_cq_purge_qp(scq, srn_qp_num(qx)), 0);
	/* reconnected x: nothing stale is polled */
	to_state(cp, qx, SRN_QPS_INIT);
	CHECK_EQ(srn_cq_poll(rcq, e, 8), 0);
	CHECK_EQ(srn_cq_poll(scq, e, 8), 0);
	srn_qp_del(qx, cp->now);
	srn_qp_del(qy, cp->now);
	srn_cq_del(scq);
	srn_cq_del(rcq);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-03: every CQE carries the device time at which it was produced (the
 * driver's clock of that call): completion timestamps of extended CQs */
SRN_TEST(test_v03_cqe_timestamp_is_device_time_of_completion)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	static uint8_t s[64], d[64];
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	REQUIRE(ms && md);
	cp_advance(cp, 5000000);                       /* t = 5 ms + */
	srn_ts t0 = cp->now;
	CHECK_EQ(cp_post_recv(&b, 1, d, 64, md), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 2, s, 64, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	cp_pump(cp);                                   /* receive completes at t0 */
	cp_advance(cp, 1000);                          /* nothing more happens */
	struct srn_cqe c;
	REQUIRE(srn_cq_poll(b.rcq, &c, 1) == 1);
	CHECK_EQ(c.ts, t0);
	REQUIRE(srn_cq_poll(a.scq, &c, 1) == 1);
	CHECK_EQ(c.ts, t0);                            /* the ACK came back at t0 too */
	/* a flush at a later time carries that time */
	cp_advance(cp, 7000);
	srn_ts t1 = cp->now;
	CHECK_EQ(cp_post_recv(&b, 3, d, 64, md), 0);
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_ERR;
	CHECK_EQ(srn_qp_modify(b.qp, &at, SRN_QP_STATE, cp->now), 0);
	REQUIRE(srn_cq_poll(b.rcq, &c, 1) == 1);
	CHECK_EQ(c.status, SRN_WC_WR_FLUSH_ERR);
	CHECK_EQ(c.ts, t1);
	CHECK(t1 > t0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
