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


static struct cp_pair *pair_with(struct cp_qp *a, struct cp_qp *b, const struct cp_qp_opts *o)
{
	struct cp_pair *cp = cp_new(NULL);
	if (!cp)
		return NULL;
	if (cp_connect(cp, SRN_QPT_RC, a, b, o) != 0) {
		cp_free(cp);
		return NULL;
	}
	return cp;
}

SRN_TEST(test_rc_send_with_imm_and_solicited)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t src[10] = "0123456789", dst[16];
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), 0);
	struct srn_mr *md = cp_reg(cp, 1, dst, sizeof(dst), SRN_ACCESS_LOCAL_WRITE);
	CHECK_EQ(cp_post_recv(&b, 9, dst, sizeof(dst), md), 0);
	struct srn_mr_info mi;
	srn_mr_info(ms, &mi);
	struct srn_sge sge = { (uintptr_t)src, 10, mi.lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.opcode = SRN_WR_SEND_WITH_IMM;
	wr.send_flags = SRN_SEND_SIGNALED | SRN_SEND_SOLICITED;
	wr.imm_be = 0x78563412;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	srn_cq_arm(b.rcq, true);
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	check_cqe(&c, 9, SRN_WC_SUCCESS, SRN_WC_RECV, 10, srn_qp_num(b.qp));
	CHECK_EQ(c.wc_flags, SRN_WC_WITH_IMM);
	CHECK_EQ(c.imm_be, 0x78563412);
	CHECK(memcmp(dst, src, 10) == 0);
	CHECK(srn_dev_next_cq_event(cp->dev[1]) == b.rcq);
	CHECK(srn_dev_next_cq_event(cp->dev[1]) == NULL);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 3, SRN_WC_SUCCESS, SRN_WC_SEND, 10, srn_qp_num(a.qp));
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_rc_write_with_imm_consumes_recv)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	static uint8_t src[3000], dst[3000];
	cp_fill(src, sizeof(src), 4);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), 0);
	struct srn_mr *md = cp_reg(cp, 1, dst, sizeof(dst), ALL_ACC);
	struct srn_mr_info mi, di;
	srn_mr_info(ms, &mi);
	srn_mr_info(md, &di);
	CHECK_EQ(cp_post_recv(&b, 42, NULL, 0, NULL), 0);
	struct srn_sge sge = { (uintptr_t)src, 3000, mi.lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.opcode = SRN_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = SRN_SEND_SIGNALED;
	wr.imm_be = 0xdeadbeef;
	wr.remote_addr = (uintptr_t)dst;
	wr.rkey = di.rkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	cp_run(cp);
	CHECK(memcmp(src, dst, 3000) == 0);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	check_cqe(&c, 42, SRN_WC_SUCCESS, SRN_WC_RECV_RDMA_WITH_IMM, 3000, srn_qp_num(b.qp));
	CHECK_EQ(c.wc_flags, SRN_WC_WITH_IMM);
	CHECK_EQ(c.imm_be, 0xdeadbeef);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 4, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE, 3000, srn_qp_num(a.qp));
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_rc_atomics_cmp_swap_fetch_add)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint64_t target[2] = { 100, 7 }, res[3] = { 0, 0, 0 };
	struct srn_mr *mt = cp_reg(cp, 1, target, sizeof(target), ALL_ACC);
	struct srn_mr *mr = cp_reg(cp, 0, res, sizeof(res), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr_info ti, ri;
	srn_mr_info(mt, &ti);
	srn_mr_info(mr, &ri);
	struct srn_sge sge = { (uintptr_t)&res[0], 8, ri.lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = SRN_WR_ATOMIC_CMP_AND_SWP;
	wr.send_flags = SRN_SEND_SIGNALED;
	wr.remote_addr = (uintptr_t)&target[0];
	wr.rkey = ti.rkey;
	wr.compare_add = 100;
	wr.swap = 555;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	/* a failing compare leaves memory alone and returns the value */
	wr.wr_id = 2;
	wr.compare_add = 1;
	wr.swap = 999;
	sge.addr = (uintptr_t)&res[1];
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	wr.wr_id = 3;
	wr.opcode = SRN_WR_ATOMIC_FETCH_AND_ADD;
	wr.remote_addr = (uintptr_t)&target[1];
	wr.compare_add = 0xFFFFFFFFFFull;
	sge.addr = (uintptr_t)&res[2];
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	cp_run(cp);
	CHECK_EQ(target[0], 555);
	CHECK_EQ(target[1], 7 + 0xFFFFFFFFFFull);
	CHECK_EQ(res[0], 100);
	CHECK_EQ(res[1], 555);
	CHECK_EQ(res[2], 7);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 1, SRN_WC_SUCCESS, SRN_WC_COMP_SWAP, 8, srn_qp_num(a.qp));
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 2, SRN_WC_SUCCESS, SRN_WC_COMP_SWAP, 8, srn_qp_num(a.qp));
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 3, SRN_WC_SUCCESS, SRN_WC_FETCH_ADD, 8, srn_qp_num(a.qp));
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_rc_multi_sge_gather_scatter)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;   /* 256: packets straddle SGEs */
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	static uint8_t s[1000], d[1200], expect[1000];
	cp_fill(s, sizeof(s), 5);
	memset(d, 0, sizeof(d));
	struct srn_mr *ms = cp_reg(cp, 0, s, sizeof(s), 0);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr_info mi, di;
	srn_mr_info(ms, &mi);
	srn_mr_info(md, &di);
	/* gather: [0..10) [500..800) [100..490) */
	struct srn_sge sg[3] = { { (uintptr_t)s, 10, mi.lkey }, { (uintptr_t)s + 500, 300, mi.lkey },
				 { (uintptr_t)s + 100, 390, mi.lkey } };
	memcpy(expect, s, 10);
	memcpy(expect + 10, s + 500, 300);
	memcpy(expect + 310, s + 100, 390);
	/* scatter: 7 bytes at d+0, 300 at d+400, rest at d+800 */
	struct srn_sge rg[3] = { { (uintptr_t)d, 7, di.lkey }, { (uintptr_t)d + 400, 300, di.lkey },
				 { (uintptr_t)d + 800, 400, di.lkey } };
	struct srn_recv_wr rwr = { 11, rg, 3 };
	CHECK_EQ(srn_qp_post_recv(b.qp, &rwr), 0);
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 12;
	wr.opcode = SRN_WR_SEND;
	wr.send_flags = SRN_SEND_SIGNALED;
	wr.sg_list = sg;
	wr.num_sge = 3;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	check_cqe(&c, 11, SRN_WC_SUCCESS, SRN_WC_RECV, 700, srn_qp_num(b.qp));
	CHECK(memcmp(d, expect, 7) == 0);
	CHECK(memcmp(d + 400, expect + 7, 300) == 0);
	CHECK(memcmp(d + 800, expect + 307, 393) == 0);
	CHECK_EQ(d[7], 0);
	CHECK_EQ(d[800 + 393], 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_rc_inline_send_copies_at_post)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[40], d[64];
	cp_fill(s, sizeof(s), 6);
	uint8_t expect[40];
	memcpy(expect, s, 40);
	struct srn_mr *md = cp_reg(cp, 1, d, sizeof(d), SRN_ACCESS_LOCAL_WRITE);
	CHECK_EQ(cp_post_recv(&b, 1, d, sizeof(d), md), 0);
	/* no MR for an inline source */
	struct srn_sge sge = { (uintptr_t)s, 40, 0 };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.opcode = SRN_WR_SEND;
	wr.send_flags = SRN_SEND_SIGNALED | SRN_SEND_INLINE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), 0);
	memset(s, 0, sizeof(s));
	/* too big for max_inline_data (64) */
	uint8_t big[65];
	struct srn_sge bsge = { (uintptr_t)big, 65, 0 };
	wr.sg_list = &bsge;
	CHECK_EQ(srn_qp_post_send(a.qp, &wr, cp->now), SRN_EINVAL);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(b.rcq, &c) == 1);
	check_cqe(&c, 1, SRN_WC_SUCCESS, SRN_WC_RECV, 40, srn_qp_num(b.qp));
	CHECK(memcmp(d, expect, 40) == 0);
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	check_cqe(&c, 2, SRN_WC_SUCCESS, SRN_WC_SEND, 40, srn_qp_num(a.qp));
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_rc_unsignaled_wr_has_no_cqe)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[8] = "abcdefg", d[8];
	struct srn_mr *ms = cp_reg(cp, 0, s, 8, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 8, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, s, 8, ms, (uintptr_t)d, di.rkey, 0), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 2, s, 4, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	cp_run(cp);
	struct srn_cqe c;
	REQUIRE(cp_poll1(a.scq, &c) == 1);
	CHECK_EQ(c.wr_id, 2);
	CHECK_EQ(cp_poll1(a.scq, &c), 0);
	CHECK(memcmp(d, s, 8) == 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* count request packets and check PSNs on the wire with the test encoder */
#include "lib/srn_tenc.h"
struct wire_log { uint32_t n_req; uint32_t psn[4096]; uint8_t op[4096]; };
static void tap_log(struct cp_pair *cp, int dir, const uint8_t *pkt, size_t len,
		    const struct srn_pkt_meta *meta, void *arg)
{
	(void)cp; (void)meta;
	struct wire_log *wl = arg;
	struct srn_tenc_pkt p;
	if (dir != 0 || srn_tenc_parse(pkt, len, &p) < 0)
		return;
	if (wl->n_req < 4096) {
		wl->psn[wl->n_req] = p.psn;
		wl->op[wl->n_req] = p.opcode;
	}
	wl->n_req++;
}

SRN_TEST(test_rc_segmentation_every_mtu_and_size)
{
	static uint8_t src[65537 + 8], dst[65537 + 8], back[65537 + 8];
	for (uint8_t mtu_e = 1; mtu_e <= 5; mtu_e++) {
		uint32_t mtu = 128u << mtu_e;
		uint32_t sizes[] = { 0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu, 65536, 65537 };
		struct cp_qp_opts o;
		cp_qp_opts_default(&o);
		o.path_mtu = mtu_e;
		o.max_send_wr = 256;
		struct cp_qp a, b;
		struct cp_pair *cp = pair_with(&a, &b, &o);
		REQUIRE(cp);
		struct wire_log *wl = calloc(1, sizeof(*wl));
		cp->tap = tap_log;
		cp->tap_arg = wl;
		struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), 0);
		struct srn_mr *mb = cp_reg(cp, 0, back, sizeof(back), SRN_ACCESS_LOCAL_WRITE);
		struct srn_mr *md = cp_reg(cp, 1, dst, sizeof(dst), ALL_ACC);
		struct srn_mr_info di;
		srn_mr_info(md, &di);
		for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			uint32_t len = sizes[si];
			uint32_t npk = len ? (len + mtu - 1) / mtu : 1;
			for (int op = 0; op < 3; op++) {
				cp_fill(src, len + 8, mtu_e * 1000 + si * 10 + (uint32_t)op);
				memset(dst, 0x5a, sizeof(dst));
				memset(back, 0xa5, sizeof(back));
				uint32_t before = wl->n_req;
				struct srn_cqe c;
				if (op == 0) {
					CHECK_EQ(cp_post_recv(&b, si, dst, 65537 + 8, md), 0);
					CHECK_EQ(cp_post_send(cp, &a, SRN_WR_SEND, 100 + si, src, len, ms, 0, 0, SRN_SEND_SIGNALED), 0);
				} else if (op == 1) {
					CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 200 + si, src, len, ms, (uintptr_t)dst, di.rkey, SRN_SEND_SIGNALED), 0);
				} else {
					memcpy(dst, src, len);
					CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 300 + si, back, len, mb, (uintptr_t)dst, di.rkey, SRN_SEND_SIGNALED), 0);
				}
				cp_run(cp);
				REQUIRE(cp_poll1(a.scq, &c) == 1);
				CHECK_EQ(c.status, SRN_WC_SUCCESS);
				CHECK_EQ(c.byte_len, len);
				CHECK_EQ(c.wr_id, (uint64_t)(op + 1) * 100 + si);
				if (op == 0) {
					REQUIRE(cp_poll1(b.rcq, &c) == 1);
					check_cqe(&c, si, SRN_WC_SUCCESS, SRN_WC_RECV, len, srn_qp_num(b.qp));
				}
				if (op < 2) {
					CHECK(memcmp(dst, src, len) == 0);
					CHECK_EQ(dst[len], 0x5a);
					CHECK_EQ(wl->n_req - before, npk);   /* one packet per MTU */
				} else {
					CHECK(memcmp(back, src, len) == 0);
					CHECK_EQ(back[len], 0xa5);
					CHECK_EQ(wl->n_req - before, 1);     /* one READ request */
				}
			}
		}
		cp_free(cp);
		free(wl);
		CHECK_EQ(cp_live_allocs(), 0);
	}
}

