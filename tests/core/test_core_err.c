/*
 * test_core_err.c - loss, retry, RNR and error completions (PSN-12, 15, 16,
 * 21; V-04 error statuses), and receive-path drops (W-05).
 */
#include "srn_test.h"
#include "lib/core_pair.h"
#include "lib/srn_tenc.h"

#include <stdlib.h>

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)

static struct cp_pair *pair_with(struct cp_qp *a, struct cp_qp *b, const struct cp_qp_opts *o)
{
	struct cp_pair *cp = cp_new(NULL);
	if (cp && cp_connect(cp, SRN_QPT_RC, a, b, o) != 0) {
		cp_free(cp);
		return NULL;
	}
	return cp;
}

static const uint64_t *ctr(struct cp_pair *cp, int side) { return srn_dev_counters(cp->dev[side]); }

/* drop selected packet indexes of direction 0 */
struct drop_set { int dir; uint64_t idx[8]; int n; bool all; };
static enum cp_action drop_filter(struct cp_pair *cp, int dir, uint64_t idx, const uint8_t *pkt,
				  size_t len, void *arg)
{
	(void)cp; (void)pkt; (void)len;
	struct drop_set *d = arg;
	if (dir != d->dir)
		return CP_PASS;
	if (d->all)
		return CP_DROP;
	for (int i = 0; i < d->n; i++)
		if (d->idx[i] == idx)
			return CP_DROP;
	return CP_PASS;
}

