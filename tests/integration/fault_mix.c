/*
 * fault_mix.c - the traffic of the fault matrix (tests/integration/
 * test_fault_*.sh) and of the soak test: two processes, meant to run behind
 * `softrnic fabric` with an impairment profile, checking that softrnic keeps
 * every byte and completes every work request exactly once.
 *
 * RC mode (default): NQP RC QPs. Round r, QP q, size s = SIZES[(r + q) % n]
 * (1 byte .. 1 MiB, capped by -M), the client posts, all signaled:
 *   RDMA WRITE  s bytes (pattern 1,q,r)      -> server region W[q]
 *   RDMA READ   s bytes of server region R[q] (fixed pattern 3,q) at an
 *               offset that moves with r
 *   SEND        s bytes (pattern 2,q,r)      -> a receive posted by the server
 *   FETCH_ADD   q*1000 + r + 1 on ONE counter that every QP adds to
 *   CMP_SWP     W[q]'s swap word: compare chain(q,r), swap chain(q,r+1)
 * and checks the 5 completions (in order, status, opcode, byte_len), the
 * READ bytes, the CMP_SWP old value (always chain(q,r): each swap happened
 * exactly once) and that the FETCH_ADD old values grow. The server checks
 * every byte of W[q] and of the received SEND, and at the end that the
 * counter is exactly the sum of all adds (an atomic executed twice or never
 * would show) and every swap word is at the end of its chain. Rounds repeat
 * until -D seconds have passed or -R rounds are done. The two sides
 * synchronise per round over TCP (not through the fabric).
 *
 * -e (client): the fault is unrecoverable (link down for longer than the
 * retry budget, peer killed). The client runs rounds until completions fail
 * and then requires, for every QP: successes, then exactly one
 * RETRY_EXC_ERR, then WR_FLUSH_ERR for every remaining WR (each WR exactly
 * once), the QP in ERR, and a WR posted afterwards flushed. The server of
 * such a run exits 0 when the client tells it to stop (or is killed).
 *
 * -u uc|ud: unreliable transports under loss. The client sends -n messages
 * (UC: SEND and RDMA WRITE with immediate, up to 16 KiB, several packets;
 * UD: SEND up to the MTU), each carrying (magic, sequence number, length,
 * checksum) and a payload derived from the sequence number. The server
 * accepts a lost message but fails on any delivered one that is corrupt,
 * misplaced (a WRITE slot holding another sequence number) or delivered
 * twice, and requires that most messages arrive.
 *
 *   fault_mix -d DEV -p PORT [options]            server
 *   fault_mix -d DEV -p PORT [options] SERVER_IP  client
 * Options (both sides must agree on -q -M -u -n -m): -q NQP (4), -M MAXSIZE
 * (1048576), -D SECS (5), -R ROUNDS (1000000), -m MTU (4096), -t TIMEOUT
 * (14: 67 ms), -c RETRY_CNT (7), -e, -u uc|ud, -n MSGS (600), -W SECS
 * (wall-clock bound of the whole run, 120), -L (report RSS after warm-up and
 * at the end; fail if it grew more than 8 MiB).
 *
 * Prints "server|client: N passed, N failed"; exit 0 iff no check failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include "itest.h"
#include <softrnic/softrnic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;
static const char *role = "?";
#define EXPECT(cond, ...) do { if (cond) { passed++; } else { failed++; \
	fprintf(stderr, "FAIL %s %s:%d: %s: ", role, __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define MAXQP 64
static const uint32_t SIZES[] = { 1, 4096, 65536, 7, 1048576, 1000, 4097, 300000, 64, 131072 };
#define NSIZES (sizeof(SIZES) / sizeof(SIZES[0]))

/* options */
static int nqp = 4, mtu = 4096, timeout_exp = 14, retry_cnt = 7, nmsg = 600;
static uint32_t maxsize = 1u << 20;
static double duration = 5, wall_limit = 120;
static uint32_t max_rounds = 1000000;
static bool expect_err, leak_check;
static char umode;   /* 0: RC, 'c': UC, 'd': UD */

enum { OOB_GO = 1, OOB_DONE, OOB_LAST, OOB_FIN, OOB_ABORT, OOB_SENT };

