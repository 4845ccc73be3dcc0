/*
 * test_mw.c - memory windows at packet level (V-03, V-04, issue 11 item 5):
 * type 1 and type 2 binds through the SQ, the window's access and bounds,
 * invalidation by LOCAL_INV and SEND_WITH_INV, and the completion statuses
 * at both ends when a window is used after it was revoked.
 *
 * Side 1 owns the memory and the windows; side 0 is the remote peer.
 */
#include "srn_test.h"
#include "lib/core_pair.h"

#define LW SRN_ACCESS_LOCAL_WRITE
#define RW SRN_ACCESS_REMOTE_WRITE
#define RR SRN_ACCESS_REMOTE_READ
#define RA SRN_ACCESS_REMOTE_ATOMIC
#define MWB SRN_ACCESS_MW_BIND

static uint8_t mem[8192] __attribute__((aligned(8)));
static uint8_t src[4096] __attribute__((aligned(8)));

static int post_bind(struct cp_pair *cp, struct cp_qp *q, struct srn_mw *mw, uint8_t key,
		     struct srn_mr *mr, uint64_t addr, uint64_t len, uint32_t access,
		     uint64_t wr_id, uint32_t flags)
{
	struct srn_mw_info wi;
	struct srn_mr_info mi;
	srn_mw_info(mw, &wi);
	memset(&mi, 0, sizeof(mi));
	if (mr)
		srn_mr_info(mr, &mi);
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = SRN_WR_BIND_MW;
	wr.send_flags = flags;
	wr.bind.mw_handle = wi.handle;
	wr.bind.rkey = (wi.rkey & ~0xffu) | key;
	wr.bind.mr_lkey = mi.lkey;
	wr.bind.addr = addr;
	wr.bind.length = len;
	wr.bind.access = access;
	return srn_qp_post_send(q->qp, &wr, cp->now);
}

