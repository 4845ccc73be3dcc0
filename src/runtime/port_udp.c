/*
 * port_udp.c - the datagram port: the runtime's UDP sockets and batched I/O.
 *
 * One receive socket bound to IP:4791 (non-blocking, IP_PKTINFO for the
 * destination address, IP_RECVTOS for the ECN bits, IP_RECVTTL), and
 * SRN_RT_NSEND unconnected send sockets bound to IP:0 whose kernel-chosen
 * ports are the UDP source ports the core picks from per flow (W-02). The
 * ICRC covers the UDP source port, so a packet must leave from exactly the
 * socket that owns meta.l4.src.
 *
 * Send sockets have SO_NO_CHECK (the UDP checksum is 0 as on RoCEv2 NICs)
 * unless they use UDP GSO, which the kernel refuses without a checksum:
 * then the kernel writes a valid one. The ICRC masks the UDP checksum, so
 * either is right on the wire.
 *
 * Offload (default; SOFTRNIC_OFFLOAD=0 turns it off): UDP_SEGMENT on send -
 * a run of equal-size packets of one flow goes to the kernel as one send of
 * up to 64 segments, which the kernel (or the NIC) cuts into datagrams with
 * IPv4 IDs 0, 1, 2, ... (udp_flush rewrites each packet's ICRC for its ID,
 * wire/icrc_id.c); UDP_GRO on receive - such a run arrives as one datagram
 * with its segment size, and the receiver hands the core each segment with
 * its index as the ID hint. One syscall and one skb per run instead of one
 * per packet: on loopback 3x less CPU per 4 KiB packet.
 * Every socket has IP_MTU_DISCOVER = IP_PMTUDISC_DO: the kernel sets DF and,
 * for an unconnected socket, IP identification 0 on every datagram - the
 * values the core puts into the ICRC (which covers the IPv4 ID and flags).
 *
 * Per packet there is no allocation and no syscall: receive is one
 * recvmmsg per SRN_RT_BATCH datagrams into preallocated buffers; send is
 * one sendmmsg per send socket per batch, with the ECN bits (and TTL) of
 * each packet in an IP_TOS (IP_TTL) control message. Send sockets are
 * blocking, so a full socket buffer back-pressures the sender instead of
 * dropping.
 *
 * As a port (srn_rt_port, rt_internal.h) it hands every packet of a
 * receive batch to the runtime's sink, GRO datagrams cut into their
 * segments with each segment's index as its IPv4 ID hint.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#include "rt_internal.h"

void srn_rt_udp_set_bufs(int fd, int rcv, int snd)
{
	/* SO_*BUFFORCE ignores rmem_max/wmem_max but needs CAP_NET_ADMIN */
	if (rcv && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
	if (snd && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof snd) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd);
}

int srn_rt_udp_sock(struct in_addr ip, uint16_t port, bool nonblock, uint16_t *bound_port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return -errno;
	int pmtu = IP_PMTUDISC_DO;
	if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu) < 0)
		goto fail;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = ip };
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		goto fail;
	socklen_t sl = sizeof sa;
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		goto fail;
	*bound_port = ntohs(sa.sin_port);
	return fd;
fail:;
	int e = -errno;
	close(fd);
	return e;
}

