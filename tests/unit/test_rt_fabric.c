/*
 * test_rt_fabric.c - the runtime's fabric backend (SOFTRNIC_FABRIC):
 *
 *   - the IPv4+UDP header writer against the switch's independent validator
 *     and the parser's bounds checks (every truncation, bad version, IHL,
 *     total length, checksum, protocol, fragment, UDP length);
 *   - SOFTRNIC_FABRIC parsing;
 *   - two runtime devices in one process behind an in-test switch (the
 *     src/fabric model on a real UDP socket): HELLO attach, an RC SEND and
 *     WRITE, every datagram checked (one whole IPv4 packet: DF, ID 0, TTL 64,
 *     ECT(0), correct header checksum, UDP checksum 0), a CE mark set by the
 *     switch reaching the receiver's core, hostile datagrams dropped and
 *     counted, and the capture still written;
 *   - a device whose fabric does not answer fails to open.
 *
 * Uses 127.0.98.x (devices) and 127.0.98.254:4799 (the switch) so it never
 * collides with other tests.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <pcap/pcap.h>

#include "srn_test.h"
#include "fabric/srn_fabric.h"
#include "runtime/rt_internal.h"

#define IP_A   "127.0.98.1"
#define IP_B   "127.0.98.2"
#define FAB_IP "127.0.98.254"
#define FAB_PORT 4799

static struct in_addr ip4(const char *s)
{
	struct in_addr a;
	inet_pton(AF_INET, s, &a);
	return a;
}

/* ------------------------------------------------------------------------ */
SRN_TEST(test_fab_ipv4_udp_header_roundtrip)
{
	struct srn_ip_info ip;
	memset(&ip, 0, sizeof ip);
	ip.src[10] = ip.src[11] = ip.dst[10] = ip.dst[11] = 0xff;
	memcpy(ip.src + 12, (uint8_t[]){ 10, 1, 2, 3 }, 4);
	memcpy(ip.dst + 12, (uint8_t[]){ 10, 4, 5, 6 }, 4);
	ip.df = true;
	ip.sport = 49153;
	ip.dport = 4791;
	ip.tos = (5 << 2) | 2;
	uint8_t d[28 + 100];
	for (int i = 0; i < 100; i++)
		d[28 + i] = (uint8_t)i;
	CHECK_EQ(srn_ipv4_udp_write(d, 27, &ip, 100), 0);
	CHECK_EQ(srn_ipv4_udp_write(d, sizeof d, &ip, 70000), 0);
	REQUIRE(srn_ipv4_udp_write(d, sizeof d, &ip, 100) == 28);
	/* what the switch (an independent implementation) accepts */
	CHECK(srn_fabric_ipv4_valid(d, sizeof d));
	CHECK_EQ(d[0], 0x45);
	CHECK_EQ(d[1], (5 << 2) | 2);
	CHECK_EQ(srn_get16(d + 2), sizeof d);
	CHECK_EQ(srn_get16(d + 4), 0);          /* ID 0 */
	CHECK_EQ(srn_get16(d + 6), 0x4000);     /* DF */
	CHECK_EQ(d[8], 64);
	CHECK_EQ(d[9], 17);
	CHECK_EQ(srn_get16(d + 20), 49153);
	CHECK_EQ(srn_get16(d + 22), 4791);
	CHECK_EQ(srn_get16(d + 24), 108);
	CHECK_EQ(srn_get16(d + 26), 0);         /* UDP checksum 0 */

	struct srn_pkt_meta m;
	size_t off = 0;
	CHECK_EQ(srn_rt_ipv4_udp_parse(d, sizeof d, &m, &off), 100);
	CHECK_EQ(off, 28);
	CHECK(memcmp(m.src_gid + 12, ip.src + 12, 4) == 0 && m.src_gid[10] == 0xff);
	CHECK(memcmp(m.dst_gid + 12, ip.dst + 12, 4) == 0 && m.dst_gid[11] == 0xff);
	CHECK_EQ(m.l4.src, 49153);
	CHECK_EQ(m.l4.dst, 4791);
	CHECK_EQ(m.ecn, 2);
	CHECK_EQ(m.dscp, 5);
	CHECK_EQ(m.ttl, 64);
	CHECK_EQ(m.l4.ip_id, 0);

	/* every truncation is rejected, never read past the end */
	for (size_t n = 0; n < sizeof d; n++) {
		uint8_t *t = malloc(n ? n : 1);
		memcpy(t, d, n);
		CHECK(srn_rt_ipv4_udp_parse(t, n, &m, &off) < 0);
		free(t);
	}
	uint8_t b[sizeof d];
#define MUTATE(stmt, want) do { memcpy(b, d, sizeof d); stmt; \
		CHECK_EQ(srn_rt_ipv4_udp_parse(b, sizeof b, &m, &off), want); } while (0)
