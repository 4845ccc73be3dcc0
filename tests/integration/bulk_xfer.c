/*
 * bulk_xfer.c - two-process 1 GiB transfer of mixed RDMA WRITE, RDMA READ
 * and SEND over one RC QP whose PSNs start at 0xFFFF00 on both sides (so the
 * 24-bit PSN space wraps within the first MTUs and again every 16M packets),
 * with every byte verified (issue 3, "done when").
 *
 * Per round r (ROUNDS rounds, 32 MiB each, 1 GiB in all):
 *   client: RDMA WRITE 16 MiB (4 WRs) into the server's region r % 2,
 *           RDMA READ back 8 MiB of it (2 WRs), 128 SENDs of 64 KiB,
 *           all posted at once; waits for every completion and checks the
 *           READ bytes against the pattern written;
 *   server: has 128 receives posted, waits for them, checks every SEND byte
 *           and every byte of the WRITE region, then re-posts and tells the
 *           client over TCP that round r + 1 may start.
 *
 *   bulk_xfer -d DEV [-p PORT] [-m MTU]            server
 *   bulk_xfer -d DEV [-p PORT] [-m MTU] SERVER_IP  client
 *
 * An ordinary verbs program (<infiniband/verbs.h>); prints throughput and
 * "N passed, N failed". Requirements: PSN-01, PSN-02, PSN-03, PSN-17, V-04.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include "itest.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MIB        (1u << 20)
#define ROUNDS     32u
#define WR_BYTES   (16u * MIB)       /* WRITE per round */
#define WR_CHUNK   (4u * MIB)
#define RD_BYTES   (8u * MIB)        /* READ per round */
#define SEND_MSG   (64u * 1024u)
#define SEND_N     128u              /* 8 MiB of SENDs per round */
#define START_PSN  0xFFFF00u

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) { passed++; } else { failed++; \
	fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

struct peer_info {
	uint32_t qpn, psn;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
};

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;               /* client: src(16M) | rd(8M) | snd(8M); server: region0 | region1 | rcv(8M) */
	size_t len;
	struct peer_info me, peer;
	int sock;
	enum ibv_mtu mtu;
};

static void oob_send(struct ctx *c, uint32_t v) { itest_xfer_or_die(c->sock, &v, sizeof(v), true); }
static uint32_t oob_recv(struct ctx *c) { uint32_t v; itest_xfer_or_die(c->sock, &v, sizeof(v), false); return v; }

/* the pattern: 64-bit words depending on (stream, round, word index) */
static inline uint64_t pat(uint32_t stream, uint32_t round, uint64_t word)
{
	uint64_t x = word * 0x9E3779B97F4A7C15ull ^ ((uint64_t)stream << 56 | (uint64_t)round << 40);
	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ull;
	return x ^ (x >> 32);
}

static void pat_fill(uint8_t *p, size_t len, uint32_t stream, uint32_t round, uint64_t off)
{
	uint64_t *w = (uint64_t *)(void *)p;
	for (size_t i = 0; i < len / 8; i++)
		w[i] = pat(stream, round, off / 8 + i);
}

/* number of bytes that differ from the pattern */
static size_t pat_check(const uint8_t *p, size_t len, uint32_t stream, uint32_t round, uint64_t off)
{
	const uint64_t *w = (const uint64_t *)(const void *)p;
	size_t bad = 0;
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t want = pat(stream, round, off / 8 + i);
		if (w[i] != want)
			for (int b = 0; b < 8; b++)
				bad += ((w[i] >> (8 * b)) & 0xff) != ((want >> (8 * b)) & 0xff);
	}
	return bad;
}

static void setup(struct ctx *c, const char *devname, bool server)
{
	c->ctx = itest_open_dev(devname);
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = ibv_create_cq(c->ctx, 1024, NULL, NULL, 0);
	if (!c->pd || !c->cq)
		itest_die("pd/cq");
	c->len = server ? 2 * (size_t)WR_BYTES + SEND_N * (size_t)SEND_MSG
			: (size_t)WR_BYTES + RD_BYTES + SEND_N * (size_t)SEND_MSG;
	c->buf = aligned_alloc(4096, c->len);
	if (!c->buf)
		itest_die("aligned_alloc");
	memset(c->buf, 0, c->len);
	c->mr = ibv_reg_mr(c->pd, c->buf, c->len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!c->mr)
		itest_die("ibv_reg_mr");
	struct ibv_qp_init_attr ia = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = 256, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	c->qp = ibv_create_qp(c->pd, &ia);
	if (!c->qp)
		itest_die("ibv_create_qp");
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		itest_die("modify INIT");
	c->me.qpn = c->qp->qp_num;
	c->me.psn = START_PSN;
	if (ibv_query_gid(c->ctx, 1, 0, &c->me.gid))
		itest_die("ibv_query_gid");
	c->me.addr = (uintptr_t)c->buf;
	c->me.rkey = c->mr->rkey;
}

