/*
 * rt_internal.h - internals of the real-time runtime shared between its
 * files (and its unit tests). Not part of the verbs-facing interface.
 *
 *   config.c     srn_rt_config_load, parsing helpers, GUID derivation
 *   clock.c      monotonic / realtime clocks
 *   udp.c        sockets, batched receive (recvmmsg) and send (sendmmsg);
 *                the fabric backend (whole IPv4 packets to `softrnic fabric`)
 *   ipv4.c       the IPv4+UDP header as the kernel writes it, and its parser
 *   pcap.c       capture: Ethernet+IPv4+UDP frame synthesis, libpcap dump
 *   stats_shm.c  live counters in /dev/shm (writer side; reader in srn_rt_stats.h)
 *   rt_dev.c     device registry, lock/unlock/progress, progress thread
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
/* Parse "name=ip[,name=ip...]" into out[]; returns count or -1 (message to
 * stderr, prefixed by `what`). Exposed for the unit tests. */
int srn_rt_config_parse_list(const char *s, const char *what,
			     struct srn_rt_devcfg *out, int max);
/* Parse a config file text ("device NAME IP" lines, '#' comments). */
int srn_rt_config_parse_text(const char *text, const char *what,
			     struct srn_rt_devcfg *out, int max);
/* Parse SOFTRNIC_FABRIC's "A.B.C.D:PORT"; 0, or -1 with a message on stderr
 * prefixed by `what`. */
int srn_rt_config_parse_fabric(const char *s, const char *what, struct sockaddr_in *sa);
uint64_t srn_rt_guid_derive(const char *name, struct in_addr ip);
void srn_rt_gid_from_ip(uint8_t gid[16], struct in_addr ip);

/* ---- clock.c --------------------------------------------------------- */
uint64_t srn_rt_realtime_ns(void);

/* ---- udp.c ----------------------------------------------------------- */
#define SRN_RT_NSEND     4      /* send sockets = UDP source ports (flow entropy) */
#define SRN_RT_BATCH     64     /* datagrams per recvmmsg / sendmmsg */
#define SRN_RT_SOCKBUF   (8 << 20)  /* >= the core's default 1024 packets in flight */
#define SRN_RT_IPUDP_HDR 28     /* IPv4 (IHL 5) + UDP header (ipv4.c) */
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
	uint16_t sports[SRN_RT_NSEND];  /* host order */
	struct in_addr ip;
	uint16_t port;
	bool fabric;                    /* whole IPv4 packets to/from `softrnic fabric` */
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
int  srn_rt_rxbatch_init(struct srn_rt_rxbatch *b);
void srn_rt_rxbatch_free(struct srn_rt_rxbatch *b);
int  srn_rt_txbatch_init(struct srn_rt_txbatch *b);
void srn_rt_txbatch_free(struct srn_rt_txbatch *b);
/* Fabric backend (docs/fabric.md, attachment protocol): one UDP socket bound
 * to ip:0 and connected to the fabric at fab; every packet goes out as a
 * whole IPv4+UDP+RoCEv2 packet in one datagram. The core's UDP source ports
 * (sports) are virtual: they are written into the UDP header. Returns 0 or
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

/* ---- ipv4.c ---------------------------------------------------------- */
#define SRN_RT_HELLO_LEN   20    /* fabric attach: an IPv4 header alone */
#define SRN_RT_HELLO_PROTO 253   /* its protocol number (RFC 3692 experimental) */
/* IPv4 header checksum of hdr[0..len) */
uint16_t srn_rt_ip_csum(const uint8_t *hdr, size_t len);
/* Write the IPv4 + UDP headers (28 bytes) of a UDP payload of paylen bytes
 * as the kernel sends it (see ipv4.c); returns 28, or 0 if cap < 28 or the
 * packet would exceed 65535 bytes. */
size_t srn_rt_ipv4_udp_write(uint8_t *out, size_t cap, const struct srn_ip_info *ip,
			     size_t paylen);
/* The fabric HELLO of a device with address self (docs/fabric.md). */
void srn_rt_hello_write(uint8_t out[SRN_RT_HELLO_LEN], struct in_addr self);
/* Parse one datagram d[0..len) holding a whole IPv4 packet. On success fills
 * m (addresses, UDP ports, ECN/DSCP, TTL, IP ID) and *off (the offset of the
 * UDP payload) and returns the UDP payload length (>= 0). Otherwise one of: */
enum {
	SRN_RT_IP_ETRUNC = -1,   /* shorter than its headers */
	SRN_RT_IP_EVERSION = -2, /* not IPv4 */
	SRN_RT_IP_EIHL = -3,     /* IHL < 5 or beyond the datagram */
	SRN_RT_IP_ELEN = -4,     /* total length != datagram length */
	SRN_RT_IP_ECSUM = -5,    /* bad header checksum */
	SRN_RT_IP_EPROTO = -6,   /* not UDP */
	SRN_RT_IP_EFRAG = -7,    /* a fragment (MF or offset) */
	SRN_RT_IP_EUDPLEN = -8,  /* UDP length != what the IPv4 header leaves */
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
/* ip info of a packet from its core meta (sent or received) */
void srn_rt_ipinfo_from_meta(struct srn_ip_info *ip, const struct srn_pkt_meta *m);

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
