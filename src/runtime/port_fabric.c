/*
 * port_fabric.c - the fabric port: a runtime device behind `softrnic fabric`.
 *
 * The fabric port (SOFTRNIC_FABRIC, docs/fabric.md "Attachment protocol"):
 * instead of port_udp.c's sockets, one blocking UDP socket bound to IP:0
 * and connected to the fabric daemon: each packet leaves as one datagram
 * holding the whole IPv4 + UDP + RoCEv2 packet (the headers of src/wire/ipv4.c in a
 * second iovec, so the transmit batch layout is the same in both modes),
 * and every datagram that arrives holds one IPv4 packet whose headers the
 * port parses itself (ipv4.c). The socket is connected, so the kernel
 * delivers only the fabric's datagrams and reports a dead fabric
 * (ECONNREFUSED). Its UDP source ports are virtual: the core's L4 tokens are
 * fixed numbers that only appear in the inner UDP header.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <poll.h>

#include "rt_internal.h"

/* the core's (virtual) UDP source ports behind a fabric: 0xC000 + a hash of
 * the address, 4 consecutive ports, so two devices rarely share them */
static void fabric_sports(struct srn_rt_udp *u)
{
	uint32_t a = ntohl(u->ip.s_addr);
	uint16_t base = (uint16_t)(0xC000 + ((a * 2654435761u) >> 20) % 0x3ff0);
	for (int i = 0; i < SRN_RT_NSEND; i++)
		u->l4[i] = (struct srn_l4){ .src = (uint16_t)(base + i), .dst = SRN_ROCEV2_UDP_PORT };
}

int srn_rt_udp_open_fabric(struct srn_rt_udp *u, struct in_addr ip, uint16_t port,
			   const struct sockaddr_in *fab)
{
	char a[INET_ADDRSTRLEN], f[INET_ADDRSTRLEN];
	int r;
	uint16_t p;

	inet_ntop(AF_INET, &ip, a, sizeof a);
	inet_ntop(AF_INET, &fab->sin_addr, f, sizeof f);
	memset(u, 0, sizeof(*u));
	u->rx_fd = -1;
	for (int i = 0; i < SRN_RT_NSEND; i++)
		u->tx_fd[i] = -1;
	u->ip = ip;
	u->port = port;
	u->fab = *fab;
	fabric_sports(u);

	/* blocking: a full send buffer back-pressures; receive uses MSG_DONTWAIT */
	r = srn_rt_udp_sock(ip, 0, false, &p);
	if (r < 0) {
		fprintf(stderr, "softrnic: cannot bind UDP %s:0 for the fabric: %s%s\n", a,
			strerror(-r), r == -EADDRNOTAVAIL ? " (address not configured on this host)" : "");
		return r;
	}
	u->rx_fd = r;
	srn_rt_udp_set_bufs(u->rx_fd, SRN_RT_SOCKBUF, SRN_RT_SOCKBUF);
	if (connect(u->rx_fd, (const struct sockaddr *)fab, sizeof *fab) < 0) {
		r = -errno;
		fprintf(stderr, "softrnic: fabric %s:%u: connect: %s\n", f, ntohs(fab->sin_port),
			strerror(-r));
		srn_rt_udp_close(u);
		return r;
	}
	return 0;
}

static int64_t mono_ms(void)
{
	return (int64_t)(srn_rt_now() / 1000000u);
}

int srn_rt_fabric_hello(struct srn_rt_udp *u, int timeout_ms)
{
	uint8_t hello[SRN_RT_HELLO_LEN], in[SRN_RT_BUFSZ];
	int64_t end = mono_ms() + timeout_ms;
	int last_err = -ETIMEDOUT;

	srn_rt_hello_write(hello, u->ip);
	while (mono_ms() < end) {
		if (send(u->rx_fd, hello, sizeof hello, 0) < 0 && errno != EINTR)
			last_err = -errno;
		int64_t resend = mono_ms() + 100;
		while (mono_ms() < resend) {
			struct pollfd pfd = { .fd = u->rx_fd, .events = POLLIN };
			int64_t left = resend - mono_ms();
			if (poll(&pfd, 1, left > 0 ? (int)left : 0) <= 0)
				continue;
			ssize_t n = recv(u->rx_fd, in, sizeof in, MSG_DONTWAIT);
			if (n < 0) {
				if (errno != EAGAIN && errno != EINTR) {
					last_err = -errno;  /* ECONNREFUSED: nobody listens (yet) */
					usleep(20000);
				}
				continue;
			}
			/* anything but our echo (a peer's early packet) is dropped:
			 * the port was not ours before the echo */
			if (n == (ssize_t)sizeof hello && memcmp(in, hello, sizeof hello) == 0)
				return 0;
		}
	}
	return last_err;
}

/* The fabric backend: one datagram per packet, IPv4+UDP header in front, all
 * in order through the one connected socket. */