SRN_TEST(test_psn_03_read_advances_by_response_count)
{
	struct cp_qp_opts o;
	cp_qp_opts_default(&o);
	o.path_mtu = 1;
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, &o);
	REQUIRE(cp);
	struct wire_log *wl = calloc(1, sizeof(*wl));
	cp->tap = tap_log;
	cp->tap_arg = wl;
	static uint8_t buf[2000], rbuf[2000];
	struct srn_mr *mb = cp_reg(cp, 0, buf, sizeof(buf), SRN_ACCESS_LOCAL_WRITE);
	struct srn_mr *mr = cp_reg(cp, 1, rbuf, sizeof(rbuf), ALL_ACC);
	struct srn_mr_info ri;
	srn_mr_info(mr, &ri);
	/* READ of 1000 B at MTU 256 = 4 responses; then a WRITE, then an atomic */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 1, buf, 1000, mb, (uintptr_t)rbuf, ri.rkey, 0), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 2, buf, 10, mb, (uintptr_t)rbuf, ri.rkey, 0), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 3, buf, 10, mb, (uintptr_t)rbuf, ri.rkey, 0), 0);
	cp_run(cp);
	REQUIRE(wl->n_req == 3);
	CHECK_EQ(wl->psn[0], o.sq_psn[0]);
	CHECK_EQ(wl->op[0], SRN_OP_RC_READ_REQUEST);
	CHECK_EQ(wl->psn[1], o.sq_psn[0] + 4);
	CHECK_EQ(wl->psn[2], o.sq_psn[0] + 5);
	free(wl);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

