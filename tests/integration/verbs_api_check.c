/*
 * verbs_api_check.c - the verbs ABI of softrnic's libibverbs.so.1 seen by an
 * ordinary verbs program (V-01..V-05).
 *
 * Built against Debian's <infiniband/verbs.h> and linked to libibverbs.so.1;
 * test_verbs_api.sh runs it with LD_LIBRARY_PATH pointing at softrnic's
 * library and SOFTRNIC_DEVICES=softrnic0=127.0.19.1. Every test asserts
 * errno values, object state and data; the program prints
 * "N passed, N failed" and exits non-zero on any failure.
 *
 * The expected transition table below is written from the IBTA spec
 * (table of legal QP state transitions and their required attributes), not
 * copied from src/verbs/qp_transition.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <time.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <softrnic/softrnic.h>

static int g_failed_checks, g_passed, g_failed;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
	g_failed_checks++; } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); if (_a != _b) { \
	fprintf(stderr, "  %s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", \
		__FILE__, __LINE__, #a, #b, _a, _b); g_failed_checks++; } } while (0)
#define REQUIRE(c) do { if (!(c)) { \
	fprintf(stderr, "  %s:%d: REQUIRE failed: %s (errno %d)\n", __FILE__, __LINE__, #c, errno); \
	g_failed_checks++; return; } } while (0)

/* ------------------------------------------------------------------------ */
/* shared fixture: device softrnic0 on 127.0.19.1                             */

static struct ibv_context *ctx;
static struct ibv_device_attr dattr;
static union ibv_gid gid0;

static int open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	if (!l)
		return -1;
	for (int i = 0; l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), "softrnic0"))
			ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!ctx)
		return -1;
	if (ibv_query_device(ctx, &dattr) || ibv_query_gid(ctx, 1, 0, &gid0))
		return -1;
	return 0;
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
	}
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
			      enum ibv_qp_type t, uint32_t nwr, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = t,
		.cap = { .max_send_wr = nwr, .max_recv_wr = nwr, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};
	return ibv_create_qp(pd, &ia);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC, .qkey = 0x11111111 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

static void fill_av(struct ibv_qp_attr *a)
{
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = gid0;
	a->ah_attr.grh.sgid_index = 0;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
}

#define RTR_MASK_RC (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
		     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK_RC (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
		     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

static void rtr_attr(struct ibv_qp_attr *a, uint32_t dest)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest;
	a->rq_psn = 0x123456;
	a->max_dest_rd_atomic = 4;
	a->min_rnr_timer = 12;
	fill_av(a);
}

static void rts_attr(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->sq_psn = 0x123456;
	a->max_rd_atomic = 4;
}

/* RESET -> INIT -> RTR -> RTS, connected to dest on this device */
static int connect_rc(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a;
	int rc = to_init(qp);

	if (rc)
		return rc;
	rtr_attr(&a, dest);
	if ((rc = ibv_modify_qp(qp, &a, RTR_MASK_RC)))
		return rc;
	rts_attr(&a);
	return ibv_modify_qp(qp, &a, RTS_MASK_RC);
}

/* ------------------------------------------------------------------------ */
/* V-01 / V-02: device list, open, queries                                    */

static void test_v01_v02_device_list_open_query(void)
{
	int n = -1;
	struct ibv_device **l = ibv_get_device_list(&n);
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	struct ibv_device_attr_ex dx;
	__be16 pkey;
	struct in_addr ip;
	uint8_t want[16] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff,127,0,19,1 };

	REQUIRE(l);
	CHECK_EQ(n, 1);
	REQUIRE(n >= 1);
	CHECK(!strcmp(ibv_get_device_name(l[0]), "softrnic0"));
	CHECK(ibv_get_device_guid(l[0]) != 0);
	CHECK_EQ(ibv_get_device_index(l[0]), 0);
	CHECK(softrnic_is_device(l[0]));
	CHECK(l[1] == NULL);
	ibv_free_device_list(l);

	CHECK(ctx->num_comp_vectors >= 1);
	CHECK(ctx->async_fd >= 0);
	CHECK_EQ(dattr.phys_port_cnt, 1);
	CHECK(dattr.max_qp > 0 && dattr.max_qp_wr > 0 && dattr.max_cqe > 0 && dattr.max_sge > 0);
	CHECK(dattr.node_guid != 0);
	/* V-02 (issue 11 item 1): a device identifies itself as Soft-RoCE does:
	 * vendor 0xFFFFFF ("no OUI", IBTA A3.3.1), a part id and a hw version */
	CHECK_EQ(dattr.vendor_id, 0xFFFFFF);
	CHECK(dattr.vendor_part_id != 0);
	CHECK(dattr.hw_ver != 0);

	REQUIRE(ibv_query_port(ctx, 1, &pa) == 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	CHECK_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	CHECK_EQ(pa.active_mtu, IBV_MTU_4096);
	CHECK_EQ(pa.max_mtu, IBV_MTU_4096);
	CHECK_EQ(pa.gid_tbl_len, 1);
	CHECK_EQ(pa.pkey_tbl_len, 1);
	CHECK(pa.active_width != 0 && pa.active_speed != 0);
	CHECK_EQ(ibv_query_port(ctx, 2, &pa), EINVAL);

	/* V-02: GID 0 is the IPv4-mapped address of the device */
	CHECK(!memcmp(gid0.raw, want, 16));
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, 0, &ge, 0), 0);
	CHECK(!memcmp(ge.gid.raw, want, 16));
	CHECK_EQ(ge.gid_type, IBV_GID_TYPE_ROCE_V2);
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, 1, &ge, 0), ENODATA);
	CHECK_EQ(ibv_query_gid_table(ctx, &ge, 1, 0), 1);
	CHECK_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	CHECK_EQ(ntohs(pkey), 0xffff);
	CHECK_EQ(ibv_get_pkey_index(ctx, 1, htons(0xffff)), 0);

	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	CHECK_EQ(dx.orig_attr.max_qp, dattr.max_qp);
	CHECK_EQ(dx.phys_port_cnt_ex, 1);

	/* V-05: the extension header */
	CHECK_EQ(softrnic_device_ip(ctx, &ip), 0);
	CHECK_EQ(ip.s_addr, htonl(0x7f001301));
	CHECK(softrnic_num_counters() > 0);
	CHECK(softrnic_counter_name(0) && !strcmp(softrnic_counter_name(0), "tx_pkts"));
	CHECK(softrnic_counter_name(softrnic_num_counters()) == NULL);
	{
		uint64_t v[256];
		unsigned nc = softrnic_num_counters() < 256 ? softrnic_num_counters() : 256;
		CHECK_EQ(softrnic_query_counters(ctx, v, nc), 0);
	}
	CHECK(!strcmp(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "transport retry counter exceeded"));
	CHECK_EQ(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
	CHECK_EQ(mbps_to_ibv_rate(25781), IBV_RATE_25_GBPS);
}

/* ------------------------------------------------------------------------ */
/* V-03: PD and MR errnos                                                     */

static void test_v03_pd_mr_errnos(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2 = ibv_alloc_pd(ctx);
	static char buf[8192], buf2[4096];
	struct ibv_mr *mr;

	REQUIRE(pd && pd2);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	REQUIRE(mr);
	CHECK(mr->addr == buf && mr->length == sizeof(buf) && mr->pd == pd && mr->context == ctx);

	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE) == NULL);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC) == NULL);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE) == NULL);
	CHECK_EQ(errno, EINVAL);

	/* dealloc with an MR registered: EBUSY, PD still usable */
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);

	/* rereg: access, then translation, then PD; the ibv_mr object is kept,
	 * and so are its keys (issue 11 item 2: every Linux provider keeps them) */
	uint32_t lkey0 = mr->lkey, rkey0 = mr->rkey;
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	CHECK_EQ(mr->lkey, lkey0);
	CHECK_EQ(mr->rkey, rkey0);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      IBV_ACCESS_REMOTE_WRITE), IBV_REREG_MR_ERR_INPUT);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf2, sizeof(buf2), 0), 0);
	CHECK(mr->addr == buf2 && mr->length == sizeof(buf2));
	CHECK_EQ(mr->lkey, lkey0);
	CHECK_EQ(mr->rkey, rkey0);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	CHECK(mr->pd == pd2);
	CHECK_EQ(mr->lkey, lkey0);
	CHECK_EQ(mr->rkey, rkey0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);           /* no longer used */
	CHECK_EQ(ibv_dealloc_pd(pd2), EBUSY);
	CHECK_EQ(ibv_rereg_mr(mr, 1 << 7, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);

	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd2), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03: CQs and completion channels                                          */