SRN_TEST(test_psn_12_15_lost_middle_packet_nak_then_retransmit)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	static uint8_t s[2000], d[2000];
	cp_fill(s, sizeof(s), 9);
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	struct drop_set ds = { .dir = 0, .idx = { 2 }, .n = 1 };
	cp->filter = drop_filter;
	cp->filter_arg = &ds;
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 2000, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK(memcmp(s, d, 2000) == 0);
	/* 8 packets, the third lost: exactly one sequence NAK, no timeout */
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_NAK_SEQ], 1);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RX_NAK_SEQ], 1);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_OOS_REQ_DROPPED], 5);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRANSMIT_PKTS], 6);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRY_TIMEOUTS], 0);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.wr_id, 1);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_15_lost_last_packet_retransmit_after_timeout)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[100], d[100];
	cp_fill(s, sizeof(s), 10);
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	CHECK_EQ(cp_post_recv(&b, 5, d, sizeof(d), md), 0);
	struct drop_set ds = { .dir = 0, .idx = { 0 }, .n = 1 };
	cp->filter = drop_filter;
	cp->filter_arg = &ds;
	srn_ts t0 = cp->now;
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 6, s, 100, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	cp_pump(cp);
	struct srn_cqe c;
	CHECK_EQ(cp_poll1(b.rcq, &c), 0);
	/* timeout 14 = 4.096us * 2^14 = 67.1 ms */
	CHECK_EQ(srn_dev_expiry(cp->dev[0]), t0 + 4096ull * 16384);
	cp_run(cp);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRY_TIMEOUTS], 1);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRANSMIT_PKTS], 1);
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.byte_len, 100);
	CHECK(memcmp(s, d, 100) == 0);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(srn_dev_expiry(cp->dev[0]), SRN_TS_NEVER);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_16_retry_cnt_exhausted_retry_exc_err_and_flush)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.retry_cnt = 3;
	o.timeout = 1;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	uint8_t s[10], d[10];
	struct srn_mr *ms = cp_reg(cp, 0, s, 10, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 10, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	struct drop_set ds = { .dir = 0, .all = true };
	cp->filter = drop_filter;
	cp->filter_arg = &ds;
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 10, ms, (uintptr_t)d, di.rkey, 0), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 2, s, 10, ms, (uintptr_t)d, di.rkey, 0), 0);
	cp_run_n(cp, 100);
	/* 2 original packets, then 3 retries of both */
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRY_TIMEOUTS], 4);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRANSMIT_PKTS], 6);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRY_EXC_ERR], 1);
	CHECK_EQ(srn_qp_state(a.qp), SRN_QPS_ERR);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(c.status, SRN_WC_RETRY_EXC_ERR);
	CHECK_EQ(c.qp_num, srn_qp_num(a.qp));
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 2);
	CHECK_EQ(c.status, SRN_WC_WR_FLUSH_ERR);
	CHECK_EQ(cp_poll1(a.scq, &c), 0);
	/* posting in ERR completes at once with a flush error */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 3, s, 10, ms, (uintptr_t)d, di.rkey, 0), 0);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 3);
	CHECK_EQ(c.status, SRN_WC_WR_FLUSH_ERR);
	CHECK_EQ(srn_dev_expiry(cp->dev[0]), SRN_TS_NEVER);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_16_retry_cnt_7_is_not_infinite)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.retry_cnt = 7;
	o.timeout = 1;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	uint8_t s[10], d[10];
	struct srn_mr *ms = cp_reg(cp, 0, s, 10, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 10, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	struct drop_set ds = { .dir = 0, .all = true };
	cp->filter = drop_filter;
	cp->filter_arg = &ds;
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 10, ms, (uintptr_t)d, di.rkey, 0), 0);
	cp_run_n(cp, 1000);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RETRANSMIT_PKTS], 7);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_RETRY_EXC_ERR);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_21_rnr_nak_then_success_when_recv_posted)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.min_rnr_timer = 14;   /* 1.28 ms */
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	uint8_t s[50], d[64];
	cp_fill(s, sizeof(s), 11);
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	srn_ts t0 = cp->now;
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 1, s, 50, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	cp_pump(cp);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_NAK_RNR], 1);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RX_NAK_RNR], 1);
	CHECK_EQ(srn_dev_expiry(cp->dev[0]), t0 + 1280000);
	/* the retry after 1.28 ms still finds no WQE */
	cp_run_n(cp, 1);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_NAK_RNR], 2);
	CHECK_EQ(cp_post_recv(&b, 2, d, sizeof(d), md), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.byte_len, 50);
	CHECK(memcmp(s, d, 50) == 0);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RNR_RETRIES], 2);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_16_rnr_retry_exhausted_rnr_retry_exc_err)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.rnr_retry = 2;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	uint8_t s[8];
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 1, s, 8, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 2, s, 8, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	cp_run_n(cp, 100);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_TX_NAK_RNR], 3);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RNR_RETRY_EXC_ERR], 1);
	CHECK_EQ(srn_qp_state(a.qp), SRN_QPS_ERR);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(c.status, SRN_WC_RNR_RETRY_EXC_ERR);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 2);
	CHECK_EQ(c.status, SRN_WC_WR_FLUSH_ERR);
	/* the responder stays usable */
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_RTS);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