static void connect_qp(struct ctx *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = c->mtu, .dest_qp_num = c->peer.qpn,
		.rq_psn = c->peer.psn, .max_dest_rd_atomic = 16, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = c->peer.gid, .sgid_index = 0, .hop_limit = 64 } },
	};
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		itest_die("modify RTR");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = c->me.psn;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		itest_die("modify RTS");
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* wait for n completions (bounded: 120 s without progress); returns them in wc */
static void wait_wcs(struct ctx *c, struct ibv_wc *wc, unsigned n)
{
	unsigned got = 0;
	double last = now_s();
	while (got < n) {
		int k = ibv_poll_cq(c->cq, (int)(n - got), wc + got);
		if (k < 0)
			itest_die("ibv_poll_cq");
		if (k > 0) {
			got += (unsigned)k;
			last = now_s();
		} else if (now_s() - last > 120) {
			fprintf(stderr, "timeout: %u of %u completions\n", got, n);
			exit(3);
		}
	}
}

static void post(struct ctx *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(c->qp, wr, &bad);
	if (rc) {
		errno = rc;
		itest_die("ibv_post_send");
	}
}

static void client(struct ctx *c)
{
	uint8_t *src = c->buf, *rd = c->buf + WR_BYTES, *snd = rd + RD_BYTES;
	static struct ibv_wc wc[512];
	uint64_t bytes = 0;
	double t0 = now_s();
	for (uint32_t r = 0; r < ROUNDS; r++) {
		pat_fill(src, WR_BYTES, 1, r, 0);
		pat_fill(snd, SEND_N * (size_t)SEND_MSG, 2, r, 0);
		memset(rd, 0, RD_BYTES);
		uint64_t region = c->peer.addr + (uint64_t)(r % 2) * WR_BYTES;
		uint32_t rd_off = (r % 2) ? WR_BYTES - RD_BYTES : 0;   /* which half is read back */
		if (oob_recv(c) != r)
			itest_die("round sync");
		unsigned nwr = 0;
		for (uint32_t k = 0; k < WR_BYTES / WR_CHUNK; k++, nwr++) {
			struct ibv_sge sge = { (uintptr_t)src + k * WR_CHUNK, WR_CHUNK, c->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = 1000 + k, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = region + k * WR_CHUNK, .rkey = c->peer.rkey } };
			post(c, &wr);
		}
		for (uint32_t k = 0; k < RD_BYTES / WR_CHUNK; k++, nwr++) {
			struct ibv_sge sge = { (uintptr_t)rd + k * WR_CHUNK, WR_CHUNK, c->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = 2000 + k, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = region + rd_off + k * WR_CHUNK, .rkey = c->peer.rkey } };
			post(c, &wr);
		}
		for (uint32_t k = 0; k < SEND_N; k++, nwr++) {
			struct ibv_sge sge = { (uintptr_t)snd + k * SEND_MSG, SEND_MSG, c->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = 3000 + k, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
			post(c, &wr);
		}
		wait_wcs(c, wc, nwr);
		unsigned bad_wc = 0;
		for (unsigned i = 0; i < nwr; i++) {
			/* completions in posting order, all successful */
			uint64_t want = i < 4 ? 1000 + i : i < 6 ? 2000 + (i - 4) : 3000 + (i - 6);
			bad_wc += wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != want;
		}
		EXPECT(bad_wc == 0, "round %u: %u bad completions (first: %s wr_id %lu)", r, bad_wc,
		       ibv_wc_status_str(wc[0].status), (unsigned long)wc[0].wr_id);
		size_t bad = pat_check(rd, RD_BYTES, 1, r, rd_off);
		EXPECT(bad == 0, "round %u: READ back %zu bytes differ", r, bad);
		bytes += WR_BYTES + RD_BYTES + SEND_N * (uint64_t)SEND_MSG;
	}
	if (oob_recv(c) != ROUNDS)   /* the server checked the last round */
		itest_die("final sync");
	double dt = now_s() - t0;
	printf("client: %llu bytes (WRITE %u MiB, READ %u MiB, SEND %u MiB) in %.2f s: %.1f MB/s\n",
	       (unsigned long long)bytes, ROUNDS * WR_BYTES / MIB, ROUNDS * RD_BYTES / MIB,
	       ROUNDS * SEND_N * SEND_MSG / MIB, dt, (double)bytes / dt / 1e6);
	EXPECT(bytes == 1ull << 30, "total %llu", (unsigned long long)bytes);
}