#define FIXSUM() (srn_put16(b + 10, 0), srn_put16(b + 10, srn_ipv4_csum(b, 20)))
	MUTATE(b[0] = 0x65, SRN_RT_IP_EVERSION);
	MUTATE((b[0] = 0x44, FIXSUM()), SRN_RT_IP_EIHL);
	MUTATE((srn_put16(b + 2, sizeof d - 1), FIXSUM()), SRN_RT_IP_ELEN);
	MUTATE(b[12] ^= 1, SRN_RT_IP_ECSUM);
	MUTATE((b[9] = 6, FIXSUM()), SRN_RT_IP_EPROTO);
	MUTATE((srn_put16(b + 6, 0x2000), FIXSUM()), SRN_RT_IP_EFRAG);
	MUTATE((srn_put16(b + 6, 0x0001), FIXSUM()), SRN_RT_IP_EFRAG);
	MUTATE(srn_put16(b + 24, 107), SRN_RT_IP_EUDPLEN);
	MUTATE(srn_put16(b + 24, 0xffff), SRN_RT_IP_EUDPLEN);
	/* a CE mark (as the switch sets it) is reported */
	MUTATE((b[1] |= 3, FIXSUM()), 100);
	CHECK_EQ(m.ecn, 3);
	/* IP options: the UDP header follows the IHL */
	uint8_t o[32 + 8 + 4];
	memset(o, 0, sizeof o);
	o[0] = 0x48;
	srn_put16(o + 2, sizeof o);
	o[8] = 7;
	o[9] = 17;
	srn_put16(o + 32 + 4, 12);
	srn_put16(o + 10, srn_ipv4_csum(o, 32));
	CHECK_EQ(srn_rt_ipv4_udp_parse(o, sizeof o, &m, &off), 4);
	CHECK_EQ(off, 40);
	CHECK_EQ(m.ttl, 7);
}

SRN_TEST(test_fab_hello_bytes)
{
	uint8_t h[SRN_RT_HELLO_LEN];
	srn_rt_hello_write(h, ip4("127.0.0.9"));
	CHECK(srn_fabric_ipv4_valid(h, sizeof h));
	CHECK_EQ(h[0], 0x45);
	CHECK_EQ(srn_get16(h + 2), 20);
	CHECK_EQ(h[9], 253);
	CHECK_EQ(srn_get32(h + 12), 0x7f000009);
	CHECK_EQ(srn_get32(h + 16), 0);
	struct srn_pkt_meta m;
	size_t off;
	CHECK_EQ(srn_rt_ipv4_udp_parse(h, sizeof h, &m, &off), SRN_RT_IP_HELLO);
}

SRN_TEST(test_fab_env_parse)
{
	struct sockaddr_in sa;
	CHECK_EQ(srn_rt_config_parse_fabric("127.0.0.1:4790", "t", &sa), 0);
	CHECK_EQ(ntohs(sa.sin_port), 4790);
	CHECK_EQ(ntohl(sa.sin_addr.s_addr), 0x7f000001);
	const char *bad[] = { "", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
			      "127.0.0.1:12x", "127.0.0.300:1", "host:1", ":4790", "127.0.0.1:-1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_EQ(srn_rt_config_parse_fabric(bad[i], "t", &sa), -1);
		CHECK_EQ(sa.sin_port, 0);
	}
	setenv("SOFTRNIC_DEVICES", "fa=127.0.98.1,fb=127.0.98.2", 1);
	setenv("SOFTRNIC_FABRIC", "127.0.98.254:4799", 1);
	struct srn_rt_devcfg c[4];
	CHECK_EQ(srn_rt_config_load(c, 4), 2);
	CHECK_EQ(ntohs(c[0].fabric.sin_port), 4799);
	CHECK_EQ(ntohs(c[1].fabric.sin_port), 4799);
	setenv("SOFTRNIC_FABRIC", "nonsense", 1);
	CHECK_EQ(srn_rt_config_load(c, 4), -1);     /* never a silent fallback */
	unsetenv("SOFTRNIC_FABRIC");
	CHECK_EQ(srn_rt_config_load(c, 4), 2);
	CHECK_EQ(c[0].fabric.sin_port, 0);
	unsetenv("SOFTRNIC_DEVICES");
}