struct peer_info {
	uint32_t qpn[MAXQP], psn[MAXQP];
	union ibv_gid gid;
	uint64_t addr;          /* server: base of the data MR */
	uint32_t rkey;
	uint64_t atom_addr;     /* server: counter + swap words */
	uint32_t atom_rkey;
};

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[MAXQP];
	struct ibv_cq *rcq;
	struct ibv_qp *qp[MAXQP];
	struct ibv_mr *mr, *atom_mr;
	struct ibv_ah *ah;
	uint8_t *buf;
	uint64_t *atom;         /* server: [0] counter, [1+q] swap words; client: results */
	size_t len;
	struct peer_info me, peer;
	int sock;
	double t0;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool oob_send(struct ctx *c, uint32_t type, uint32_t v)
{
	uint32_t m[2] = { type, v };
	return itest_xfer(c->sock, m, sizeof m, true);
}
static bool oob_recv(struct ctx *c, uint32_t *type, uint32_t *v)
{
	uint32_t m[2];
	if (!itest_xfer(c->sock, m, sizeof m, false))
		return false;
	*type = m[0];
	*v = m[1];
	return true;
}

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 29;
	x *= 0x94D049BB133111EBull;
	return x ^ (x >> 32);
}
/* byte i of the stream (kind, q, r): any byte at any offset, any length */
static inline uint8_t pat_byte(uint32_t kind, uint32_t q, uint32_t r, uint64_t i)
{
	return (uint8_t)(mix(((uint64_t)kind << 56) ^ ((uint64_t)q << 48) ^ ((uint64_t)r << 32) ^
			     (i >> 3)) >> (8 * (i & 7)));
}
static void pat_fill(uint8_t *p, size_t len, uint32_t kind, uint32_t q, uint32_t r, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat_byte(kind, q, r, off + i);
}
static size_t pat_bad(const uint8_t *p, size_t len, uint32_t kind, uint32_t q, uint32_t r, uint64_t off)
{
	size_t bad = 0;
	for (size_t i = 0; i < len; i++)
		bad += p[i] != pat_byte(kind, q, r, off + i);
	return bad;
}
static uint64_t chain(uint32_t q, uint32_t r) { return mix(((uint64_t)q << 32) | r) | 1; }
static uint32_t size_of(uint32_t q, uint32_t r)
{
	uint32_t s = SIZES[(r + q) % NSIZES];
	return s > maxsize ? maxsize : s;
}
static uint64_t add_of(uint32_t q, uint32_t r) { return (uint64_t)q * 1000 + r + 1; }

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, res = 0;
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static void check_wall(struct ctx *c)
{
	if (now_s() - c->t0 > wall_limit) {
		fprintf(stderr, "%s: wall-clock bound of %.0f s exceeded (hang?)\n", role, wall_limit);
		exit(3);
	}
}

static void print_counters(struct ctx *c);

/* ---- setup ---------------------------------------------------------------- */
/* server data MR per QP: W (maxsize + 8) | R (maxsize) | RECV (maxsize + 64);
 * client: WSRC | RDST | SSRC */
static size_t per_qp(void) { return 3 * (size_t)maxsize + 4096; }
static uint8_t *region(struct ctx *c, int q, int k)
{
	return c->buf + (size_t)q * per_qp() + (size_t)k * ((size_t)maxsize + 1024);
}
static uint64_t peer_region(struct ctx *c, int q, int k)
{
	return c->peer.addr + (uint64_t)q * per_qp() + (uint64_t)k * ((uint64_t)maxsize + 1024);
}

static enum ibv_mtu mtu_enum(int m)
{
	return m == 256 ? IBV_MTU_256 : m == 512 ? IBV_MTU_512 : m == 1024 ? IBV_MTU_1024 :
	       m == 2048 ? IBV_MTU_2048 : IBV_MTU_4096;
}

static void setup(struct ctx *c, const char *devname, bool server)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_device *dev = NULL;
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			dev = list[i];
	if (!dev)
		itest_die("device not found");
	c->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!c->ctx)
		itest_die("ibv_open_device");
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd)
		itest_die("pd");
	c->len = umode ? 2048 * 16384 + 4096 : (size_t)nqp * per_qp();
	c->buf = aligned_alloc(4096, (c->len + 4095) & ~(size_t)4095);
	c->atom = aligned_alloc(4096, 4096);
	if (!c->buf || !c->atom)
		itest_die("aligned_alloc");
	memset(c->buf, 0, c->len);
	memset(c->atom, 0, 4096);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	c->mr = ibv_reg_mr(c->pd, c->buf, c->len, rw);
	c->atom_mr = ibv_reg_mr(c->pd, c->atom, 4096, rw | IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr || !c->atom_mr)
		itest_die("ibv_reg_mr");
	int nq = umode ? 1 : nqp;
	c->rcq = ibv_create_cq(c->ctx, 4096, NULL, NULL, 0);
	if (!c->rcq)
		itest_die("cq");
	for (int q = 0; q < nq; q++) {
		c->cq[q] = ibv_create_cq(c->ctx, 256, NULL, NULL, 0);
		if (!c->cq[q])
			itest_die("cq");
		struct ibv_qp_init_attr ia = {
			.send_cq = c->cq[q], .recv_cq = c->rcq,
			.qp_type = umode == 'c' ? IBV_QPT_UC : umode == 'd' ? IBV_QPT_UD : IBV_QPT_RC,
			.cap = { .max_send_wr = 64, .max_recv_wr = umode ? 1024 : 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		c->qp[q] = ibv_create_qp(c->pd, &ia);
		if (!c->qp[q])
			itest_die("ibv_create_qp");
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
			.qp_access_flags = rw | IBV_ACCESS_REMOTE_ATOMIC, .qkey = 0x11111111 };
		int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		mask |= umode == 'd' ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
		if (ibv_modify_qp(c->qp[q], &a, mask))
			itest_die("modify INIT");
		c->me.qpn[q] = c->qp[q]->qp_num;
		c->me.psn[q] = (uint32_t)(0xFFFF00 + q * 97 + (server ? 5 : 0)) & 0xFFFFFF;
	}
	if (ibv_query_gid(c->ctx, 1, 0, &c->me.gid))
		itest_die("ibv_query_gid");
	c->me.addr = (uintptr_t)c->buf;
	c->me.rkey = c->mr->rkey;
	c->me.atom_addr = (uintptr_t)c->atom;
	c->me.atom_rkey = c->atom_mr->rkey;
}