static int post_inv(struct cp_pair *cp, struct cp_qp *q, uint8_t opcode, uint32_t rkey,
		    uint64_t wr_id, void *buf, uint32_t len, struct srn_mr *mr)
{
	struct srn_mr_info mi;
	memset(&mi, 0, sizeof(mi));
	if (mr)
		srn_mr_info(mr, &mi);
	struct srn_sge sge = { (uintptr_t)buf, len, mi.lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = SRN_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	wr.sg_list = &sge;
	wr.num_sge = buf ? 1 : 0;
	return srn_qp_post_send(q->qp, &wr, cp->now);
}

static uint32_t rkey_of(struct srn_mw *mw)
{
	struct srn_mw_info wi;
	srn_mw_info(mw, &wi);
	return wi.rkey;
}

static bool bound(struct srn_mw *mw)
{
	struct srn_mw_info wi;
	srn_mw_info(mw, &wi);
	return wi.bound;
}

/* one CQE from cq after running the pair; status returned, -1 if none */
static int cqe(struct cp_pair *cp, struct srn_cq *cq, struct srn_cqe *c)
{
	cp_run(cp);
	struct srn_cqe tmp;
	if (!c)
		c = &tmp;
	return srn_cq_poll(cq, c, 1) == 1 ? c->status : -1;
}

static bool got_async(struct cp_pair *cp, int side, enum srn_async_type t, struct srn_qp *qp)
{
	struct srn_async_event ev;
	bool found = false;
	while (srn_dev_next_async_event(cp->dev[side], &ev) == 0)
		if (ev.type == t && ev.qp == qp)
			found = true;
	return found;
}

static struct cp_pair *pair(struct cp_qp *a, struct cp_qp *b)
{
	struct cp_pair *cp = cp_new(NULL);
	if (cp && cp_connect(cp, SRN_QPT_RC, a, b, NULL)) {
		cp_free(cp);
		return NULL;
	}
	return cp;
}

/* V-04: a type 2 window bound through the SQ (IBV_WC_BIND_MW) grants
 * exactly its range and access: a WRITE and a READ inside it succeed, the
 * bytes land where the window maps them; one byte past its end is a remote
 * access error at the requester and puts the responder QP in ERR with
 * IBV_EVENT_QP_ACCESS_ERR */
SRN_TEST(test_v04_mw_type2_bind_grants_range_and_access_only)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair(&a, &b);
	REQUIRE(cp);
	struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), LW);
	struct srn_mw *mw;
	REQUIRE(mr && ms);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &mw) == 0);
	CHECK(!bound(mw));
	uint64_t base = (uintptr_t)mem + 1024;
	CHECK_EQ(post_bind(cp, &b, mw, 0x5a, mr, base, 2048, RW | RR, 7, SRN_SEND_SIGNALED), 0);
	struct srn_cqe c;
	CHECK_EQ(cqe(cp, b.scq, &c), SRN_WC_SUCCESS);
	CHECK_EQ(c.opcode, SRN_WC_BIND_MW);
	CHECK_EQ(c.wr_id, 7);
	uint32_t rkey = rkey_of(mw);
	CHECK_EQ(rkey & 0xff, 0x5a);
	CHECK(bound(mw));
	/* WRITE into the window, READ it back */
	cp_fill(src, 2048, 3);
	memset(mem, 0, sizeof(mem));
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, src, 2048, ms, base, rkey, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_SUCCESS);
	CHECK(memcmp(mem + 1024, src, 2048) == 0);
	CHECK(mem[1023] == 0 && mem[1024 + 2048] == 0);
	static uint8_t back[2048];
	struct srn_mr *mb = cp_reg(cp, 0, back, sizeof(back), LW);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 2, back, 100, mb, base + 1948, rkey, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_SUCCESS);
	CHECK(memcmp(back, src + 1948, 100) == 0);
	/* no ATOMIC access in this window */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_ATOMIC_FETCH_AND_ADD, 3, back, 8, mb, base, rkey,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_REM_ACCESS_ERR);
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	CHECK(got_async(cp, 1, SRN_EV_QP_ACCESS_ERR, b.qp));
	cp_free(cp);

	/* one byte past the window (still inside the MR) */
	cp = pair(&a, &b);
	REQUIRE(cp);
	mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
	ms = cp_reg(cp, 0, src, sizeof(src), LW);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &mw) == 0);
	CHECK_EQ(post_bind(cp, &b, mw, 1, mr, base, 2048, RW, 8, 0), 0);
	cp_run(cp);
	CHECK_EQ(srn_cq_poll(b.scq, &c, 1), 0);          /* unsignaled: no CQE */
	rkey = rkey_of(mw);
	memset(mem, 0, sizeof(mem));
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 4, src, 2048, ms, base + 1, rkey, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_REM_ACCESS_ERR);
	for (size_t i = 0; i < sizeof(mem); i++)
		if (mem[i]) {
			CHECK(!"a refused WRITE placed data");
			break;
		}
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-04: SEND_WITH_INV revokes the window at the responder (its receive
 * completes WITH_INV naming the rkey); the same rkey used afterwards is a
 * remote access error at the requester, and the responder QP goes to ERR
 * (QP_ACCESS_ERR) flushing its receives */