static int flush_fabric(struct srn_rt_udp *u, struct srn_rt_txbatch *b, uint64_t *batches)
{
	int failed = 0, cnt = b->n;

	for (int i = 0; i < cnt; i++) {
		struct srn_ip_info ip;
		srn_roce_ip_info(&ip, &b->meta[i]);
		memcpy(ip.src + 12, &u->ip.s_addr, 4);   /* the port is our address */
		srn_ipv4_udp_write(b->hdr[i], sizeof b->hdr[i], &ip, b->len[i]);
		b->fiov[i][0].iov_base = b->hdr[i];
		b->fiov[i][0].iov_len = SRN_RT_IPUDP_HDR;
		b->fiov[i][1].iov_base = b->data + (size_t)i * SRN_RT_BUFSZ;
		b->fiov[i][1].iov_len = b->len[i];
		struct msghdr *mh = &b->msg[i].msg_hdr;
		memset(mh, 0, sizeof *mh);
		mh->msg_iov = b->fiov[i];
		mh->msg_iovlen = 2;
	}
	int off = 0;
	while (off < cnt) {
		int r = sendmmsg(u->rx_fd, b->msg + off, (unsigned)(cnt - off), 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			failed++;        /* lost (ECONNREFUSED: the fabric is gone) */
			off++;
			continue;
		}
		if (batches)
			(*batches)++;
		off += r;
	}
	b->n = 0;
	return failed;
}

/* one recvmmsg batch of whole IPv4 packets: HELLO echoes are counted,
 * what is not a valid IPv4/UDP packet to this device is malformed, the
 * rest goes to the sink with its real header's addressing */
static int fabric_recv(struct srn_rt_port *p, const struct srn_rt_rx_sink *sink)
{
	int n = srn_rt_udp_recv(&p->udp, &p->rx);
	for (int i = 0; i < n; i++) {
		const struct mmsghdr *mm = &p->rx.msg[i];
		const uint8_t *pkt = p->rx.iov[i].iov_base;
		p->rx_bytes += mm->msg_len;
		if ((mm->msg_hdr.msg_flags & MSG_TRUNC) ||
		    mm->msg_len > SRN_MAX_PKT + SRN_RT_IPUDP_HDR + 40) {
			p->ctr[SRN_RT_CTR_RX_TRUNC]++;
			sink->malformed(sink->ctx);
			continue;
		}
		struct srn_pkt_meta meta;
		size_t off = 0;
		int plen = srn_rt_ipv4_udp_parse(pkt, mm->msg_len, &meta, &off);
		if (plen == SRN_RT_IP_HELLO) {
			p->ctr[SRN_RT_CTR_FABRIC_HELLOS]++;
			continue;
		}
		if (plen < 0) {
			p->ctr[SRN_RT_CTR_RX_BAD_IP]++;
			sink->malformed(sink->ctx);
			continue;
		}
		if (memcmp(meta.dst_gid + 12, &p->udp.ip.s_addr, 4) != 0 || meta.l4.dst != p->udp.port) {
			p->ctr[SRN_RT_CTR_RX_NOT_MINE]++;
			sink->malformed(sink->ctx);
			continue;
		}
		sink->packet(sink->ctx, pkt + off, (size_t)plen, &meta);
	}
	return n;
}

static int fabric_route(const struct srn_rt_port *p, const struct srn_pkt_meta *m)
{
	return srn_rt_udp_sock_of(&p->udp, m->l4.src);
}

static int fabric_flush(struct srn_rt_port *p)
{
	return flush_fabric(&p->udp, &p->tx, &p->ctr[SRN_RT_CTR_TX_BATCHES]);
}

static void fabric_close(struct srn_rt_port *p)
{
	srn_rt_udp_close(&p->udp);
}

static const struct srn_rt_port_ops fabric_ops = {
	.name = "fabric", .recv = fabric_recv, .route = fabric_route, .flush = fabric_flush,
	.close = fabric_close,
};

int srn_rt_port_open_fabric(struct srn_rt_port *p, const char *name, struct in_addr ip,
			    uint16_t port, const struct sockaddr_in *fab, int hello_ms)
{
	int r = srn_rt_udp_open_fabric(&p->udp, ip, port, fab);
	if (r < 0)
		return r;
	p->ops = &fabric_ops;
	p->fd = p->udp.rx_fd;
	p->l4 = p->udp.l4;
	p->n_l4 = SRN_RT_NSEND;
	/* the port is active once the fabric has echoed our HELLO */
	if ((r = srn_rt_fabric_hello(&p->udp, hello_ms)) < 0) {
		char a[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &fab->sin_addr, a, sizeof a);
		fprintf(stderr, "softrnic: %s: the fabric at %s:%u did not answer HELLO within %d ms: %s "
			"(is `softrnic fabric --listen %s:%u` running?)\n", name, a, ntohs(fab->sin_port),
			hello_ms, strerror(-r), a, ntohs(fab->sin_port));
		srn_rt_udp_close(&p->udp);
		return r;
	}
	return 0;
}