static void connect_qps(struct ctx *c)
{
	int nq = umode ? 1 : nqp;
	for (int q = 0; q < nq; q++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = mtu_enum(mtu),
			.dest_qp_num = c->peer.qpn[q], .rq_psn = c->peer.psn[q],
			.max_dest_rd_atomic = 16, .min_rnr_timer = 1,
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = c->peer.gid, .sgid_index = 0, .hop_limit = 64 } },
		};
		int mask = IBV_QP_STATE;
		if (umode != 'd')
			mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (!umode)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		if (ibv_modify_qp(c->qp[q], &a, mask))
			itest_die("modify RTR");
		a.qp_state = IBV_QPS_RTS;
		a.timeout = (uint8_t)timeout_exp;
		a.retry_cnt = (uint8_t)retry_cnt;
		a.rnr_retry = 7;
		a.sq_psn = c->me.psn[q];
		a.max_rd_atomic = 16;
		mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (!umode)
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		if (ibv_modify_qp(c->qp[q], &a, mask))
			itest_die("modify RTS");
	}
	if (umode == 'd') {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
			.grh = { .dgid = c->peer.gid, .sgid_index = 0, .hop_limit = 64 } };
		c->ah = ibv_create_ah(c->pd, &aa);
		if (!c->ah)
			itest_die("ibv_create_ah");
	}
}

static void post_send(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(qp, wr, &bad);
	if (rc) {
		errno = rc;
		itest_die("ibv_post_send");
	}
}

static void post_recv(struct ctx *c, struct ibv_qp *qp, uint64_t id, uint8_t *p, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)p, len, c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (ibv_post_recv(qp, &wr, &bad))
		itest_die("ibv_post_recv");
}

/* poll one CQ until it returns a completion; bounded (30 s without one) */
static bool poll_one(struct ctx *c, struct ibv_cq *cq, struct ibv_wc *wc, double limit)
{
	double last = now_s();
	for (;;) {
		int k = ibv_poll_cq(cq, 1, wc);
		if (k < 0)
			itest_die("ibv_poll_cq");
		if (k == 1)
			return true;
		if (now_s() - last > limit)
			return false;
		check_wall(c);
	}
}

/* ---- RC ------------------------------------------------------------------- */
enum { K_WRITE, K_READ, K_SEND, K_FADD, K_CSWP, K_N };
static const enum ibv_wc_opcode k_wcop[K_N] = { IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_SEND,
						IBV_WC_FETCH_ADD, IBV_WC_COMP_SWAP };

static uint32_t read_off(uint32_t q, uint32_t r, uint32_t s)
{
	uint32_t span = maxsize - s + 1;
	return (uint32_t)((mix(((uint64_t)q << 32) | r) % span));
}

static void post_round(struct ctx *c, int q, uint32_t r)
{
	uint32_t s = size_of((uint32_t)q, r);
	uint8_t *wsrc = region(c, q, 0), *rdst = region(c, q, 1), *ssrc = region(c, q, 2);
	pat_fill(wsrc, s, 1, (uint32_t)q, r, 0);
	pat_fill(ssrc, s, 2, (uint32_t)q, r, 0);
	memset(rdst, 0, s);
	uint64_t id = ((uint64_t)q << 40) | ((uint64_t)r << 8);
	struct ibv_sge sg[K_N] = {
		{ (uintptr_t)wsrc, s, c->mr->lkey }, { (uintptr_t)rdst, s, c->mr->lkey },
		{ (uintptr_t)ssrc, s, c->mr->lkey },
		{ (uintptr_t)&c->atom[2 * q], 8, c->atom_mr->lkey },
		{ (uintptr_t)&c->atom[2 * q + 1], 8, c->atom_mr->lkey },
	};
	c->atom[2 * q] = c->atom[2 * q + 1] = 0xdeadbeef;
	struct ibv_send_wr wr[K_N];
	memset(wr, 0, sizeof wr);
	for (int k = 0; k < K_N; k++) {
		wr[k].wr_id = id | (uint64_t)k;
		wr[k].sg_list = &sg[k];
		wr[k].num_sge = 1;
		wr[k].send_flags = IBV_SEND_SIGNALED;
		wr[k].next = k + 1 < K_N ? &wr[k + 1] : NULL;
	}
	wr[K_WRITE].opcode = IBV_WR_RDMA_WRITE;
	wr[K_WRITE].wr.rdma.remote_addr = peer_region(c, q, 0);
	wr[K_WRITE].wr.rdma.rkey = c->peer.rkey;
	wr[K_READ].opcode = IBV_WR_RDMA_READ;
	wr[K_READ].wr.rdma.remote_addr = peer_region(c, q, 1) + read_off((uint32_t)q, r, s);
	wr[K_READ].wr.rdma.rkey = c->peer.rkey;
	wr[K_SEND].opcode = IBV_WR_SEND;
	wr[K_FADD].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[K_FADD].wr.atomic.remote_addr = c->peer.atom_addr;
	wr[K_FADD].wr.atomic.rkey = c->peer.atom_rkey;
	wr[K_FADD].wr.atomic.compare_add = add_of((uint32_t)q, r);
	wr[K_CSWP].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr[K_CSWP].wr.atomic.remote_addr = c->peer.atom_addr + 8 * (1 + (uint64_t)q);
	wr[K_CSWP].wr.atomic.rkey = c->peer.atom_rkey;
	wr[K_CSWP].wr.atomic.compare_add = chain((uint32_t)q, r);
	wr[K_CSWP].wr.atomic.swap = chain((uint32_t)q, r + 1);
	post_send(c->qp[q], wr);
}