SRN_TEST(test_v04_mw_send_with_inv_revokes_then_rem_access_err_both_ends)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair(&a, &b);
	REQUIRE(cp);
	struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), LW);
	static uint8_t rbuf[256];
	struct srn_mr *mrb = cp_reg(cp, 1, rbuf, sizeof(rbuf), LW);
	struct srn_mw *mw;
	REQUIRE(mr && ms && mrb);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &mw) == 0);
	CHECK_EQ(post_bind(cp, &b, mw, 9, mr, (uintptr_t)mem, 4096, RW, 1, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, b.scq, NULL), SRN_WC_SUCCESS);
	uint32_t rkey = rkey_of(mw);
	CHECK_EQ(cp_post_recv(&b, 0x31, rbuf, sizeof(rbuf), mrb), 0);
	CHECK_EQ(cp_post_recv(&b, 0x32, rbuf, sizeof(rbuf), mrb), 0);
	cp_fill(src, 64, 4);
	CHECK_EQ(post_inv(cp, &a, SRN_WR_SEND_WITH_INV, rkey, 2, src, 64, ms), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_SUCCESS);
	struct srn_cqe c;
	CHECK_EQ(cqe(cp, b.rcq, &c), SRN_WC_SUCCESS);
	CHECK_EQ(c.wr_id, 0x31);
	CHECK(c.wc_flags & SRN_WC_WITH_INV);
	CHECK_EQ(c.imm_be, rkey);                        /* the invalidated rkey */
	CHECK(memcmp(rbuf, src, 64) == 0);
	CHECK(!bound(mw));
	/* the revoked rkey */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 3, src, 16, ms, (uintptr_t)mem, rkey,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_REM_ACCESS_ERR);
	CHECK_EQ(srn_qp_state(a.qp), SRN_QPS_ERR);
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	CHECK(got_async(cp, 1, SRN_EV_QP_ACCESS_ERR, b.qp));
	CHECK_EQ(cqe(cp, b.rcq, &c), SRN_WC_WR_FLUSH_ERR);
	CHECK_EQ(c.wr_id, 0x32);
	CHECK_EQ(srn_dev_counters(cp->dev[1])[SRN_CTR_TX_NAK_REM_ACCESS], 1);
	/* the MR is free again: deregistration succeeds */
	CHECK_EQ(srn_mr_dereg(cp->dev[1], mr), 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-04: LOCAL_INV (IBV_WC_LOCAL_INV) revokes a type 2 window; a second one
 * of the same rkey is a memory management error (MW_BIND_ERR) */
SRN_TEST(test_v04_mw_local_inv_revokes_second_is_mw_bind_err)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair(&a, &b);
	REQUIRE(cp);
	struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), LW);
	struct srn_mw *mw;
	REQUIRE(mr && ms && srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &mw) == 0);
	CHECK_EQ(post_bind(cp, &b, mw, 2, mr, (uintptr_t)mem, 64, RR, 1, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, b.scq, NULL), SRN_WC_SUCCESS);
	uint32_t rkey = rkey_of(mw);
	struct srn_cqe c;
	CHECK_EQ(post_inv(cp, &b, SRN_WR_LOCAL_INV, rkey, 2, NULL, 0, NULL), 0);
	CHECK_EQ(cqe(cp, b.scq, &c), SRN_WC_SUCCESS);
	CHECK_EQ(c.opcode, SRN_WC_LOCAL_INV);
	CHECK(!bound(mw));
	/* a READ with the revoked key */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_READ, 3, src, 16, ms, (uintptr_t)mem, rkey,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_REM_ACCESS_ERR);
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	cp_free(cp);

	cp = pair(&a, &b);
	REQUIRE(cp);
	mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &mw) == 0);
	CHECK_EQ(post_bind(cp, &b, mw, 2, mr, (uintptr_t)mem, 64, RR, 1, 0), 0);
	rkey = (rkey_of(mw) & ~0xffu) | 2;
	CHECK_EQ(post_inv(cp, &b, SRN_WR_LOCAL_INV, rkey, 2, NULL, 0, NULL), 0);
	CHECK_EQ(post_inv(cp, &b, SRN_WR_LOCAL_INV, rkey, 3, NULL, 0, NULL), 0);
	CHECK_EQ(cqe(cp, b.scq, &c), SRN_WC_SUCCESS);
	CHECK_EQ(c.wr_id, 2);
	CHECK_EQ(cqe(cp, b.scq, &c), SRN_WC_MW_BIND_ERR);
	CHECK_EQ(c.wr_id, 3);
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-03: every bind rule; a bind that breaks one completes with MW_BIND_ERR
 * and changes nothing (the window's rkey and state stay as they were) */
SRN_TEST(test_v03_mw_bind_rules_refused_change_nothing)
{
	enum { NO_MWB, OUTSIDE, WRITE_NO_LW, BOUND_TYPE2, OTHER_PD_MW, BAD_INDEX, T1_ZERO_BASED,
	       T2_LENGTH0, BAD_ACCESS, NCASES };
	for (int k = 0; k < NCASES; k++) {
		struct cp_qp a, b;
		struct cp_pair *cp = pair(&a, &b);
		REQUIRE(cp);
		uint32_t acc = LW | MWB;
		if (k == NO_MWB)
			acc = LW;
		if (k == WRITE_NO_LW)
			acc = MWB;
		struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), acc);
		REQUIRE(mr);
		uint32_t pdn = k == OTHER_PD_MW ? srn_pd_alloc(cp->dev[1]) : cp->pd[1];
		struct srn_mw *mw;
		enum srn_mw_type t = (k == T1_ZERO_BASED) ? SRN_MW_TYPE_1 : SRN_MW_TYPE_2;
		REQUIRE(srn_mw_alloc(cp->dev[1], pdn, t, &mw) == 0);
		if (k == BOUND_TYPE2) {
			CHECK_EQ(post_bind(cp, &b, mw, 1, mr, (uintptr_t)mem, 16, RR, 1, 0), 0);
			cp_run(cp);
			CHECK(bound(mw));
		}
		struct srn_mw_info before, after;
		srn_mw_info(mw, &before);
		uint64_t addr = (uintptr_t)mem, len = 128;
		uint32_t macc = k == WRITE_NO_LW ? RW : RR;
		if (k == OUTSIDE)
			addr = (uintptr_t)mem + sizeof(mem) - 64;
		if (k == T1_ZERO_BASED)
			macc |= SRN_ACCESS_ZERO_BASED;
		if (k == T2_LENGTH0)
			len = 0;
		if (k == BAD_ACCESS)
			macc = LW | RR;                   /* LOCAL_WRITE is no window access */
		struct srn_send_wr wr;
		memset(&wr, 0, sizeof(wr));
		struct srn_mr_info mi;
		srn_mr_info(mr, &mi);
		wr.wr_id = 99;
		wr.opcode = SRN_WR_BIND_MW;
		wr.send_flags = SRN_SEND_SIGNALED;
		wr.bind.mw_handle = before.handle;
		wr.bind.rkey = (before.rkey & ~0xffu) | 0x77;
		if (k == BAD_INDEX)
			wr.bind.rkey += 0x100;
		wr.bind.mr_lkey = mi.lkey;
		wr.bind.addr = addr;
		wr.bind.length = len;
		wr.bind.access = macc;
		CHECK_EQ(srn_qp_post_send(b.qp, &wr, cp->now), 0);
		struct srn_cqe c;
		int st = cqe(cp, b.scq, &c);
		if (st != SRN_WC_MW_BIND_ERR)
			fprintf(stderr, "  case %d: status %d\n", k, st);
		CHECK_EQ(st, SRN_WC_MW_BIND_ERR);
		CHECK_EQ(c.wr_id, 99);
		CHECK_EQ(c.opcode, SRN_WC_BIND_MW);
		srn_mw_info(mw, &after);
		CHECK_EQ(after.rkey, before.rkey);
		CHECK_EQ(after.bound, before.bound);
		CHECK_EQ(after.addr, before.addr);
		CHECK_EQ(after.length, before.length);
		CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
		cp_free(cp);
	}
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-03: a type 2 window answers only through the QP that bound it; a type
 * 1 window through any QP of its PD; an unbind (length 0) and a rebind give
 * new rkeys and the old ones stop working */
