/*
 * rt_internal.h - internals of the real-time runtime shared between its
 * files (and its unit tests). Not part of the verbs-facing interface.
 *
 *   config.c      srn_rt_config_load, parsing helpers, GUID derivation
 *   clock.c       monotonic / realtime clocks
 *   port_udp.c    the datagram port: UDP sockets, recvmmsg / sendmmsg batches,
 *                 UDP GSO/GRO
 *   port_fabric.c the fabric port: whole IPv4 packets to/from `softrnic fabric`
 *   ipv4.c        the fabric attachment's HELLO and packet parser
 *   pcap.c        capture: Ethernet+IPv4+UDP frame synthesis, libpcap dump
 *   stats_shm.c   live counters in /dev/shm (writer side; reader in srn_rt_stats.h)
 *   rt_service.c  a service pass: port -> core -> port, events, counters
 *   rt_lock.c     the device lock and the doorbell / progress policy
 *   rt_thread.c   the progress thread
 *   rt_dev.c      device creation and the per-process registry
 *
 * The I/O under a device is a port (struct srn_rt_port): a table of ops
 * (receive a batch into a sink, route and flush the transmit batch) over
 * its sockets. Today's ports carry datagrams (UDP, the fabric); a
 * packet or stream port (iWARP's TCP) is another ops table.
 */
#ifndef SRN_RT_INTERNAL_H
#define SRN_RT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "srn_rt.h"
#include "srn_rt_stats.h"

/* ---- config.c -------------------------------------------------------- */
/* Parse a config file text ("device NAME IP" lines, '#' comments). */
int srn_rt_config_parse_text(const char *text, const char *what,
			     struct srn_rt_devcfg *out, int max);
uint64_t srn_rt_guid_derive(const char *name, struct in_addr ip);

/* ---- the runtime's own counters (published after the core's) ---------- */
#define SRN_RT_COUNTERS(X) X(RX_BATCHES) X(TX_BATCHES) X(RX_TRUNC) X(RX_ERRORS) \
	X(TX_ERRORS) X(TX_NO_SOCKET) X(WAKEUPS) X(KICKS) \
	X(RX_BAD_IP) X(RX_NOT_MINE) X(FABRIC_HELLOS) X(TX_GSO_SENDS) X(RX_GRO_DGRAMS) X(RX_SPINS)
enum srn_rt_ctr {
#define SRN_RT_CTR_ENUM(n) SRN_RT_CTR_##n,
	SRN_RT_COUNTERS(SRN_RT_CTR_ENUM)
#undef SRN_RT_CTR_ENUM
	SRN_RT_CTR_MAX
};
extern const char *const srn_rt_ctr_names[SRN_RT_CTR_MAX];

/* ---- port_udp.c: sockets and batches --------------------------------- */
#define SRN_RT_NSEND     4      /* send sockets = UDP source ports (flow entropy) */
#define SRN_RT_BATCH     64     /* datagrams per recvmmsg / sendmmsg */
#define SRN_RT_SOCKBUF   (8 << 20)  /* >= the core's default 1024 packets in flight */
#define SRN_RT_IPUDP_HDR SRN_IPV4_UDP_HDR_LEN  /* IPv4 (IHL 5) + UDP header */
#define SRN_RT_BUFSZ     (SRN_MAX_PKT + 64) /* > SRN_MAX_PKT so oversize shows as MSG_TRUNC */
/* a receive buffer holds a whole UDP GRO datagram (up to 64 segments) */
#define SRN_RT_RXBUFSZ   65536
/* UDP GSO: at most the kernel's UDP_MAX_SEGMENTS segments, and the whole
 * send must fit one UDP datagram */
#define SRN_RT_GSO_SEGS  SRN_GSO_ID_SPAN
#define SRN_RT_GSO_BYTES 65507