SRN_TEST(test_psn_17_one_ack_covers_a_burst)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair_with(&a, &b, NULL);
	REQUIRE(cp);
	uint8_t s[16], d[16];
	struct srn_mr *ms = cp_reg(cp, 0, s, 16, 0);
	struct srn_mr *md = cp_reg(cp, 1, d, 16, ALL_ACC);
	struct srn_mr_info di;
	srn_mr_info(md, &di);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, (uint64_t)i, s, 16, ms, (uintptr_t)d, di.rkey, SRN_SEND_SIGNALED), 0);
	/* move all 8 requests before the responder may answer */
	static uint8_t pkt[SRN_MAX_PKT];
	struct srn_pkt_meta m;
	static uint8_t q[8][SRN_MAX_PKT];
	size_t ql[8];
	struct srn_pkt_meta qm[8];
	int n = 0;
	ssize_t len;
	while ((len = srn_dev_send(cp->dev[0], pkt, sizeof(pkt), &m, cp->now)) > 0 && n < 8) {
		memcpy(q[n], pkt, (size_t)len);
		ql[n] = (size_t)len;
		qm[n] = m;
		n++;
	}
	CHECK_EQ(n, 8);
	for (int i = 0; i < n; i++)
		CHECK_EQ(srn_dev_recv(cp->dev[1], q[i], ql[i], &qm[i], cp->now), 0);
	int acks = 0;
	while ((len = srn_dev_send(cp->dev[1], pkt, sizeof(pkt), &m, cp->now)) > 0) {
		acks++;
		CHECK_EQ(srn_dev_recv(cp->dev[0], pkt, (size_t)len, &m, cp->now), 0);
	}
	CHECK_EQ(acks, 1);
	CHECK_EQ(srn_dev_counters(cp->dev[1])[SRN_CTR_TX_ACKS], 1);
	struct srn_cqe c[8];
	CHECK_EQ(srn_cq_poll(a.scq, c, 8), 8);
	for (int i = 0; i < 8; i++) {
		CHECK_EQ(c[i].wr_id, (uint64_t)i);
		CHECK_EQ(c[i].status, SRN_WC_SUCCESS);
	}
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