int srn_rt_udp_open(struct srn_rt_udp *u, struct in_addr ip, uint16_t port, bool offload)
{
	char a[INET_ADDRSTRLEN];
	int one = 1, r;
	uint16_t p;

	inet_ntop(AF_INET, &ip, a, sizeof a);
	memset(u, 0, sizeof(*u));       /* the plain UDP backend: u->fabric false */
	u->rx_fd = -1;
	for (int i = 0; i < SRN_RT_NSEND; i++)
		u->tx_fd[i] = -1;
	u->ip = ip;
	u->port = port;

	r = srn_rt_udp_sock(ip, port, true, &p);
	if (r < 0) {
		fprintf(stderr, "softrnic: cannot bind UDP %s:%u: %s%s\n", a, port, strerror(-r),
			r == -EADDRNOTAVAIL ? " (address not configured on this host)" :
			r == -EADDRINUSE ? " (another process or device uses it)" : "");
		return r;
	}
	u->rx_fd = r;
	srn_rt_udp_set_bufs(u->rx_fd, SRN_RT_SOCKBUF, 0);
	if (setsockopt(u->rx_fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one) < 0 ||
	    setsockopt(u->rx_fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof one) < 0 ||
	    setsockopt(u->rx_fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof one) < 0) {
		r = -errno;
		fprintf(stderr, "softrnic: UDP %s:%u: setsockopt: %s\n", a, port, strerror(-r));
		goto fail;
	}
	/* a kernel without UDP GRO (before 5.0) just keeps one datagram per packet */
	u->gro = offload && setsockopt(u->rx_fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
	u->gso = offload;
	for (int i = 0; i < SRN_RT_NSEND; i++) {
		r = srn_rt_udp_sock(ip, 0, false, &p);
		if (r < 0) {
			fprintf(stderr, "softrnic: cannot bind UDP send socket on %s: %s\n", a,
				strerror(-r));
			goto fail;
		}
		u->tx_fd[i] = r;
		u->l4[i] = (struct srn_l4){ .src = p, .dst = SRN_ROCEV2_UDP_PORT };
		/* nothing is ever sent to these ports: keep their receive buffer tiny */
		srn_rt_udp_set_bufs(r, 4096, SRN_RT_SOCKBUF);
		/* UDP checksum 0, as RoCEv2 NICs send it (the ICRC protects the
		 * packet) and as the capture writes it - not with GSO, which
		 * needs the kernel's checksum */
		if (!u->gso && setsockopt(r, SOL_SOCKET, SO_NO_CHECK, &one, sizeof one) < 0) {
			r = -errno;
			fprintf(stderr, "softrnic: UDP send socket: SO_NO_CHECK: %s\n", strerror(-r));
			goto fail;
		}
	}
	return 0;
fail:
	srn_rt_udp_close(u);
	return r;
}

void srn_rt_udp_close(struct srn_rt_udp *u)
{
	if (u->rx_fd >= 0)
		close(u->rx_fd);
	u->rx_fd = -1;
	for (int i = 0; i < SRN_RT_NSEND; i++) {
		if (u->tx_fd[i] >= 0)
			close(u->tx_fd[i]);
		u->tx_fd[i] = -1;
	}
}

int srn_rt_rxbatch_init(struct srn_rt_rxbatch *b)
{
	memset(b, 0, sizeof *b);
	b->data = malloc((size_t)SRN_RT_BATCH * SRN_RT_RXBUFSZ);
	if (!b->data)
		return -ENOMEM;
	for (int i = 0; i < SRN_RT_BATCH; i++) {
		b->iov[i].iov_base = b->data + (size_t)i * SRN_RT_RXBUFSZ;
		b->iov[i].iov_len = SRN_RT_RXBUFSZ;
		b->msg[i].msg_hdr.msg_iov = &b->iov[i];
		b->msg[i].msg_hdr.msg_iovlen = 1;
		b->msg[i].msg_hdr.msg_name = &b->from[i];
		b->msg[i].msg_hdr.msg_control = b->ctl[i].buf;
	}
	b->dirty = SRN_RT_BATCH;
	return 0;
}

void srn_rt_rxbatch_free(struct srn_rt_rxbatch *b)
{
	free(b->data);
	b->data = NULL;
}

int srn_rt_txbatch_init(struct srn_rt_txbatch *b)
{
	memset(b, 0, sizeof *b);
	b->data = malloc((size_t)SRN_RT_BATCH * SRN_RT_BUFSZ);
	return b->data ? 0 : -ENOMEM;
}

void srn_rt_txbatch_free(struct srn_rt_txbatch *b)
{
	free(b->data);
	b->data = NULL;
}

int srn_rt_udp_recv(struct srn_rt_udp *u, struct srn_rt_rxbatch *b)
{
	/* only the entries the last call filled need their lengths restored */
	for (int i = 0; i < b->dirty; i++) {
		b->msg[i].msg_hdr.msg_namelen = sizeof b->from[i];
		b->msg[i].msg_hdr.msg_controllen = sizeof b->ctl[i].buf;
		b->msg[i].msg_hdr.msg_flags = 0;
		b->msg[i].msg_len = 0;
	}
	b->dirty = 0;
	for (;;) {
		int n = recvmmsg(u->rx_fd, b->msg, SRN_RT_BATCH, MSG_DONTWAIT, NULL);
		if (n >= 0) {
			b->dirty = n;
			return n;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -errno;
	}
}

int srn_rt_udp_rx_meta(const struct srn_rt_udp *u, const struct srn_rt_rxbatch *b, int i,
		       struct srn_pkt_meta *meta)
{
	const struct msghdr *mh = &b->msg[i].msg_hdr;
	struct in_addr dst = u->ip;
	int tos = 0, ttl = 64, gso = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR((struct msghdr *)mh, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			memcpy(&gso, CMSG_DATA(c), sizeof gso);
			continue;
		}
		if (c->cmsg_level != IPPROTO_IP)
			continue;
		if (c->cmsg_type == IP_PKTINFO && c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo))) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof pi);
			dst = pi.ipi_addr;      /* destination address of the IP header */
		} else if (c->cmsg_type == IP_TOS && c->cmsg_len >= CMSG_LEN(1)) {
			tos = *(const uint8_t *)CMSG_DATA(c);
		} else if (c->cmsg_type == IP_TTL && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			memcpy(&ttl, CMSG_DATA(c), sizeof ttl);
		}
	}
	memset(meta, 0, sizeof *meta);
	srn_rt_gid_from_ip(meta->src_gid, b->from[i].sin_addr);
	srn_rt_gid_from_ip(meta->dst_gid, dst);
	meta->l4.src = ntohs(b->from[i].sin_port);
	meta->l4.dst = u->port;
	meta->ecn = (uint8_t)(tos & 3);
	meta->dscp = (uint8_t)((tos >> 2) & 0x3f);
	meta->ttl = (uint8_t)ttl;
	meta->l4.ip_id = 0;   /* not visible to a UDP socket; DF senders use 0 (a hint) */
	return gso > 0 && (size_t)gso < b->msg[i].msg_len ? gso : 0;
}