struct srn_rt_rxbatch {
	struct mmsghdr msg[SRN_RT_BATCH];
	struct iovec iov[SRN_RT_BATCH];
	struct sockaddr_in from[SRN_RT_BATCH];
	/* IP_PKTINFO + IP_TOS + IP_TTL + UDP_GRO */
	union { char buf[CMSG_SPACE(sizeof(struct in_pktinfo)) + 3 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align; } ctl[SRN_RT_BATCH];
	uint8_t *data;          /* SRN_RT_BATCH * SRN_RT_RXBUFSZ */
	int dirty;              /* entries whose lengths the last recvmmsg changed */
};

struct srn_rt_txbatch {
	int n;                          /* packets queued */
	/* fabric backend: the IPv4+UDP header of each packet (ipv4.c) */
	uint8_t hdr[SRN_RT_BATCH][SRN_RT_IPUDP_HDR];
	struct iovec fiov[SRN_RT_BATCH][2];
	uint8_t *data;                  /* SRN_RT_BATCH * SRN_RT_BUFSZ */
	size_t len[SRN_RT_BATCH];
	struct srn_pkt_meta meta[SRN_RT_BATCH];
	uint8_t sock[SRN_RT_BATCH];     /* index of the send socket */
	/* scratch for sendmmsg, per socket group */
	struct mmsghdr msg[SRN_RT_BATCH];
	struct iovec iov[SRN_RT_BATCH];
	struct sockaddr_in to[SRN_RT_BATCH];
	/* IP_TOS + IP_TTL + UDP_SEGMENT */
	union { char buf[2 * CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align; } ctl[SRN_RT_BATCH];
	uint16_t segs[SRN_RT_BATCH];    /* packets in each message of the last sendmmsg */
	uint64_t gso_sends;             /* messages that carried more than one packet */
};

struct srn_rt_udp {
	int rx_fd;                      /* fabric backend: the one fabric socket */
	int tx_fd[SRN_RT_NSEND];        /* fabric backend: all -1 */
	struct srn_l4 l4[SRN_RT_NSEND]; /* the core's L4 tokens: UDP source port i (host order), to 4791 */
	struct in_addr ip;
	uint16_t port;
	bool gso;                       /* send runs of equal-size packets as one UDP GSO send */
	bool gro;                       /* the receive socket has UDP_GRO */
	struct sockaddr_in fab;         /* the fabric's address */
};

/* Open the receive socket on ip:port and the send sockets on ip:0; with
 * offload, UDP GSO on the send sockets and UDP GRO on the receive socket
 * (each only if the kernel has it). Returns 0 or -errno (with a message on
 * stderr). */
int  srn_rt_udp_open(struct srn_rt_udp *u, struct in_addr ip, uint16_t port, bool offload);
void srn_rt_udp_close(struct srn_rt_udp *u);
/* a UDP socket bound to ip:port (0: any) with IP_PMTUDISC_DO; the fd, or
 * -errno. *bound_port: the port it got */
int  srn_rt_udp_sock(struct in_addr ip, uint16_t port, bool nonblock, uint16_t *bound_port);
/* socket buffers (SO_*BUFFORCE where allowed); 0 leaves one as it is */
void srn_rt_udp_set_bufs(int fd, int rcv, int snd);
int  srn_rt_rxbatch_init(struct srn_rt_rxbatch *b);
void srn_rt_rxbatch_free(struct srn_rt_rxbatch *b);
int  srn_rt_txbatch_init(struct srn_rt_txbatch *b);
void srn_rt_txbatch_free(struct srn_rt_txbatch *b);
/* Fabric backend (docs/fabric.md, attachment protocol): one UDP socket bound
 * to ip:0 and connected to the fabric at fab; every packet goes out as a
 * whole IPv4+UDP+RoCEv2 packet in one datagram. The core's UDP source ports
 * (L4 tokens) are virtual: they are written into the UDP header. Returns 0 or
 * -errno (with a message on stderr). */
int  srn_rt_udp_open_fabric(struct srn_rt_udp *u, struct in_addr ip, uint16_t port,
			    const struct sockaddr_in *fab);
/* Attach to the fabric: send HELLO every 100 ms until the fabric echoes it,
 * for at most timeout_ms. 0 or -errno (-ETIMEDOUT, -ECONNREFUSED...). */
int  srn_rt_fabric_hello(struct srn_rt_udp *u, int timeout_ms);
/* One non-blocking recvmmsg; returns datagrams received (0 if none), or -errno. */
int  srn_rt_udp_recv(struct srn_rt_udp *u, struct srn_rt_rxbatch *b);
/* Fill meta of datagram i from its addresses and control messages; returns
 * the UDP GRO segment size if the datagram holds several packets, else 0. */
int  srn_rt_udp_rx_meta(const struct srn_rt_udp *u, const struct srn_rt_rxbatch *b, int i,
			struct srn_pkt_meta *meta);
/* Index of the send socket with UDP source port sport, or -1. */
int  srn_rt_udp_sock_of(const struct srn_rt_udp *u, uint16_t sport);
/* Send every queued packet of b (grouped per send socket, in order within a
 * socket) and empty b. With u->gso, a run of consecutive packets of one
 * socket to one destination with the same TOS/TTL and size (the last may be
 * shorter) leaves as one UDP GSO send; the kernel gives its i-th segment
 * IPv4 ID i, so that packet's ICRC is rewritten for ID i and meta.ip_id set
 * to i (for the capture). Returns the number of packets that failed. */
int  srn_rt_udp_flush(struct srn_rt_udp *u, struct srn_rt_txbatch *b, uint64_t *batches);

/* ---- ports ------------------------------------------------------------ */
struct srn_rt_port;
/* where a port delivers what it receives (the runtime device) */
struct srn_rt_rx_sink {
	/* a received packet (BTH..ICRC) and its addressing (meta may be changed) */
	void (*packet)(void *ctx, const uint8_t *pkt, size_t len, struct srn_pkt_meta *meta);
	/* a datagram that holds no packet for this device (counted by the
	 * core as DROP_MALFORMED; the port counts why) */
	void (*malformed)(void *ctx);
	void *ctx;
};
struct srn_rt_port_ops {
	const char *name;
	/* one non-blocking receive batch, every packet to the sink; returns
	 * the datagrams read (0: none) or -errno */
	int  (*recv)(struct srn_rt_port *p, const struct srn_rt_rx_sink *sink);
	/* the send socket for a packet's addressing, or -1 (not ours) */
	int  (*route)(const struct srn_rt_port *p, const struct srn_pkt_meta *m);
	/* send every packet queued in p->tx and empty it; packets that failed */
	int  (*flush)(struct srn_rt_port *p);
	void (*close)(struct srn_rt_port *p);
};
struct srn_rt_port {
	const struct srn_rt_port_ops *ops;
	int fd;                         /* readable when packets wait */
	const struct srn_l4 *l4;        /* the L4 tokens the core may send from */
	uint32_t n_l4;
	struct srn_rt_txbatch tx;       /* packets for the next flush */
	struct srn_rt_rxbatch rx;
	size_t rx_bytes;                /* datagram bytes received (the caller resets it) */
	uint64_t *ctr;                  /* the runtime's counters (SRN_RT_CTR_*) */
	struct srn_rt_udp udp;          /* the datagram ports' sockets */
};
/* batches first (srn_rt_rxbatch_init/txbatch_init); 0 or -errno (message printed) */
int srn_rt_port_open_udp(struct srn_rt_port *p, struct in_addr ip, uint16_t port, bool offload);
/* behind `softrnic fabric` at fab; waits up to hello_ms for its HELLO echo */
int srn_rt_port_open_fabric(struct srn_rt_port *p, const char *name, struct in_addr ip,
			    uint16_t port, const struct sockaddr_in *fab, int hello_ms);

/* ---- ipv4.c: the fabric attachment's framing ------------------------- */
#define SRN_RT_HELLO_LEN   20    /* fabric attach: an IPv4 header alone */
#define SRN_RT_HELLO_PROTO 253   /* its protocol number (RFC 3692 experimental) */
/* The fabric HELLO of a device with address self (docs/fabric.md). */
void srn_rt_hello_write(uint8_t out[SRN_RT_HELLO_LEN], struct in_addr self);
/* Parse one datagram d[0..len) holding a whole IPv4 packet. On success fills
 * m (addresses, UDP ports, ECN/DSCP, TTL, IP ID marked exact) and *off (the
 * offset of the UDP payload) and returns the UDP payload length (>= 0).
 * Otherwise one of the SRN_IPV4_E* of srn_ipv4_udp_parse (src/wire), or: */
enum {
	SRN_RT_IP_ETRUNC = SRN_IPV4_ETRUNC,
	SRN_RT_IP_EVERSION = SRN_IPV4_EVERSION,
	SRN_RT_IP_EIHL = SRN_IPV4_EIHL,
	SRN_RT_IP_ELEN = SRN_IPV4_ELEN,
	SRN_RT_IP_ECSUM = SRN_IPV4_ECSUM,
	SRN_RT_IP_EPROTO = SRN_IPV4_EPROTO,
	SRN_RT_IP_EFRAG = SRN_IPV4_EFRAG,
	SRN_RT_IP_EUDPLEN = SRN_IPV4_EUDPLEN,
	SRN_RT_IP_HELLO = -9,    /* a fabric HELLO (echo), not a packet */
};
int srn_rt_ipv4_udp_parse(const uint8_t *d, size_t len, struct srn_pkt_meta *m, size_t *off);

/* ---- pcap.c ---------------------------------------------------------- */
#define SRN_RT_FRAME_HDR (14 + 20 + 8)   /* Ethernet + IPv4 + UDP */
struct srn_rt_pcap;
/* Synthesised Ethernet MAC of an IPv4 address: 02:00:a:b:c:d (locally administered). */
void srn_rt_pcap_mac(uint8_t mac[6], const uint8_t ip4[4]);
/* Write the full frame for UDP payload pkt[0..len) into out; returns frame
 * length or 0 if cap is too small. */
size_t srn_rt_pcap_frame(uint8_t *out, size_t cap, const struct srn_ip_info *ip,
			 const uint8_t *pkt, size_t len);
struct srn_rt_pcap *srn_rt_pcap_open(const char *path);   /* NULL + message on error */
void srn_rt_pcap_write(struct srn_rt_pcap *pc, const struct srn_ip_info *ip,
		       const uint8_t *pkt, size_t len);
void srn_rt_pcap_flush(struct srn_rt_pcap *pc);
void srn_rt_pcap_close(struct srn_rt_pcap *pc);

/* ---- stats_shm.c (writer) -------------------------------------------- */
struct srn_rt_shm_writer;
/* Create /dev/shm/softrnic.<name>.<pid> (or $SOFTRNIC_STATS_DIR/...) with
 * n counters named names[0..n). NULL (and a message) if it cannot. */
struct srn_rt_shm_writer *srn_rt_shm_create(const struct srn_rt_devcfg *cfg,
					    const char *const *names, uint32_t n);
/* Copy n values (seqlock-protected for readers). */
void srn_rt_shm_publish(struct srn_rt_shm_writer *w, const uint64_t *values, uint32_t n);
/* Remove the file and unmap. */
void srn_rt_shm_destroy(struct srn_rt_shm_writer *w);
const char *srn_rt_shm_path(const struct srn_rt_shm_writer *w);

/* ---- rt_dev.c: the doorbell rule ------------------------------------- */
/* Whether a post at `now` joins the transmit batch for the application's
 * next poll (true) or goes on the wire at once: it does within
 * SRN_RT_APP_POLL_NS of the last poll or batched post (`last_act`), and
 * while a run of batched posts started after the last poll
 * (`last_batch` > `last_poll`) is younger than SRN_RT_APP_RUN_NS.
 * Pure (times in, answer out), so tests can drive it with a fake clock. */
#define SRN_RT_APP_POLL_NS (15ull * 1000)
#define SRN_RT_APP_RUN_NS  (1000ull * 1000)
bool srn_rt_doorbell_batches(uint64_t now, uint64_t last_poll, uint64_t last_act,
			     uint64_t last_batch);

#endif /* SRN_RT_INTERNAL_H */