struct qp_err_state {
	int n_success, n_retry_exc, n_flush, n_other;
	bool bad_order;
};

/* client round: returns false if the round failed (error mode) */
static bool client_round(struct ctx *c, uint32_t r, uint64_t *last_fadd, struct qp_err_state *es)
{
	bool all_ok = true;
	for (int q = 0; q < nqp; q++)
		post_round(c, q, r);
	for (int q = 0; q < nqp; q++) {
		uint32_t s = size_of((uint32_t)q, r);
		for (int k = 0; k < K_N; k++) {
			struct ibv_wc wc;
			bool got = poll_one(c, c->cq[q], &wc, 30);
			EXPECT(got, "qp %d round %u: no completion for WR %d within 30 s (hang)", q, r, k);
			if (!got)
				exit(3);
			uint64_t want_id = ((uint64_t)q << 40) | ((uint64_t)r << 8) | (uint64_t)k;
			if (expect_err) {
				/* exactly once, in order; statuses SUCCESS* RETRY_EXC FLUSH* */
				if (wc.wr_id != want_id)
					es[q].bad_order = true;
				if (wc.status == IBV_WC_SUCCESS) {
					if (es[q].n_retry_exc || es[q].n_flush || es[q].n_other)
						es[q].bad_order = true;
					es[q].n_success++;
				} else if (wc.status == IBV_WC_RETRY_EXC_ERR) {
					if (es[q].n_retry_exc || es[q].n_flush)
						es[q].bad_order = true;
					es[q].n_retry_exc++;
				} else if (wc.status == IBV_WC_WR_FLUSH_ERR) {
					if (!es[q].n_retry_exc)
						es[q].bad_order = true;
					es[q].n_flush++;
				} else {
					fprintf(stderr, "client: qp %d round %u WR %d: unexpected %s\n", q, r,
						k, ibv_wc_status_str(wc.status));
					es[q].n_other++;
				}
				if (wc.status != IBV_WC_SUCCESS) {
					all_ok = false;
					continue;
				}
			} else {
				EXPECT(wc.wr_id == want_id && wc.status == IBV_WC_SUCCESS &&
				       wc.opcode == k_wcop[k],
				       "qp %d round %u WR %d: wr_id %llx status %s opcode %d", q, r, k,
				       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode);
				if (wc.status != IBV_WC_SUCCESS) {
					print_counters(c);
					exit(1);
				}
			}
			if (k == K_READ && wc.status == IBV_WC_SUCCESS) {
				EXPECT(wc.byte_len == s, "READ byte_len %u != %u", wc.byte_len, s);
				size_t bad = pat_bad(region(c, q, 1), s, 3, (uint32_t)q, 0, read_off((uint32_t)q, r, s));
				EXPECT(bad == 0, "qp %d round %u: READ %u bytes: %zu differ", q, r, s, bad);
			}
			if (k == K_FADD && wc.status == IBV_WC_SUCCESS) {
				/* the shared counter only grows: each QP sees it grow */
				uint64_t old = c->atom[2 * q];
				EXPECT(r == 0 || old > last_fadd[q], "qp %d round %u: FETCH_ADD returned %llu "
				       "after %llu", q, r, (unsigned long long)old,
				       (unsigned long long)last_fadd[q]);
				last_fadd[q] = old;
			}
			if (k == K_CSWP && wc.status == IBV_WC_SUCCESS)
				EXPECT(c->atom[2 * q + 1] == chain((uint32_t)q, r),
				       "qp %d round %u: CMP_SWP returned %llx, want %llx (a swap lost or done twice)",
				       q, r, (unsigned long long)c->atom[2 * q + 1],
				       (unsigned long long)chain((uint32_t)q, r));
		}
	}
	return all_ok;
}

