/*
 * test_core_misc.c - UC (PSN-13), UD (PSN-14), QP state rules, CQ events,
 * SRQ limit event, flush, ECN/CNP (W-03, CC-13).
 */
#include "srn_test.h"
#include "lib/core_pair.h"

#include <stdlib.h>

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)

static const uint64_t *ctr(struct cp_pair *cp, int side) { return srn_dev_counters(cp->dev[side]); }

struct drop_dir { int dir; uint64_t idx; };
static enum cp_action drop_one(struct cp_pair *cp, int dir, uint64_t idx, const uint8_t *pkt,
			       size_t len, void *arg)
{
	(void)cp; (void)pkt; (void)len;
	struct drop_dir *d = arg;
	return dir == d->dir && idx == d->idx ? CP_DROP : CP_PASS;
}

SRN_TEST(test_psn_13_uc_send_write_and_lost_middle_drops_message)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_UC, &a, &b, &o) == 0);
	static uint8_t s[1000], d1[1000], d2[1000], w[1000];
	cp_fill(s, sizeof(s), 31);
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md1 = cp_reg(cp, 1, d1, sizeof(d1), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *md2 = cp_reg(cp, 1, d2, sizeof(d2), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *mw = cp_reg(cp, 1, w, sizeof(w), ALL_ACC);
	struct srn_mr_info wi;
	srn_mr_info(mw, &wi);
	CHECK_EQ(cp_post_recv(&b, 1, d1, sizeof(d1), md1), 0);
	CHECK_EQ(cp_post_recv(&b, 2, d2, sizeof(d2), md2), 0);
	/* first SEND (4 packets) loses its second packet: whole message dropped */
	struct drop_dir dd = { 0, 1 };
	cp->filter = drop_one;
	cp->filter_arg = &dd;
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 10, s, 1000, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 11, s, 999, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 12, s, 1000, ms, (uintptr_t)w, wi.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	/* sender completes all on transmission */
	struct srn_cqe c[4];
	CHECK_EQ(srn_cq_poll(a.scq, c, 4), 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(c[i].wr_id, 10 + (uint64_t)i);
		CHECK_EQ(c[i].status, SRN_WC_SUCCESS);
	}
	/* the second SEND lands in the first receive WQE (reused) */
	REQUIRE(srn_cq_poll(b.rcq, c, 4) == 1);
	CHECK_EQ(c[0].wr_id, 1);
	CHECK_EQ(c[0].byte_len, 999);
	CHECK_EQ(c[0].status, SRN_WC_SUCCESS);
	CHECK(memcmp(d1, s, 999) == 0);
	CHECK(memcmp(w, s, 1000) == 0);
	CHECK(ctr(cp, 1)[SRN_CTR_UC_MSG_DROPPED] >= 1);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_ACKS], 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_14_ud_send_grh_and_qkey)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_UD, &a, &b, NULL) == 0);
	uint8_t s[300], d[400];
	cp_fill(s, sizeof(s), 32);
	memset(d, 0xcc, sizeof(d));
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	CHECK_EQ(cp_post_recv(&b, 5, d, sizeof(d), md), 0);
	struct srn_ah_attr ah;
	cp_ah(cp, 1, &ah);
	struct srn_mr_info mi;
	srn_mr_info(ms, &mi);
	struct srn_sge sge = { (uintptr_t)s, 300, mi.lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 6;
	wr.opcode = SRN_WR_SEND_WITH_IMM;
	wr.send_flags = SRN_SEND_SIGNALED;
	wr.imm_be = 0x01020304;
	wr.ah = &ah;
	wr.remote_qpn = srn_qp_num(b.qp);
	wr.remote_qkey = 0x11111111;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	/* wrong Q_Key: dropped and counted */
	wr.wr_id = 7;
	wr.remote_qkey = 0x22222222;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	CHECK_EQ(c.wr_id, 5);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.opcode, SRN_WC_RECV);
	CHECK_EQ(c.byte_len, 340);
	CHECK_EQ(c.wc_flags, SRN_WC_GRH | SRN_WC_WITH_IMM);
	CHECK_EQ(c.imm_be, 0x01020304);
	CHECK_EQ(c.src_qp, srn_qp_num(a.qp));
	CHECK_EQ(c.qp_num, srn_qp_num(b.qp));
	CHECK(memcmp(c.src_gid, cp->cfg[0].gid, 16) == 0);
	/* GRH area: zeros, then an IPv4 header at 20..39 */
	for (int i = 0; i < 20; i++)
		CHECK_EQ(d[i], 0);
	CHECK_EQ(d[20], 0x45);
	CHECK_EQ(d[29], 17);
	CHECK(memcmp(d + 32, cp->cfg[0].gid + 12, 4) == 0);
	CHECK(memcmp(d + 36, cp->cfg[1].gid + 12, 4) == 0);
	CHECK(memcmp(d + 40, s, 300) == 0);
	CHECK_EQ(d[340], 0xcc);
	CHECK_EQ(cp_poll1(b.rcq, &c), 0);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DROP_BAD_QKEY], 1);
	struct srn_cqe sc[2];
	CHECK_EQ(srn_cq_poll(a.scq, sc, 2), 2);
	/* no receive posted: dropped and counted */
	wr.remote_qkey = 0x11111111;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	cp_run(cp);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_UD_DROPPED_NO_RECV], 1);
	/* larger than the UD MTU: rejected at post */
	static uint8_t big[4097];
	struct srn_sge bsge = { (uintptr_t)big, 4097, 0 };
	wr.sg_list = &bsge;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), SRN_EINVAL);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_v03_qp_state_rules)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct srn_cq *cq;
	REQUIRE(srn_cq_new(cp->dev[0], 16, NULL, &cq) == 0);
	struct srn_qp_init init = { .type = SRN_QPT_RC, .pdn = cp->pd[0], .send_cq = cq, .recv_cq = cq,
				    .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 };
	struct srn_qp *qp;
	REQUIRE(srn_qp_new(cp->dev[0], &init, &qp) == 0);
	CHECK_EQ(srn_qp_state(qp), SRN_QPS_RESET);
	uint8_t buf[8];
	struct srn_sge sge = { (uintptr_t)buf, 8, 0 };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = SRN_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	struct srn_recv_wr rwr = { 1, &sge, 1 };
	CHECK_EQ(srn_qp_post_send(qp, &wr, cp->now), SRN_ESTATE);
	CHECK_EQ(srn_qp_post_recv(qp, &rwr), SRN_ESTATE);
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_RTS;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE, cp->now), SRN_ESTATE);
	at.qp_state = SRN_QPS_INIT;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE, cp->now), 0);
	CHECK_EQ(srn_qp_post_send(qp, &wr, cp->now), SRN_ESTATE);
	CHECK_EQ(srn_qp_post_recv(qp, &rwr), 0);
	at.qp_state = SRN_QPS_RTR;
	at.path_mtu = 9;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE | SRN_QP_PATH_MTU, cp->now), SRN_ERANGE);
	CHECK_EQ(srn_qp_state(qp), SRN_QPS_INIT);
	at.path_mtu = 3;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE | SRN_QP_PATH_MTU, cp->now), 0);
	CHECK_EQ(srn_qp_post_send(qp, &wr, cp->now), SRN_ESTATE);
	/* bad opcode for the QP type / too many SGEs */
	at.qp_state = SRN_QPS_RTS;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE, cp->now), 0);
	wr.num_sge = 2;
	CHECK_EQ(srn_qp_post_send(qp, &wr, cp->now), SRN_EINVAL);
	wr.num_sge = 1;
	wr.opcode = 7;
	CHECK_EQ(srn_qp_post_send(qp, &wr, cp->now), SRN_EINVAL);
	/* ERR flushes the posted receive; RESET empties, INIT again */
	at.qp_state = SRN_QPS_ERR;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE, cp->now), 0);
	struct srn_cqe c;
	REQUIRE(cp_poll1(cq, &c) == 1);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(c.status, SRN_WC_WR_FLUSH_ERR);
	CHECK_EQ(c.opcode, SRN_WC_RECV);
	at.qp_state = SRN_QPS_RTS;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE, cp->now), SRN_ESTATE);
	at.qp_state = SRN_QPS_RESET;
	CHECK_EQ(srn_qp_modify(qp, &at, SRN_QP_STATE, cp->now), 0);
	CHECK_EQ(srn_qp_post_recv(qp, &rwr), SRN_ESTATE);
	CHECK_EQ(srn_cq_del(cq), SRN_EBUSY);
	CHECK_EQ(srn_qp_del(qp, cp->now), 0);
	CHECK_EQ(srn_cq_del(cq), 0);
	CHECK(strcmp(srn_qp_state_names[SRN_QPS_RTS], "RTS") == 0);
	CHECK(strcmp(srn_ctr_names[SRN_CTR_DROP_CQ_OVERFLOW], "drop_cq_overflow") == 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_v03_cq_arm_notify_and_solicited_only)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	uint8_t s[8], d[64];
	struct srn_mr *ms = cp_reg(cp, 0, s, 8, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(cp_post_recv(&b, (uint64_t)i, d, sizeof(d), md), 0);
	/* not armed: no event */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 1, s, 8, ms, 0, 0, 0), 0);
	cp_run(cp);
	CHECK(srn_dev_next_cq_event(cp->dev[1]) == NULL);
	/* solicited-only: an unsolicited message does not fire, a solicited one does */
	srn_cq_arm(b.rcq, true);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 2, s, 8, ms, 0, 0, 0), 0);
	cp_run(cp);
	CHECK(srn_dev_next_cq_event(cp->dev[1]) == NULL);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 3, s, 8, ms, 0, 0, SRN_SEND_SOLICITED), 0);
	cp_run(cp);
	CHECK(srn_dev_next_cq_event(cp->dev[1]) == b.rcq);
	CHECK(srn_dev_next_cq_event(cp->dev[1]) == NULL);
	/* one-shot: not re-armed, no event */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 4, s, 8, ms, 0, 0, SRN_SEND_SOLICITED), 0);
	cp_run(cp);
	CHECK(srn_dev_next_cq_event(cp->dev[1]) == NULL);
	/* arm for any completion on the send CQ */
	srn_cq_arm(a.scq, false);
	CHECK_EQ(cp_post_recv(&b, 9, d, sizeof(d), md), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 5, s, 8, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK(srn_dev_next_cq_event(cp->dev[0]) == a.scq);
	struct srn_cqe c[8];
	CHECK_EQ(srn_cq_poll(b.rcq, c, 8), 5);
	CHECK_EQ(srn_cq_capacity(b.rcq), 1024);
	CHECK_EQ(srn_cq_resize(b.rcq, 2048), 0);
	CHECK_EQ(srn_cq_capacity(b.rcq), 2048);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_v03_srq_limit_event_and_receive)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct srn_srq_init si = { .pdn = cp->pd[1], .max_wr = 8, .max_sge = 2, .srq_limit = 0 };
	struct srn_srq *srq;
	REQUIRE(srn_srq_new(cp->dev[1], &si, &srq) == 0);
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.srq[1] = srq;
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, &o) == 0);
	uint8_t s[8] = "srqsrq!", d[4][16];
	struct srn_mr *ms = cp_reg(cp, 0, s, 8, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	for (int i = 0; i < 4; i++) {
		struct srn_sge sge = { (uintptr_t)d[i], 16, di.lkey };
		struct srn_recv_wr rwr = { 100 + (uint64_t)i, &sge, 1 };
		CHECK_EQ(srn_srq_post(srq, &rwr), 0);
	}
	CHECK_EQ(cp_post_recv(&b, 1, d[0], 16, md), SRN_EINVAL);   /* QP uses an SRQ */
	CHECK_EQ(srn_srq_set_limit(srq, 9), SRN_ERANGE);
	CHECK_EQ(srn_srq_set_limit(srq, 3), 0);
	struct srn_async_event ev;
	CHECK_EQ(srn_dev_next_async_event(cp->dev[1], &ev), SRN_EAGAIN);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 1, s, 8, ms, 0, 0, 0), 0);
	cp_run(cp);
	/* 3 left: not fewer than 3 yet */
	CHECK_EQ(srn_dev_next_async_event(cp->dev[1], &ev), SRN_EAGAIN);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 2, s, 8, ms, 0, 0, 0), 0);
	cp_run(cp);
	REQUIRE(srn_dev_next_async_event(cp->dev[1], &ev) == 0);
	CHECK_EQ(ev.type, SRN_EV_SRQ_LIMIT_REACHED);
	CHECK(ev.srq == srq);
	uint32_t lim = 99;
	srn_srq_query(srq, NULL, NULL, &lim);
	CHECK_EQ(lim, 0);   /* disarmed */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 3, s, 8, ms, 0, 0, 0), 0);
	cp_run(cp);
	CHECK_EQ(srn_dev_next_async_event(cp->dev[1], &ev), SRN_EAGAIN);
	struct srn_cqe c[4];
	REQUIRE(srn_cq_poll(b.rcq, c, 4) == 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(c[i].wr_id, 100 + (uint64_t)i);
		CHECK_EQ(c[i].byte_len, 8);
		CHECK(memcmp(d[i], s, 8) == 0);
	}
	CHECK_EQ(srn_srq_del(srq), SRN_EBUSY);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_w03_ecn_ce_generates_rate_limited_cnp)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	cp->mark_ce[0] = true;
	uint8_t s[8], d[8];
	struct srn_mr *ms = cp_reg(cp, 0, s, 8, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 8, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 8, ms, (uintptr_t)d, di.rkey, 0), 0);
	cp_run(cp);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_RX_ECN_CE], 5);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_CNPS], 1);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RX_CNPS], 1);
	/* after the interval (50 us) another CNP may go */
	cp->now += 50000;
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 8, ms, (uintptr_t)d, di.rkey, 0), 0);
	cp_run(cp);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_CNPS], 2);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RX_CNPS], 2);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_v03_dev_del_frees_live_objects)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	struct srn_srq_init si = { .pdn = cp->pd[0], .max_wr = 4, .max_sge = 1 };
	struct srn_srq *srq;
	REQUIRE(srn_srq_new(cp->dev[0], &si, &srq) == 0);
	uint8_t s[8];
	struct srn_mr *ms = cp_reg(cp, 0, s, 8, 0);
	/* leave work in flight and timers armed */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 1, s, 8, ms, 0, 0, 0), 0);
	cp_pump(cp);
	CHECK(cp_live_allocs() > 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