static void test_v03_cq_and_channel(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *evcq;
	void *evctx;

	REQUIRE(ch);
	errno = 0;
	CHECK(ibv_create_cq(ctx, 0, NULL, NULL, 0) == NULL);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0) == NULL);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors) == NULL);
	CHECK_EQ(errno, EINVAL);

	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	REQUIRE(cq);
	CHECK(cq->cqe >= 16);
	CHECK(cq->channel == ch && cq->cq_context == (void *)0x1234);
	CHECK_EQ(ibv_destroy_comp_channel(ch), EBUSY);
	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);

	/* nothing happened: a non-blocking read reports EAGAIN */
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	CHECK_EQ(ibv_get_cq_event(ch, &evcq, &evctx), -1);
	CHECK_EQ(errno, EAGAIN);

	CHECK_EQ(ibv_resize_cq(cq, 64), 0);
	CHECK(cq->cqe >= 64);
	CHECK_EQ(ibv_resize_cq(cq, 0), EINVAL);

	{
		struct ibv_cq_init_attr_ex ca = { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_CVLAN };
		struct ibv_poll_cq_attr pa = { 0 };
		errno = 0;
		CHECK(ibv_create_cq_ex(ctx, &ca) == NULL);     /* no VLANs */
		CHECK_EQ(errno, EOPNOTSUPP);
		ca.wc_flags = IBV_WC_STANDARD_FLAGS;
		cqx = ibv_create_cq_ex(ctx, &ca);
		CHECK(cqx != NULL);
		if (cqx) {
			CHECK_EQ(ibv_start_poll(cqx, &pa), ENOENT);   /* empty */
			CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
		}
	}
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03: QP creation limits                                                   */

static void test_v03_qp_create_limits(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	REQUIRE(pd && cq);
#define TRY(field, val, want) do { \
	memset(&ia, 0, sizeof(ia)); ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = IBV_QPT_RC; \
	ia.cap.max_send_wr = 4; ia.cap.max_recv_wr = 4; ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1; \
	ia.field = (val); errno = 0; qp = ibv_create_qp(pd, &ia); \
	CHECK(qp == NULL); CHECK_EQ(errno, want); if (qp) ibv_destroy_qp(qp); } while (0)

	TRY(cap.max_send_wr, dattr.max_qp_wr + 1, EINVAL);
	TRY(cap.max_recv_wr, dattr.max_qp_wr + 1, EINVAL);
	TRY(cap.max_send_sge, dattr.max_sge + 1, EINVAL);
	TRY(cap.max_recv_sge, dattr.max_sge + 1, EINVAL);
	TRY(cap.max_inline_data, 1u << 20, EINVAL);
	TRY(send_cq, NULL, EINVAL);
	TRY(qp_type, IBV_QPT_XRC_SEND, EOPNOTSUPP);
#undef TRY

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 10; ia.cap.max_recv_wr = 20; ia.cap.max_send_sge = 2; ia.cap.max_recv_sge = 3;
	qp = ibv_create_qp(pd, &ia);
	REQUIRE(qp);
	CHECK(ia.cap.max_send_wr >= 10 && ia.cap.max_recv_wr >= 20);
	CHECK(ia.cap.max_send_sge >= 2 && ia.cap.max_recv_sge >= 3);
	CHECK_EQ(qp->state, IBV_QPS_RESET);
	CHECK_EQ(qp_state(qp), IBV_QPS_RESET);
	CHECK(qp->qp_num > 0 && qp->qp_num <= 0xffffff);
	CHECK(ibv_qp_to_qp_ex(qp) == NULL);   /* not created with send_ops_flags */
	CHECK_EQ(ibv_destroy_cq(cq), EBUSY);   /* used by the QP */
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03: the QP state machine, every illegal transition and missing attribute */

/* legal next states of an RC QP (IBTA, without SQD/SQE which are reached
 * separately) */
static bool rc_legal(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return true;
	switch (cur) {
	case IBV_QPS_RESET: return next == IBV_QPS_INIT;
	case IBV_QPS_INIT:  return next == IBV_QPS_INIT || next == IBV_QPS_RTR;
	case IBV_QPS_RTR:   return next == IBV_QPS_RTS;
	case IBV_QPS_RTS:   return next == IBV_QPS_RTS || next == IBV_QPS_SQD;
	case IBV_QPS_SQD:   return next == IBV_QPS_RTS || next == IBV_QPS_SQD;
	default:            return false;
	}
}

/* brings qp (any state) to s in {RESET, INIT, RTR, RTS, ERR} */
static int goto_state(struct ibv_qp *qp, enum ibv_qp_state s, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);

	if (rc || s == IBV_QPS_RESET)
		return rc;
	if (s == IBV_QPS_ERR) {
		a.qp_state = IBV_QPS_ERR;
		return ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if ((rc = to_init(qp)) || s == IBV_QPS_INIT)
		return rc;
	rtr_attr(&a, dest);
	if ((rc = ibv_modify_qp(qp, &a, RTR_MASK_RC)) || s == IBV_QPS_RTR)
		return rc;
	rts_attr(&a);
	return ibv_modify_qp(qp, &a, RTS_MASK_RC);
}

static void test_v03_qp_illegal_transitions_einval_state_unchanged(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp, *peer;
	const enum ibv_qp_state states[] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_ERR };
	struct ibv_qp_attr a;

	REQUIRE(pd && cq);
	qp = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	peer = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	REQUIRE(qp && peer);

	/* every illegal (cur -> next) of RC, with only IBV_QP_STATE */
	for (unsigned i = 0; i < 5; i++) {
		for (int next = IBV_QPS_RESET; next <= IBV_QPS_ERR; next++) {
			if (rc_legal(states[i], (enum ibv_qp_state)next))
				continue;
			REQUIRE(goto_state(qp, states[i], peer->qp_num) == 0);
			memset(&a, 0, sizeof(a));
			a.qp_state = (enum ibv_qp_state)next;
			if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != EINVAL)
				fprintf(stderr, "  illegal %d -> %d accepted\n", states[i], next);
			CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
			CHECK_EQ(qp_state(qp), states[i]);
		}
	}

	/* RESET -> INIT: each required attribute missing; an extra attribute */
	{
		const int req[] = { IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS };
		const int full = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

		REQUIRE(goto_state(qp, IBV_QPS_RESET, 0) == 0);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		for (unsigned k = 0; k < 3; k++) {
			CHECK_EQ(ibv_modify_qp(qp, &a, full & ~req[k]), EINVAL);
			CHECK_EQ(qp_state(qp), IBV_QPS_RESET);
		}
		CHECK_EQ(ibv_modify_qp(qp, &a, full | IBV_QP_QKEY), EINVAL);   /* not for RC */
		CHECK_EQ(ibv_modify_qp(qp, &a, full | IBV_QP_CAP), EINVAL);
		CHECK_EQ(ibv_modify_qp(qp, &a, full | IBV_QP_CUR_STATE), EINVAL);
		a.port_num = 2;
		CHECK_EQ(ibv_modify_qp(qp, &a, full), EINVAL);
		a.port_num = 1;
		a.pkey_index = 1;
		CHECK_EQ(ibv_modify_qp(qp, &a, full), EINVAL);
		a.pkey_index = 0;
		CHECK_EQ(qp_state(qp), IBV_QPS_RESET);
		CHECK_EQ(ibv_modify_qp(qp, &a, full), 0);
		CHECK_EQ(qp_state(qp), IBV_QPS_INIT);
		CHECK_EQ(qp->state, IBV_QPS_INIT);
	}

	/* INIT -> RTR: each required attribute missing, bad values */
	{
		const int req[] = { IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN,
				    IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER };

		for (unsigned k = 0; k < 6; k++) {
			rtr_attr(&a, peer->qp_num);
			CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC & ~req[k]), EINVAL);
			CHECK_EQ(qp_state(qp), IBV_QPS_INIT);
		}
		rtr_attr(&a, peer->qp_num);
		a.path_mtu = (enum ibv_mtu)6;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, peer->qp_num);
		a.path_mtu = (enum ibv_mtu)0;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, peer->qp_num);
		a.max_dest_rd_atomic = (uint8_t)(dattr.max_qp_rd_atom + 1);
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, peer->qp_num);
		a.min_rnr_timer = 32;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, 0x1000000);
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, peer->qp_num);
		a.ah_attr.is_global = 0;                 /* RoCE needs a GRH */
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, peer->qp_num);
		a.ah_attr.grh.sgid_index = 1;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, peer->qp_num);
		a.ah_attr.port_num = 2;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), EINVAL);
		rtr_attr(&a, peer->qp_num);
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC | IBV_QP_SQ_PSN), EINVAL);
		CHECK_EQ(qp_state(qp), IBV_QPS_INIT);
		CHECK_EQ(ibv_modify_qp(qp, &a, RTR_MASK_RC), 0);
		CHECK_EQ(qp_state(qp), IBV_QPS_RTR);
	}

	/* RTR -> RTS */
	{
		const int req[] = { IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_SQ_PSN,
				    IBV_QP_MAX_QP_RD_ATOMIC };

		for (unsigned k = 0; k < 5; k++) {
			rts_attr(&a);
			CHECK_EQ(ibv_modify_qp(qp, &a, RTS_MASK_RC & ~req[k]), EINVAL);
			CHECK_EQ(qp_state(qp), IBV_QPS_RTR);
		}
		rts_attr(&a); a.timeout = 32;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTS_MASK_RC), EINVAL);
		rts_attr(&a); a.retry_cnt = 8;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTS_MASK_RC), EINVAL);
		rts_attr(&a); a.rnr_retry = 8;
		CHECK_EQ(ibv_modify_qp(qp, &a, RTS_MASK_RC), EINVAL);
		rts_attr(&a); a.max_rd_atomic = (uint8_t)(dattr.max_qp_init_rd_atom + 1);
		CHECK_EQ(ibv_modify_qp(qp, &a, RTS_MASK_RC), EINVAL);
		rts_attr(&a);
		CHECK_EQ(ibv_modify_qp(qp, &a, RTS_MASK_RC | IBV_QP_DEST_QPN), EINVAL);
		CHECK_EQ(qp_state(qp), IBV_QPS_RTR);
		CHECK_EQ(ibv_modify_qp(qp, &a, RTS_MASK_RC), 0);
		CHECK_EQ(qp_state(qp), IBV_QPS_RTS);
		/* RTS -> RTS: only optional attributes; a required-only one is refused */
		a.min_rnr_timer = 5;
		CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER), 0);
		CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL);
		CHECK_EQ(qp_state(qp), IBV_QPS_RTS);
	}

	/* UD: RESET -> INIT requires the Q_Key; ACCESS_FLAGS is not allowed */
	{
		struct ibv_qp *ud = make_qp(pd, cq, cq, IBV_QPT_UD, 8, NULL);

		REQUIRE(ud);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT; a.port_num = 1; a.qkey = 7;
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_QKEY | IBV_QP_ACCESS_FLAGS), EINVAL);
		CHECK_EQ(qp_state(ud), IBV_QPS_RESET);
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
		a.qp_state = IBV_QPS_RTR;
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_AV), EINVAL);   /* no AV for UD */
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE), 0);
		a.qp_state = IBV_QPS_RTS;
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE), EINVAL);              /* needs SQ_PSN */
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
		CHECK_EQ(qp_state(ud), IBV_QPS_RTS);
		CHECK_EQ(ibv_destroy_qp(ud), 0);
	}

	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_qp(peer), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-04: posting in a wrong state; a full send queue                          */

