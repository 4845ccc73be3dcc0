/*
 * cc_flows.c - N RDMA WRITE flows into ONE receiving device, for the
 * congestion-control datapath test (test_cc_datapath.sh, issue 6 item 6).
 *
 *   cc_flows -d DEV -p PORT -n N                        receiver
 *   cc_flows -d DEV -p PORT -t SECS [-s BYTES] [-q DEPTH] [-e] SERVER_IP   sender
 *
 * The receiver accepts N TCP connections (one per sender process), creates
 * one RC QP and one 4 MiB MR per sender, exchanges QPN/PSN/GID/rkey with it,
 * then releases all senders at once ("go"), so their flows run at the same
 * time into the same device - through one fabric output port. Each sender
 * keeps DEPTH WRITEs of BYTES outstanding for SECS seconds, then reports the
 * bytes completed and the time back to the receiver, which prints every
 * flow's goodput and Jain's fairness index of them:
 *   flow I: BYTES bytes in NS ns = G Gbit/s
 *   jain J
 * A sender polls its CQ in a loop, or with -e sleeps on a completion channel
 * while nothing has completed (the device's progress thread sends the paced
 * packets meanwhile): two spinning senders take both cores of a 2-core
 * machine from the fabric daemon and the receiver.
 * Both print the device's counters (softrnic_query_counters) at the end:
 *   counters: name=value ...
 * Exit 0 when every WRITE completed successfully.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <infiniband/verbs.h>
#include "itest.h"
#include <softrnic/softrnic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (4u << 20)
#define MAX_FLOWS 8

struct info {
	uint32_t qpn, psn;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
};

struct result {
	uint64_t bytes, ns;
	uint32_t errors;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct flow {
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct info me, peer;
	int sock;
};

static void make_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq, struct flow *f,
		    uint32_t psn)
{
	f->buf = aligned_alloc(4096, BUF_SIZE);
	if (!f->buf)
		itest_die("alloc");
	memset(f->buf, 0x5a, BUF_SIZE);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	f->mr = ibv_reg_mr(pd, f->buf, BUF_SIZE, rw);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	f->qp = ibv_create_qp(pd, &ia);
	if (!f->mr || !f->qp)
		itest_die("mr/qp");
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = rw };
	if (ibv_modify_qp(f->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		itest_die("modify INIT");
	f->me.qpn = f->qp->qp_num;
	f->me.psn = psn & 0xffffff;
	if (ibv_query_gid(ctx, 1, 0, &f->me.gid))
		itest_die("ibv_query_gid");
	f->me.addr = (uintptr_t)f->buf;
	f->me.rkey = f->mr->rkey;
}

static void connect_qp(struct flow *f)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096,
		.dest_qp_num = f->peer.qpn, .rq_psn = f->peer.psn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = f->peer.gid, .sgid_index = 0, .hop_limit = 64 } },
	};
	if (ibv_modify_qp(f->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		itest_die("modify RTR");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;      /* 67 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = f->me.psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(f->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		itest_die("modify RTS");
}

static void print_counters(struct ibv_context *ctx, const char *role)
{
	if (!softrnic_is_device(ctx->device))
		return;
	unsigned n = softrnic_num_counters();
	uint64_t *v = calloc(n, sizeof(*v));
	if (!v || softrnic_query_counters(ctx, v, n)) {
		free(v);
		return;
	}
	printf("%s: counters:", role);
	for (unsigned i = 0; i < n; i++) {
		const char *name = softrnic_counter_name(i);
		if (!strncmp(name, "cc_", 3) || !strcmp(name, "rx_ecn_ce") || !strcmp(name, "tx_cnps") ||
		    !strcmp(name, "rx_cnps") || !strcmp(name, "retransmit_pkts") ||
		    !strcmp(name, "retry_timeouts") || !strcmp(name, "tx_bytes") ||
		    !strcmp(name, "rx_nak_seq"))
			printf(" %s=%llu", name, (unsigned long long)v[i]);
	}
	printf("\n");
	free(v);
}

static int receiver(const char *dev, int port, int n)
{
	struct ibv_context *ctx = itest_open_dev(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pd || !cq)
		itest_die("pd/cq");
	int l = itest_listen_socket(port, n);
	printf("receiver: listening on port %d for %d senders\n", port, n);
	fflush(stdout);
	struct flow fl[MAX_FLOWS];
	memset(fl, 0, sizeof(fl));
	for (int i = 0; i < n; i++) {
		fl[i].sock = accept(l, NULL, NULL);
		if (fl[i].sock < 0)
			itest_die("accept");
		make_qp(ctx, pd, cq, &fl[i], 0x1000u * (uint32_t)(i + 1));
		itest_xfer_or_die(fl[i].sock, &fl[i].peer, sizeof(fl[i].peer), false);
		itest_xfer_or_die(fl[i].sock, &fl[i].me, sizeof(fl[i].me), true);
		connect_qp(&fl[i]);
	}
	close(l);
	uint32_t go = 1;
	for (int i = 0; i < n; i++)
		itest_xfer_or_die(fl[i].sock, &go, sizeof(go), true);
	printf("receiver: %d flows connected, go\n", n);
	fflush(stdout);
	double g[MAX_FLOWS], s = 0, s2 = 0;
	int errors = 0;
	for (int i = 0; i < n; i++) {
		struct result r;
		itest_xfer_or_die(fl[i].sock, &r, sizeof(r), false);
		g[i] = r.ns ? (double)r.bytes * 8.0 / (double)r.ns : 0;
		errors += (int)r.errors;
		printf("flow %d: %llu bytes in %llu ns = %.4f Gbit/s%s\n", i,
		       (unsigned long long)r.bytes, (unsigned long long)r.ns, g[i],
		       r.errors ? " (errors)" : "");
		s += g[i];
		s2 += g[i] * g[i];
	}
	printf("jain %.4f\n", s2 > 0 ? s * s / (n * s2) : 0.0);
	print_counters(ctx, "receiver");
	for (int i = 0; i < n; i++) {
		itest_xfer_or_die(fl[i].sock, &go, sizeof(go), true);   /* the senders may tear down */
		close(fl[i].sock);
		ibv_destroy_qp(fl[i].qp);
		ibv_dereg_mr(fl[i].mr);
		free(fl[i].buf);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return errors ? 1 : 0;
}