/* ------------------------------------------------------------------------ */
/* the in-test switch: the fabric model behind a real UDP socket             */

struct sw {
	int fd;
	pthread_t th;
	atomic_bool stop;
	struct srn_fabric *fab;
	struct sockaddr_in peer[2];       /* by port index */
	bool attached[2];
	/* what every datagram from a device looked like */
	atomic_int hellos, data, bad_hdr, not_df, id_nonzero, ttl_not64, not_ect0, udp_csum;
	atomic_int mark_ce;               /* mark the next N data packets CE */
	uint8_t inject[3][64];            /* hostile datagrams to send to port 1 */
	size_t inject_len[3];
	atomic_int do_inject;
};

static uint64_t now_ns(void) { return srn_rt_now(); }

static void sw_datagram(struct sw *s, uint8_t *b, size_t n, const struct sockaddr_in *from)
{
	if (n == SRN_RT_HELLO_LEN && b[9] == SRN_RT_HELLO_PROTO) {
		int p = srn_fabric_port_find(s->fab, srn_get32(b + 12));
		if (p >= 0 && p < 2) {
			s->peer[p] = *from;
			s->attached[p] = true;
			atomic_fetch_add(&s->hellos, 1);
			sendto(s->fd, b, n, 0, (const struct sockaddr *)from, sizeof *from);
		}
		return;
	}
	if (!srn_fabric_ipv4_valid(b, n) || n < 28 || b[9] != 17) {
		atomic_fetch_add(&s->bad_hdr, 1);
		return;
	}
	atomic_fetch_add(&s->data, 1);
	if (srn_get16(b + 6) != 0x4000)
		atomic_fetch_add(&s->not_df, 1);
	if (srn_get16(b + 4) != 0)
		atomic_fetch_add(&s->id_nonzero, 1);
	if (b[8] != 64)
		atomic_fetch_add(&s->ttl_not64, 1);
	if (srn_get16(b + 26) != 0)
		atomic_fetch_add(&s->udp_csum, 1);
	/* ACKs are not-ECT too in some stacks: count only payload-carrying ones */
	if ((b[1] & 3) != 2 && n > 28 + 12 + 4 + 64)
		atomic_fetch_add(&s->not_ect0, 1);
	if ((b[1] & 3) == 2 && atomic_load(&s->mark_ce) > 0) {
		atomic_fetch_sub(&s->mark_ce, 1);
		b[1] |= 3;
		srn_put16(b + 10, 0);
		srn_put16(b + 10, srn_ipv4_csum(b, 20));
	}
	int p = srn_fabric_port_find(s->fab, srn_get32(b + 12));
	if (p >= 0)
		srn_fabric_input(s->fab, (uint32_t)p, b, n, now_ns());
}

static void *sw_main(void *arg)
{
	struct sw *s = arg;
	uint8_t b[9300], o[9300];
	while (!atomic_load(&s->stop)) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		(void)poll(&pfd, 1, 1);
		for (;;) {
			struct sockaddr_in from;
			socklen_t fl = sizeof from;
			ssize_t n = recvfrom(s->fd, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
			if (n < 0)
				break;
			sw_datagram(s, b, (size_t)n, &from);
		}
		uint32_t port;
		int n;
		while ((n = srn_fabric_poll(s->fab, now_ns(), &port, o, sizeof o)) > 0)
			if (port < 2 && s->attached[port])
				sendto(s->fd, o, (size_t)n, 0, (struct sockaddr *)&s->peer[port],
				       sizeof s->peer[port]);
		if (atomic_exchange(&s->do_inject, 0) && s->attached[1])
			for (int i = 0; i < 3; i++)
				sendto(s->fd, s->inject[i], s->inject_len[i], 0,
				       (struct sockaddr *)&s->peer[1], sizeof s->peer[1]);
	}
	return NULL;
}

static bool sw_start(struct sw *s)
{
	memset(s, 0, sizeof *s);
	struct srn_fabric_cfg cfg;
	srn_fabric_cfg_default(&cfg);
	cfg.seed = 5;
	cfg.epoch = now_ns();
	if (srn_fabric_new(&s->fab, &cfg, NULL) < 0)
		return false;
	struct srn_fabric_port_cfg pc;
	memset(&pc, 0, sizeof pc);
	if (srn_fabric_add_port(s->fab, ntohl(ip4(IP_A).s_addr), &pc) != 0 ||
	    srn_fabric_add_port(s->fab, ntohl(ip4(IP_B).s_addr), &pc) != 1)
		return false;
	s->fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(FAB_PORT),
				  .sin_addr = ip4(FAB_IP) };
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		perror("  switch bind");
		return false;
	}
	return pthread_create(&s->th, NULL, sw_main, s) == 0;
}

