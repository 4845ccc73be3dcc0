/*
 * rt_internal.h - internals of the real-time runtime shared between its
 * files (and its unit tests). Not part of the verbs-facing interface.
 *
 *   config.c     srn_rt_config_load, parsing helpers, GUID derivation
 *   clock.c      monotonic / realtime clocks
 *   udp.c        sockets, batched receive (recvmmsg) and send (sendmmsg)
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
uint64_t srn_rt_guid_derive(const char *name, struct in_addr ip);
void srn_rt_gid_from_ip(uint8_t gid[16], struct in_addr ip);

/* ---- clock.c --------------------------------------------------------- */
uint64_t srn_rt_realtime_ns(void);

/* ---- udp.c ----------------------------------------------------------- */
#define SRN_RT_NSEND     4      /* send sockets = UDP source ports (flow entropy) */
#define SRN_RT_BATCH     64     /* datagrams per recvmmsg / sendmmsg */
#define SRN_RT_SOCKBUF   (8 << 20)  /* >= the core's default 1024 packets in flight */
#define SRN_RT_BUFSZ     (SRN_MAX_PKT + 64) /* > SRN_MAX_PKT so oversize shows as MSG_TRUNC */

struct srn_rt_rxbatch {
	struct mmsghdr msg[SRN_RT_BATCH];
	struct iovec iov[SRN_RT_BATCH];
	struct sockaddr_in from[SRN_RT_BATCH];
	/* IP_PKTINFO + IP_TOS + IP_TTL */
	union { char buf[CMSG_SPACE(sizeof(struct in_pktinfo)) + 2 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align; } ctl[SRN_RT_BATCH];
	uint8_t *data;          /* SRN_RT_BATCH * SRN_RT_BUFSZ */
	int dirty;              /* entries whose lengths the last recvmmsg changed */
};

struct srn_rt_txbatch {
	int n;                          /* packets queued */
	uint8_t *data;                  /* SRN_RT_BATCH * SRN_RT_BUFSZ */
	size_t len[SRN_RT_BATCH];
	struct srn_pkt_meta meta[SRN_RT_BATCH];
	uint8_t sock[SRN_RT_BATCH];     /* index of the send socket */
	/* scratch for sendmmsg, per socket group */
	struct mmsghdr msg[SRN_RT_BATCH];
	struct iovec iov[SRN_RT_BATCH];
	struct sockaddr_in to[SRN_RT_BATCH];
	union { char buf[2 * CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl[SRN_RT_BATCH];
};

struct srn_rt_udp {
	int rx_fd;
	int tx_fd[SRN_RT_NSEND];
	uint16_t sports[SRN_RT_NSEND];  /* host order */
	struct in_addr ip;
	uint16_t port;
};

/* Open the receive socket on ip:port and the send sockets on ip:0.
 * Returns 0 or -errno (with a message on stderr). */
int  srn_rt_udp_open(struct srn_rt_udp *u, struct in_addr ip, uint16_t port);
void srn_rt_udp_close(struct srn_rt_udp *u);
int  srn_rt_rxbatch_init(struct srn_rt_rxbatch *b);
void srn_rt_rxbatch_free(struct srn_rt_rxbatch *b);
int  srn_rt_txbatch_init(struct srn_rt_txbatch *b);
void srn_rt_txbatch_free(struct srn_rt_txbatch *b);
/* One non-blocking recvmmsg; returns datagrams received (0 if none), or -errno. */
int  srn_rt_udp_recv(struct srn_rt_udp *u, struct srn_rt_rxbatch *b);
/* Fill meta of datagram i from its addresses and control messages. */
void srn_rt_udp_rx_meta(const struct srn_rt_udp *u, const struct srn_rt_rxbatch *b, int i,
			struct srn_pkt_meta *meta);
/* Index of the send socket with UDP source port sport, or -1. */
int  srn_rt_udp_sock_of(const struct srn_rt_udp *u, uint16_t sport);
/* Send every queued packet of b (grouped per send socket, in order within a
 * socket) and empty b. Returns the number of packets that failed. */
int  srn_rt_udp_flush(struct srn_rt_udp *u, struct srn_rt_txbatch *b, uint64_t *batches);

/* ---- pcap.c ---------------------------------------------------------- */
#define SRN_RT_FRAME_HDR (14 + 20 + 8)   /* Ethernet + IPv4 + UDP */
struct srn_rt_pcap;
/* Synthesised Ethernet MAC of an IPv4 address: 02:00:a:b:c:d (locally administered). */
void srn_rt_pcap_mac(uint8_t mac[6], const uint8_t ip4[4]);
/* IPv4 header checksum of hdr[0..len) */
uint16_t srn_rt_ip_csum(const uint8_t *hdr, size_t len);
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

#endif /* SRN_RT_INTERNAL_H */