SRN_TEST(test_v03_mw_type1_any_qp_of_pd_type2_only_its_qp_rebind_new_rkey)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b, c, d;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &c, &d, NULL) == 0);    /* d: same PD as b */
	struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), LW);
	struct srn_mw *w1, *w2;
	REQUIRE(mr && ms);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_1, &w1) == 0);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &w2) == 0);
	uint32_t t1_unbound = rkey_of(w1);
	CHECK_EQ(post_bind(cp, &b, w1, (uint8_t)(t1_unbound + 1), mr, (uintptr_t)mem, 4096, RW, 1, 0), 0);
	CHECK_EQ(post_bind(cp, &b, w2, 3, mr, (uintptr_t)mem + 4096, 4096, RW, 2, 0), 0);
	cp_run(cp);
	uint32_t k1 = rkey_of(w1), k2 = rkey_of(w2);
	CHECK(k1 != t1_unbound);
	cp_fill(src, 32, 6);
	/* type 1 through d (not the binding QP): fine */
	CHECK_EQ(cp_post_send(cp, &c, SRN_WR_RDMA_WRITE, 3, src, 32, ms, (uintptr_t)mem + 100, k1,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, c.scq, NULL), SRN_WC_SUCCESS);
	CHECK(memcmp(mem + 100, src, 32) == 0);
	/* type 2 through b (its QP): fine; through d: refused */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 4, src, 32, ms, (uintptr_t)mem + 4096, k2,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_SUCCESS);
	CHECK_EQ(cp_post_send(cp, &c, SRN_WR_RDMA_WRITE, 5, src, 32, ms, (uintptr_t)mem + 4096, k2,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, c.scq, NULL), SRN_WC_REM_ACCESS_ERR);
	CHECK_EQ(srn_qp_state(d.qp), SRN_QPS_ERR);
	/* type 1 unbind through b (length 0, no MR): the old rkey stops */
	CHECK_EQ(post_bind(cp, &b, w1, (uint8_t)(k1 + 1), NULL, 0, 0, 0, 6, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, b.scq, NULL), SRN_WC_SUCCESS);
	CHECK(!bound(w1));
	CHECK(rkey_of(w1) != k1);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 7, src, 32, ms, (uintptr_t)mem, k1,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_REM_ACCESS_ERR);
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	/* destroying b invalidates its type 2 window; the MR can then go once
	 * w1 is deallocated (it is unbound already) */
	CHECK(bound(w2));
	CHECK_EQ(srn_mr_dereg(cp->dev[1], mr), SRN_EBUSY);
	cp_qp_destroy(cp, &b);
	CHECK(!bound(w2));
	CHECK_EQ(srn_mr_dereg(cp->dev[1], mr), 0);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-03: windows hold their MR (dereg and rereg: EBUSY) until invalidated or
 * deallocated; a zero-based type 2 window takes offsets from 0; an atomic
 * through a window with REMOTE_ATOMIC */
