/*
 * test_srq.c - unit tests of receive rings and shared receive queues
 * (src/core/srq.c, V-03): FIFO order, the limit event once per arming,
 * the queue bounds and argument errors.
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
	c.max_qp_wr = 32;
	c.max_sge = 4;
	c.mem.calloc = t_calloc;
	c.mem.free = t_free;
	struct srn_dev *d = NULL;
	return srn_dev_new(&d, &c) == SRN_OK ? d : NULL;
}

static int post(struct srn_srq *srq, uint64_t id, uint32_t nsge)
{
	struct srn_sge sge[5];
	for (uint32_t i = 0; i < nsge; i++)
		sge[i] = (struct srn_sge){ .addr = 0x1000 * (id + 1) + i, .length = 64 + i, .lkey = 7 };
	struct srn_recv_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = nsge };
	return srn_srq_post(srq, &wr);
}

SRN_TEST(test_v03_srq_fifo_limit_event_and_bounds)
{
	struct srn_dev *d = new_dev();
	REQUIRE(d);
	struct srn_srq *srq = NULL;
	struct srn_srq_init in = { .pdn = srn_pd_alloc(d), .max_wr = 8, .max_sge = 2, .srq_limit = 0 };
	struct srn_srq_init bad = in;
	bad.max_wr = 0;
	CHECK_EQ(srn_srq_new(d, &bad, &srq), SRN_EINVAL);
	bad = in;
	bad.max_wr = 33;
	CHECK_EQ(srn_srq_new(d, &bad, &srq), SRN_ERANGE);
	bad = in;
	bad.max_sge = 5;
	CHECK_EQ(srn_srq_new(d, &bad, &srq), SRN_ERANGE);
	bad = in;
	bad.srq_limit = 9;
	CHECK_EQ(srn_srq_new(d, &bad, &srq), SRN_ERANGE);
	REQUIRE(srn_srq_new(d, &in, &srq) == SRN_OK);
	CHECK_EQ(post(srq, 0, 3), SRN_EINVAL);          /* more SGEs than max_sge */
	for (uint64_t i = 0; i < 8; i++)
		CHECK_EQ(post(srq, i, 2), SRN_OK);
	CHECK_EQ(post(srq, 8, 1), SRN_ENOMEM);          /* full */
	CHECK_EQ(srn_srq_set_limit(srq, 9), SRN_ERANGE);
	CHECK_EQ(srn_srq_set_limit(srq, 6), SRN_OK);
	uint32_t mw, ms, lim;
	srn_srq_query(srq, &mw, &ms, &lim);
	CHECK_EQ(mw, 8);
	CHECK_EQ(ms, 2);
	CHECK_EQ(lim, 6);
	struct srn_sge sg[2];
	struct srn_rwqe w = { .sge = sg };
	struct srn_async_event ev;
	for (uint64_t i = 0; i < 3; i++) {
		REQUIRE(srn_srq_take(srq, &w));
		CHECK_EQ(w.wr_id, i);                    /* FIFO */
		CHECK_EQ(w.num_sge, 2);
		CHECK_EQ(w.sge[1].addr, 0x1000 * (i + 1) + 1);
		CHECK_EQ(w.sge[1].length, 65);
		/* fewer than 6 left after the third: the event, once */
		CHECK_EQ(srn_dev_next_async_event(d, &ev) == SRN_OK, i == 2);
	}
	CHECK_EQ(ev.type, SRN_EV_SRQ_LIMIT_REACHED);
	CHECK(ev.srq == srq);
	srn_srq_query(srq, NULL, NULL, &lim);
	CHECK_EQ(lim, 0);                               /* disarmed */
	REQUIRE(srn_srq_take(srq, &w));
	CHECK_EQ(srn_dev_next_async_event(d, &ev), SRN_EAGAIN);
	for (int i = 0; i < 4; i++)
		CHECK(srn_srq_take(srq, &w));
	CHECK(!srn_srq_take(srq, &w));                  /* empty */
	srq->refcnt = 1;
	CHECK_EQ(srn_srq_del(srq), SRN_EBUSY);
	srq->refcnt = 0;
	CHECK_EQ(srn_srq_del(srq), SRN_OK);
	srn_dev_del(d);
}

int main(void) { return srn_test_main(); }