static void post_recvs(struct ctx *c, uint8_t *rcv)
{
	for (uint32_t k = 0; k < SEND_N; k++) {
		struct ibv_sge sge = { (uintptr_t)rcv + k * SEND_MSG, SEND_MSG, c->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 5000 + k, .sg_list = &sge, .num_sge = 1 }, *bad;
		if (ibv_post_recv(c->qp, &wr, &bad))
			itest_die("ibv_post_recv");
	}
}

static void server(struct ctx *c)
{
	uint8_t *rcv = c->buf + 2 * (size_t)WR_BYTES;
	static struct ibv_wc wc[SEND_N];
	for (uint32_t r = 0; r < ROUNDS; r++) {
		memset(rcv, 0, SEND_N * (size_t)SEND_MSG);
		post_recvs(c, rcv);
		oob_send(c, r);
		wait_wcs(c, wc, SEND_N);
		unsigned bad_wc = 0;
		for (unsigned i = 0; i < SEND_N; i++)
			bad_wc += wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV ||
				  wc[i].wr_id != 5000 + i || wc[i].byte_len != SEND_MSG;
		EXPECT(bad_wc == 0, "round %u: %u bad receive completions", r, bad_wc);
		size_t bad = pat_check(rcv, SEND_N * (size_t)SEND_MSG, 2, r, 0);
		EXPECT(bad == 0, "round %u: SEND data %zu bytes differ", r, bad);
		/* the WRITE came before the SENDs in PSN order: it is in place */
		bad = pat_check(c->buf + (size_t)(r % 2) * WR_BYTES, WR_BYTES, 1, r, 0);
		EXPECT(bad == 0, "round %u: WRITE data %zu bytes differ", r, bad);
	}
	oob_send(c, ROUNDS);
}

int main(int argc, char **argv)
{
	const char *dev = "softrnic0";
	int port = 18700, opt, mtu = 4096;
	while ((opt = getopt(argc, argv, "d:p:m:h")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'm': mtu = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -d DEV [-p PORT] [-m MTU] [SERVER_IP]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	const char *server_ip = optind < argc ? argv[optind] : NULL;
	struct ctx c;
	memset(&c, 0, sizeof(c));
	c.mtu = mtu == 256 ? IBV_MTU_256 : mtu == 512 ? IBV_MTU_512 : mtu == 1024 ? IBV_MTU_1024 :
		mtu == 2048 ? IBV_MTU_2048 : IBV_MTU_4096;
	setup(&c, dev, !server_ip);
	c.sock = server_ip ? itest_connect(server_ip, port) : itest_listen(port);
	itest_xfer_or_die(c.sock, &c.me, sizeof(c.me), true);
	itest_xfer_or_die(c.sock, &c.peer, sizeof(c.peer), false);
	EXPECT(c.peer.psn == START_PSN, "peer start PSN %x", c.peer.psn);
	connect_qp(&c);
	if (server_ip)
		client(&c);
	else
		server(&c);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	EXPECT(ibv_query_qp(c.qp, &qa, IBV_QP_STATE, &qia) == 0 && qa.qp_state == IBV_QPS_RTS,
	       "QP state %d at the end", qa.qp_state);
	EXPECT(ibv_destroy_qp(c.qp) == 0, "destroy qp");
	EXPECT(ibv_dereg_mr(c.mr) == 0, "dereg");
	EXPECT(ibv_destroy_cq(c.cq) == 0, "destroy cq");
	EXPECT(ibv_dealloc_pd(c.pd) == 0, "dealloc pd");
	EXPECT(ibv_close_device(c.ctx) == 0, "close device");
	free(c.buf);
	printf("%s: %d passed, %d failed\n", server_ip ? "client" : "server", passed, failed);
	return failed ? 1 : 0;
}