static void access_case(int which)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[64], d[64], back[64];
	uint64_t res = 0;
	cp_fill(s, sizeof(s), 12);
	memset(d, 0x33, sizeof(d));
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *mback = cp_reg(cp, 0, back, sizeof(back), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *mres = cp_reg(cp, 0, &res, 8, SRN_ACCESS_LOCAL_WRITE);
	/* the target allows only remote READ */
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_REMOTE_READ);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	uint8_t expect_status = SRN_WC_REM_ACCESS_ERR;
	int expect_ev = SRN_EV_QP_ACCESS_ERR;
	switch (which) {
	case 0: /* bad rkey */
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 64, ms, (uintptr_t)d, di.rkey ^ 0x100, SRN_SEND_SIGNALED), 0);
		break;
	case 1: /* no remote write access */
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 64, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
		break;
	case 2: /* READ out of bounds */
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 1, back, 64, mback, (uintptr_t)d + 1, di.rkey, SRN_SEND_SIGNALED), 0);
		break;
	case 3: { /* stale rkey: deregistered and registered again */
		struct srn_mr *md2;
		srn_mr_dereg(cp->dev[1], md);
		md2 = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
		struct srn_mr_info d2;
		srn_mr_info(md2, &d2);
		CHECK(d2.rkey != di.rkey);
		CHECK_EQ(d2.rkey >> 8, di.rkey >> 8);
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 64, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
		break;
	}
	case 4: { /* misaligned atomic: invalid request */
		struct srn_mr *m2 = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
		struct srn_mr_info i2;
		srn_mr_info(m2, &i2);
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_ATOMIC_FETCH_AND_ADD, 1, &res, 8, mres, (uintptr_t)d + 4, i2.rkey, SRN_SEND_SIGNALED), 0);
		expect_status = SRN_WC_REM_INV_REQ_ERR;
		break;
	}
	}
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 2, back, 8, mback, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(c.status, expect_status);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 2);
	CHECK_EQ(c.status, SRN_WC_WR_FLUSH_ERR);
	CHECK_EQ(srn_qp_state(a.qp), SRN_QPS_ERR);
	/* target memory untouched, responder in ERR with an async event */
	for (int i = 0; i < 64; i++)
		CHECK_EQ(d[i], 0x33);
	CHECK_EQ(res, 0);
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	struct srn_async_event ev;
	REQUIRE(srn_dev_next_async_event(cp->dev[1], &ev) == 0);
	CHECK_EQ(ev.type, expect_ev);
	CHECK(ev.qp == b.qp);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_RX_NAK_OTHER], 1);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_21_bad_rkey_rem_access_err_memory_untouched) { access_case(0); }
SRN_TEST(test_psn_21_no_remote_write_access_rem_access_err) { access_case(1); }
SRN_TEST(test_psn_21_read_out_of_bounds_rem_access_err) { access_case(2); }
SRN_TEST(test_v03_stale_rkey_after_rereg_fails) { access_case(3); }
SRN_TEST(test_psn_21_misaligned_atomic_rem_inv_req_err) { access_case(4); }

