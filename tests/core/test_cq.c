/*
 * test_cq.c - unit tests of completion queues (src/core/cq.c, V-03):
 * order, overflow (counted, one CQ_ERR event), arming and the solicited
 * rule, resize, and the limits.
 */
#include "srn_test.h"
#include "core/core_int.h"

#include <stdlib.h>

static void *t_calloc(size_t n, size_t s, void *u) { (void)u; return calloc(n, s); }
static void t_free(void *p, void *u) { (void)u; free(p); }

static struct srn_dev *new_dev(void)
{
	struct srn_dev_cfg c;
	srn_dev_cfg_default(&c);
	c.max_qp = 4;
	c.max_cqe = 64;
	c.mem.calloc = t_calloc;
	c.mem.free = t_free;
	struct srn_dev *d = NULL;
	return srn_dev_new(&d, &c) == SRN_OK ? d : NULL;
}

static void push(struct srn_cq *cq, uint64_t id, uint8_t status, bool sol)
{
	struct srn_cqe e;
	memset(&e, 0, sizeof(e));
	e.wr_id = id;
	e.status = status;
	srn_cq_push(cq, &e, sol);
}

SRN_TEST(test_v03_cq_order_overflow_and_limits)
{
	struct srn_dev *d = new_dev();
	REQUIRE(d);
	struct srn_cq *cq = NULL;
	CHECK_EQ(srn_cq_new(d, 0, NULL, &cq), SRN_EINVAL);
	CHECK_EQ(srn_cq_new(d, 65, NULL, &cq), SRN_ERANGE);
	REQUIRE(srn_cq_new(d, 4, (void *)0x1234, &cq) == SRN_OK);
	CHECK(srn_cq_user(cq) == (void *)0x1234);
	CHECK_EQ(srn_cq_capacity(cq), 4);
	for (uint64_t i = 0; i < 6; i++)
		push(cq, 100 + i, SRN_WC_SUCCESS, false);
	const uint64_t *ctr = srn_dev_counters(d);
	CHECK_EQ(ctr[SRN_CTR_COMPLETIONS], 4);
	CHECK_EQ(ctr[SRN_CTR_DROP_CQ_OVERFLOW], 2);
	struct srn_async_event ev;
	REQUIRE(srn_dev_next_async_event(d, &ev) == SRN_OK);   /* one CQ_ERR, not two */
	CHECK_EQ(ev.type, SRN_EV_CQ_ERR);
	CHECK(ev.cq == cq);
	CHECK_EQ(srn_dev_next_async_event(d, &ev), SRN_EAGAIN);
	struct srn_cqe out[8];
	CHECK_EQ(srn_cq_poll(cq, out, 3), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(out[i].wr_id, 100 + (uint64_t)i);
	/* resize keeps the order; not below what it holds */
	push(cq, 200, SRN_WC_SUCCESS, false);
	push(cq, 201, SRN_WC_SUCCESS, false);
	CHECK_EQ(srn_cq_resize(cq, 2), SRN_EINVAL);
	CHECK_EQ(srn_cq_resize(cq, 65), SRN_ERANGE);
	CHECK_EQ(srn_cq_resize(cq, 16), SRN_OK);
	CHECK_EQ(srn_cq_capacity(cq), 16);
	CHECK_EQ(srn_cq_poll(cq, out, 8), 3);
	CHECK_EQ(out[0].wr_id, 103);
	CHECK_EQ(out[1].wr_id, 200);
	CHECK_EQ(out[2].wr_id, 201);
	/* in use: not destroyed */
	cq->refcnt = 1;
	CHECK_EQ(srn_cq_del(cq), SRN_EBUSY);
	cq->refcnt = 0;
	CHECK_EQ(srn_cq_del(cq), SRN_OK);
	srn_dev_del(d);
}

SRN_TEST(test_v03_cq_arm_and_solicited_notification)
{
	struct srn_dev *d = new_dev();
	REQUIRE(d);
	struct srn_cq *cq;
	REQUIRE(srn_cq_new(d, 16, NULL, &cq) == SRN_OK);
	push(cq, 1, SRN_WC_SUCCESS, true);               /* not armed: no event */
	CHECK(srn_dev_next_cq_event(d) == NULL);
	srn_cq_arm(cq, true);                           /* solicited only */
	push(cq, 2, SRN_WC_SUCCESS, false);
	CHECK(srn_dev_next_cq_event(d) == NULL);
	push(cq, 3, SRN_WC_SUCCESS, true);
	CHECK(srn_dev_next_cq_event(d) == cq);           /* one event, then disarmed */
	push(cq, 4, SRN_WC_SUCCESS, true);
	CHECK(srn_dev_next_cq_event(d) == NULL);
	srn_cq_arm(cq, true);
	push(cq, 5, SRN_WC_REM_ACCESS_ERR, false);       /* errors wake solicited-only waiters */
	CHECK(srn_dev_next_cq_event(d) == cq);
	srn_cq_arm(cq, true);
	srn_cq_arm(cq, false);                          /* a second arm widens it */
	push(cq, 6, SRN_WC_SUCCESS, false);
	CHECK(srn_dev_next_cq_event(d) == cq);
	/* an event for a CQ being destroyed is forgotten */
	srn_cq_arm(cq, false);
	push(cq, 7, SRN_WC_SUCCESS, false);
	CHECK_EQ(srn_cq_del(cq), SRN_OK);
	CHECK(srn_dev_next_cq_event(d) == NULL);
	CHECK_EQ(srn_dev_counters(d)[SRN_CTR_COMPLETION_ERRORS], 1);
	srn_dev_del(d);
}

int main(void) { return srn_test_main(); }