static void client_rc(struct ctx *c)
{
	static struct qp_err_state es[MAXQP];
	static uint64_t last_fadd[MAXQP];
	uint64_t bytes = 0;
	uint32_t r = 0, t, v;
	bool errored = false, peer_gone = false;
	long rss_warm = 0;
	double start = now_s();
	for (;; r++) {
		if (!oob_recv(c, &t, &v)) {
			/* the server died (peer killed): its QPs are gone; post the
			 * round anyway - it must fail with RETRY_EXC_ERR, not hang */
			if (!expect_err)
				itest_die("round sync");
			printf("client: the server is gone before round %u\n", r);
			peer_gone = true;
		} else if (t != OOB_GO || v != r) {
			itest_die("round sync");
		}
		bool ok = client_round(c, r, last_fadd, es);
		for (int q = 0; q < nqp; q++)
			bytes += 3ull * size_of((uint32_t)q, r);
		if (!ok) {
			errored = true;
			break;
		}
		bool last = r + 1 >= max_rounds || now_s() - start >= duration;
		if (leak_check && !rss_warm && now_s() - start >= duration * 0.25)
			rss_warm = rss_kb();
		if (peer_gone) {
			EXPECT(!peer_gone, "round %u succeeded with the server gone", r);
			break;
		}
		oob_send(c, last ? OOB_LAST : OOB_DONE, r);
		if (last)
			break;
	}
	double dt = now_s() - start;
	if (expect_err) {
		EXPECT(errored, "the fault was expected to be unrecoverable, but %u rounds succeeded", r + 1);
		EXPECT(r >= 1, "no round completed before the fault (%u)", r);
		printf("client: error after %u good rounds, %.2f s\n", r, dt);
		for (int q = 0; q < nqp && errored; q++) {
			if (es[q].n_success == K_N * (int)(r + 1) && es[q].n_retry_exc == 0 &&
			    es[q].n_flush == 0 && es[q].n_other == 0 && !es[q].bad_order) {
				/* this QP finished its whole round before the fault
				 * struck (the peer died mid-round): its next WR meets
				 * the fault and must end in RETRY_EXC_ERR, not hang */
				struct ibv_sge s0 = { (uintptr_t)region(c, q, 0), 8, c->mr->lkey };
				struct ibv_send_wr w0 = { .wr_id = 0xF0u, .sg_list = &s0, .num_sge = 1,
					.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
				post_send(c->qp[q], &w0);
				struct ibv_wc wc0;
				EXPECT(poll_one(c, c->cq[q], &wc0, 30) && wc0.wr_id == 0xF0u &&
				       wc0.status == IBV_WC_RETRY_EXC_ERR,
				       "qp %d: a WR after the fault did not end in RETRY_EXC_ERR", q);
			} else {
				EXPECT(!es[q].bad_order && es[q].n_other == 0 && es[q].n_retry_exc == 1 &&
				       es[q].n_success + es[q].n_retry_exc + es[q].n_flush == K_N * (int)(r + 1),
				       "qp %d: %d success, %d RETRY_EXC_ERR, %d flushed, %d other, order %s", q,
				       es[q].n_success, es[q].n_retry_exc, es[q].n_flush, es[q].n_other,
				       es[q].bad_order ? "WRONG" : "ok");
			}
			struct ibv_qp_attr qa;
			struct ibv_qp_init_attr qia;
			EXPECT(ibv_query_qp(c->qp[q], &qa, IBV_QP_STATE, &qia) == 0 &&
			       qa.qp_state == IBV_QPS_ERR, "qp %d state %d, want ERR", q, qa.qp_state);
			/* a WR posted to a QP in ERR is flushed */
			struct ibv_sge sge = { (uintptr_t)region(c, q, 0), 8, c->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = 0xF1u, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
			post_send(c->qp[q], &wr);
			struct ibv_wc wc;
			EXPECT(poll_one(c, c->cq[q], &wc, 10) && wc.wr_id == 0xF1u &&
			       wc.status == IBV_WC_WR_FLUSH_ERR, "qp %d: WR after ERR not flushed", q);
			struct ibv_wc extra;
			EXPECT(ibv_poll_cq(c->cq[q], 1, &extra) == 0, "qp %d: an extra completion", q);
		}
		oob_send(c, OOB_ABORT, r);   /* the server may be gone: fine */
		return;
	}
	if (!oob_recv(c, &t, &v) || t != OOB_FIN)
		itest_die("final sync");
	for (int q = 0; q < nqp; q++) {
		struct ibv_wc extra;
		EXPECT(ibv_poll_cq(c->cq[q], 1, &extra) == 0, "qp %d: an extra completion", q);
	}
	printf("client: %u rounds x %d QPs, %.1f MB moved (WRITE+READ+SEND) in %.2f s: %.1f MB/s\n",
	       r + 1, nqp, (double)bytes / 1e6, dt, (double)bytes / dt / 1e6);
	printf("client: goodput_bytes=%llu seconds=%.3f\n", (unsigned long long)bytes, dt);
	if (leak_check) {
		long end = rss_kb();
		printf("client: rss after warm-up %ld kB, at the end %ld kB\n", rss_warm, end);
		EXPECT(rss_warm > 0 && end - rss_warm < 8192, "RSS grew from %ld to %ld kB", rss_warm, end);
	}
}

static void server_rc(struct ctx *c)
{
	uint64_t sum = 0;
	long rss_warm = 0;
	double start = now_s();
	/* R regions hold the fixed READ pattern; swap words start their chains */
	for (int q = 0; q < nqp; q++) {
		pat_fill(region(c, q, 1), maxsize, 3, (uint32_t)q, 0, 0);
		c->atom[1 + q] = chain((uint32_t)q, 0);
	}
	for (uint32_t r = 0;; r++) {
		for (int q = 0; q < nqp; q++)
			post_recv(c, c->qp[q], ((uint64_t)q << 32) | r, region(c, q, 2), maxsize + 64);
		oob_send(c, OOB_GO, r);
		uint32_t t, v;
		if (!oob_recv(c, &t, &v)) {
			if (expect_err) {
				printf("server: client gone after round %u\n", r);
				return;
			}
			print_counters(c);
			itest_die("round sync");
		}
		if (t == OOB_ABORT) {
			printf("server: client aborted in round %u (expected fault)\n", r);
			EXPECT(expect_err, "unexpected abort");
			return;
		}
		if ((t != OOB_DONE && t != OOB_LAST) || v != r)
			itest_die("round sync");
		/* the client saw every WR complete: the data is in place */
		bool seen[MAXQP] = { false };
		for (int q = 0; q < nqp; q++) {
			struct ibv_wc wc;
			EXPECT(poll_one(c, c->rcq, &wc, 10), "round %u: receive %d missing", r, q);
			int wq = (int)(wc.wr_id >> 32);
			EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			       (uint32_t)wc.wr_id == r && wq < nqp && !seen[wq] &&
			       wc.byte_len == size_of((uint32_t)wq, r),
			       "round %u: receive wr_id %llx status %s len %u", r,
			       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len);
			if (wq < nqp)
				seen[wq] = true;
		}
		for (int q = 0; q < nqp; q++) {
			uint32_t s = size_of((uint32_t)q, r);
			size_t bad = pat_bad(region(c, q, 2), s, 2, (uint32_t)q, r, 0);
			EXPECT(bad == 0, "qp %d round %u: SEND %u bytes: %zu differ", q, r, s, bad);
			bad = pat_bad(region(c, q, 0), s, 1, (uint32_t)q, r, 0);
			EXPECT(bad == 0, "qp %d round %u: WRITE %u bytes: %zu differ", q, r, s, bad);
			bad = pat_bad(region(c, q, 1), maxsize, 3, (uint32_t)q, 0, 0);
			EXPECT(bad == 0, "qp %d round %u: READ source changed (%zu bytes)", q, r, bad);
			EXPECT(c->atom[1 + q] == chain((uint32_t)q, r + 1),
			       "qp %d round %u: swap word %llx", q, r, (unsigned long long)c->atom[1 + q]);
			sum += add_of((uint32_t)q, r);
		}
		EXPECT(c->atom[0] == sum, "round %u: FETCH_ADD counter %llu, want exactly %llu", r,
		       (unsigned long long)c->atom[0], (unsigned long long)sum);
		if (leak_check && !rss_warm && now_s() - start >= duration * 0.25)
			rss_warm = rss_kb();
		if (t == OOB_LAST) {
			printf("server: %u rounds verified, FETCH_ADD counter %llu = sum of %u adds\n", r + 1,
			       (unsigned long long)c->atom[0], (r + 1) * (unsigned)nqp);
			struct ibv_wc extra;
			EXPECT(ibv_poll_cq(c->rcq, 1, &extra) == 0, "an extra receive completion");
			if (leak_check) {
				long end = rss_kb();
				printf("server: rss after warm-up %ld kB, at the end %ld kB\n", rss_warm, end);
				EXPECT(rss_warm > 0 && end - rss_warm < 8192, "RSS grew from %ld to %ld kB",
				       rss_warm, end);
			}
			oob_send(c, OOB_FIN, r);
			return;
		}
	}
}

/* ---- UC / UD ---------------------------------------------------------------- */
#define U_SLOT   16384u
#define U_NSLOT  2048u
#define U_MAGIC  0x5EC0FA17u

static uint32_t u_size(uint32_t seq)
{
	uint32_t max = umode == 'd' ? (uint32_t)mtu : U_SLOT;
	return 16 + (uint32_t)(mix(seq) % (max - 16 + 1));
}
static uint32_t u_sum(const uint8_t *p, uint32_t len)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}
static void u_fill(uint8_t *p, uint32_t seq)
{
	uint32_t len = u_size(seq);
	pat_fill(p + 16, len - 16, 7, 0, seq, 0);
	uint32_t h[4] = { U_MAGIC, seq, len, u_sum(p + 16, len - 16) };
	memcpy(p, h, 16);
}
/* 0 if p holds message seq (or, with seq == ~0, any intact message) */
static int u_check(const uint8_t *p, uint32_t len, uint32_t *seq_out)
{
	uint32_t h[4];
	if (len < 16)
		return -1;
	memcpy(h, p, 16);
	if (h[0] != U_MAGIC || h[2] != len || h[1] >= U_NSLOT || u_size(h[1]) != len)
		return -2;
	if (h[3] != u_sum(p + 16, len - 16) || pat_bad(p + 16, len - 16, 7, 0, h[1], 0))
		return -3;
	*seq_out = h[1];
	return 0;
}