SRN_TEST(test_v04_send_too_long_for_recv_loc_len_err_and_rem_inv_req)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[100], d[50];
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	CHECK_EQ(cp_post_recv(&b, 7, d, sizeof(d), md), 0);
	CHECK_EQ(cp_post_recv(&b, 8, d, sizeof(d), md), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 1, s, 100, ms, 0, 0, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_REM_INV_REQ_ERR);
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	CHECK_EQ(c.wr_id, 7);
	CHECK_EQ(c.status, SRN_WC_LOC_LEN_ERR);
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	CHECK_EQ(c.wr_id, 8);
	CHECK_EQ(c.status, SRN_WC_WR_FLUSH_ERR);
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_v04_bad_lkey_loc_prot_err)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[16], d[16];
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	struct srn_sge sge = { (uintptr_t)s, 16, 0x4242 };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = SRN_WR_RDMA_WRITE;
	wr.remote_addr = (uintptr_t)d;
	wr.rkey = di.rkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.status, SRN_WC_LOC_PROT_ERR);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(srn_qp_state(a.qp), SRN_QPS_ERR);
	CHECK_EQ(ctr(cp, 0)[SRN_CTR_TX_PKTS], 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* W-05: malformed / bad ICRC / unknown QPN / wrong source are dropped and counted */
SRN_TEST(test_w05_bad_packets_dropped_and_counted)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t d[64];
	memset(d, 0x77, sizeof(d));
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	const uint8_t *src = cp->cfg[0].gid + 12, *dst = cp->cfg[1].gid + 12;
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, SRN_OP_RC_WRITE_ONLY);
	p.dqpn = srn_qp_num(b.qp);
	p.psn = 0x100;
	p.va = (uintptr_t)d;
	p.rkey = di.rkey;
	p.dmalen = 4;
	p.payload = "ABCD";
	p.paylen = 4;
	uint8_t buf[256];
	size_t n = srn_tenc_build(buf, sizeof(buf), &p, src, dst, 49152, 4791, 0);
	REQUIRE(n > 0);
	struct srn_pkt_meta m;
	memset(&m, 0, sizeof(m));
	memcpy(m.src_gid, cp->cfg[0].gid, 16);
	memcpy(m.dst_gid, cp->cfg[1].gid, 16);
	m.l4.src = 49152;
	m.l4.dst = 4791;
	m.ttl = 64;
	/* bad ICRC */
	buf[n - 1] ^= 1;
	CHECK_EQ(srn_dev_recv(cp->dev[1], buf, n, &m, cp->now), SRN_EDROP);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DROP_BAD_ICRC], 1);
	buf[n - 1] ^= 1;
	/* truncated */
	CHECK_EQ(srn_dev_recv(cp->dev[1], buf, 10, &m, cp->now), SRN_EDROP);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DROP_MALFORMED], 1);
	/* unknown QPN */
	p.dqpn = 60;
	n = srn_tenc_build(buf, sizeof(buf), &p, src, dst, 49152, 4791, 0);
	CHECK_EQ(srn_dev_recv(cp->dev[1], buf, n, &m, cp->now), SRN_EDROP);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DROP_UNKNOWN_QPN], 1);
	/* wrong source address */
	p.dqpn = srn_qp_num(b.qp);
	uint8_t other[4] = { 10, 0, 0, 99 };
	n = srn_tenc_build(buf, sizeof(buf), &p, other, dst, 49152, 4791, 0);
	struct srn_pkt_meta m2 = m;
	memcpy(m2.src_gid + 12, other, 4);
	CHECK_EQ(srn_dev_recv(cp->dev[1], buf, n, &m2, cp->now), SRN_EDROP);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DROP_BAD_SRC], 1);
	/* a UD opcode on an RC QP */
	srn_tenc_init(&p, SRN_OP_UD_SEND_ONLY);
	p.dqpn = srn_qp_num(b.qp);
	n = srn_tenc_build(buf, sizeof(buf), &p, src, dst, 49152, 4791, 0);
	CHECK_EQ(srn_dev_recv(cp->dev[1], buf, n, &m, cp->now), SRN_EDROP);
	CHECK_EQ(ctr(cp, 1)[SRN_CTR_DROP_BAD_OPCODE], 1);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(d[i], 0x77);
	/* and the good one is executed (test encoder vs core) */
	srn_tenc_init(&p, SRN_OP_RC_WRITE_ONLY);
	p.dqpn = srn_qp_num(b.qp);
	p.psn = 0x100;
	p.ackreq = true;
	p.va = (uintptr_t)d;
	p.rkey = di.rkey;
	p.dmalen = 4;
	p.payload = "ABCD";
	p.paylen = 4;
	n = srn_tenc_build(buf, sizeof(buf), &p, src, dst, 49152, 4791, 0);
	CHECK_EQ(srn_dev_recv(cp->dev[1], buf, n, &m, cp->now), 0);
	CHECK(memcmp(d, "ABCD", 4) == 0);
	/* the ACK it produces is byte-exact for the test decoder, ICRC included */
	struct srn_pkt_meta om;
	ssize_t len = srn_dev_send(cp->dev[1], buf, sizeof(buf), &om, cp->now);
	REQUIRE(len > 0);
	struct srn_tenc_pkt ack;
	REQUIRE(srn_tenc_parse(buf, (size_t)len, &ack) >= 0);
	CHECK_EQ(ack.opcode, SRN_OP_RC_ACKNOWLEDGE);
	CHECK_EQ(ack.psn, 0x100);
	CHECK_EQ(ack.dqpn, srn_qp_num(a.qp));
	CHECK_EQ(ack.syndrome >> 5, 0);
	CHECK_EQ(ack.msn, 1);
	CHECK(srn_tenc_icrc_ok(buf, (size_t)len, dst, src, om.l4.src, om.l4.dst, 0));
	CHECK_EQ(om.l4.dst, 4791);
	CHECK_EQ(om.ecn, 2);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
