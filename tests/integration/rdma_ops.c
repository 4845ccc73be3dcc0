/*
 * rdma_ops.c - two-process integration test of the RDMA operations over
 * softrnic (issue 2): WRITE, WRITE_WITH_IMM, READ, SEND/RECV with immediate,
 * ATOMIC FETCH_ADD and CMP_SWP, checking every byte of the result and every
 * completion's status, opcode, length and immediate data; then the error
 * paths: a WRITE into an MR without remote-write access (REM_ACCESS_ERR,
 * target memory unchanged) and a SEND to a QP with no receive posted
 * (RNR retried, then RNR_RETRY_EXC_ERR).
 *
 *   rdma_ops -d DEV [-p PORT]            server
 *   rdma_ops -d DEV [-p PORT] SERVER_IP  client
 *
 * It is an ordinary verbs program: it includes rdma-core's <infiniband/verbs.h>
 * and runs on any RoCEv2 device (the test runs it under `softrnic run`).
 * Out-of-band exchange over TCP. Prints "N passed, N failed".
 * Requirements: V-03, V-04, PSN-16 (RNR retry limit), PSN-21 (access checks).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include "itest.h"
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE   (4u << 20)        /* data MR: 4 MiB */
#define RO_SIZE    4096u             /* MR without remote write */
#define ATOM_COUNT 1000u             /* FETCH_ADDs issued */
#define NQP        3                 /* 0: data, 1: access error, 2: RNR */

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) { passed++; } else { failed++; \
	fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

struct peer_info {              /* exchanged over TCP, network-independent (same host arch) */
	uint32_t qpn[NQP];
	uint32_t psn[NQP];
	union ibv_gid gid;
	uint64_t addr, ro_addr, atom_addr;
	uint32_t rkey, ro_rkey, atom_rkey;
};

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[NQP];
	struct ibv_mr *mr, *ro_mr, *atom_mr;
	uint8_t *buf, *ro, *atom;
	struct peer_info me, peer;
	int sock;
};

/* a tiny barrier/message over the TCP socket */
static void oob_send(struct ctx *c, uint32_t v) { itest_xfer_or_die(c->sock, &v, sizeof(v), true); }
static uint32_t oob_recv(struct ctx *c) { uint32_t v; itest_xfer_or_die(c->sock, &v, sizeof(v), false); return v; }

static void setup(struct ctx *c, const char *devname)
{
	c->ctx = itest_open_dev(devname);
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = ibv_create_cq(c->ctx, 4096, NULL, NULL, 0);
	if (!c->pd || !c->cq)
		itest_die("pd/cq");
	c->buf = aligned_alloc(4096, BUF_SIZE);
	c->ro = aligned_alloc(4096, RO_SIZE);
	c->atom = aligned_alloc(4096, 4096);
	memset(c->buf, 0, BUF_SIZE);
	memset(c->ro, 0x5a, RO_SIZE);
	memset(c->atom, 0, 4096);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	c->mr = ibv_reg_mr(c->pd, c->buf, BUF_SIZE, rw);
	c->ro_mr = ibv_reg_mr(c->pd, c->ro, RO_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	c->atom_mr = ibv_reg_mr(c->pd, c->atom, 4096, rw | IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr || !c->ro_mr || !c->atom_mr)
		itest_die("ibv_reg_mr");
	for (int i = 0; i < NQP; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 256, .max_recv_wr = 256, .max_send_sge = 4,
				 .max_recv_sge = 4, .max_inline_data = 64 },
		};
		c->qp[i] = ibv_create_qp(c->pd, &ia);
		if (!c->qp[i])
			itest_die("ibv_create_qp");
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
			.qp_access_flags = rw | IBV_ACCESS_REMOTE_ATOMIC };
		if (ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			itest_die("modify INIT");
		c->me.qpn[i] = c->qp[i]->qp_num;
		c->me.psn[i] = (uint32_t)(0xFFFFF0 + i * 7) & 0xFFFFFF; /* start near the wrap */
	}
	if (ibv_query_gid(c->ctx, 1, 0, &c->me.gid))
		itest_die("ibv_query_gid");
	c->me.addr = (uintptr_t)c->buf;
	c->me.rkey = c->mr->rkey;
	c->me.ro_addr = (uintptr_t)c->ro;
	c->me.ro_rkey = c->ro_mr->rkey;
	c->me.atom_addr = (uintptr_t)c->atom;
	c->me.atom_rkey = c->atom_mr->rkey;
}