SRN_TEST(test_v03_mw_holds_mr_zero_based_and_atomic)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair(&a, &b);
	REQUIRE(cp);
	struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), LW);
	struct srn_mw *mw, *mw2;
	REQUIRE(mr && ms);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &mw) == 0);
	REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], SRN_MW_TYPE_2, &mw2) == 0);
	CHECK_EQ(post_bind(cp, &b, mw, 4, mr, (uintptr_t)mem + 512, 256,
			   RW | RA | SRN_ACCESS_ZERO_BASED, 1, 0), 0);
	cp_run(cp);
	CHECK(bound(mw));
	CHECK_EQ(srn_mr_dereg(cp->dev[1], mr), SRN_EBUSY);
	CHECK_EQ(srn_mr_rereg(cp->dev[1], mr, cp->pd[1], mem, (uintptr_t)mem, 64, LW | MWB), SRN_EBUSY);
	uint32_t rkey = rkey_of(mw);
	memset(mem, 0, sizeof(mem));
	cp_fill(src, 16, 8);
	/* zero based: remote address 8 is mem + 512 + 8 */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 2, src, 16, ms, 8, rkey, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_SUCCESS);
	CHECK(memcmp(mem + 520, src, 16) == 0);
	uint64_t v = 40;
	memcpy(mem + 512 + 64, &v, 8);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_ATOMIC_FETCH_AND_ADD, 3, src + 64, 8, ms, 64, rkey,
			      SRN_SEND_SIGNALED), 0);
	/* compare_add is 0 from cp_post_send: check the old value came back */
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_SUCCESS);
	uint64_t got;
	memcpy(&got, src + 64, 8);
	CHECK_EQ(got, 40);
	/* the window ends at 256: offset 256 is out */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 4, src, 1, ms, 256, rkey, SRN_SEND_SIGNALED), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_REM_ACCESS_ERR);
	/* deallocating the bound window releases the MR */
	CHECK_EQ(srn_mw_dealloc(cp->dev[1], mw), 0);
	CHECK_EQ(srn_mr_dereg(cp->dev[1], mr), 0);
	/* a window of another device is refused */
	CHECK_EQ(srn_mw_dealloc(cp->dev[0], mw2), SRN_EINVAL);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-04: SEND_WITH_INV naming an rkey the responder may not invalidate (an
 * ibv_reg_mr region) is an invalid request: REM_INV_REQ_ERR at the
 * requester, the receive completes with it, the MR stays usable by others */