static void client_u(struct ctx *c)
{
	uint32_t t, v;
	if (!oob_recv(c, &t, &v) || t != OOB_GO)
		itest_die("sync");
	int outstanding = 0;
	for (uint32_t seq = 0; seq < (uint32_t)nmsg; seq++) {
		uint8_t *p = c->buf + (size_t)(seq % 64) * U_SLOT;
		while (outstanding >= 32) {
			struct ibv_wc wc;
			EXPECT(poll_one(c, c->cq[0], &wc, 10) && wc.status == IBV_WC_SUCCESS,
			       "send completion %s", ibv_wc_status_str(wc.status));
			outstanding--;
		}
		u_fill(p, seq);
		struct ibv_sge sge = { (uintptr_t)p, u_size(seq), c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
		if (umode == 'd') {
			wr.wr.ud.ah = c->ah;
			wr.wr.ud.remote_qpn = c->peer.qpn[0];
			wr.wr.ud.remote_qkey = 0x11111111;
		} else if (seq % 2) {
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.imm_data = htonl(seq);
			wr.wr.rdma.remote_addr = c->peer.addr + (uint64_t)seq * U_SLOT;
			wr.wr.rdma.rkey = c->peer.rkey;
		}
		post_send(c->qp[0], &wr);
		outstanding++;
		if (seq % 16 == 15)
			usleep(2000);     /* pace: the receiver keeps up, losses are the fabric's */
		check_wall(c);
	}
	while (outstanding > 0) {
		struct ibv_wc wc;
		EXPECT(poll_one(c, c->cq[0], &wc, 10) && wc.status == IBV_WC_SUCCESS,
		       "send completion %s", ibv_wc_status_str(wc.status));
		outstanding--;
	}
	oob_send(c, OOB_SENT, (uint32_t)nmsg);
	if (!oob_recv(c, &t, &v) || t != OOB_FIN)
		itest_die("final sync");
	printf("client: %d messages sent\n", nmsg);
}

static void server_u(struct ctx *c)
{
	/* receives: SEND data (UC) or GRH + data (UD) into slots of the upper half;
	 * WRITE_WITH_IMM data goes to slot seq of the lower half */
	uint8_t *rbase = c->buf + (size_t)U_NSLOT / 2 * U_SLOT;
	uint32_t roff = umode == 'd' ? 40 : 0;
	static bool seen[U_NSLOT];
	int nrecv = 512, delivered = 0, corrupt = 0, misplaced = 0, dups = 0;
	for (int i = 0; i < nrecv; i++)
		post_recv(c, c->qp[0], (uint64_t)i, rbase + (size_t)i * (U_SLOT + 64), U_SLOT + 64);
	if ((size_t)nrecv * (U_SLOT + 64) > (size_t)U_NSLOT / 2 * U_SLOT)
		itest_die("layout");
	oob_send(c, OOB_GO, 0);
	bool sent = false;
	double quiet = 0;
	for (;;) {
		struct ibv_wc wc;
		int k = ibv_poll_cq(c->rcq, 1, &wc);
		if (k == 1) {
			uint32_t seq = ~0u;
			int rc;
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "server: receive status %s\n", ibv_wc_status_str(wc.status));
				corrupt++;
			} else if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
				uint32_t imm = ntohl(wc.imm_data);
				if (imm >= (uint32_t)nmsg || imm >= U_NSLOT / 2) {
					misplaced++;
				} else {
					rc = u_check(c->buf + (size_t)imm * U_SLOT, u_size(imm), &seq);
					if (rc < 0)
						corrupt++;
					else if (seq != imm)
						misplaced++;
				}
			} else {
				uint8_t *p = rbase + (size_t)wc.wr_id * (U_SLOT + 64) + roff;
				rc = wc.byte_len >= roff ? u_check(p, wc.byte_len - roff, &seq) : -1;
				if (rc < 0) {
					fprintf(stderr, "server: corrupt message (%d) len %u\n", rc, wc.byte_len);
					corrupt++;
				}
			}
			if (seq != ~0u) {
				if (seen[seq])
					dups++;
				seen[seq] = true;
				delivered++;
			}
			post_recv(c, c->qp[0], wc.wr_id, rbase + (size_t)wc.wr_id * (U_SLOT + 64), U_SLOT + 64);
			quiet = 0;
			continue;
		}
		if (!sent) {
			/* non-blocking look at the oob socket */
			struct timeval tv = { 0, 0 };
			fd_set fs;
			FD_ZERO(&fs);
			FD_SET(c->sock, &fs);
			if (select(c->sock + 1, &fs, NULL, NULL, &tv) == 1) {
				uint32_t t, v;
				if (!oob_recv(c, &t, &v) || t != OOB_SENT)
					itest_die("sync");
				sent = true;
				quiet = now_s();
			}
		} else if (quiet == 0) {
			quiet = now_s();
		} else if (now_s() - quiet > 0.5) {
			break;
		}
		check_wall(c);
	}
	printf("server: %s: %d of %d messages delivered intact, %d lost; %d corrupt, %d misplaced, "
	       "%d duplicated\n", umode == 'd' ? "UD" : "UC", delivered, nmsg, nmsg - delivered,
	       corrupt, misplaced, dups);
	EXPECT(corrupt == 0, "%d corrupt messages delivered", corrupt);
	EXPECT(misplaced == 0, "%d misplaced messages delivered", misplaced);
	EXPECT(dups == 0, "%d messages delivered twice", dups);
	EXPECT(delivered >= nmsg / 2, "only %d of %d delivered", delivered, nmsg);
	oob_send(c, OOB_FIN, 0);
}