static void connect_qps(struct ctx *c)
{
	for (int i = 0; i < NQP; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = c->peer.qpn[i], .rq_psn = c->peer.psn[i],
			.max_dest_rd_atomic = 16, .min_rnr_timer = 1, /* 0.01 ms */
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = c->peer.gid, .sgid_index = 0, .hop_limit = 64 } },
		};
		if (ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			itest_die("modify RTR");
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;       /* 67 ms */
		a.retry_cnt = 7;
		a.rnr_retry = i == 2 ? 2 : 7;
		a.sq_psn = c->me.psn[i];
		a.max_rd_atomic = 16;
		if (ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
			itest_die("modify RTS");
	}
}

/* wait for exactly one completion (bounded: 20 s) */
static struct ibv_wc wait_wc(struct ctx *c)
{
	struct ibv_wc wc;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0)
			itest_die("ibv_poll_cq");
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20) {
			fprintf(stderr, "timeout waiting for a completion\n");
			exit(3);
		}
	}
}

static void post_send(struct ctx *c, int qi, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(c->qp[qi], wr, &bad);
	if (rc) {
		errno = rc;
		itest_die("ibv_post_send");
	}
}

static void post_recv(struct ctx *c, int qi, uint64_t wr_id, void *addr, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (ibv_post_recv(c->qp[qi], &wr, &bad))
		itest_die("ibv_post_recv");
}

static uint8_t pattern(size_t i, uint32_t seed) { return (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ seed); }