static void test_v04_post_wrong_state_einval_bad_wr(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	static char buf[64];
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_sge sge;
	struct ibv_send_wr w2 = { 0 }, w1 = { 0 }, *bad = NULL;
	struct ibv_recv_wr r1 = { 0 }, *rbad = NULL;

	REQUIRE(pd && cq);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	qp = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	REQUIRE(mr && qp);
	sge = (struct ibv_sge){ (uintptr_t)buf, sizeof(buf), mr->lkey };
	w1.wr_id = 1; w1.sg_list = &sge; w1.num_sge = 1; w1.opcode = IBV_WR_SEND; w1.next = &w2;
	w2 = w1; w2.wr_id = 2; w2.next = NULL;
	r1.wr_id = 3; r1.sg_list = &sge; r1.num_sge = 1;

	CHECK_EQ(ibv_post_send(qp, &w1, &bad), EINVAL);          /* RESET */
	CHECK(bad == &w1);
	bad = NULL;
	CHECK_EQ(ibv_post_recv(qp, &r1, &rbad), EINVAL);         /* RESET */
	CHECK(rbad == &r1);
	REQUIRE(to_init(qp) == 0);
	CHECK_EQ(ibv_post_send(qp, &w1, &bad), EINVAL);          /* INIT */
	CHECK(bad == &w1);
	rbad = NULL;
	CHECK_EQ(ibv_post_recv(qp, &r1, &rbad), 0);              /* receives are fine in INIT */

	/* bad WR in the middle of a chain: bad_wr points at it */
	{
		struct ibv_qp *q2 = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
		REQUIRE(q2);
		REQUIRE(connect_rc(q2, qp->qp_num) == 0);
		w1.send_flags = 0;
		w2.opcode = (enum ibv_wr_opcode)77;
		bad = NULL;
		CHECK_EQ(ibv_post_send(q2, &w1, &bad), EINVAL);
		CHECK(bad == &w2);
		w2.opcode = IBV_WR_SEND;
		w2.num_sge = dattr.max_sge + 1;
		bad = NULL;
		CHECK_EQ(ibv_post_send(q2, &w2, &bad), EINVAL);      /* too many SGEs */
		CHECK(bad == &w2);
		w2.num_sge = 1;
		CHECK_EQ(ibv_destroy_qp(q2), 0);
	}
	{
		/* UD QPs have no RDMA */
		struct ibv_qp *ud = make_qp(pd, cq, cq, IBV_QPT_UD, 8, NULL);
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 1 };
		REQUIRE(ud);
		ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
		a.qp_state = IBV_QPS_RTR;
		ibv_modify_qp(ud, &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
		w2.opcode = IBV_WR_RDMA_WRITE;
		bad = NULL;
		CHECK_EQ(ibv_post_send(ud, &w2, &bad), EINVAL);
		CHECK(bad == &w2);
		w2.opcode = IBV_WR_SEND;
		CHECK_EQ(ibv_destroy_qp(ud), 0);
	}
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

static void test_v04_sq_full_enomem(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	static char buf[16];
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sge;
	struct ibv_send_wr wr[80], *bad = NULL;
	uint32_t cap;

	REQUIRE(pd && cq);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 8; ia.cap.max_recv_wr = 1; ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &ia);
	REQUIRE(qp);
	cap = ia.cap.max_send_wr;
	REQUIRE(cap < 79);
	/* connected to a QPN nobody owns: nothing is ever acknowledged, so
	 * the send queue only fills (timeout 2^20 * 4us: no retry in the test) */
	{
		struct ibv_qp_attr a;
		REQUIRE(to_init(qp) == 0);
		rtr_attr(&a, 0xfffff0);
		REQUIRE(ibv_modify_qp(qp, &a, RTR_MASK_RC) == 0);
		rts_attr(&a);
		a.timeout = 20;
		REQUIRE(ibv_modify_qp(qp, &a, RTS_MASK_RC) == 0);
	}
	sge = (struct ibv_sge){ (uintptr_t)buf, sizeof(buf), mr->lkey };
	for (uint32_t i = 0; i <= cap; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = i; wr[i].sg_list = &sge; wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND; wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < cap ? &wr[i + 1] : NULL;
	}
	CHECK_EQ(ibv_post_send(qp, &wr[0], &bad), ENOMEM);
	CHECK(bad == &wr[cap]);
	bad = NULL;
	wr[cap].next = NULL;
	CHECK_EQ(ibv_post_send(qp, &wr[cap], &bad), ENOMEM);
	CHECK(bad == &wr[cap]);

	/* moving to ERR flushes every queued WR with WR_FLUSH_ERR */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
		struct ibv_wc wc;
		uint32_t flushed = 0;
		CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
		while (poll_one(cq, &wc, 1000) == 1) {
			CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
			CHECK_EQ(wc.wr_id, flushed);
			flushed++;
		}
		CHECK_EQ(flushed, cap);
	}
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-04: a loopback RC pair in one process: SEND, SEND_WITH_IMM, RDMA WRITE,
 * RDMA READ, atomics, every byte and every CQE checked; completion channel */

#define LEN 5000   /* more than one 1024-byte MTU packet */

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

static bool same(const uint8_t *a, const uint8_t *b, size_t n)
{
	return memcmp(a, b, n) == 0;
}