SRN_TEST(test_v04_send_with_inv_of_mr_rkey_is_invalid_request)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair(&a, &b);
	REQUIRE(cp);
	struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), LW | RW);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), LW);
	REQUIRE(mr && ms);
	struct srn_mr_info mi;
	srn_mr_info(mr, &mi);
	memset(mem, 0xee, 64);
	CHECK_EQ(cp_post_recv(&b, 0x41, mem, 64, mr), 0);
	CHECK_EQ(post_inv(cp, &a, SRN_WR_SEND_WITH_INV, mi.rkey, 1, src, 16, ms), 0);
	CHECK_EQ(cqe(cp, a.scq, NULL), SRN_WC_REM_INV_REQ_ERR);
	struct srn_cqe c;
	CHECK_EQ(cqe(cp, b.rcq, &c), SRN_WC_REM_INV_REQ_ERR);
	CHECK_EQ(c.wr_id, 0x41);
	CHECK_EQ(mem[0], 0xee);                          /* nothing placed */
	CHECK_EQ(srn_qp_state(b.qp), SRN_QPS_ERR);
	CHECK(got_async(cp, 1, SRN_EV_QP_REQ_ERR, b.qp));
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-04: local operations complete in SQ order: a WRITE still waiting for its
 * ACK, then a BIND, then a WRITE give their CQEs in that order; a FENCEd
 * bind waits for the WRITE before it to complete */