static const uint32_t sizes[] = { 1, 3, 255, 1024, 1025, 4095, 4096, 65536, 65537, 1u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---------------------------------------------------------------- client */
static void client(struct ctx *c)
{
	struct ibv_wc wc;
	/* 1. RDMA WRITE of every size, each followed by a SEND_WITH_IMM carrying the
	 * size, so the server checks the bytes written and the SEND's CQE. */
	for (unsigned k = 0; k < NSIZES; k++) {
		uint32_t len = sizes[k];
		for (uint32_t i = 0; i < len; i++)
			c->buf[i] = pattern(i, k);
		struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = len, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 100 + k, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = c->peer.addr + 64, .rkey = c->peer.rkey } };
		post_send(c, 0, &wr);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 100 + k &&
		       wc.qp_num == c->qp[0]->qp_num,
		       "write %u: status %s opcode %d wr_id %lu", len, ibv_wc_status_str(wc.status), wc.opcode,
		       (unsigned long)wc.wr_id);
		/* SEND with immediate: two SGEs gathered into one message */
		struct ibv_sge s2[2] = {
			{ .addr = (uintptr_t)c->buf + BUF_SIZE - 64, .length = 16, .lkey = c->mr->lkey },
			{ .addr = (uintptr_t)c->buf + BUF_SIZE - 32, .length = 16, .lkey = c->mr->lkey } };
		for (int i = 0; i < 32; i++)
			c->buf[BUF_SIZE - 64 + (i < 16 ? i : i + 16)] = (uint8_t)(0xA0 + i + k);
		struct ibv_send_wr sw = { .wr_id = 200 + k, .sg_list = s2, .num_sge = 2,
			.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
			.imm_data = htonl(0xC0DE0000u | k) };
		post_send(c, 0, &sw);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 200 + k,
		       "send_imm %u: %s", k, ibv_wc_status_str(wc.status));
		oob_recv(c); /* the server checked the bytes before the next WRITE lands */
	}
	/* 2. WRITE_WITH_IMM: server sees RECV_RDMA_WITH_IMM with the immediate. */
	{
		for (uint32_t i = 0; i < 5000; i++)
			c->buf[i] = pattern(i, 77);
		struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = 5000, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 300, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
			.imm_data = htonl(0x12345678),
			.wr.rdma = { .remote_addr = c->peer.addr + 8192, .rkey = c->peer.rkey } };
		post_send(c, 0, &wr);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 300,
		       "write_imm: %s", ibv_wc_status_str(wc.status));
	}
	oob_recv(c); /* server has filled its buffer for READs */
	/* 3. RDMA READ of every size into a zeroed local buffer. */
	for (unsigned k = 0; k < NSIZES; k++) {
		uint32_t len = sizes[k];
		memset(c->buf, 0, len + 16);
		struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = len, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 400 + k, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = c->peer.addr + k, .rkey = c->peer.rkey } };
		post_send(c, 0, &wr);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.wr_id == 400 + k &&
		       wc.byte_len == len,
		       "read %u: %s opcode %d len %u", len, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		uint32_t bad = 0;
		for (uint32_t i = 0; i < len; i++)
			bad += c->buf[i] != pattern(i + k, 99);
		for (uint32_t i = len; i < len + 16; i++)
			bad += c->buf[i] != 0;
		EXPECT(bad == 0, "read %u: %u bytes differ", len, bad);
	}
	/* 4. ATOMIC FETCH_ADD x ATOM_COUNT on the server's counter, 32 in flight at a
	 * time; each returns the previous value; every returned value is unique and
	 * the final value is the exact sum. CMP_SWP success and failure. */
	{
		uint64_t *res = (uint64_t *)c->buf;
		memset(res, 0xff, ATOM_COUNT * 8);
		unsigned posted = 0, done = 0;
		while (done < ATOM_COUNT) {
			while (posted < ATOM_COUNT && posted - done < 32) {
				struct ibv_sge sge = { .addr = (uintptr_t)&res[posted], .length = 8, .lkey = c->mr->lkey };
				struct ibv_send_wr wr = { .wr_id = 1000 + posted, .sg_list = &sge, .num_sge = 1,
					.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
					.wr.atomic = { .remote_addr = c->peer.atom_addr, .rkey = c->peer.atom_rkey,
						       .compare_add = 3 } };
				post_send(c, 0, &wr);
				posted++;
			}
			wc = wait_wc(c);
			EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD && wc.byte_len == 8 &&
			       wc.wr_id == 1000 + done,
			       "fetch_add %u: %s opcode %d len %u", done, ibv_wc_status_str(wc.status), wc.opcode,
			       wc.byte_len);
			done++;
		}
		/* each FETCH_ADD saw a distinct previous value 0,3,6,...: executed exactly once */
		uint32_t bad = 0;
		for (unsigned i = 0; i < ATOM_COUNT; i++)
			bad += res[i] != (uint64_t)i * 3;
		EXPECT(bad == 0, "fetch_add results: %u wrong", bad);
		/* CMP_SWP: compare with the right value -> swapped; with a wrong one -> not */
		uint64_t expect = (uint64_t)ATOM_COUNT * 3;
		struct ibv_sge sge = { .addr = (uintptr_t)&res[0], .length = 8, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 5000, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = c->peer.atom_addr, .rkey = c->peer.atom_rkey,
				       .compare_add = expect, .swap = 0xFEEDFACECAFEBEEFull } };
		post_send(c, 0, &wr);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_COMP_SWAP && res[0] == expect,
		       "cmp_swp hit: %s old %lx", ibv_wc_status_str(wc.status), (unsigned long)res[0]);
		wr.wr_id = 5001;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 42;
		post_send(c, 0, &wr);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_SUCCESS && res[0] == 0xFEEDFACECAFEBEEFull,
		       "cmp_swp miss: %s old %lx", ibv_wc_status_str(wc.status), (unsigned long)res[0]);
	}
	oob_send(c, 1); /* server checks its counter */
	oob_recv(c);
	/* 5. WRITE into the server's MR that lacks remote write: REM_ACCESS_ERR,
	 * then the QP is in ERR and a later WR is flushed. */
	{
		memset(c->buf, 0x11, 512);
		struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = 512, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 6000, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = c->peer.ro_addr, .rkey = c->peer.ro_rkey } };
		post_send(c, 1, &wr);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 6000 && wc.qp_num == c->qp[1]->qp_num,
		       "write to read-only MR: got %s", ibv_wc_status_str(wc.status));
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qia;
		ibv_query_qp(c->qp[1], &qa, IBV_QP_STATE, &qia);
		EXPECT(qa.qp_state == IBV_QPS_ERR, "QP state after REM_ACCESS_ERR: %d", qa.qp_state);
		struct ibv_send_wr *bad;
		wr.wr_id = 6001;
		int rc = ibv_post_send(c->qp[1], &wr, &bad);
		if (rc == 0) {
			wc = wait_wc(c);
			EXPECT(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 6001,
			       "post after ERR: %s", ibv_wc_status_str(wc.status));
		} else {
			EXPECT(false, "post_send in ERR state returned %d (verbs allow posting; WR must flush)", rc);
		}
	}
	oob_send(c, 2); /* server checks its read-only memory */
	oob_recv(c);
	/* 6. SEND to a QP with no receive posted: RNR NAKs, rnr_retry = 2 -> after
	 * 3 RNR NAKs the WR completes with RNR_RETRY_EXC_ERR. */
	{
		struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = 100, .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 7000, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
		post_send(c, 2, &wr);
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_RNR_RETRY_EXC_ERR && wc.wr_id == 7000,
		       "send without receive: got %s", ibv_wc_status_str(wc.status));
	}
	oob_send(c, 3);
}

