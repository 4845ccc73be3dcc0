/*
 * share_check.c - a context's cmd_fd shared between contexts and processes
 * (V-01, V-03; issue 11 item 4): ibv_import_device, ibv_import_pd,
 * ibv_import_mr.
 *
 *   share_check DEVNAME            (run by test_share.sh under softrnic run)
 *
 * The owner (this process) opens DEVNAME, makes a PD and MRs, and:
 *  1. imports its own cmd_fd (dup) in this process: a second context whose
 *     QP uses the imported PD and MR keys; owner's dereg/dealloc EBUSY while
 *     imported; bad handles EINVAL; a non-softrnic fd refused;
 *  2. forks: the child imports dup(cmd_fd) (a remote context), imports the
 *     PD and MR (same keys), registers MAP_SHARED memory mapped before the
 *     fork (private memory: EFAULT), makes a CQ and an RC QP connected to an
 *     owner's QP, RDMA WRITEs into the owner's MR, SENDs (inline, from its
 *     private stack), READs back; the owner checks every byte; the child
 *     exits holding objects and the owner finds them released;
 *  3. passes cmd_fd with SCM_RIGHTS to a fresh process (fork + exec of this
 *     program with --scm FD): it imports the device, PD and two MRs and
 *     READs the owner's MR A into the owner's MR B through its own QP (no
 *     shared memory needed: SGEs name the owner's memory).
 * Prints "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

static int passed, failed;
static const char *who = "owner";
#define EXPECT(c) do { if (c) passed++; else { failed++; \
	fprintf(stderr, "%s: %s:%d: EXPECT failed: %s (errno %d)\n", who, __FILE__, __LINE__, #c, errno); } } while (0)
#define EXPECT_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); if (_a == _b) passed++; \
	else { failed++; fprintf(stderr, "%s: %s:%d: %s == %s (%lld vs %lld)\n", who, __FILE__, __LINE__, \
				 #a, #b, _a, _b); } } while (0)

static union ibv_gid gid0;

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			c = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	return c;
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

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};
	return ibv_create_qp(pd, &ia);
}

static int connect_qp(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if ((rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS)))
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if ((rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op, uint64_t wr_id,
		void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, int flags)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	if (poll_one(cq, &wc, 5000) != 1)
		return -2;
	if (wc.wr_id != wr_id)
		return -3;
	return wc.status;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7);
}

/* ------------------------------------------------------------------------ */
/* 1. the owner's own process                                                 */