int srn_rt_udp_sock_of(const struct srn_rt_udp *u, uint16_t sport)
{
	for (int i = 0; i < SRN_RT_NSEND; i++)
		if (u->l4[i].src == sport)
			return i;
	return -1;
}

static void put_int_cmsg(struct cmsghdr *c, int type, int val)
{
	c->cmsg_level = IPPROTO_IP;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &val, sizeof val);
}

/* May packet j join the GSO run that starts at packet f (k packets, tot bytes
 * so far)? Same destination, TOS and TTL; every packet but the last of a run
 * has the first one's size; a shorter one ends the run. */
static bool gso_joins(const struct srn_rt_txbatch *b, int f, int j, int k, size_t tot)
{
	const struct srn_pkt_meta *a = &b->meta[f], *m = &b->meta[j];
	return k < SRN_RT_GSO_SEGS && tot + b->len[j] <= SRN_RT_GSO_BYTES &&
	       b->len[j] <= b->len[f] && m->l4.dst == a->l4.dst &&
	       memcmp(m->dst_gid + 12, a->dst_gid + 12, 4) == 0 &&
	       m->ecn == a->ecn && m->dscp == a->dscp && m->ttl == a->ttl;
}

/* the kernel numbers a GSO send's segments 0, 1, 2, ...: rewrite the ICRC
 * and meta.ip_id of packets idx[0..n) for IDs 0..n-1 (or all 0 if `zero`).
 * Idempotent: a run rebuilt after a partial sendmmsg is renumbered from the
 * IDs its packets already carry. */