static void sw_stop(struct sw *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->th, NULL);
	close(s->fd);
	srn_fabric_del(s->fab);
}

struct side {
	struct srn_rt_devcfg cfg;
	struct srn_rt_dev *rd;
	struct srn_dev *dev;
	struct srn_cq *cq;
	struct srn_qp *qp;
	struct srn_mr *mr;
	struct srn_mr_info mi;
	uint8_t *buf;
};
#define BUFLEN (64 * 1024)

static bool side_open(struct side *s, const char *name, const char *ip, const char *pcap)
{
	memset(s, 0, sizeof *s);
	snprintf(s->cfg.name, sizeof s->cfg.name, "%s", name);
	s->cfg.ip = ip4(ip);
	s->cfg.port = 4791;
	if (pcap)
		snprintf(s->cfg.pcap_path, sizeof s->cfg.pcap_path, "%s", pcap);
	s->cfg.fabric = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(FAB_PORT),
					      .sin_addr = ip4(FAB_IP) };
	s->rd = srn_rt_dev_open(&s->cfg, NULL);
	if (!s->rd) {
		fprintf(stderr, "  srn_rt_dev_open(%s): %s\n", name, strerror(errno));
		return false;
	}
	s->dev = srn_rt_core(s->rd);
	s->buf = calloc(1, BUFLEN);
	srn_rt_lock(s->rd);
	uint32_t pdn = srn_pd_alloc(s->dev);
	int r = srn_cq_new(s->dev, 256, s, &s->cq);
	if (!r)
		r = srn_mr_reg(s->dev, pdn, s->buf, (uint64_t)(uintptr_t)s->buf, BUFLEN,
			       SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE, &s->mr);
	if (!r) {
		srn_mr_info(s->mr, &s->mi);
		struct srn_qp_init qi = { .type = SRN_QPT_RC, .pdn = pdn, .send_cq = s->cq,
			.recv_cq = s->cq, .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			.max_recv_sge = 1, .user = s };
		r = srn_qp_new(s->dev, &qi, &s->qp);
	}
	srn_rt_unlock(s->rd);
	return r == 0;
}

static void side_close(struct side *s)
{
	if (!s->rd)
		return;
	srn_rt_lock(s->rd);
	if (s->qp)
		srn_qp_del(s->qp, srn_rt_now());
	if (s->mr)
		srn_mr_dereg(s->dev, s->mr);
	if (s->cq)
		srn_cq_del(s->cq);
	srn_rt_unlock(s->rd);
	srn_rt_dev_close(s->rd);
	free(s->buf);
	memset(s, 0, sizeof *s);
}

static int connect_qp(struct side *s, struct in_addr peer, uint32_t qpn)
{
	struct srn_qp_attr a;
	srn_ts now = srn_rt_now();
	srn_rt_lock(s->rd);
	memset(&a, 0, sizeof a);
	a.qp_state = SRN_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = SRN_ACCESS_REMOTE_WRITE;
	int r = srn_qp_modify(s->qp, &a, SRN_QP_STATE | SRN_QP_PKEY_INDEX | SRN_QP_PORT |
			      SRN_QP_ACCESS_FLAGS, now);
	if (!r) {
		memset(&a, 0, sizeof a);
		a.qp_state = SRN_QPS_RTR;
		a.path_mtu = 3;
		a.dest_qp_num = qpn;
		a.rq_psn = 100;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		srn_rt_gid_from_ip(a.ah.dgid, peer);
		a.ah.hop_limit = 64;
		a.ah.port_num = 1;
		r = srn_qp_modify(s->qp, &a, SRN_QP_STATE | SRN_QP_AV | SRN_QP_PATH_MTU |
				  SRN_QP_DEST_QPN | SRN_QP_RQ_PSN | SRN_QP_MAX_DEST_RD_ATOMIC |
				  SRN_QP_MIN_RNR_TIMER, now);
	}
	if (!r) {
		memset(&a, 0, sizeof a);
		a.qp_state = SRN_QPS_RTS;
		a.timeout = 12;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = 100;
		a.max_rd_atomic = 4;
		r = srn_qp_modify(s->qp, &a, SRN_QP_STATE | SRN_QP_TIMEOUT | SRN_QP_RETRY_CNT |
				  SRN_QP_RNR_RETRY | SRN_QP_SQ_PSN | SRN_QP_MAX_QP_RD_ATOMIC, now);
	}
	srn_rt_unlock(s->rd);
	return r;
}

