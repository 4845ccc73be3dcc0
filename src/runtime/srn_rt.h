/*
 * srn_rt.h - the real-time runtime: drives one core device with real time,
 * UDP sockets, batched I/O, a background progress thread and pcap capture.
 *
 * Used by the verbs ABI layer (src/verbs) and by tools. The only module that
 * touches clocks, sockets and threads.
 *
 * Locking: each runtime device has one mutex that serialises every call into
 * its core device. The verbs layer takes it with srn_rt_lock(), calls the
 * core, and releases it with srn_rt_unlock(), which first flushes output,
 * runs expired timers and delivers events (so a post_send leaves the host
 * before the verb returns). Progress comes from two places:
 *   - srn_rt_progress(): non-blocking receive + timers + send, called by the
 *     application's own verbs (poll_cq, post_*), so busy-polling programs
 *     drive the NIC themselves;
 *   - a background thread that sleeps in poll() on the sockets and a wake
 *     eventfd until a packet arrives or the next core deadline passes.
 */
#ifndef SRN_RT_H
#define SRN_RT_H

#include <stdint.h>
#include <stdbool.h>
#include <netinet/in.h>

#include "../core/srn_core.h"

#define SRN_RT_MAX_DEVS 16
#define SRN_RT_NAME_MAX 64

/* Device configuration (from environment / config file; see config.c). */
struct srn_rt_devcfg {
	char name[SRN_RT_NAME_MAX];   /* e.g. "softrnic0" */
	struct in_addr ip;            /* IPv4 address to bind and to use as GID 0 */
	uint16_t port;                /* UDP port to receive on (default 4791) */
	char pcap_path[256];          /* "" = no capture */
	uint64_t guid;                /* node GUID (derived from name+ip) */
	/* behind a fabric (SOFTRNIC_FABRIC=ADDR:PORT): every packet goes as a
	 * whole IPv4 packet to `softrnic fabric` at this address; sin_port 0 =
	 * no fabric (UDP straight to the peer) */
	struct sockaddr_in fabric;
	/* SOFTRNIC_OFFLOAD=0: no UDP GSO/GRO (one datagram per packet and
	 * syscall batch entry, UDP checksum 0) */
	bool no_offload;
	/* SOFTRNIC_ACK_DELAY_US: the core's delayed ACK for ping-pong QPs
	 * (srn_dev_cfg.ack_delay_ns); SRN_RT_ACK_DELAY_US unless set */
	uint32_t ack_delay_us;
	bool ack_delay_set;
	/* SOFTRNIC_RX_SPIN_US: how long a passive device's progress thread
	 * keeps polling its socket after packets came; SRN_RT_RX_SPIN_US unless set */
	uint32_t rx_spin_us;
	bool rx_spin_set;
};

/* Default of SOFTRNIC_ACK_DELAY_US: a ping-pong peer answers within a few
 * microseconds when it polls; a QP that does not answer costs its peer at
 * most this much more completion latency. */
#define SRN_RT_ACK_DELAY_US 20

/* Default of SOFTRNIC_RX_SPIN_US: while packets come and the application
 * makes no verbs call (a passive responder, the target of WRITEs), the
 * progress thread polls the socket this long after the last packet before
 * it sleeps, so the next request is answered without a wake-up. */
#define SRN_RT_RX_SPIN_US 50

/*
 * Configuration sources, in order:
 *   SOFTRNIC_DEVICES="name=ip[,name=ip...]"   (set by `softrnic run`)
 *   SOFTRNIC_CONFIG=path  (lines "device NAME IP")
 *   default: one device "softrnic0" on 127.0.0.1
 * SOFTRNIC_PCAP=path      capture every packet of every device in the process
 *   (with several devices, ".NAME" is appended to the path).
 * SOFTRNIC_FABRIC=ADDR:PORT  put every device of the process behind the
 *   fabric emulator listening there (docs/fabric.md, docs/runtime.md).
 */
int srn_rt_config_load(struct srn_rt_devcfg *out, int max);   /* number of devices */
/* Parse "name=ip[,name=ip...]" into out[]; returns count or -1 (message to
 * stderr, prefixed by `what`). */
int srn_rt_config_parse_list(const char *s, const char *what,
			     struct srn_rt_devcfg *out, int max);
/* Parse SOFTRNIC_FABRIC's "A.B.C.D:PORT"; 0, or -1 with a message on stderr
 * prefixed by `what`. */
int srn_rt_config_parse_fabric(const char *s, const char *what, struct sockaddr_in *sa);
/* the RoCEv2 GID of an IPv4 address (IPv4-mapped, ::ffff:a.b.c.d) */
void srn_rt_gid_from_ip(uint8_t gid[16], struct in_addr ip);

struct srn_rt_dev;

/* Callbacks the runtime invokes (with the device lock held) when the core
 * reports an event. */
struct srn_rt_hooks {
	void (*cq_event)(struct srn_cq *cq, void *arg);              /* armed CQ got a CQE */
	void (*async_event)(const struct srn_async_event *ev, void *arg);
	void *arg;
};

/* Open (refcounted, one per device name per process) / close. Opening binds
 * the UDP socket(s) and starts the progress thread. */
struct srn_rt_dev *srn_rt_dev_open(const struct srn_rt_devcfg *cfg, const struct srn_rt_hooks *hooks);
void srn_rt_dev_close(struct srn_rt_dev *rd);

struct srn_dev *srn_rt_core(struct srn_rt_dev *rd);
const struct srn_rt_devcfg *srn_rt_cfg(struct srn_rt_dev *rd);

void srn_rt_lock(struct srn_rt_dev *rd);
void srn_rt_unlock(struct srn_rt_dev *rd);       /* flush + timers + events, then unlock */
void srn_rt_progress(struct srn_rt_dev *rd);     /* try-lock; non-blocking rx/tx/timers */
/* The application's poll: lock + non-blocking receive pass; the caller polls
 * its CQ and calls srn_rt_unlock_poll(). Marks the application as busy-polling. */
void srn_rt_lock_poll(struct srn_rt_dev *rd);
/* End of the application's poll: like srn_rt_unlock, and the poll's time
 * is taken again at its end, so the doorbell window of the posts that
 * follow runs from the end of a poll, not its start (a poll that waited
 * for the lock or received a large batch may last longer than the window). */
void srn_rt_unlock_poll(struct srn_rt_dev *rd);
/* The application is about to block (ibv_get_cq_event): send a deferred
 * doorbell batch now, and hand the receive socket back to the progress
 * thread at once. */
void srn_rt_app_sleeps(struct srn_rt_dev *rd);
/* Unlock after queueing work requests (the doorbell): like srn_rt_unlock,
 * but within 15 us of the application's last poll (or of a post batched
 * so) a partial transmit batch is left for its next poll (at the latest
 * the progress thread sends it 15 us after the last post), so the posts
 * between two polls leave in one sendmmsg (and GSO sends). */
void srn_rt_unlock_doorbell(struct srn_rt_dev *rd);

/* The runtime's own counter NAME (rt_tx_batches, rt_wakeups, ... as
 * `softrnic stats` prints them) into *value; -1 if there is none. */
int srn_rt_counter(struct srn_rt_dev *rd, const char *name, uint64_t *value);

srn_ts srn_rt_now(void);                          /* CLOCK_MONOTONIC in ns */
uint64_t srn_rt_realtime_ns(void);                /* CLOCK_REALTIME in ns */

#endif /* SRN_RT_H */