static void set_ids(struct srn_rt_txbatch *b, const int *idx, int n, bool zero)
{
	uint32_t shift = 0;
	size_t shift_len = 0;
	for (int k = 0; k < n; k++) {
		int j = idx[k];
		uint16_t to = zero ? 0 : (uint16_t)k, from = b->meta[j].l4.ip_id;
		if (from == to)
			continue;
		if (b->len[j] != shift_len) {
			shift_len = b->len[j];
			shift = srn_icrc_id_shift(shift_len);
		}
		srn_icrc_set_id(b->data + (size_t)j * SRN_RT_BUFSZ, b->len[j], shift, from, to);
		b->meta[j].l4.ip_id = to;
	}
}

static void put_u16_cmsg(struct cmsghdr *c, int level, int type, uint16_t val)
{
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	memcpy(CMSG_DATA(c), &val, sizeof val);
}

/* Build messages for packets idx[0..cnt) of one socket into b->msg, runs
 * joined by GSO when u->gso; returns the number of messages. b->segs[m] is
 * the number of packets of message m. */
static int build_msgs(struct srn_rt_udp *u, struct srn_rt_txbatch *b, const int *idx, int cnt)
{
	int nm = 0;
	for (int p = 0; p < cnt; nm++) {
		int f = idx[p], k = 1;
		size_t tot = b->len[f];
		if (u->gso) {
			while (p + k < cnt && gso_joins(b, f, idx[p + k], k, tot)) {
				tot += b->len[idx[p + k]];
				k++;
				if (b->len[idx[p + k - 1]] < b->len[f])
					break;               /* a shorter packet ends the run */
			}
		}
		set_ids(b, idx + p, k, false);
		const struct srn_pkt_meta *m = &b->meta[f];
		struct msghdr *mh = &b->msg[nm].msg_hdr;
		for (int q = 0; q < k; q++) {
			b->iov[p + q].iov_base = b->data + (size_t)idx[p + q] * SRN_RT_BUFSZ;
			b->iov[p + q].iov_len = b->len[idx[p + q]];
		}
		b->to[nm].sin_family = AF_INET;
		b->to[nm].sin_port = htons(m->l4.dst);
		memcpy(&b->to[nm].sin_addr.s_addr, m->dst_gid + 12, 4);
		memset(mh, 0, sizeof *mh);
		mh->msg_name = &b->to[nm];
		mh->msg_namelen = sizeof b->to[nm];
		mh->msg_iov = &b->iov[p];
		mh->msg_iovlen = (size_t)k;
		mh->msg_control = b->ctl[nm].buf;
		struct cmsghdr *c = (struct cmsghdr *)b->ctl[nm].buf;
		put_int_cmsg(c, IP_TOS, ((m->dscp & 0x3f) << 2) | (m->ecn & 3));
		size_t clen = CMSG_SPACE(sizeof(int));
		if (m->ttl) {
			c = (struct cmsghdr *)(b->ctl[nm].buf + clen);
			put_int_cmsg(c, IP_TTL, m->ttl);
			clen += CMSG_SPACE(sizeof(int));
		}
		if (k > 1) {
			c = (struct cmsghdr *)(b->ctl[nm].buf + clen);
			put_u16_cmsg(c, SOL_UDP, UDP_SEGMENT, (uint16_t)b->len[f]);
			clen += CMSG_SPACE(sizeof(uint16_t));
			b->gso_sends++;
		}
		mh->msg_controllen = clen;
		b->segs[nm] = (uint16_t)k;
		p += k;
	}
	return nm;
}