static bool wait_cqe(struct side *s, struct srn_cqe *e, int ms)
{
	srn_ts end = srn_rt_now() + (srn_ts)ms * 1000000;
	while (srn_rt_now() < end) {
		srn_rt_lock_poll(s->rd);
		int n = srn_cq_poll(s->cq, e, 1);
		srn_rt_unlock_poll(s->rd);
		if (n == 1)
			return true;
		usleep(200);
	}
	return false;
}

static uint64_t ctr(struct side *s, enum srn_ctr c)
{
	srn_rt_lock(s->rd);
	uint64_t v = srn_dev_counters(s->dev)[c];
	srn_rt_unlock(s->rd);
	return v;
}

SRN_TEST(test_fab_two_devices_through_a_switch)
{
	static struct sw S;
	static struct side A, B;
	char cap[] = "/tmp/srn-test-rt-fabric.XXXXXX";
	int cfd = mkstemp(cap);
	REQUIRE(cfd >= 0);
	close(cfd);
	REQUIRE(sw_start(&S));
	if (!side_open(&A, "rtfab-a", IP_A, cap) || !side_open(&B, "rtfab-b", IP_B, NULL)) {
		CHECK(!"both devices open behind the switch");
		goto out;
	}
	CHECK_EQ(atomic_load(&S.hellos), 2);       /* each attached with a HELLO */
	CHECK(connect_qp(&A, B.cfg.ip, srn_qp_num(B.qp)) == 0);
	CHECK(connect_qp(&B, A.cfg.ip, srn_qp_num(A.qp)) == 0);

	/* SEND of 3000 bytes (3 packets), the first 2 data packets marked CE */
	atomic_store(&S.mark_ce, 2);
	for (int i = 0; i < 3000; i++)
		A.buf[i] = (uint8_t)(i * 13 + 5);
	struct srn_sge rsge = { (uint64_t)(uintptr_t)B.buf, 4096, B.mi.lkey };
	struct srn_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 };
	srn_rt_lock(B.rd);
	CHECK_EQ(srn_qp_post_recv(B.qp, &rwr), 0);
	srn_rt_unlock(B.rd);
	struct srn_sge ssge = { (uint64_t)(uintptr_t)A.buf, 3000, A.mi.lkey };
	struct srn_send_wr swr = { .wr_id = 1, .opcode = SRN_WR_SEND, .send_flags = SRN_SEND_SIGNALED,
				   .sg_list = &ssge, .num_sge = 1 };
	srn_rt_lock(A.rd);
	CHECK_EQ(srn_qp_post_send(A.qp, &swr, srn_rt_now()), 0);
	srn_rt_unlock(A.rd);
	struct srn_cqe e;
	REQUIRE(wait_cqe(&B, &e, 5000));
	CHECK_EQ(e.status, SRN_WC_SUCCESS);
	CHECK_EQ(e.byte_len, 3000);
	CHECK(memcmp(A.buf, B.buf, 3000) == 0);
	REQUIRE(wait_cqe(&A, &e, 5000));
	CHECK_EQ(e.wr_id, 1);
	CHECK_EQ(e.status, SRN_WC_SUCCESS);
	CHECK_EQ(ctr(&B, SRN_CTR_RX_ECN_CE), 2);   /* the real TOS byte reached the core */

	/* WRITE of 20000 bytes */
	for (int i = 0; i < 20000; i++)
		A.buf[8192 + i] = (uint8_t)(i ^ 0x3c);
	struct srn_sge wsge = { (uint64_t)(uintptr_t)(A.buf + 8192), 20000, A.mi.lkey };
	struct srn_send_wr wwr = { .wr_id = 2, .opcode = SRN_WR_RDMA_WRITE,
				   .send_flags = SRN_SEND_SIGNALED, .sg_list = &wsge, .num_sge = 1,
				   .remote_addr = B.mi.iova + 30000, .rkey = B.mi.rkey };
	srn_rt_lock(A.rd);
	CHECK_EQ(srn_qp_post_send(A.qp, &wwr, srn_rt_now()), 0);
	srn_rt_unlock(A.rd);
	REQUIRE(wait_cqe(&A, &e, 5000));
	CHECK_EQ(e.status, SRN_WC_SUCCESS);
	CHECK(memcmp(A.buf + 8192, B.buf + 30000, 20000) == 0);

	/* every datagram was one whole, kernel-like IPv4 packet */
	printf("  switch saw %d data packets\n", atomic_load(&S.data));
	CHECK(atomic_load(&S.data) >= 3 + 20 + 2);
	CHECK_EQ(atomic_load(&S.bad_hdr), 0);
	CHECK_EQ(atomic_load(&S.not_df), 0);
	CHECK_EQ(atomic_load(&S.id_nonzero), 0);
	CHECK_EQ(atomic_load(&S.ttl_not64), 0);
	CHECK_EQ(atomic_load(&S.not_ect0), 0);
	CHECK_EQ(atomic_load(&S.udp_csum), 0);
	CHECK_EQ(ctr(&A, SRN_CTR_DROP_BAD_ICRC) + ctr(&B, SRN_CTR_DROP_BAD_ICRC), 0);

	/* hostile datagrams from the fabric's address: dropped and counted */
	uint64_t mal0 = ctr(&B, SRN_CTR_DROP_MALFORMED), rx0 = ctr(&B, SRN_CTR_RX_PKTS);
	struct srn_ip_info ip;
	memset(&ip, 0, sizeof ip);
	srn_rt_gid_from_ip(ip.src, A.cfg.ip);
	srn_rt_gid_from_ip(ip.dst, B.cfg.ip);
	ip.df = true;
	ip.sport = 49152;
	ip.dport = 4791;
	memset(S.inject, 0x11, sizeof S.inject);
	srn_ipv4_udp_write(S.inject[0], 64, &ip, 36);      /* bad IP checksum */
	S.inject[0][12] ^= 0x40;
	S.inject_len[0] = 64;
	srn_ipv4_udp_write(S.inject[1], 64, &ip, 36);      /* total length lies */
	S.inject_len[1] = 50;
	srn_rt_gid_from_ip(ip.dst, ip4("127.0.98.77"));       /* not B's address */
	srn_ipv4_udp_write(S.inject[2], 64, &ip, 36);
	S.inject_len[2] = 64;
	atomic_store(&S.do_inject, 1);
	srn_ts end = srn_rt_now() + 2000000000ull;
	while (ctr(&B, SRN_CTR_DROP_MALFORMED) < mal0 + 3 && srn_rt_now() < end)
		usleep(1000);
	CHECK_EQ(ctr(&B, SRN_CTR_DROP_MALFORMED), mal0 + 3);
	CHECK_EQ(ctr(&B, SRN_CTR_RX_PKTS), rx0);
	CHECK(memcmp(A.buf + 8192, B.buf + 30000, 20000) == 0);