/* ---- main --------------------------------------------------------------------- */
/* the device's transport counters (what the goodput table reports) */
static void print_counters(struct ctx *c)
{
	static const char *const want[] = { "tx_pkts", "rx_pkts", "retransmit_pkts",
		"retry_timeouts", "tx_nak_seq", "rx_nak_seq", "dup_requests", "dup_read_reexec",
		"dup_atomic_replay", "oos_req_dropped", "drop_bad_icrc", "drop_malformed",
		"uc_msg_dropped", "rx_ecn_ce" };
	if (!softrnic_is_device(c->ctx->device))
		return;
	unsigned n = softrnic_num_counters();
	uint64_t *v = calloc(n, sizeof(*v));
	if (!v || softrnic_query_counters(c->ctx, v, n)) {
		free(v);
		return;
	}
	printf("%s: counters:", role);
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++)
		for (unsigned i = 0; i < n; i++)
			if (!strcmp(softrnic_counter_name(i), want[w]))
				printf(" %s=%llu", want[w], (unsigned long long)v[i]);
	/* and every other counter that moved */
	for (unsigned i = 0; i < n; i++) {
		bool listed = false;
		for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++)
			listed |= !strcmp(softrnic_counter_name(i), want[w]);
		if (!listed && v[i])
			printf(" %s=%llu", softrnic_counter_name(i), (unsigned long long)v[i]);
	}
	printf("\n");
	free(v);
}