/* ---------------------------------------------------------------- server */
static void server(struct ctx *c)
{
	struct ibv_wc wc;
	uint8_t *rbuf = c->buf + BUF_SIZE - 4096; /* receive landing zone */
	for (unsigned k = 0; k < NSIZES; k++)
		post_recv(c, 0, 900 + k, rbuf + 64 * k, 64);
	post_recv(c, 0, 950, rbuf + 2048, 64); /* consumed by WRITE_WITH_IMM */
	oob_send(c, 0); /* receives are posted */
	for (unsigned k = 0; k < NSIZES; k++) {
		uint32_t len = sizes[k];
		wc = wait_wc(c);
		EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 900 + k &&
		       wc.byte_len == 32 && (wc.wc_flags & IBV_WC_WITH_IMM) &&
		       ntohl(wc.imm_data) == (0xC0DE0000u | k) && wc.qp_num == c->qp[0]->qp_num,
		       "recv %u: %s opcode %d len %u imm %x", k, ibv_wc_status_str(wc.status), wc.opcode,
		       wc.byte_len, ntohl(wc.imm_data));
		uint32_t bad = 0;
		for (int i = 0; i < 32; i++)
			bad += rbuf[64 * k + i] != (uint8_t)(0xA0 + i + k);
		EXPECT(bad == 0, "send payload %u: %u bytes differ", k, bad);
		/* the WRITE preceded the SEND on the same QP: its bytes are in place */
		bad = 0;
		for (uint32_t i = 0; i < len; i++)
			bad += c->buf[64 + i] != pattern(i, k);
		bad += c->buf[63] != 0;
		EXPECT(bad == 0, "write %u: %u bytes differ", len, bad);
		oob_send(c, k);
	}
	wc = wait_wc(c);
	EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 950 &&
	       (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0x12345678 && wc.byte_len == 5000,
	       "write_imm recv: %s opcode %d imm %x len %u", ibv_wc_status_str(wc.status), wc.opcode,
	       ntohl(wc.imm_data), wc.byte_len);
	uint32_t bad = 0;
	for (uint32_t i = 0; i < 5000; i++)
		bad += c->buf[8192 + i] != pattern(i, 77);
	EXPECT(bad == 0, "write_imm data: %u bytes differ", bad);
	/* fill for READs */
	for (uint32_t i = 0; i < (1u << 20) + 64; i++)
		c->buf[i] = pattern(i, 99);
	oob_send(c, 0);
	oob_recv(c);
	uint64_t counter;
	memcpy(&counter, c->atom, 8);
	EXPECT(counter == 0xFEEDFACECAFEBEEFull, "atomic target after cmp_swp: %lx", (unsigned long)counter);
	oob_send(c, 0);
	oob_recv(c);
	bad = 0;
	for (uint32_t i = 0; i < RO_SIZE; i++)
		bad += c->ro[i] != 0x5a;
	EXPECT(bad == 0, "read-only MR changed: %u bytes", bad);
	oob_send(c, 0);
	oob_recv(c);
	/* QP 2 never had a receive posted: no completion for it may exist */
	EXPECT(ibv_poll_cq(c->cq, 1, &wc) == 0, "unexpected completion on server");
}

int main(int argc, char **argv)
{
	const char *dev = "softrnic0";
	int port = 18600, opt;
	while ((opt = getopt(argc, argv, "d:p:h")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'p': port = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -d DEV [-p PORT] [SERVER_IP]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	const char *server_ip = optind < argc ? argv[optind] : NULL;
	struct ctx c;
	memset(&c, 0, sizeof(c));
	setup(&c, dev);
	c.sock = server_ip ? itest_connect(server_ip, port) : itest_listen(port);
	itest_xfer_or_die(c.sock, &c.me, sizeof(c.me), true);
	itest_xfer_or_die(c.sock, &c.peer, sizeof(c.peer), false);
	connect_qps(&c);
	if (server_ip) {
		oob_recv(&c); /* wait until the server posted its receives */
		client(&c);
	} else {
		server(&c);
	}
	for (int i = 0; i < NQP; i++)
		if (ibv_destroy_qp(c.qp[i]))
			EXPECT(false, "destroy qp %d", i);
	EXPECT(ibv_dereg_mr(c.mr) == 0 && ibv_dereg_mr(c.ro_mr) == 0 && ibv_dereg_mr(c.atom_mr) == 0, "dereg");
	EXPECT(ibv_destroy_cq(c.cq) == 0, "destroy cq");
	EXPECT(ibv_dealloc_pd(c.pd) == 0, "dealloc pd");
	EXPECT(ibv_close_device(c.ctx) == 0, "close device");
	free(c.buf);
	free(c.ro);
	free(c.atom);
	printf("%s: %d passed, %d failed\n", server_ip ? "client" : "server", passed, failed);
	return failed ? 1 : 0;
}