out:
	side_close(&A);
	side_close(&B);
	sw_stop(&S);
	/* the capture of A: every packet sent and received */
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(cap, eb);
	CHECK(p != NULL);
	if (p) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int n = 0, good = 0;
		while (pcap_next_ex(p, &h, &d) == 1) {
			n++;
			good += h->caplen > 42 && srn_fabric_ipv4_valid(d + 14, h->caplen - 14);
		}
		pcap_close(p);
		printf("  capture: %d frames\n", n);
		CHECK(n >= 25);
		CHECK_EQ(good, n);
	}
	unlink(cap);
}

SRN_TEST(test_fab_no_fabric_fails_to_open)
{
	struct srn_rt_devcfg c;
	memset(&c, 0, sizeof c);
	snprintf(c.name, sizeof c.name, "rtfab-lonely");
	c.ip = ip4("127.0.98.3");
	c.port = 4791;
	c.fabric = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(FAB_PORT + 1),
					 .sin_addr = ip4(FAB_IP) };
	srn_ts t0 = srn_rt_now();
	errno = 0;
	struct srn_rt_dev *rd = srn_rt_dev_open(&c, NULL);
	double s = (double)(srn_rt_now() - t0) / 1e9;
	CHECK(rd == NULL);
	CHECK(errno == ECONNREFUSED || errno == ETIMEDOUT);
	CHECK(s < 5.0);
	printf("  open without a fabric: %s after %.2f s\n", strerror(errno), s);
	if (rd)
		srn_rt_dev_close(rd);
}

int main(void) { return srn_test_main(); }