int srn_rt_udp_flush(struct srn_rt_udp *u, struct srn_rt_txbatch *b, uint64_t *batches)
{
	int failed = 0;
	int idx[SRN_RT_BATCH];

	for (int s = 0; s < SRN_RT_NSEND && b->n; s++) {
		int cnt = 0;
		for (int i = 0; i < b->n; i++)
			if (b->sock[i] == s)
				idx[cnt++] = i;
		int done = 0;                  /* packets of idx[] sent or given up */
		while (done < cnt) {
			int nm = build_msgs(u, b, idx + done, cnt - done);
			int r = sendmmsg(u->tx_fd[s], b->msg, (unsigned)nm, 0);
			if (r > 0) {
				if (batches)
					(*batches)++;
				for (int m = 0; m < r; m++)
					done += b->segs[m];
				continue;
			}
			if (r < 0 && errno == EINTR)
				continue;
			if (b->segs[0] > 1 && (errno == EINVAL || errno == EIO || errno == ENOPROTOOPT ||
					       errno == EOPNOTSUPP)) {
				/* no GSO here after all (an old kernel, a device
				 * without checksum offload): IDs back to 0, send
				 * one datagram per packet from now on */
				set_ids(b, idx + done, b->segs[0], true);
				b->gso_sends--;
				u->gso = false;
				continue;
			}
			failed += b->segs[0];      /* lost (e.g. ENETUNREACH) */
			done += b->segs[0];
		}
	}
	b->n = 0;
	return failed;
}

/* ---- the port --------------------------------------------------------- */

/* one recvmmsg batch; every packet to the sink (a GRO datagram holds
 * segments of `seg` bytes, the last maybe shorter, the i-th sent with IPv4
 * ID i: the ICRC check's hint) */
static int udp_recv(struct srn_rt_port *p, const struct srn_rt_rx_sink *sink)
{
	int n = srn_rt_udp_recv(&p->udp, &p->rx);
	for (int i = 0; i < n; i++) {
		const struct mmsghdr *mm = &p->rx.msg[i];
		const uint8_t *pkt = p->rx.iov[i].iov_base;
		p->rx_bytes += mm->msg_len;
		if (mm->msg_hdr.msg_flags & MSG_TRUNC) {
			p->ctr[SRN_RT_CTR_RX_TRUNC]++;
			sink->malformed(sink->ctx);
			continue;
		}
		struct srn_pkt_meta meta;
		size_t seg = (size_t)srn_rt_udp_rx_meta(&p->udp, &p->rx, i, &meta);
		if (!seg)
			seg = mm->msg_len;
		else
			p->ctr[SRN_RT_CTR_RX_GRO_DGRAMS]++;
		uint16_t id = 0;
		for (size_t off = 0; off < mm->msg_len; off += seg, id++) {
			size_t l = mm->msg_len - off < seg ? mm->msg_len - off : seg;
			if (l > SRN_MAX_PKT) {
				p->ctr[SRN_RT_CTR_RX_TRUNC]++;
				sink->malformed(sink->ctx);
				continue;
			}
			meta.l4.ip_id = id;
			sink->packet(sink->ctx, pkt + off, l, &meta);
		}
	}
	return n;
}

static int udp_route(const struct srn_rt_port *p, const struct srn_pkt_meta *m)
{
	return srn_rt_udp_sock_of(&p->udp, m->l4.src);
}

static int udp_flush(struct srn_rt_port *p)
{
	int failed = srn_rt_udp_flush(&p->udp, &p->tx, &p->ctr[SRN_RT_CTR_TX_BATCHES]);
	p->ctr[SRN_RT_CTR_TX_GSO_SENDS] = p->tx.gso_sends;
	return failed;
}

static void udp_close(struct srn_rt_port *p)
{
	srn_rt_udp_close(&p->udp);
}

static const struct srn_rt_port_ops udp_ops = {
	.name = "udp", .recv = udp_recv, .route = udp_route, .flush = udp_flush, .close = udp_close,
};

int srn_rt_port_open_udp(struct srn_rt_port *p, struct in_addr ip, uint16_t port, bool offload)
{
	int r = srn_rt_udp_open(&p->udp, ip, port, offload);
	if (r < 0)
		return r;
	p->ops = &udp_ops;
	p->fd = p->udp.rx_fd;
	p->l4 = p->udp.l4;
	p->n_l4 = SRN_RT_NSEND;
	return 0;
}