static void teardown(struct ctx *c)
{
	print_counters(c);
	int nq = umode ? 1 : nqp;
	if (c->ah)
		EXPECT(ibv_destroy_ah(c->ah) == 0, "destroy ah");
	for (int q = 0; q < nq; q++) {
		EXPECT(ibv_destroy_qp(c->qp[q]) == 0, "destroy qp");
		EXPECT(ibv_destroy_cq(c->cq[q]) == 0, "destroy cq");
	}
	EXPECT(ibv_destroy_cq(c->rcq) == 0, "destroy rcq");
	EXPECT(ibv_dereg_mr(c->mr) == 0, "dereg");
	EXPECT(ibv_dereg_mr(c->atom_mr) == 0, "dereg atom");
	EXPECT(ibv_dealloc_pd(c->pd) == 0, "dealloc pd");
	EXPECT(ibv_close_device(c->ctx) == 0, "close device");
	free(c->buf);
	free(c->atom);
}

int main(int argc, char **argv)
{
	const char *dev = "softrnic0";
	int port = 18800, opt;
	while ((opt = getopt(argc, argv, "d:p:q:M:D:R:m:t:c:eu:n:W:Lh")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'q': nqp = atoi(optarg); break;
		case 'M': maxsize = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'D': duration = atof(optarg); break;
		case 'R': max_rounds = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'm': mtu = atoi(optarg); break;
		case 't': timeout_exp = atoi(optarg); break;
		case 'c': retry_cnt = atoi(optarg); break;
		case 'e': expect_err = true; break;
		case 'u': umode = !strcmp(optarg, "uc") ? 'c' : !strcmp(optarg, "ud") ? 'd' : '?'; break;
		case 'n': nmsg = atoi(optarg); break;
		case 'W': wall_limit = atof(optarg); break;
		case 'L': leak_check = true; break;
		default:
			fprintf(stderr, "usage: %s -d DEV -p PORT [-q NQP] [-M MAXSIZE] [-D SECS] [-R ROUNDS] "
				"[-m MTU] [-t TIMEOUT] [-c RETRY] [-e] [-u uc|ud] [-n MSGS] [-W SECS] [-L] "
				"[SERVER_IP]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (nqp < 1 || nqp > MAXQP || maxsize < 1 || maxsize > (64u << 20) || umode == '?' ||
	    nmsg < 1 || nmsg > (int)U_NSLOT / 2) {
		fprintf(stderr, "bad options\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	const char *server_ip = optind < argc ? argv[optind] : NULL;
	role = server_ip ? "client" : "server";
	itest_role = role;
	static struct ctx c;
	c.t0 = now_s();
	setup(&c, dev, !server_ip);
	c.sock = server_ip ? itest_connect(server_ip, port) : itest_listen(port);
	if (!itest_xfer(c.sock, &c.me, sizeof(c.me), true) || !itest_xfer(c.sock, &c.peer, sizeof(c.peer), false))
		itest_die("exchange");
	connect_qps(&c);
	if (umode)
		server_ip ? client_u(&c) : server_u(&c);
	else
		server_ip ? client_rc(&c) : server_rc(&c);
	teardown(&c);
	close(c.sock);
	printf("%s: %d passed, %d failed\n", role, passed, failed);
	return failed ? 1 : 0;
}
