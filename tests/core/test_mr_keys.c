/*
 * test_mr_keys.c - the protection table seen from the wire: a re-registered
 * MR keeps its keys (V-03, issue 11 item 2).
 */
#include "srn_test.h"
#include "lib/core_pair.h"

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)

static void wait_cqe(struct cp_pair *cp, struct srn_cq *cq, struct srn_cqe *c)
{
	cp_run(cp);
	CHECK_EQ(srn_cq_poll(cq, c, 1), 1);
}

/* V-03: srn_mr_rereg changes translation, access and PD in place; the
 * rkey a peer holds keeps working and sees the new translation and access */
SRN_TEST(test_v03_mr_rereg_keeps_keys_peer_rkey_still_valid)
{
	struct cp_pair *cp = cp_new(NULL);
	REQUIRE(cp);
	struct cp_qp a, b;
	REQUIRE(cp_connect(cp, SRN_QPT_RC, &a, &b, NULL) == 0);
	static uint8_t src[256], t1[256], t2[512];
	cp_fill(src, sizeof(src), 5);
	struct srn_mr *ms = cp_reg(cp, 0, src, sizeof(src), 0);
	struct srn_mr *mt = cp_reg(cp, 1, t1, sizeof(t1), ALL_ACC);
	REQUIRE(ms && mt);
	struct srn_mr_info before, after;
	srn_mr_info(mt, &before);
	struct srn_cqe c;

	/* new translation (t2, 512 bytes), same keys */
	CHECK_EQ(srn_mr_rereg(cp->dev[1], mt, cp->pd[1], t2, (uintptr_t)t2, sizeof(t2), ALL_ACC), 0);
	srn_mr_info(mt, &after);
	CHECK_EQ(after.lkey, before.lkey);
	CHECK_EQ(after.rkey, before.rkey);
	CHECK(after.addr == t2);
	CHECK_EQ(after.length, sizeof(t2));
	/* the peer's old rkey writes into the new range */
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 1, src, 256, ms, (uintptr_t)t2 + 256,
			      before.rkey, SRN_SEND_SIGNALED), 0);
	wait_cqe(cp, a.scq, &c);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK(memcmp(t2 + 256, src, 256) == 0);

	/* access narrowed to read only: the same rkey now refuses a WRITE */
	CHECK_EQ(srn_mr_rereg(cp->dev[1], mt, cp->pd[1], t2, (uintptr_t)t2, sizeof(t2),
			      SRN_ACCESS_REMOTE_READ), 0);
	srn_mr_info(mt, &after);
	CHECK_EQ(after.rkey, before.rkey);
	CHECK_EQ(cp_post_send(cp, &a, SRN_WR_RDMA_WRITE, 2, src, 16, ms, (uintptr_t)t2,
			      before.rkey, SRN_SEND_SIGNALED), 0);
	wait_cqe(cp, a.scq, &c);
	CHECK_EQ(c.status, SRN_WC_REM_ACCESS_ERR);

	/* bad arguments change nothing */
	CHECK_EQ(srn_mr_rereg(cp->dev[1], mt, cp->pd[1], t1, (uintptr_t)t1, sizeof(t1),
			      SRN_ACCESS_REMOTE_WRITE), SRN_EINVAL);   /* no LOCAL_WRITE */
	CHECK_EQ(srn_mr_rereg(cp->dev[1], mt, 0, t1, (uintptr_t)t1, sizeof(t1), 0), SRN_EINVAL);
	CHECK_EQ(srn_mr_rereg(cp->dev[0], mt, cp->pd[1], t1, (uintptr_t)t1, sizeof(t1), 0), SRN_EINVAL);
	srn_mr_info(mt, &after);
	CHECK(after.addr == t2);
	CHECK_EQ(after.access, SRN_ACCESS_REMOTE_READ);
	cp_free(cp);
	CHECK_EQ(cp_live_allocs(), 0);
}

int main(void) { return srn_test_main(); }
