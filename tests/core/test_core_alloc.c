/*
 * test_core_alloc.c - every allocation of device, QP, CQ, SRQ and MR
 * creation fails in turn (ngtcp2's test_alloc_fail): the call returns
 * SRN_ENOMEM, hands out no object and leaves no memory behind; with no
 * failure it succeeds, and destroying the object frees all it took.
 */
#include "srn_test.h"
#include "core/srn_core.h"

#include <stdlib.h>

struct counting {
	long live;          /* blocks allocated and not freed */
	long calls;         /* allocations so far */
	long fail_at;       /* the allocation number that fails (-1: none) */
};

static void *c_calloc(size_t n, size_t s, void *u)
{
	struct counting *c = u;
	if (c->calls++ == c->fail_at)
		return NULL;
	void *p = calloc(n, s);
	if (p)
		c->live++;
	return p;
}

static void c_free(void *p, void *u)
{
	struct counting *c = u;
	if (p) {
		c->live--;
		free(p);
	}
}

static struct counting cnt;

static void dev_cfg(struct srn_dev_cfg *cfg)
{
	srn_dev_cfg_default(cfg);
	cfg->max_qp = 8;
	cfg->max_mr = 16;
	cfg->mem.calloc = c_calloc;
	cfg->mem.free = c_free;
	cfg->mem.user = &cnt;
}

/* arm the k-th allocation from now to fail */
static void fail_in(long k) { cnt.fail_at = cnt.calls + k; }

SRN_TEST(test_core_alloc_fail_device_creation)
{
	memset(&cnt, 0, sizeof(cnt));
	struct srn_dev_cfg cfg;
	dev_cfg(&cfg);
	int steps = 0;
	for (long k = 0;; k++, steps++) {
		struct srn_dev *d = NULL;
		fail_in(k);
		int rc = srn_dev_new(&d, &cfg);
		if (rc == SRN_OK) {
			srn_dev_del(d);
			break;
		}
		CHECK_EQ(rc, SRN_ENOMEM);
		CHECK(d == NULL);
		CHECK_EQ(cnt.live, 0);
		REQUIRE(k < 100);
	}
	CHECK(steps > 3);          /* the device has several tables: each failed once */
	CHECK_EQ(cnt.live, 0);
}

/* a device and the objects a QP needs */
struct env {
	struct srn_dev *d;
	uint32_t pd;
	struct srn_cq *cq;
	struct srn_srq *srq;
};

static void env_new(struct env *e)
{
	memset(&cnt, 0, sizeof(cnt));
	cnt.fail_at = -1;
	struct srn_dev_cfg cfg;
	dev_cfg(&cfg);
	memset(e, 0, sizeof(*e));
	if (srn_dev_new(&e->d, &cfg) != SRN_OK)
		return;
	e->pd = srn_pd_alloc(e->d);
	struct srn_srq_init si = { .pdn = e->pd, .max_wr = 16, .max_sge = 2 };
	if (srn_cq_new(e->d, 32, NULL, &e->cq) != SRN_OK || srn_srq_new(e->d, &si, &e->srq) != SRN_OK)
		e->cq = NULL;
}

/* the kinds of objects whose creation is walked */
enum kind { K_QP_RC, K_QP_UC, K_QP_UD_SRQ, K_CQ, K_SRQ, K_MR, K_N };
static const char *const kind_names[K_N] = { "RC QP", "UC QP", "UD QP on SRQ", "CQ", "SRQ", "MR" };

static int create(struct env *e, enum kind k, void **out)
{
	static uint8_t buf[256];
	struct srn_qp_init qi = {
		.type = SRN_QPT_RC, .pdn = e->pd, .send_cq = e->cq, .recv_cq = e->cq,
		.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2,
		.max_inline_data = 64,
	};
	struct srn_srq_init si = { .pdn = e->pd, .max_wr = 8, .max_sge = 1 };
	switch (k) {
	case K_QP_UC:
		qi.type = SRN_QPT_UC;
		/* fall through */
	case K_QP_RC:
		return srn_qp_new(e->d, &qi, (struct srn_qp **)out);
	case K_QP_UD_SRQ:
		qi.type = SRN_QPT_UD;
		qi.srq = e->srq;
		return srn_qp_new(e->d, &qi, (struct srn_qp **)out);
	case K_CQ:
		return srn_cq_new(e->d, 64, NULL, (struct srn_cq **)out);
	case K_SRQ:
		return srn_srq_new(e->d, &si, (struct srn_srq **)out);
	default:
		return srn_mr_reg(e->d, e->pd, buf, 0, sizeof(buf), SRN_ACCESS_LOCAL_WRITE,
				  (struct srn_mr **)out);
	}
}

static void destroy(struct env *e, enum kind k, void *obj)
{
	switch (k) {
	case K_CQ: CHECK_EQ(srn_cq_del(obj), SRN_OK); break;
	case K_SRQ: CHECK_EQ(srn_srq_del(obj), SRN_OK); break;
	case K_MR: CHECK_EQ(srn_mr_dereg(e->d, obj), SRN_OK); break;
	default: CHECK_EQ(srn_qp_del(obj, 0), SRN_OK); break;
	}
}

SRN_TEST(test_core_alloc_fail_each_step_of_qp_cq_srq_mr_creation)
{
	for (int k = 0; k < K_N; k++) {
		struct env e;
		env_new(&e);
		REQUIRE(e.d && e.cq);
		long base = cnt.live;
		int failures = 0;
		for (long step = 0;; step++) {
			void *obj = NULL;
			fail_in(step);
			int rc = create(&e, (enum kind)k, &obj);
			cnt.fail_at = -1;
			if (rc == SRN_OK) {
				CHECK(obj != NULL);
				CHECK(cnt.live > base);
				destroy(&e, (enum kind)k, obj);
				break;
			}
			failures++;
			if (rc != SRN_ENOMEM || obj != NULL || cnt.live != base)
				fprintf(stderr, "  %s: allocation %ld failed: rc %d, live %ld (was %ld)\n",
					kind_names[k], step, rc, cnt.live, base);
			CHECK_EQ(rc, SRN_ENOMEM);
			CHECK(obj == NULL);
			CHECK_EQ(cnt.live, base);
			REQUIRE(step < 100);
		}
		CHECK(failures >= 1);
		CHECK_EQ(cnt.live, base);        /* destroy gave everything back */
		srn_dev_del(e.d);
		CHECK_EQ(cnt.live, 0);
	}
}

int main(void) { return srn_test_main(); }