static void test_v04_loopback_rc_send_write_read_atomic(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *cqb = ibv_create_cq(ctx, 64, (void *)0xb, ch, 0);
	static uint8_t src[LEN], dst[LEN], ref[LEN];
	static uint64_t atom[2] __attribute__((aligned(8)));
	static uint64_t result;
	struct ibv_mr *msrc, *mdst, *matom, *mres;
	struct ibv_qp *qa, *qb;
	struct ibv_sge s_sge, d_sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_wc wc;

	REQUIRE(ch && pd && cqa && cqb);
	msrc = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	mdst = ibv_reg_mr(pd, dst, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	matom = ibv_reg_mr(pd, atom, sizeof(atom), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	mres = ibv_reg_mr(pd, &result, sizeof(result), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(msrc && mdst && matom && mres);
	qa = make_qp(pd, cqa, cqa, IBV_QPT_RC, 16, NULL);
	qb = make_qp(pd, cqb, cqb, IBV_QPT_RC, 16, NULL);
	REQUIRE(qa && qb);
	REQUIRE(connect_rc(qa, qb->qp_num) == 0);
	REQUIRE(connect_rc(qb, qa->qp_num) == 0);
	s_sge = (struct ibv_sge){ (uintptr_t)src, LEN, msrc->lkey };
	d_sge = (struct ibv_sge){ (uintptr_t)dst, LEN, mdst->lkey };

	/* SEND a -> b, with a completion event on b's channel */
	fill(src, LEN, 1);
	memset(dst, 0, LEN);
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0xb1; rwr.sg_list = &d_sge; rwr.num_sge = 1;
	REQUIRE(ibv_post_recv(qb, &rwr, &rbad) == 0);
	REQUIRE(ibv_req_notify_cq(cqb, 0) == 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xa1; wr.sg_list = &s_sge; wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND; wr.send_flags = IBV_SEND_SIGNALED;
	REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
	{
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct ibv_cq *ecq = NULL;
		void *ectx = NULL;
		CHECK_EQ(poll(&pfd, 1, 5000), 1);
		CHECK_EQ(ibv_get_cq_event(ch, &ecq, &ectx), 0);
		CHECK(ecq == cqb && ectx == (void *)0xb);
		if (ecq)
			ibv_ack_cq_events(ecq, 1);
	}
	REQUIRE(poll_one(cqa, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	CHECK_EQ(wc.wr_id, 0xa1);
	CHECK_EQ(wc.qp_num, qa->qp_num);
	REQUIRE(poll_one(cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.wr_id, 0xb1);
	CHECK_EQ(wc.byte_len, LEN);
	CHECK_EQ(wc.qp_num, qb->qp_num);
	CHECK_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0);
	CHECK(same(src, dst, LEN));

	/* SEND_WITH_IMM, inline */
	memset(dst, 0, LEN);
	REQUIRE(ibv_post_recv(qb, &rwr, &rbad) == 0);
	fill(src, 40, 9);
	s_sge.length = 40;
	wr.opcode = IBV_WR_SEND_WITH_IMM; wr.imm_data = htonl(0xdeadbeef);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE; wr.wr_id = 0xa2;
	REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
	memset(src, 0, 40);      /* inline: the buffer is free once posted */
	REQUIRE(poll_one(cqa, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 0xa2);
	REQUIRE(poll_one(cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, 40);
	CHECK(wc.wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(ntohl(wc.imm_data), 0xdeadbeef);
	fill(ref, 40, 9);
	CHECK(same(ref, dst, 40));
	s_sge.length = LEN;

	/* RDMA WRITE a -> b's dst (no receive consumed) */
	fill(src, LEN, 33);
	memset(dst, 0, LEN);
	wr.opcode = IBV_WR_RDMA_WRITE; wr.send_flags = IBV_SEND_SIGNALED; wr.wr_id = 0xa3;
	wr.wr.rdma.remote_addr = (uintptr_t)dst; wr.wr.rdma.rkey = mdst->rkey;
	REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
	REQUIRE(poll_one(cqa, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	CHECK_EQ(wc.wr_id, 0xa3);
	CHECK(same(src, dst, LEN));
	CHECK_EQ(poll_one(cqb, &wc, 50), 0);

	/* RDMA READ: a reads b's src... here: qb reads qa's src into dst */
	fill(src, LEN, 77);
	memset(dst, 0, LEN);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb4; wr.sg_list = &d_sge; wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ; wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)src; wr.wr.rdma.rkey = msrc->rkey;
	REQUIRE(ibv_post_send(qb, &wr, &bad) == 0);
	REQUIRE(poll_one(cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_READ);
	CHECK_EQ(wc.byte_len, LEN);
	CHECK(same(src, dst, LEN));

	/* atomics: fetch-and-add then compare-and-swap on b's atom[0] */
	{
		struct ibv_sge r_sge = { (uintptr_t)&result, 8, mres->lkey };
		atom[0] = 100;
		result = 0;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0xa5; wr.sg_list = &r_sge; wr.num_sge = 1;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD; wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = (uintptr_t)&atom[0]; wr.wr.atomic.rkey = matom->rkey;
		wr.wr.atomic.compare_add = 5;
		REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
		REQUIRE(poll_one(cqa, &wc, 5000) == 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.opcode, IBV_WC_FETCH_ADD);
		CHECK_EQ(result, 100);
		CHECK_EQ(atom[0], 105);
		wr.wr_id = 0xa6; wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = 105; wr.wr.atomic.swap = 7;
		REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
		REQUIRE(poll_one(cqa, &wc, 5000) == 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.opcode, IBV_WC_COMP_SWAP);
		CHECK_EQ(result, 105);
		CHECK_EQ(atom[0], 7);
	}

	/* remote access error: WRITE to a region without REMOTE_WRITE */
	{
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0xa7; wr.sg_list = &s_sge; wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE; wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = (uintptr_t)src; wr.wr.rdma.rkey = msrc->rkey;
		REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
		REQUIRE(poll_one(cqa, &wc, 5000) == 1);
		CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
		CHECK_EQ(wc.wr_id, 0xa7);
	}

	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_cq(cqa), 0);
	CHECK_EQ(ibv_destroy_cq(cqb), 0);          /* its one event was acked */
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	ibv_dereg_mr(msrc); ibv_dereg_mr(mdst); ibv_dereg_mr(matom); ibv_dereg_mr(mres);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03 (issue 11 item 2): a peer handed the rkey before ibv_rereg_mr keeps
 * its access: the keys do not change, the new translation and access apply */

static void test_v03_rereg_mr_peer_rkey_still_valid(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	static uint8_t src[512], t1[512], t2[1024];
	struct ibv_mr *ms, *mt;
	struct ibv_qp *qa, *qb;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	REQUIRE(pd && cq);
	ms = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	mt = ibv_reg_mr(pd, t1, sizeof(t1), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	qa = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	qb = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	REQUIRE(ms && mt && qa && qb);
	REQUIRE(connect_rc(qa, qb->qp_num) == 0);
	REQUIRE(connect_rc(qb, qa->qp_num) == 0);
	rkey = mt->rkey;                  /* what the peer was told */
	CHECK_EQ(ibv_rereg_mr(mt, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL,
			      t2, sizeof(t2), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ), 0);
	CHECK_EQ(mt->rkey, rkey);
	fill(src, sizeof(src), 21);
	memset(t2, 0, sizeof(t2));
	sge = (struct ibv_sge){ (uintptr_t)src, sizeof(src), ms->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1; wr.sg_list = &sge; wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE; wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)t2 + 512; wr.wr.rdma.rkey = rkey;
	REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
	REQUIRE(poll_one(cq, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);          /* was REM_ACCESS_ERR (new keys) */
	CHECK(same(src, t2 + 512, sizeof(src)));
	/* and the new access applies: READ through the same rkey */
	memset(src, 0, sizeof(src));
	wr.wr_id = 2; wr.opcode = IBV_WR_RDMA_READ;
	REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
	REQUIRE(poll_one(cq, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(same(src, t2 + 512, sizeof(src)));
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	ibv_dereg_mr(ms); ibv_dereg_mr(mt);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03 (issue 11 item 3): ERR -> RESET -> INIT -> RTR -> RTS leaves no stale
 * completions: RESET removed the QP's flush CQEs from its CQs */

static void test_v03_reset_removes_stale_cqes_reconnect_clean(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	static uint8_t src[64], dst[64];
	struct ibv_mr *ms, *md;
	struct ibv_qp *qa, *qb;
	struct ibv_sge ss, ds;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_qp_attr a;
	struct ibv_wc wc;

	REQUIRE(pd && cq);
	ms = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	md = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE);
	qa = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	qb = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	REQUIRE(ms && md && qa && qb);
	REQUIRE(connect_rc(qa, qb->qp_num) == 0);
	REQUIRE(connect_rc(qb, qa->qp_num) == 0);
	ss = (struct ibv_sge){ (uintptr_t)src, sizeof(src), ms->lkey };
	ds = (struct ibv_sge){ (uintptr_t)dst, sizeof(dst), md->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &ds; rwr.num_sge = 1;
	for (int i = 0; i < 3; i++) {
		rwr.wr_id = 0x100u + (unsigned)i;
		REQUIRE(ibv_post_recv(qb, &rwr, &rbad) == 0);
	}
	/* qb to ERR: three flush CQEs in the shared CQ (not polled) */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	REQUIRE(ibv_modify_qp(qb, &a, IBV_QP_STATE) == 0);
	/* reconnect qb (qa too: it may have seen nothing, but its peer restarts) */
	REQUIRE(goto_state(qb, IBV_QPS_RTS, qa->qp_num) == 0);
	REQUIRE(goto_state(qa, IBV_QPS_RTS, qb->qp_num) == 0);
	CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);          /* was a stale WR_FLUSH_ERR */
	/* traffic after the reconnection completes cleanly */
	rwr.wr_id = 0x200;
	REQUIRE(ibv_post_recv(qb, &rwr, &rbad) == 0);
	fill(src, sizeof(src), 8);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x201; wr.sg_list = &ss; wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND; wr.send_flags = IBV_SEND_SIGNALED;
	REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);
	for (int i = 0; i < 2; i++) {
		REQUIRE(poll_one(cq, &wc, 5000) == 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK(wc.wr_id == 0x200 || wc.wr_id == 0x201);
	}
	CHECK(same(src, dst, sizeof(src)));
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);

	/* an extended CQ: the flushes the poller already took into its batch
	 * (one read, two unread) go too */
	{
		struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
		struct ibv_cq_ex *cx = ibv_create_cq_ex(ctx, &ca);
		struct ibv_poll_cq_attr pa = { 0 };
		struct ibv_qp *q;

		REQUIRE(cx);
		q = make_qp(pd, ibv_cq_ex_to_cq(cx), ibv_cq_ex_to_cq(cx), IBV_QPT_RC, 8, NULL);
		REQUIRE(q);
		REQUIRE(to_init(q) == 0);
		for (int i = 0; i < 3; i++) {
			rwr.wr_id = 0x300u + (unsigned)i;
			REQUIRE(ibv_post_recv(q, &rwr, &rbad) == 0);
		}
		a.qp_state = IBV_QPS_ERR;
		REQUIRE(ibv_modify_qp(q, &a, IBV_QP_STATE) == 0);
		REQUIRE(ibv_start_poll(cx, &pa) == 0);
		CHECK_EQ(cx->wr_id, 0x300);
		CHECK_EQ(cx->status, IBV_WC_WR_FLUSH_ERR);
		ibv_end_poll(cx);
		a.qp_state = IBV_QPS_RESET;
		REQUIRE(ibv_modify_qp(q, &a, IBV_QP_STATE) == 0);
		CHECK_EQ(ibv_start_poll(cx, &pa), ENOENT);      /* 0x301, 0x302 gone */
		CHECK_EQ(ibv_destroy_qp(q), 0);
		CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cx)), 0);
	}
	ibv_dereg_mr(ms); ibv_dereg_mr(md);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-04 (issue 11 item 5): memory windows through the verbs API - type 1 with
 * ibv_bind_mw, type 2 with IBV_WR_BIND_MW / ibv_wr_bind_mw, LOCAL_INV,
 * SEND_WITH_INV, and the statuses at both ends after a revocation */

struct mw_pair {
	struct ibv_pd *pd;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *qa, *qb;       /* qa: the remote peer, qb: owns the memory */
};

static int mw_pair_open(struct mw_pair *p, bool qb_ex)
{
	memset(p, 0, sizeof(*p));
	p->pd = ibv_alloc_pd(ctx);
	p->cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	p->cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!p->pd || !p->cqa || !p->cqb)
		return -1;
	p->qa = make_qp(p->pd, p->cqa, p->cqa, IBV_QPT_RC, 16, NULL);
	if (qb_ex) {
		struct ibv_qp_init_attr_ex ia;
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = p->cqb; ia.recv_cq = p->cqb; ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = 16; ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1;
		ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.pd = p->pd;
		ia.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
				    IBV_QP_EX_WITH_SEND;
		p->qb = ibv_create_qp_ex(ctx, &ia);
	} else {
		p->qb = make_qp(p->pd, p->cqb, p->cqb, IBV_QPT_RC, 16, NULL);
	}
	if (!p->qa || !p->qb)
		return -1;
	if (connect_rc(p->qa, p->qb->qp_num) || connect_rc(p->qb, p->qa->qp_num))
		return -1;
	return 0;
}

static void mw_pair_close(struct mw_pair *p)
{
	CHECK_EQ(ibv_destroy_qp(p->qa), 0);
	CHECK_EQ(ibv_destroy_qp(p->qb), 0);
	CHECK_EQ(ibv_destroy_cq(p->cqa), 0);
	CHECK_EQ(ibv_destroy_cq(p->cqb), 0);
}

/* one RDMA op from qa with rkey; returns its completion status */
static int mw_rdma(struct mw_pair *p, enum ibv_wr_opcode op, struct ibv_mr *lmr, void *lbuf,
		   uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)lbuf, len, lmr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x99; wr.sg_list = &sge; wr.num_sge = 1;
	wr.opcode = op; wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr; wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->qa, &wr, &bad))
		return -1;
	if (poll_one(p->cqa, &wc, 5000) != 1)
		return -2;
	return wc.status;
}

static void test_v04_mw_type1_bind_mw_unbind_revokes(void)
{
	static uint8_t mem[4096], loc[4096];
	struct mw_pair p;
	struct ibv_mr *mr, *ml, *mr_other;
	struct ibv_pd *pd2;
	struct ibv_mw *mw, *bad_mw;
	struct ibv_mw_bind b;
	struct ibv_wc wc;
	uint32_t old;

	REQUIRE(mw_pair_open(&p, false) == 0);
	CHECK(dattr.max_mw > 0);
	CHECK(dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	CHECK(dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	mr = ibv_reg_mr(p.pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ml = ibv_reg_mr(p.pd, loc, sizeof(loc), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr && ml);
	errno = 0;
	CHECK(ibv_alloc_mw(p.pd, (enum ibv_mw_type)3) == NULL);
	CHECK_EQ(errno, EINVAL);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_1);
	REQUIRE(mw);
	CHECK(mw->pd == p.pd && mw->type == IBV_MW_TYPE_1 && mw->context == ctx);
	CHECK_EQ(ibv_dealloc_pd(p.pd), EBUSY);
	old = mw->rkey;
	/* the window: 1 KiB at mem + 1024, remote write and read */
	memset(&b, 0, sizeof(b));
	b.wr_id = 0x51; b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = mr; b.bind_info.addr = (uintptr_t)mem + 1024; b.bind_info.length = 1024;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	/* bad input first: ZERO_BASED type 1, an MR of another PD */
	b.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
	CHECK_EQ(ibv_bind_mw(p.qb, mw, &b), EINVAL);
	b.bind_info.mw_access_flags &= ~(unsigned)IBV_ACCESS_ZERO_BASED;
	pd2 = ibv_alloc_pd(ctx);
	mr_other = pd2 ? ibv_reg_mr(pd2, mem, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND) : NULL;
	REQUIRE(mr_other);
	b.bind_info.mr = mr_other;
	CHECK_EQ(ibv_bind_mw(p.qb, mw, &b), EPERM);
	b.bind_info.mr = mr;
	CHECK_EQ(mw->rkey, old);                    /* nothing changed */
	CHECK_EQ(ibv_bind_mw(p.qb, mw, &b), 0);
	CHECK(mw->rkey != old);
	CHECK_EQ(mw->rkey, ibv_inc_rkey(old));
	REQUIRE(poll_one(p.cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	CHECK_EQ(wc.wr_id, 0x51);
	/* the MR is held by the bound window */
	CHECK_EQ(ibv_dereg_mr(mr), EINVAL);
	fill(loc, 512, 3);
	CHECK_EQ(mw_rdma(&p, IBV_WR_RDMA_WRITE, ml, loc, 512, (uintptr_t)mem + 1536, mw->rkey), IBV_WC_SUCCESS);
	CHECK(same(mem + 1536, loc, 512));
	memset(loc, 0, 512);
	CHECK_EQ(mw_rdma(&p, IBV_WR_RDMA_READ, ml, loc, 512, (uintptr_t)mem + 1536, mw->rkey), IBV_WC_SUCCESS);
	CHECK(same(mem + 1536, loc, 512));
	/* unbind: length 0, no MR; the old rkey is refused at both ends */
	old = mw->rkey;
	memset(&b, 0, sizeof(b));
	b.wr_id = 0x52; b.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_bind_mw(p.qb, mw, &b), 0);
	REQUIRE(poll_one(p.cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(ibv_dereg_mr(mr_other), 0);
	CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	CHECK_EQ(mw_rdma(&p, IBV_WR_RDMA_WRITE, ml, loc, 8, (uintptr_t)mem + 1536, old), IBV_WC_REM_ACCESS_ERR);
	{
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;
		CHECK_EQ(poll(&pfd, 1, 5000), 1);
		CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
		CHECK_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
		CHECK(ev.element.qp == p.qb);
		ibv_ack_async_event(&ev);
	}
	CHECK_EQ(qp_state(p.qb), IBV_QPS_ERR);
	/* ibv_bind_mw binds type 1 windows only */
	bad_mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	REQUIRE(bad_mw);
	CHECK_EQ(ibv_bind_mw(p.qb, bad_mw, &b), EINVAL);   /* not type 1 (inline check) */
	CHECK_EQ(ibv_dealloc_mw(bad_mw), 0);
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dereg_mr(ml), 0);
	mw_pair_close(&p);
	CHECK_EQ(ibv_dealloc_pd(p.pd), 0);
}

static void test_v04_mw_type2_post_bind_send_with_inv_local_inv(void)
{
	static uint8_t mem[4096], loc[4096], rbuf[256];
	struct mw_pair p;
	struct ibv_mr *mr, *ml, *mrb;
	struct ibv_mw *mw, *w1;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge, rs;
	struct ibv_wc wc;
	struct ibv_qp_ex *qx;
	uint32_t rkey;

	REQUIRE(mw_pair_open(&p, true) == 0);
	qx = ibv_qp_to_qp_ex(p.qb);
	REQUIRE(qx);
	mr = ibv_reg_mr(p.pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ml = ibv_reg_mr(p.pd, loc, sizeof(loc), IBV_ACCESS_LOCAL_WRITE);
	mrb = ibv_reg_mr(p.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	w1 = ibv_alloc_mw(p.pd, IBV_MW_TYPE_1);
	REQUIRE(mr && ml && mrb && mw && w1);

	/* IBV_WR_BIND_MW: the caller picks the new rkey's low byte */
	rkey = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x61; wr.opcode = IBV_WR_BIND_MW; wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = w1;                  /* a type 1 window: EINVAL, bad_wr */
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)mem;
	wr.bind_mw.bind_info.length = 2048;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	bad = NULL;
	CHECK_EQ(ibv_post_send(p.qb, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	wr.bind_mw.mw = mw;
	CHECK_EQ(ibv_post_send(p.qb, &wr, &bad), 0);
	REQUIRE(poll_one(p.cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	fill(loc, 64, 5);
	CHECK_EQ(mw_rdma(&p, IBV_WR_RDMA_WRITE, ml, loc, 64, (uintptr_t)mem + 100, rkey), IBV_WC_SUCCESS);
	CHECK(same(mem + 100, loc, 64));
	/* SEND_WITH_INV from the peer revokes it; the receive names the rkey */
	rs = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), mrb->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &rs; rwr.num_sge = 1;
	rwr.wr_id = 0x71;
	REQUIRE(ibv_post_recv(p.qb, &rwr, &rbad) == 0);
	rwr.wr_id = 0x72;
	REQUIRE(ibv_post_recv(p.qb, &rwr, &rbad) == 0);
	sge = (struct ibv_sge){ (uintptr_t)loc, 32, ml->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x62; wr.sg_list = &sge; wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_INV; wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	REQUIRE(ibv_post_send(p.qa, &wr, &bad) == 0);
	REQUIRE(poll_one(p.cqa, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	REQUIRE(poll_one(p.cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.wr_id, 0x71);
	CHECK(wc.wc_flags & IBV_WC_WITH_INV);
	CHECK_EQ(wc.invalidated_rkey, rkey);
	CHECK(same(rbuf, loc, 32));
	/* rebind with ibv_wr_bind_mw, then LOCAL_INV with ibv_wr_local_inv */
	rkey = ibv_inc_rkey(rkey);
	{
		struct ibv_mw_bind_info bi = { .mr = mr, .addr = (uintptr_t)mem + 2048, .length = 1024,
					       .mw_access_flags = IBV_ACCESS_REMOTE_READ };
		ibv_wr_start(qx);
		qx->wr_id = 0x63;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qx, mw, rkey, &bi);
		CHECK_EQ(ibv_wr_complete(qx), 0);
	}
	REQUIRE(poll_one(p.cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	CHECK_EQ(wc.wr_id, 0x63);
	fill(mem + 2048, 16, 6);
	CHECK_EQ(mw_rdma(&p, IBV_WR_RDMA_READ, ml, loc, 16, (uintptr_t)mem + 2048, rkey), IBV_WC_SUCCESS);
	CHECK(same(mem + 2048, loc, 16));
	ibv_wr_start(qx);
	qx->wr_id = 0x64;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qx, rkey);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	REQUIRE(poll_one(p.cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_LOCAL_INV);
	CHECK_EQ(ibv_dereg_mr(mr), 0);             /* no window holds it any more */
	/* the revoked window: REM_ACCESS_ERR at the peer, the owner's QP to
	 * ERR flushing its posted receive */
	CHECK_EQ(mw_rdma(&p, IBV_WR_RDMA_READ, ml, loc, 16, (uintptr_t)mem + 2048, rkey), IBV_WC_REM_ACCESS_ERR);
	REQUIRE(poll_one(p.cqb, &wc, 5000) == 1);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(wc.wr_id, 0x72);
	CHECK_EQ(qp_state(p.qb), IBV_QPS_ERR);
	{
		struct ibv_async_event ev;
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		CHECK_EQ(poll(&pfd, 1, 5000), 1);
		CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
		CHECK_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
		ibv_ack_async_event(&ev);
	}
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
	CHECK_EQ(ibv_dealloc_mw(w1), 0);
	CHECK_EQ(ibv_dereg_mr(ml), 0);
	CHECK_EQ(ibv_dereg_mr(mrb), 0);
	mw_pair_close(&p);
	CHECK_EQ(ibv_dealloc_pd(p.pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-01 (issue 11 item 6): the device clock (ibv_query_rt_values_ex,
 * hca_core_clock) and completion timestamps of extended CQs in it and in
 * wall-clock time */

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void test_v01_device_clock_and_cq_completion_timestamps(void)
{
	struct ibv_values_ex v;
	struct ibv_device_attr_ex dx;
	struct ibv_cq_init_attr_ex ca = { .cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	static uint8_t sb[64], rb[64];
	struct ibv_mr *ms, *mr;
	struct ibv_qp *qa, *qb;
	uint64_t t0, t1, r0, r1, hw;
	int got = 0;

	REQUIRE(pd);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	CHECK_EQ(dx.hca_core_clock, 1000000);          /* kHz: a ns clock */
	CHECK(dx.completion_timestamp_mask != 0);
	memset(&v, 0, sizeof(v));
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	t0 = mono_ns();
	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), 0);
	t1 = mono_ns();
	CHECK(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK);
	hw = (uint64_t)v.raw_clock.tv_sec * 1000000000ull + (uint64_t)v.raw_clock.tv_nsec;
	CHECK(hw >= t0 && hw <= t1);
	v.comp_mask = 1u << 5;
	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), EINVAL);

	cqx = ibv_create_cq_ex(ctx, &ca);
	REQUIRE(cqx);
	cq = ibv_cq_ex_to_cq(cqx);
	ms = ibv_reg_mr(pd, sb, sizeof(sb), IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	qa = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	qb = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	REQUIRE(ms && mr && qa && qb);
	REQUIRE(connect_rc(qa, qb->qp_num) == 0);
	REQUIRE(connect_rc(qb, qa->qp_num) == 0);
	{
		struct ibv_sge rs = { (uintptr_t)rb, sizeof(rb), mr->lkey };
		struct ibv_sge ss = { (uintptr_t)sb, sizeof(sb), ms->lkey };
		struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_send_wr sw = { .wr_id = 2, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;
		REQUIRE(ibv_post_recv(qb, &rw, &rbad) == 0);
		t0 = mono_ns();
		r0 = real_ns();
		REQUIRE(ibv_post_send(qa, &sw, &sbad) == 0);
	}
	for (int tries = 0; tries < 2000000 && got < 2; tries++) {
		if (ibv_start_poll(cqx, &pa))
			continue;
		do {
			uint64_t ts = ibv_wc_read_completion_ts(cqx);
			uint64_t wall = ibv_wc_read_completion_wallclock_ns(cqx);
			t1 = mono_ns();
			r1 = real_ns();
			CHECK_EQ(cqx->status, IBV_WC_SUCCESS);
			/* both completed after the post and before this read */
			CHECK(ts >= t0 && ts <= t1);
			CHECK(wall + 1000000 >= r0 && wall <= r1 + 1000000);   /* 1 ms clock slack */
			got++;
		} while (ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	}
	CHECK_EQ(got, 2);
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	ibv_dereg_mr(ms); ibv_dereg_mr(mr);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03 (issue 11 item 6): thread domains and parent domains - a parent
 * domain is a PD everywhere, its allocators make the QPs' and CQs' memory */

static int pd_allocs, pd_frees, pd_default_next;
static void *pd_ctx_seen;

static void *pd_alloc_cb(struct ibv_pd *pd, void *pd_context, size_t size, size_t align,
			 uint64_t type)
{
	void *p;

	(void)pd;
	pd_ctx_seen = pd_context;
	if (pd_default_next) {
		pd_default_next--;
		return IBV_ALLOCATOR_USE_DEFAULT;
	}
	if (type != 1 && type != 2 && type != 3)   /* SOFTRNIC_RES_TYPE_QP/QP_BUF/CQ */
		return NULL;
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size))
		return NULL;
	memset(p, 0, size);
	pd_allocs++;
	return p;
}

static void pd_free_cb(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	(void)pd; (void)pd_context; (void)type;
	pd_frees++;
	free(ptr);
}

static void test_v03_parent_domain_thread_domain_allocators(void)
{
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr pa;
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *par;
	struct ibv_td *td;
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq2;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *q1, *q2;
	static uint8_t sb[128], rb[128];
	struct ibv_mr *ms, *mr;
	struct ibv_wc wc;
	int marker;

	REQUIRE(pd);
	ta.comp_mask = 1;
	errno = 0;
	CHECK(ibv_alloc_td(ctx, &ta) == NULL);
	CHECK_EQ(errno, EINVAL);
	ta.comp_mask = 0;
	td = ibv_alloc_td(ctx, &ta);
	REQUIRE(td);
	CHECK(td->context == ctx);

	memset(&pa, 0, sizeof(pa));
	errno = 0;
	CHECK(ibv_alloc_parent_domain(ctx, &pa) == NULL);          /* no PD */
	CHECK_EQ(errno, EINVAL);
	pa.pd = pd;
	pa.td = td;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.alloc = pd_alloc_cb;                                   /* no free callback */
	pa.pd_context = &marker;
	errno = 0;
	CHECK(ibv_alloc_parent_domain(ctx, &pa) == NULL);
	CHECK_EQ(errno, EINVAL);
	pa.free = pd_free_cb;
	pa.comp_mask |= 1u << 7;                                  /* unknown bit */
	errno = 0;
	CHECK(ibv_alloc_parent_domain(ctx, &pa) == NULL);
	CHECK_EQ(errno, EINVAL);
	pa.comp_mask &= ~(1u << 7);
	par = ibv_alloc_parent_domain(ctx, &pa);
	REQUIRE(par);
	CHECK(par->context == ctx);
	{	/* a parent domain does not extend a parent domain */
		struct ibv_parent_domain_init_attr p2 = { .pd = par };
		errno = 0;
		CHECK(ibv_alloc_parent_domain(ctx, &p2) == NULL);
		CHECK_EQ(errno, EINVAL);
	}
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);                      /* used by par */
	CHECK_EQ(ibv_dealloc_td(td), EBUSY);

	/* a CQ with the parent domain: its memory comes from the allocator */
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	ca.parent_domain = pd;                                    /* a plain PD */
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &ca) == NULL);
	CHECK_EQ(errno, EINVAL);
	ca.parent_domain = par;
	pd_allocs = pd_frees = 0;
	cqx = ibv_create_cq_ex(ctx, &ca);
	REQUIRE(cqx);
	cq = ibv_cq_ex_to_cq(cqx);
	CHECK_EQ(pd_allocs, 1);
	CHECK(pd_ctx_seen == &marker);
	pd_default_next = 1;                                      /* IBV_ALLOCATOR_USE_DEFAULT */
	cq2 = ibv_create_cq_ex(ctx, &ca);
	REQUIRE(cq2);
	CHECK_EQ(pd_allocs, 1);

	/* QPs on the parent domain: object and WR buffers from the allocator,
	 * MRs registered on it, traffic between them */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq; qa.recv_cq = cq; qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 8; qa.cap.max_recv_wr = 8; qa.cap.max_send_sge = 1; qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = 16;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.pd = par;
	qa.send_ops_flags = IBV_QP_EX_WITH_SEND;
	q1 = ibv_create_qp_ex(ctx, &qa);
	REQUIRE(q1);
	CHECK_EQ(pd_allocs, 1 + 4);                               /* QP + 3 WR buffers */
	q2 = make_qp(par, cq, cq, IBV_QPT_RC, 8, NULL);
	REQUIRE(q2);
	CHECK_EQ(pd_allocs, 1 + 4 + 1);
	CHECK_EQ(ibv_dealloc_pd(par), EBUSY);                     /* used by QPs */
	ms = ibv_reg_mr(par, sb, sizeof(sb), IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(par, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(ms && mr);
	REQUIRE(connect_rc(q1, q2->qp_num) == 0);
	REQUIRE(connect_rc(q2, q1->qp_num) == 0);
	{
		struct ibv_sge rs = { (uintptr_t)rb, sizeof(rb), mr->lkey };
		struct ibv_sge ss = { (uintptr_t)sb, sizeof(sb), ms->lkey };
		struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_send_wr sw = { .wr_id = 2, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;
		fill(sb, sizeof(sb), 12);
		REQUIRE(ibv_post_recv(q2, &rw, &rbad) == 0);
		REQUIRE(ibv_post_send(q1, &sw, &sbad) == 0);
		for (int i = 0; i < 2; i++) {
			REQUIRE(poll_one(cq, &wc, 5000) == 1);
			CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		}
		CHECK(same(sb, rb, sizeof(sb)));
	}
	CHECK_EQ(ibv_destroy_qp(q1), 0);
	CHECK_EQ(ibv_destroy_qp(q2), 0);
	CHECK_EQ(ibv_dereg_mr(ms), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq2)), 0);
	CHECK_EQ(pd_frees, pd_allocs);                            /* everything went back */
	CHECK_EQ(ibv_dealloc_pd(par), 0);
	CHECK_EQ(ibv_dealloc_td(td), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03: UD in loopback: AH, GRH written into the receive buffer, AH from WC */

static void test_v03_ud_loopback_grh_and_ah_from_wc(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	static uint8_t sbuf[256], rbuf[40 + 256];
	struct ibv_mr *ms, *mr;
	struct ibv_qp *qa, *qb;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah, *ah2;
	struct ibv_sge ss, rs;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_wc wc;

	REQUIRE(pd && cq);
	ms = ibv_reg_mr(pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	qa = make_qp(pd, cq, cq, IBV_QPT_UD, 8, NULL);
	qb = make_qp(pd, cq, cq, IBV_QPT_UD, 8, NULL);
	REQUIRE(ms && mr && qa && qb);
	for (int i = 0; i < 2; i++) {
		struct ibv_qp *q = i ? qb : qa;
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
		REQUIRE(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
		a.qp_state = IBV_QPS_RTR;
		REQUIRE(ibv_modify_qp(q, &a, IBV_QP_STATE) == 0);
		a.qp_state = IBV_QPS_RTS;
		REQUIRE(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
	}
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	errno = 0;
	CHECK(ibv_create_ah(pd, &aa) == NULL);      /* not global: EINVAL on RoCE */
	CHECK_EQ(errno, EINVAL);
	aa.is_global = 1; aa.grh.dgid = gid0; aa.grh.hop_limit = 1;
	ah = ibv_create_ah(pd, &aa);
	REQUIRE(ah);

	memset(rbuf, 0xee, sizeof(rbuf));
	rs = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), mr->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0x51; rwr.sg_list = &rs; rwr.num_sge = 1;
	REQUIRE(ibv_post_recv(qb, &rwr, &rbad) == 0);
	fill(sbuf, sizeof(sbuf), 3);
	ss = (struct ibv_sge){ (uintptr_t)sbuf, 200, ms->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x50; wr.sg_list = &ss; wr.num_sge = 1; wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah; wr.wr.ud.remote_qpn = qb->qp_num; wr.wr.ud.remote_qkey = 0x11111111;
	REQUIRE(ibv_post_send(qa, &wr, &bad) == 0);

	{
		bool got_send = false, got_recv = false;
		struct ibv_wc rw = { 0 };
		for (int i = 0; i < 2 && poll_one(cq, &wc, 5000) == 1; i++) {
			CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			if (wc.opcode == IBV_WC_SEND) {
				got_send = true;
				CHECK_EQ(wc.wr_id, 0x50);
			} else {
				got_recv = true;
				rw = wc;
			}
		}
		CHECK(got_send && got_recv);
		REQUIRE(got_recv);
		CHECK_EQ(rw.opcode, IBV_WC_RECV);
		CHECK_EQ(rw.wr_id, 0x51);
		CHECK_EQ(rw.byte_len, 40 + 200);
		CHECK(rw.wc_flags & IBV_WC_GRH);
		CHECK_EQ(rw.src_qp, qa->qp_num);
		CHECK_EQ(rw.qp_num, qb->qp_num);
		CHECK(same(sbuf, rbuf + 40, 200));
		/* RoCEv2/IPv4: IPv4 header at bytes 20..39 of the GRH area */
		CHECK_EQ(rbuf[20] >> 4, 4);
		CHECK_EQ(rbuf[29], 17);
		CHECK(!memcmp(rbuf + 32, "\x7f\x00\x13\x01", 4));
		CHECK(!memcmp(rbuf + 36, "\x7f\x00\x13\x01", 4));
		CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &rw, (struct ibv_grh *)rbuf, &aa), 0);
		CHECK(aa.is_global);
		CHECK(!memcmp(aa.grh.dgid.raw, gid0.raw, 16));
		CHECK_EQ(aa.grh.sgid_index, 0);
		ah2 = ibv_create_ah_from_wc(pd, &rw, (struct ibv_grh *)rbuf, 1);
		CHECK(ah2 != NULL);
		if (ah2)
			CHECK_EQ(ibv_destroy_ah(ah2), 0);
	}
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	ibv_dereg_mr(ms); ibv_dereg_mr(mr);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-03: SRQ limit event through ibv_get_async_event                           */

static void test_v03_srq_limit_async_event(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq;
	struct ibv_srq_attr sa;
	static uint8_t rb[16][64], sb[64];
	struct ibv_mr *mr, *ms;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	struct ibv_async_event ev;

	REQUIRE(pd && cq);
	srq = ibv_create_srq(pd, &sia);
	REQUIRE(srq);
	CHECK(sia.attr.max_wr >= 16);
	mr = ibv_reg_mr(pd, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	ms = ibv_reg_mr(pd, sb, sizeof(sb), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(mr && ms);
	for (int i = 0; i < 10; i++) {
		struct ibv_sge s = { (uintptr_t)rb[i], 64, mr->lkey };
		struct ibv_recv_wr w = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 }, *bad;
		REQUIRE(ibv_post_srq_recv(srq, &w, &bad) == 0);
	}
	sa.srq_limit = 8;
	CHECK_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	sa.max_wr = 64;
	CHECK_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL);   /* no resize */
	CHECK_EQ(ibv_query_srq(srq, &sa), 0);
	CHECK_EQ(sa.srq_limit, 8);

	qa = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	qb = make_qp(pd, cq, cq, IBV_QPT_RC, 8, srq);
	REQUIRE(qa && qb);
	REQUIRE(connect_rc(qa, qb->qp_num) == 0);
	REQUIRE(connect_rc(qb, qa->qp_num) == 0);
	{
		struct ibv_recv_wr w = { 0 }, *bad;
		CHECK_EQ(ibv_post_recv(qb, &w, &bad), EINVAL);   /* QP with SRQ */
	}
	CHECK_EQ(ibv_destroy_srq(srq), EBUSY);
	for (int i = 0; i < 3; i++) {
		struct ibv_sge s = { (uintptr_t)sb, 64, ms->lkey };
		struct ibv_send_wr w = { .wr_id = 100u + (unsigned)i, .sg_list = &s, .num_sge = 1,
					 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
		sb[0] = (uint8_t)i;
		REQUIRE(ibv_post_send(qa, &w, &bad) == 0);
		for (int k = 0; k < 2; k++) {
			REQUIRE(poll_one(cq, &wc, 5000) == 1);
			CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			if (wc.opcode == IBV_WC_RECV) {
				CHECK_EQ(wc.wr_id, i);
				CHECK_EQ(rb[i][0], i);
			}
		}
	}
	{
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		CHECK_EQ(poll(&pfd, 1, 5000), 1);
		CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
		CHECK_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
		CHECK(ev.element.srq == srq);
		ibv_ack_async_event(&ev);
	}
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);   /* its one event was acked */
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	ibv_dereg_mr(mr); ibv_dereg_mr(ms);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* V-01: the extended API: ibv_qp_ex (ibv_wr_*) and ibv_cq_ex polling         */

static void test_v01_qp_ex_send_and_cq_ex_poll(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq_init_attr_ex ca = { .cqe = 32, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_cq *cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	static uint8_t sb[300], rb[300];
	struct ibv_mr *ms, *mr;
	struct ibv_qp *qa, *qb;
	struct ibv_qp_ex *qx;
	struct ibv_qp_init_attr_ex ia;
	struct ibv_poll_cq_attr pa = { 0 };
	int got_send = 0, got_recv = 0;

	REQUIRE(pd && cq);
	ms = ibv_reg_mr(pd, sb, sizeof(sb), IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(ms && mr);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq; ia.recv_cq = cq; ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 8; ia.cap.max_recv_wr = 8; ia.cap.max_send_sge = 1; ia.cap.max_recv_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = pd;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	qa = ibv_create_qp_ex(ctx, &ia);
	REQUIRE(qa);
	ia.send_ops_flags = IBV_QP_EX_WITH_TSO;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &ia) == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	qb = make_qp(pd, cq, cq, IBV_QPT_RC, 8, NULL);
	REQUIRE(qb);
	qx = ibv_qp_to_qp_ex(qa);
	REQUIRE(qx);
	REQUIRE(connect_rc(qa, qb->qp_num) == 0);
	REQUIRE(connect_rc(qb, qa->qp_num) == 0);
	{
		struct ibv_sge s = { (uintptr_t)rb, sizeof(rb), mr->lkey };
		struct ibv_recv_wr w = { .wr_id = 0x77, .sg_list = &s, .num_sge = 1 }, *bad;
		REQUIRE(ibv_post_recv(qb, &w, &bad) == 0);
	}
	fill(sb, sizeof(sb), 42);
	ibv_wr_start(qx);
	qx->wr_id = 0x66;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, ms->lkey, (uintptr_t)sb, sizeof(sb));
	CHECK_EQ(ibv_wr_complete(qx), 0);

	/* an op that was not enabled at creation fails the batch */
	ibv_wr_start(qx);
	ibv_wr_rdma_read(qx, 0, 0);
	CHECK_EQ(ibv_wr_complete(qx), EINVAL);

	for (int tries = 0; tries < 2000000 && got_send + got_recv < 2; tries++) {
		if (ibv_start_poll(cqx, &pa))
			continue;
		do {
			CHECK_EQ(cqx->status, IBV_WC_SUCCESS);
			if (ibv_wc_read_opcode(cqx) == IBV_WC_SEND) {
				got_send++;
				CHECK_EQ(cqx->wr_id, 0x66);
				CHECK_EQ(ibv_wc_read_qp_num(cqx), qa->qp_num);
			} else {
				got_recv++;
				CHECK_EQ(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
				CHECK_EQ(cqx->wr_id, 0x77);
				CHECK_EQ(ibv_wc_read_byte_len(cqx), sizeof(sb));
				CHECK_EQ(ibv_wc_read_qp_num(cqx), qb->qp_num);
			}
		} while (ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	}
	CHECK_EQ(got_send, 1);
	CHECK_EQ(got_recv, 1);
	CHECK(same(sb, rb, sizeof(sb)));
	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	ibv_dereg_mr(ms); ibv_dereg_mr(mr);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
/* not offered: an honest EOPNOTSUPP                                          */

static void test_v03_not_offered_eopnotsupp(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp;
	union ibv_gid mgid = { .raw = { 0xff, 0x0e } };

	REQUIRE(pd && cq);
	qp = make_qp(pd, cq, cq, IBV_QPT_UD, 4, NULL);
	REQUIRE(qp);
	CHECK_EQ(ibv_attach_mcast(qp, &mgid, 0), EOPNOTSUPP);
	/* import is offered now (test_share.sh): an unknown handle is EINVAL */
	errno = 0;
	CHECK(ibv_import_pd(ctx, pd->handle + 100000) == NULL);
	CHECK_EQ(errno, EINVAL);
	{
		struct ibv_alloc_dm_attr da = { .length = 64 };
		errno = 0;
		CHECK(ibv_alloc_dm(ctx, &da) == NULL);    /* no device memory */
		CHECK_EQ(errno, EOPNOTSUPP);
	}
	CHECK_EQ(ibv_fork_init(), 0);
	CHECK_EQ(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------ */
struct tcase { const char *name; void (*fn)(void); };
#define T(f) { #f, f }
static const struct tcase tests[] = {
	T(test_v01_v02_device_list_open_query),
	T(test_v03_pd_mr_errnos),
	T(test_v03_cq_and_channel),
	T(test_v03_qp_create_limits),
	T(test_v03_qp_illegal_transitions_einval_state_unchanged),
	T(test_v04_post_wrong_state_einval_bad_wr),
	T(test_v04_sq_full_enomem),
	T(test_v04_loopback_rc_send_write_read_atomic),
	T(test_v03_rereg_mr_peer_rkey_still_valid),
	T(test_v03_reset_removes_stale_cqes_reconnect_clean),
	T(test_v04_mw_type1_bind_mw_unbind_revokes),
	T(test_v04_mw_type2_post_bind_send_with_inv_local_inv),
	T(test_v01_device_clock_and_cq_completion_timestamps),
	T(test_v03_parent_domain_thread_domain_allocators),
	T(test_v03_ud_loopback_grh_and_ah_from_wc),
	T(test_v03_srq_limit_async_event),
	T(test_v01_qp_ex_send_and_cq_ex_poll),
	T(test_v03_not_offered_eopnotsupp),
};

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;

	if (open_dev()) {
		fprintf(stderr, "cannot open softrnic0 (errno %d): is LD_LIBRARY_PATH set?\n", errno);
		printf("0 passed, 1 failed\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (only && !strstr(tests[i].name, only))
			continue;
		g_failed_checks = 0;
		tests[i].fn();
		printf("%s %s\n", g_failed_checks ? "FAIL" : "ok  ", tests[i].name);
		fflush(stdout);
		if (g_failed_checks)
			g_failed++;
		else
			g_passed++;
	}
	ibv_close_device(ctx);
	printf("%d passed, %d failed\n", g_passed, g_failed);
	return g_failed ? 1 : 0;
}