/* -e: block on the completion channel until the armed CQ signals (at most
 * 100 ms); the caller armed it and found it empty afterwards */
static void wait_cq(struct ibv_comp_channel *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	if (poll(&pfd, 1, 100) <= 0)
		return;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		itest_die("ibv_get_cq_event");
	ibv_ack_cq_events(ev_cq, 1);
}

static int sender(const char *dev, int port, const char *server, double secs, uint32_t size,
		  int depth, bool events)
{
	struct ibv_context *ctx = itest_open_dev(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_comp_channel *ch = events ? ibv_create_comp_channel(ctx) : NULL;
	if (events && !ch)
		itest_die("ibv_create_comp_channel");
	struct ibv_cq *cq = ibv_create_cq(ctx, 512, NULL, ch, 0);
	if (!pd || !cq)
		itest_die("pd/cq");
	struct flow f;
	memset(&f, 0, sizeof(f));
	f.sock = itest_connect(server, port);
	make_qp(ctx, pd, cq, &f, (uint32_t)getpid() * 7u);
	itest_xfer_or_die(f.sock, &f.me, sizeof(f.me), true);
	itest_xfer_or_die(f.sock, &f.peer, sizeof(f.peer), false);
	connect_qp(&f);
	uint32_t go;
	itest_xfer_or_die(f.sock, &go, sizeof(go), false);

	struct result r = { 0, 0, 0 };
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9);
	int out = 0;
	uint64_t posted = 0;
	bool stop = false;
	while (!stop || out > 0) {
		while (!stop && out < depth) {
			uint64_t off = (posted * size) % (BUF_SIZE - size + 1);
			struct ibv_sge sge = { (uintptr_t)f.buf + off, size, f.mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { f.peer.addr + off, f.peer.rkey },
			}, *bad;
			if (ibv_post_send(f.qp, &wr, &bad))
				itest_die("ibv_post_send");
			posted++;
			out++;
		}
		struct ibv_wc wc[16];
		int k = ibv_poll_cq(cq, 16, wc);
		if (k == 0 && ch) {
			/* -e: arm, look again (a completion before the arm raises
			 * no event), then sleep until the device signals; the
			 * device's progress thread does the work meanwhile */
			if (ibv_req_notify_cq(cq, 0))
				itest_die("ibv_req_notify_cq");
			k = ibv_poll_cq(cq, 16, wc);
			if (k == 0)
				wait_cq(ch);
		}
		if (k < 0)
			itest_die("ibv_poll_cq");
		for (int i = 0; i < k; i++) {
			out--;
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "sender: WR %llu: %s\n", (unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				r.errors++;
				stop = true;
			} else if (!stop) {
				r.bytes += size;
			}
		}
		uint64_t t = now_ns();
		if (!stop && t >= end) {
			stop = true;
			r.ns = t - t0;
		}
		if (t > end + 30ull * 1000000000u) {
			fprintf(stderr, "sender: %d WRITEs not completed 30 s after the end\n", out);
			r.errors++;
			break;
		}
	}
	if (!r.ns)
		r.ns = now_ns() - t0;
	printf("sender: %llu bytes in %llu ns = %.4f Gbit/s, %u errors\n",
	       (unsigned long long)r.bytes, (unsigned long long)r.ns,
	       (double)r.bytes * 8.0 / (double)r.ns, r.errors);
	print_counters(ctx, "sender");
	fflush(stdout);
	itest_xfer_or_die(f.sock, &r, sizeof(r), true);
	itest_xfer_or_die(f.sock, &go, sizeof(go), false);
	close(f.sock);
	if (out == 0) {
		ibv_destroy_qp(f.qp);
		ibv_dereg_mr(f.mr);
		free(f.buf);
		ibv_destroy_cq(cq);
		if (ch)
			ibv_destroy_comp_channel(ch);
		ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
	}
	return r.errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *dev = "softrnic0";
	int port = 18515, n = 0, depth = 8, o;
	bool events = false;
	double secs = 5;
	uint32_t size = 65536;
	while ((o = getopt(argc, argv, "d:p:n:t:s:q:e")) != -1) {
		switch (o) {
		case 'd': dev = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': n = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 's': size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'q': depth = atoi(optarg); break;
		case 'e': events = true; break;
		default:
			fprintf(stderr, "usage: cc_flows -d DEV -p PORT -n N | cc_flows -d DEV -p PORT "
				"-t SECS [-s BYTES] [-q DEPTH] [-e] SERVER_IP\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (optind < argc) {
		if (size == 0 || size > BUF_SIZE || depth < 1 || depth > 200 || secs <= 0)
			return 2;
		return sender(dev, port, argv[optind], secs, size, depth, events);
	}
	if (n < 1 || n > MAX_FLOWS)
		return 2;
	return receiver(dev, port, n);
}