static void same_process(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_mr *mr,
			 uint8_t *buf)
{
	struct ibv_context *ic;
	struct ibv_pd *ipd;
	struct ibv_mr *imr;
	struct ibv_cq *cq;
	struct ibv_qp *qa, *qb;
	static uint8_t loc[256];
	struct ibv_mr *ml;
	int p[2];

	errno = 0;
	EXPECT(ibv_import_device(-1) == NULL);
	EXPECT_EQ(errno, EBADF);
	EXPECT(pipe(p) == 0);
	errno = 0;
	EXPECT(ibv_import_device(p[1]) == NULL);            /* not a softrnic cmd_fd */
	EXPECT(errno == ENOTSOCK || errno == EINVAL);
	close(p[0]);
	close(p[1]);

	EXPECT(ctx->cmd_fd >= 0);
	ic = ibv_import_device(dup(ctx->cmd_fd));
	EXPECT(ic != NULL);
	if (!ic)
		return;
	EXPECT(ic != ctx);
	EXPECT(!strcmp(ibv_get_device_name(ic->device), ibv_get_device_name(ctx->device)));
	errno = 0;
	EXPECT(ibv_import_pd(ic, pd->handle + 1000) == NULL);
	EXPECT_EQ(errno, EINVAL);
	ipd = ibv_import_pd(ic, pd->handle);
	EXPECT(ipd != NULL);
	if (!ipd)
		return;
	EXPECT(ipd->context == ic && ipd->handle == pd->handle);
	errno = 0;
	EXPECT(ibv_import_mr(ipd, mr->handle + 12345) == NULL);
	EXPECT_EQ(errno, EINVAL);
	imr = ibv_import_mr(ipd, mr->handle);
	EXPECT(imr != NULL);
	if (!imr)
		return;
	EXPECT_EQ(imr->lkey, mr->lkey);
	EXPECT_EQ(imr->rkey, mr->rkey);
	EXPECT_EQ(imr->length, mr->length);
	EXPECT(imr->addr == NULL);                          /* ibv_import_mr(3) */
	EXPECT_EQ(ibv_dereg_mr(mr), EBUSY);                 /* held by the import */
	EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
	/* QPs of the imported context, on the imported PD; the owner's MR is
	 * the target of a WRITE through its imported rkey */
	cq = ibv_create_cq(ic, 32, NULL, NULL, 0);
	ml = ibv_reg_mr(ipd, loc, sizeof(loc), IBV_ACCESS_LOCAL_WRITE);
	qa = cq ? rc_qp(ipd, cq) : NULL;
	qb = cq ? rc_qp(ipd, cq) : NULL;
	EXPECT(cq && ml && qa && qb);
	if (!cq || !ml || !qa || !qb)
		return;
	EXPECT_EQ(connect_qp(qa, qb->qp_num), 0);
	EXPECT_EQ(connect_qp(qb, qa->qp_num), 0);
	fill(loc, sizeof(loc), 1);
	EXPECT_EQ(rdma(qa, cq, IBV_WR_RDMA_WRITE, 1, loc, 256, ml->lkey, (uintptr_t)buf + 64,
		       imr->rkey, 0), IBV_WC_SUCCESS);
	EXPECT(!memcmp(buf + 64, loc, 256));
	/* the imported MR's lkey names the owner's memory locally too */
	memset(loc, 0, sizeof(loc));
	EXPECT_EQ(rdma(qa, cq, IBV_WR_RDMA_WRITE, 2, buf + 64, 128, imr->lkey, (uintptr_t)buf + 1024,
		       mr->rkey, 0), IBV_WC_SUCCESS);
	EXPECT(!memcmp(buf + 1024, buf + 64, 128));
	EXPECT_EQ(ibv_destroy_qp(qa), 0);
	EXPECT_EQ(ibv_destroy_qp(qb), 0);
	EXPECT_EQ(ibv_dereg_mr(ml), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	/* dereg / dealloc of imports release the imports only */
	EXPECT_EQ(ibv_dereg_mr(imr), 0);
	ibv_unimport_pd(ipd);
	EXPECT_EQ(ibv_close_device(ic), 0);
}

/* ------------------------------------------------------------------------ */
/* 2. a forked child                                                          */

struct msg { uint32_t qpn, rkey, lkey, handle, pd_handle, mr2_rkey; uint64_t addr, addr2; };

static int child_main(int cmd_fd, int sock, uint8_t *shm, uint8_t *shm2)
{
	struct msg m;
	struct ibv_context *ic;
	struct ibv_pd *ipd;
	struct ibv_mr *imr, *m2, *bad;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_device_attr da;
	union ibv_gid g;
	uint8_t priv[512];
	static uint8_t heap_like[4096];

	who = "child";
	if (read(sock, &m, sizeof(m)) != (ssize_t)sizeof(m))
		return 2;
	ic = ibv_import_device(cmd_fd);
	EXPECT(ic != NULL);
	if (!ic)
		return 1;
	EXPECT_EQ(ibv_query_device(ic, &da), 0);
	EXPECT_EQ(da.vendor_id, 0xFFFFFF);
	EXPECT_EQ(ibv_query_gid(ic, 1, 0, &g), 0);
	EXPECT(!memcmp(g.raw, gid0.raw, 16));
	errno = 0;
	EXPECT(ibv_create_comp_channel(ic) == NULL);
	EXPECT_EQ(errno, EOPNOTSUPP);
	ipd = ibv_import_pd(ic, m.pd_handle);
	EXPECT(ipd != NULL);
	if (!ipd)
		return 1;
	imr = ibv_import_mr(ipd, m.handle);
	EXPECT(imr != NULL);
	if (!imr)
		return 1;
	EXPECT_EQ(imr->rkey, m.rkey);
	EXPECT_EQ(imr->lkey, m.lkey);
	errno = 0;
	EXPECT(ibv_alloc_mw(ipd, IBV_MW_TYPE_2) == NULL);
	EXPECT_EQ(errno, EOPNOTSUPP);
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
		errno = 0;
		EXPECT(ibv_create_srq(ipd, &sa) == NULL);
		EXPECT_EQ(errno, EOPNOTSUPP);
	}
	/* memory both processes map shared at this address: registrable */
	m2 = ibv_reg_mr(ipd, shm2, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	EXPECT(m2 != NULL);
	/* private memory: the owner cannot reach it */
	errno = 0;
	bad = ibv_reg_mr(ipd, heap_like, sizeof(heap_like), IBV_ACCESS_LOCAL_WRITE);
	EXPECT(bad == NULL);
	EXPECT_EQ(errno, EFAULT);
	cq = ibv_create_cq(ic, 32, NULL, NULL, 0);
	EXPECT(cq != NULL);
	qp = cq ? rc_qp(ipd, cq) : NULL;
	EXPECT(qp != NULL);
	if (!m2 || !qp)
		return 1;
	/* connect to the owner's QP */
	{
		uint32_t mine = qp->qp_num;
		if (write(sock, &mine, sizeof(mine)) != (ssize_t)sizeof(mine))
			return 2;
	}
	EXPECT_EQ(connect_qp(qp, m.qpn), 0);
	{
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		EXPECT_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
		EXPECT_EQ(a.qp_state, IBV_QPS_RTS);
		EXPECT(ia.send_cq == cq);
	}
	/* WRITE from the shared buffer into the owner's MR */
	fill(shm2, 1024, 5);
	EXPECT_EQ(rdma(qp, cq, IBV_WR_RDMA_WRITE, 11, shm2, 1024, m2->lkey, m.addr + 2048, m.rkey, 0),
		  IBV_WC_SUCCESS);
	/* a SEND with inline data from this process's private stack */
	fill(priv, 48, 6);
	EXPECT_EQ(rdma(qp, cq, IBV_WR_SEND, 12, priv, 48, 0, 0, 0, IBV_SEND_INLINE), IBV_WC_SUCCESS);
	/* READ the owner's bytes back into shared memory */
	memset(shm2 + 2048, 0, 1024);
	EXPECT_EQ(rdma(qp, cq, IBV_WR_RDMA_READ, 13, shm2 + 2048, 1024, m2->lkey, m.addr + 2048, m.rkey, 0),
		  IBV_WC_SUCCESS);
	EXPECT(!memcmp(shm2 + 2048, shm2, 1024));
	/* the owner's SEND back lands in a receive posted here */
	{
		struct ibv_sge s = { (uintptr_t)shm2 + 3072, 64, m2->lkey };
		struct ibv_recv_wr w = { .wr_id = 14, .sg_list = &s, .num_sge = 1 }, *rb;
		struct ibv_wc wc;
		uint8_t go = 1;
		EXPECT_EQ(ibv_post_recv(qp, &w, &rb), 0);
		if (write(sock, &go, 1) != 1)
			return 2;
		EXPECT_EQ(poll_one(cq, &wc, 5000), 1);
		EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
		EXPECT_EQ(wc.opcode, IBV_WC_RECV);
		EXPECT_EQ(wc.wr_id, 14);
		EXPECT_EQ(wc.byte_len, 64);
		EXPECT_EQ(shm2[3072], 0x5a);
	}
	(void)shm;
	printf("child: %d passed, %d failed\n", passed, failed);
	fflush(stdout);
	/* exit holding the QP, CQ, MRs and PD: the owner cleans up */
	_exit(failed ? 1 : 0);
}

static void forked_child(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_mr *mr,
			 uint8_t *shm, uint8_t *shm2)
{
	int sv[2];
	pid_t pid;
	struct msg m;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *m2;
	uint32_t cqpn;
	uint8_t go;
	int st;

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	qp = cq ? rc_qp(pd, cq) : NULL;
	m2 = ibv_reg_mr(pd, shm2, 4096, IBV_ACCESS_LOCAL_WRITE);
	EXPECT(cq && qp && m2);
	if (!cq || !qp || !m2)
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(child_main(dup(ctx->cmd_fd), sv[1], shm, shm2));
	}
	close(sv[1]);
	memset(&m, 0, sizeof(m));
	m.qpn = qp->qp_num;
	m.rkey = mr->rkey;
	m.lkey = mr->lkey;
	m.handle = mr->handle;
	m.pd_handle = pd->handle;
	m.addr = (uintptr_t)shm;
	EXPECT(write(sv[0], &m, sizeof(m)) == (ssize_t)sizeof(m));
	EXPECT(read(sv[0], &cqpn, sizeof(cqpn)) == (ssize_t)sizeof(cqpn));
	EXPECT_EQ(connect_qp(qp, cqpn), 0);
	/* the child's inline SEND */
	{
		static uint8_t rbuf[64], ref[64];
		struct ibv_mr *mrb = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
		struct ibv_sge s = { (uintptr_t)rbuf, sizeof(rbuf), mrb ? mrb->lkey : 0 };
		struct ibv_recv_wr w = { .wr_id = 21, .sg_list = &s, .num_sge = 1 }, *rb;
		struct ibv_wc wc;
		EXPECT(mrb != NULL);
		EXPECT_EQ(ibv_post_recv(qp, &w, &rb), 0);
		EXPECT_EQ(poll_one(cq, &wc, 10000), 1);
		EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
		EXPECT_EQ(wc.byte_len, 48);
		fill(ref, 48, 6);
		EXPECT(!memcmp(rbuf, ref, 48));
		/* the child's WRITE landed in the owner's MR */
		fill(ref, 64, 5);
		EXPECT(!memcmp(shm + 2048, ref, 64));
		if (mrb)
			EXPECT_EQ(ibv_dereg_mr(mrb), 0);
	}
	EXPECT(read(sv[0], &go, 1) == 1);
	/* a SEND from the owner into the child's receive (shared memory) */
	{
		memset(shm2 + 3500, 0x5a, 64);
		EXPECT_EQ(rdma(qp, cq, IBV_WR_SEND, 22, shm2 + 3500, 64, m2->lkey, 0, 0, 0), IBV_WC_SUCCESS);
	}
	EXPECT(waitpid(pid, &st, 0) == pid);
	EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the child is gone with objects in use: the owner's server destroyed
	 * them, so the owner's MR and PD are no longer held by imports */
	{
		int rc = EBUSY;
		for (int i = 0; i < 200 && rc == EBUSY; i++) {
			rc = ibv_dereg_mr(mr);
			if (rc == EBUSY)
				usleep(10000);
		}
		EXPECT_EQ(rc, 0);
	}
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_dereg_mr(m2), 0);
	close(sv[0]);
}