SRN_TEST(test_v04_mw_bind_completes_in_sq_order_and_fence)
{
	struct cp_qp a, b;
	struct cp_pair *cp = pair(&a, &b);
	REQUIRE(cp);
	struct srn_mr *mr = cp_reg(cp, 0, mem, sizeof(mem), LW | MWB);
	struct srn_mr *mt = cp_reg(cp, 1, src, sizeof(src), LW | RW);
	struct srn_mw *mw;
	REQUIRE(mr && mt && srn_mw_alloc(cp->dev[0], cp->pd[0], SRN_MW_TYPE_2, &mw) == 0);
	struct srn_mr_info ti;
	srn_mr_info(mt, &ti);
	/* the requester (side 0) writes, binds, writes; nothing delivered yet */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, mem, 64, mr, (uintptr_t)src, ti.rkey,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(post_bind(cp, &a, mw, 1, mr, (uintptr_t)mem, 64, RR, 2, SRN_SEND_SIGNALED | SRN_SEND_FENCE), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 3, mem, 64, mr, (uintptr_t)src, ti.rkey,
			      SRN_SEND_SIGNALED), 0);
	/* one transmit pass: the fenced bind has not run (the WRITE is unacked) */
	uint8_t buf[SRN_MAX_PKT];
	struct srn_pkt_meta meta;
	while (srn_dev_send(cp->dev[0], buf, sizeof(buf), &meta, cp->now) > 0)
		;
	CHECK(!bound(mw));
	cp_run(cp);
	CHECK(bound(mw));
	struct srn_cqe c[4];
	CHECK_EQ(srn_cq_poll(a.scq, c, 4), 3);
	CHECK_EQ(c[0].wr_id, 1);
	CHECK_EQ(c[1].wr_id, 2);
	CHECK_EQ(c[1].opcode, SRN_WC_BIND_MW);
	CHECK_EQ(c[2].wr_id, 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(c[i].status, SRN_WC_SUCCESS);
	/* without FENCE: bind then invalidate between two unacked WRITEs */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 4, mem, 64, mr, (uintptr_t)src, ti.rkey,
			      SRN_SEND_SIGNALED), 0);
	CHECK_EQ(post_inv(cp, &a, SRN_WR_LOCAL_INV, rkey_of(mw), 5, NULL, 0, NULL), 0);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 6, mem, 64, mr, (uintptr_t)src, ti.rkey,
			      SRN_SEND_SIGNALED), 0);
	while (srn_dev_send(cp->dev[0], buf, sizeof(buf), &meta, cp->now) > 0)
		;
	CHECK(!bound(mw));                       /* executed at once, in order */
	CHECK_EQ(srn_cq_poll(a.scq, c, 4), 0);   /* but completes after WRITE 4 */
	cp_run(cp);
	CHECK_EQ(srn_cq_poll(a.scq, c, 4), 3);
	CHECK_EQ(c[0].wr_id, 4);
	CHECK_EQ(c[1].wr_id, 5);
	CHECK_EQ(c[1].opcode, SRN_WC_LOCAL_INV);
	CHECK_EQ(c[2].wr_id, 6);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

/* V-04: a SEND_WITH_INV may revoke a type 2 window only on the QP it is
 * bound to: arriving on another QP of the same PD it is an invalid request
 * and the window stays bound; a type 1 window is never invalidated so */
SRN_TEST(test_v04_send_with_inv_only_on_the_windows_qp_never_type1)
{
	for (int k = 0; k < 2; k++) {
		struct cp_pair *cp = cp_new(NULL);
		REQUIRE(cp);
		struct cp_qp a, b, c, d;
		REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
		REQUIRE(cp_connect(cp, SRN_QPT_RC, &c, &d, NULL) == 0);
		struct srn_mr *mr = cp_reg(cp, 1, mem, sizeof(mem), LW | MWB);
		struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), LW);
		struct srn_mw *mw;
		REQUIRE(mr && ms);
		REQUIRE(srn_mw_alloc(cp->dev[1], cp->pd[1], k ? SRN_MW_TYPE_1 : SRN_MW_TYPE_2, &mw) == 0);
		CHECK_EQ(post_bind(cp, &b, mw, 5, mr, (uintptr_t)mem, 64, RW, 1, 0), 0);
		cp_run(cp);
		REQUIRE(bound(mw));
		/* type 2: on d (not its QP); type 1: on b itself */
		struct cp_qp *snd = k ? &a : &c, *rcv = k ? &b : &d;
		CHECK_EQ(cp_post_recv(rcv, 1, mem + 4096, 64, mr), 0);
		CHECK_EQ(post_inv(cp, snd, SRN_WR_SEND_WITH_INV, rkey_of(mw), 2, src, 8, ms), 0);
		CHECK_EQ(cqe(cp, snd->scq, NULL), SRN_WC_REM_INV_REQ_ERR);
		CHECK_EQ(cqe(cp, rcv->rcq, NULL), SRN_WC_REM_INV_REQ_ERR);
		CHECK(bound(mw));
		cp_free(cp);
	}
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