/* ------------------------------------------------------------------------ */
/* 3. a fresh process that received cmd_fd with SCM_RIGHTS                    */

static int send_fd(int s, int fd, const void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)data, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(cbuf, 0, sizeof(cbuf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(s, &mh, 0) == (ssize_t)len ? 0 : -1;
}

static int recv_fd(int s, void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { data, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	int fd = -1;

	if (recvmsg(s, &mh, 0) != (ssize_t)len)
		return -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

struct scm_msg { uint32_t pd_handle, a_handle, b_handle, a_rkey; uint64_t a_addr, b_addr; uint8_t gid[16]; };

static int scm_main(int sock)
{
	struct scm_msg m;
	struct ibv_context *ic;
	struct ibv_pd *ipd;
	struct ibv_mr *ma, *mb;
	struct ibv_cq *cq;
	struct ibv_qp *qa, *qb;
	int fd;

	who = "scm";
	fd = recv_fd(sock, &m, sizeof(m));
	EXPECT(fd >= 0);
	if (fd < 0)
		return 1;
	memcpy(gid0.raw, m.gid, 16);
	ic = ibv_import_device(fd);
	EXPECT(ic != NULL);
	if (!ic)
		return 1;
	ipd = ibv_import_pd(ic, m.pd_handle);
	ma = ipd ? ibv_import_mr(ipd, m.a_handle) : NULL;
	mb = ipd ? ibv_import_mr(ipd, m.b_handle) : NULL;
	EXPECT(ipd && ma && mb);
	if (!ma || !mb)
		return 1;
	EXPECT_EQ(ma->rkey, m.a_rkey);
	cq = ibv_create_cq(ic, 32, NULL, NULL, 0);
	qa = cq ? rc_qp(ipd, cq) : NULL;
	qb = cq ? rc_qp(ipd, cq) : NULL;
	EXPECT(cq && qa && qb);
	if (!qa || !qb)
		return 1;
	EXPECT_EQ(connect_qp(qa, qb->qp_num), 0);
	EXPECT_EQ(connect_qp(qb, qa->qp_num), 0);
	/* READ the owner's MR A into the owner's MR B: the addresses are the
	 * owner's, which is where the QP runs */
	EXPECT_EQ(rdma(qa, cq, IBV_WR_RDMA_READ, 31, (void *)(uintptr_t)m.b_addr, 2048, mb->lkey,
		       m.a_addr, ma->rkey, 0), IBV_WC_SUCCESS);
	EXPECT_EQ(ibv_destroy_qp(qa), 0);
	EXPECT_EQ(ibv_destroy_qp(qb), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_dereg_mr(ma), 0);
	EXPECT_EQ(ibv_dereg_mr(mb), 0);
	EXPECT_EQ(ibv_dealloc_pd(ipd), 0);
	EXPECT_EQ(ibv_close_device(ic), 0);
	printf("scm: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

static void scm_process(const char *self, struct ibv_context *ctx, struct ibv_pd *pd)
{
	static uint8_t a[4096], b[4096];
	struct ibv_mr *ma = ibv_reg_mr(pd, a, sizeof(a), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *mb = ibv_reg_mr(pd, b, sizeof(b), IBV_ACCESS_LOCAL_WRITE);
	struct scm_msg m;
	int sv[2], st;
	pid_t pid;

	EXPECT(ma && mb);
	if (!ma || !mb)
		return;
	fill(a, sizeof(a), 9);
	memset(b, 0, sizeof(b));
	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char arg[16];
		close(sv[0]);
		snprintf(arg, sizeof(arg), "%d", sv[1]);
		execl(self, self, "--scm", arg, (char *)NULL);
		_exit(3);
	}
	close(sv[1]);
	memset(&m, 0, sizeof(m));
	m.pd_handle = pd->handle;
	m.a_handle = ma->handle;
	m.b_handle = mb->handle;
	m.a_rkey = ma->rkey;
	m.a_addr = (uintptr_t)a;
	m.b_addr = (uintptr_t)b;
	memcpy(m.gid, gid0.raw, 16);
	EXPECT_EQ(send_fd(sv[0], ctx->cmd_fd, &m, sizeof(m)), 0);
	EXPECT(waitpid(pid, &st, 0) == pid);
	EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT(!memcmp(a, b, 2048));                          /* the exec'd process's READ */
	EXPECT_EQ(ibv_dereg_mr(ma), 0);                       /* its imports are gone */
	EXPECT_EQ(ibv_dereg_mr(mb), 0);
	close(sv[0]);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *shm, *shm2;

	if (argc == 3 && !strcmp(argv[1], "--scm"))
		return scm_main(atoi(argv[2]));
	if (argc != 2) {
		fprintf(stderr, "usage: share_check DEVNAME\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	if (!ctx || ibv_query_gid(ctx, 1, 0, &gid0)) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		printf("0 passed, 1 failed\n");
		return 1;
	}
	/* shared memory made before any fork: same address in the child */
	shm = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	shm2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pd = ibv_alloc_pd(ctx);
	mr = pd && shm != MAP_FAILED ? ibv_reg_mr(pd, shm, 8192, IBV_ACCESS_LOCAL_WRITE |
						  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	if (!mr || shm2 == MAP_FAILED) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	same_process(ctx, pd, mr, shm);
	printf("same process: %d passed, %d failed\n", passed, failed);
	forked_child(ctx, pd, mr, shm, shm2);      /* deregisters mr at its end */
	printf("fork: %d passed, %d failed\n", passed, failed);
	scm_process(argv[0], ctx, pd);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(ctx), 0);
	printf("owner: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
