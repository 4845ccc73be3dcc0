/*
 * rt_dev.c - a runtime device: one core device driven by real time and real
 * UDP sockets, its lock, its progress thread and the per-process registry.
 *
 * Call order of one service pass (always under the device lock):
 *   [receive: recvmmsg batches -> srn_dev_recv each, ACKs flushed per batch]
 *   expiry (if due) -> srn_dev_send into the TX batch -> sendmmsg per socket
 *   -> CQ / async events to the hooks            (repeated while work remains)
 *
 * Who runs it:
 *   srn_rt_unlock()   - after every verb that touched the core (no receive);
 *   srn_rt_progress() - try-lock; non-blocking receive + the above;
 *   the progress thread - sleeps in ppoll() on the receive socket and an
 *     eventfd with the timeout of the next deadline (core timer, pending
 *     stats publish); SRN_TS_NEVER means an infinite sleep, so an idle
 *     device costs nothing. Whoever moves the deadline earlier than the
 *     thread's current target writes the eventfd.
 */
#include <errno.h>
#include <stdatomic.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <arpa/inet.h>

#include "rt_internal.h"
#include "cc_ctl.h"

#define RX_ROUNDS        16                /* recvmmsg batches per service pass */
#define TX_BUDGET        2048              /* packets per srn_dev_send pump */
#define SERVICE_ITERS    4
#define STATS_PERIOD_NS  (100ull * 1000 * 1000)
/* The application counts as busy-polling while its last poll_cq (or other
 * progress call) is younger than this: the progress thread then leaves the
 * receive socket to the application. A post_send within this long of the
 * last poll, or of the last post batched so, leaves its packets in the
 * transmit batch for the application's next poll (the doorbell): a run of
 * posts between two polls (perftest posts up to its tx depth) goes out in
 * full GSO batches. The progress thread sends the batch when no poll or
 * post came for this long. */
#define APP_POLL_NS      SRN_RT_APP_POLL_NS
/* how long a run of batched posts may last after the poll that started it */
#define APP_RUN_NS       SRN_RT_APP_RUN_NS
/* an application that made no verbs call for this long is passive: its
 * device's progress thread may spin on the socket (SOFTRNIC_RX_SPIN_US) */
#define APP_IDLE_NS      (1000ull * 1000)
/* a receive pass of this many bytes or more does not make the thread spin */
#define RX_SPIN_MAX_BYTES (16u * 1024)
/* how long a device behind a fabric waits for the HELLO echo when it opens */
#define FABRIC_HELLO_MS  3000

/* the runtime's own counters, published after the core's */
#define RT_COUNTERS(X) X(RX_BATCHES) X(TX_BATCHES) X(RX_TRUNC) X(RX_ERRORS) \
	X(TX_ERRORS) X(TX_NO_SOCKET) X(WAKEUPS) X(KICKS) \
	X(RX_BAD_IP) X(RX_NOT_MINE) X(FABRIC_HELLOS) X(TX_GSO_SENDS) X(RX_GRO_DGRAMS) X(RX_SPINS)
enum rt_ctr {
#define RT_ENUM(n) RT_CTR_##n,
	RT_COUNTERS(RT_ENUM)
#undef RT_ENUM
	RT_CTR_MAX
};
static const char *const rt_ctr_names[] = {
	"rt_rx_batches", "rt_tx_batches", "rt_rx_trunc", "rt_rx_errors",
	"rt_tx_errors", "rt_tx_no_socket", "rt_wakeups", "rt_kicks",
	/* fabric backend: datagrams that are not a valid IPv4/UDP packet; valid
	 * ones not addressed to this device (address or UDP port); HELLO echoes
	 * seen after the attachment */
	"rt_rx_bad_ip", "rt_rx_not_mine", "rt_fabric_hellos",
	/* UDP GSO sends (several packets in one) and GRO datagrams received */
	"rt_tx_gso_sends", "rt_rx_gro_dgrams",
	/* passes of a passive device's thread that looked at the socket
	 * again instead of sleeping (SOFTRNIC_RX_SPIN_US) */
	"rt_rx_spins",
};
_Static_assert(sizeof rt_ctr_names / sizeof rt_ctr_names[0] == RT_CTR_MAX,
	       "one name per runtime counter");

struct srn_rt_dev {
	struct srn_rt_devcfg cfg;
	struct srn_rt_hooks hooks;
	int refcnt;                       /* under reg_lock */

	pthread_mutex_t lock;             /* serialises everything below */
	struct srn_dev *core;
	struct srn_rt_udp udp;
	struct srn_rt_rxbatch rx;
	struct srn_rt_txbatch tx;
	struct srn_rt_pcap *pcap;
	struct srn_rt_shm_writer *shm;
	bool stop;
	srn_ts sleep_target;              /* the thread sleeps until then (or a kick) */
	_Atomic srn_ts last_act;          /* last poll, or batched post (no lock) */
	srn_ts last_batch;                /* last batched post */
	srn_ts last_rx;                   /* last receive pass that found packets */
	srn_ts spin_ns;                   /* SOFTRNIC_RX_SPIN_US, in ns */
	size_t rx_pass_bytes;             /* datagram bytes of the current receive pass */
	_Atomic srn_ts last_poll;         /* last application progress call (no lock) */
	_Atomic srn_ts last_app;          /* last post or poll of the application */
	bool stats_dirty;
	srn_ts stats_last;
	uint64_t rt_ctr[RT_CTR_MAX];
	uint64_t pub[SRN_CTR_MAX + RT_CTR_MAX];

	int evfd;
	pthread_t thread;
	bool thread_started;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srn_rt_dev *reg[SRN_RT_MAX_DEVS];

static void *mem_calloc(size_t n, size_t size, void *user)
{
	(void)user;
	return calloc(n, size);
}

static void mem_free(void *p, void *user)
{
	(void)user;
	free(p);
}

struct srn_dev *srn_rt_core(struct srn_rt_dev *rd) { return rd->core; }
const struct srn_rt_devcfg *srn_rt_cfg(struct srn_rt_dev *rd) { return &rd->cfg; }

/* ---- service pass ------------------------------------------------------ */

static void pcap_packet(struct srn_rt_dev *rd, const struct srn_pkt_meta *m,
			const uint8_t *pkt, size_t len)
{
	struct srn_ip_info ip;
	srn_rt_ipinfo_from_meta(&ip, m);
	srn_rt_pcap_write(rd->pcap, &ip, pkt, len);
}

static void tx_flush(struct srn_rt_dev *rd)
{
	struct srn_rt_txbatch *b = &rd->tx;
	int n = b->n;
	if (!n)
		return;
	int failed = srn_rt_udp_flush(&rd->udp, b, &rd->rt_ctr[RT_CTR_TX_BATCHES]);
	rd->rt_ctr[RT_CTR_TX_ERRORS] += (uint64_t)failed;
	rd->rt_ctr[RT_CTR_TX_GSO_SENDS] = b->gso_sends;
	/* captured after the send: a GSO segment's IPv4 ID (and ICRC) is known */
	if (rd->pcap)
		for (int i = 0; i < n; i++)
			pcap_packet(rd, &b->meta[i], b->data + (size_t)i * SRN_RT_BUFSZ, b->len[i]);
}

static bool app_busy(struct srn_rt_dev *rd, srn_ts now)
{
	srn_ts lp = atomic_load_explicit(&rd->last_poll, memory_order_relaxed);
	return now < lp + APP_POLL_NS;
}

/* Take packets from the core into the TX batch, sending full batches; the
 * last partial batch is sent too unless `defer` (then it waits for the next
 * pass, at the latest the progress thread's wake-up at last_act +
 * APP_POLL_NS). */
static int tx_pump(struct srn_rt_dev *rd, srn_ts now, bool defer)
{
	struct srn_rt_txbatch *b = &rd->tx;
	int sent = 0;

	while (sent < TX_BUDGET) {
		uint8_t *buf = b->data + (size_t)b->n * SRN_RT_BUFSZ;
		struct srn_pkt_meta *m = &b->meta[b->n];
		memset(m, 0, sizeof *m);
		ssize_t len = srn_dev_send(rd->core, buf, SRN_RT_BUFSZ, m, now);
		if (len <= 0)
			break;
		sent++;
		int s = srn_rt_udp_sock_of(&rd->udp, m->sport);
		if (s < 0) {                  /* core used a port we do not own */
			rd->rt_ctr[RT_CTR_TX_NO_SOCKET]++;
			continue;
		}
		if (m->src_gid[10] != 0xff)   /* the header says IPv4-mapped; be safe */
			srn_rt_gid_from_ip(m->src_gid, rd->cfg.ip);
		if (!m->dport)
			m->dport = SRN_ROCEV2_UDP_PORT;
		b->len[b->n] = (size_t)len;
		b->sock[b->n] = (uint8_t)s;
		if (++b->n == SRN_RT_BATCH)
			tx_flush(rd);
	}
	if (!defer)
		tx_flush(rd);
	return sent;
}

/* One recvmmsg batch into the core; returns datagrams received. */
static int rx_round(struct srn_rt_dev *rd)
{
	int n = srn_rt_udp_recv(&rd->udp, &rd->rx);
	if (n < 0) {
		rd->rt_ctr[RT_CTR_RX_ERRORS]++;
		return 0;
	}
	if (n == 0)
		return 0;
	rd->rt_ctr[RT_CTR_RX_BATCHES]++;
	srn_ts now = srn_rt_now();
	for (int i = 0; i < n; i++) {
		const struct mmsghdr *mm = &rd->rx.msg[i];
		const uint8_t *pkt = rd->rx.iov[i].iov_base;
		rd->rx_pass_bytes += mm->msg_len;
		struct srn_pkt_meta meta;
		if ((mm->msg_hdr.msg_flags & MSG_TRUNC) ||
		    (rd->udp.fabric && mm->msg_len > SRN_MAX_PKT + SRN_RT_IPUDP_HDR + 40)) {
			rd->rt_ctr[RT_CTR_RX_TRUNC]++;
			srn_dev_counters_mut(rd->core)[SRN_CTR_DROP_MALFORMED]++;
			continue;
		}
		if (rd->udp.fabric) {
			/* a whole IPv4 packet from the fabric: its real header
			 * gives addresses, ports, ECN, TTL and ID */
			size_t off = 0;
			int plen = srn_rt_ipv4_udp_parse(pkt, mm->msg_len, &meta, &off);
			if (plen == SRN_RT_IP_HELLO) {
				rd->rt_ctr[RT_CTR_FABRIC_HELLOS]++;
				continue;
			}
			if (plen < 0) {
				rd->rt_ctr[RT_CTR_RX_BAD_IP]++;
				srn_dev_counters_mut(rd->core)[SRN_CTR_DROP_MALFORMED]++;
				continue;
			}
			if (memcmp(meta.dst_gid + 12, &rd->cfg.ip.s_addr, 4) != 0 ||
			    meta.dport != rd->udp.port) {
				rd->rt_ctr[RT_CTR_RX_NOT_MINE]++;
				srn_dev_counters_mut(rd->core)[SRN_CTR_DROP_MALFORMED]++;
				continue;
			}
			pkt += off;
			if (rd->pcap)
				pcap_packet(rd, &meta, pkt, (size_t)plen);
			(void)srn_dev_recv(rd->core, pkt, (size_t)plen, &meta, now);
			continue;
		}
		size_t seg = (size_t)srn_rt_udp_rx_meta(&rd->udp, &rd->rx, i, &meta);
		if (!seg)
			seg = mm->msg_len;
		else
			rd->rt_ctr[RT_CTR_RX_GRO_DGRAMS]++;
		/* a GRO datagram: segments of `seg` bytes (the last may be
		 * shorter), the i-th sent with IPv4 ID i (the ICRC's hint) */
		uint16_t id = 0;
		for (size_t off = 0; off < mm->msg_len; off += seg, id++) {
			size_t l = mm->msg_len - off < seg ? mm->msg_len - off : seg;
			if (l > SRN_MAX_PKT) {
				rd->rt_ctr[RT_CTR_RX_TRUNC]++;
				srn_dev_counters_mut(rd->core)[SRN_CTR_DROP_MALFORMED]++;
				continue;
			}
			meta.ip_id = id;
			if (rd->pcap) {
				/* the capture shows the ID the packet really had
				 * (the one its ICRC matches), not just the hint */
				struct srn_ip_info ip;
				srn_rt_ipinfo_from_meta(&ip, &meta);
				(void)srn_icrc_check_ids(&ip, pkt + off, l, SRN_GSO_ID_SPAN, &meta.ip_id);
				pcap_packet(rd, &meta, pkt + off, l);
			}
			(void)srn_dev_recv(rd->core, pkt + off, l, &meta, now);
		}
	}
	return n;
}

static void deliver_events(struct srn_rt_dev *rd)
{
	struct srn_cq *cq;
	struct srn_async_event ev;

	while ((cq = srn_dev_next_cq_event(rd->core)))
		if (rd->hooks.cq_event)
			rd->hooks.cq_event(cq, rd->hooks.arg);
	while (srn_dev_next_async_event(rd->core, &ev) == 0)
		if (rd->hooks.async_event)
			rd->hooks.async_event(&ev, rd->hooks.arg);
}

/* Up to RX_ROUNDS recvmmsg batches into the core; whatever the core has to
 * send in answer (ACKs, read responses) leaves per batch. */
static bool rx_pass(struct srn_rt_dev *rd)
{
	bool work = false;

	for (int r = 0; r < RX_ROUNDS; r++) {
		int n = rx_round(rd);
		if (n > 0) {
			work = true;
			tx_pump(rd, srn_rt_now(), false);
		}
		if (n < SRN_RT_BATCH)
			break;
	}
	return work;
}

static void service(struct srn_rt_dev *rd, bool rx, bool defer)
{
	bool work = false;

	if (rx) {
		tx_flush(rd);                     /* a deferred doorbell goes first */
		rd->rx_pass_bytes = 0;
		work = rx_pass(rd);
	}
	srn_ts now = srn_rt_now();
	/* small arrivals (requests, small messages) make the thread spin for
	 * the next ones; a large pass ends the spin: bulk data gains more from
	 * the batches that build up while it sleeps (fewer, fuller receive
	 * calls and ACKs) */
	if (work)
		rd->last_rx = rd->rx_pass_bytes < RX_SPIN_MAX_BYTES ? now : 0;
	for (int it = 0; it < SERVICE_ITERS; it++) {
		bool expired = false;
		if (now >= srn_dev_expiry(rd->core)) {
			srn_dev_handle_expiry(rd->core, now);
			expired = true;
		}
		int sent = tx_pump(rd, now, defer);
		deliver_events(rd);
		if (sent || expired)
			work = true;
		if (!srn_dev_has_output(rd->core))
			break;
		now = srn_rt_now();
	}
	if (work)
		rd->stats_dirty = true;
	if (rd->pcap && work)
		srn_rt_pcap_flush(rd->pcap);
}

static void publish(struct srn_rt_dev *rd, srn_ts now)
{
	if (!rd->shm)
		return;
	memcpy(rd->pub, srn_dev_counters(rd->core), SRN_CTR_MAX * sizeof(uint64_t));
	memcpy(rd->pub + SRN_CTR_MAX, rd->rt_ctr, sizeof rd->rt_ctr);
	srn_rt_shm_publish(rd->shm, rd->pub, SRN_CTR_MAX + RT_CTR_MAX);
	rd->stats_dirty = false;
	rd->stats_last = now;
}

/* When the thread must next wake up. */
static srn_ts thread_deadline(struct srn_rt_dev *rd)
{
	srn_ts d = srn_dev_expiry(rd->core);
	if (srn_dev_has_output(rd->core))
		d = 0;
	if (rd->tx.n) {                       /* a deferred doorbell */
		srn_ts la = atomic_load_explicit(&rd->last_act, memory_order_relaxed);
		if (la + APP_POLL_NS < d)
			d = la + APP_POLL_NS;
	}
	if (rd->stats_dirty && rd->shm && rd->stats_last + STATS_PERIOD_NS < d)
		d = rd->stats_last + STATS_PERIOD_NS;
	return d;
}

static void kick(struct srn_rt_dev *rd)
{
	uint64_t one = 1;
	ssize_t r;
	do
		r = write(rd->evfd, &one, sizeof one);
	while (r < 0 && errno == EINTR);
}

/* common tail of unlock/progress: re-arm the thread if needed, unlock */
static void finish_unlock(struct srn_rt_dev *rd)
{
	bool k = false;
	srn_ts d = thread_deadline(rd);
	if (d < rd->sleep_target) {
		rd->sleep_target = d;
		rd->rt_ctr[RT_CTR_KICKS]++;
		k = true;
	}
	pthread_mutex_unlock(&rd->lock);
	if (k)
		kick(rd);
}

void srn_rt_lock(struct srn_rt_dev *rd)
{
	pthread_mutex_lock(&rd->lock);
}

void srn_rt_unlock(struct srn_rt_dev *rd)
{
	service(rd, false, false);
	finish_unlock(rd);
}

static void note_poll(struct srn_rt_dev *rd)
{
	srn_ts now = srn_rt_now();
	atomic_store_explicit(&rd->last_poll, now, memory_order_relaxed);
	atomic_store_explicit(&rd->last_act, now, memory_order_relaxed);
	atomic_store_explicit(&rd->last_app, now, memory_order_relaxed);
}

bool srn_rt_doorbell_batches(uint64_t now, uint64_t last_poll, uint64_t last_act,
			     uint64_t last_batch)
{
	return now < last_act + APP_POLL_NS ||
	       (last_batch > last_poll && now < last_poll + APP_RUN_NS);
}

void srn_rt_unlock_doorbell(struct srn_rt_dev *rd)
{
	/* A post within APP_POLL_NS of the application's last poll starts a
	 * run of posts batched for its next poll; the run goes on until that
	 * poll (a post that comes later, say after the application was
	 * descheduled, still joins it, as long as the poll is younger than
	 * APP_RUN_NS). A post long after a poll (an application that waited
	 * on something else in between) goes out at once. */
	srn_ts now = srn_rt_now();
	atomic_store_explicit(&rd->last_app, now, memory_order_relaxed);
	bool batch = srn_rt_doorbell_batches(now,
			atomic_load_explicit(&rd->last_poll, memory_order_relaxed),
			atomic_load_explicit(&rd->last_act, memory_order_relaxed), rd->last_batch);
	if (batch) {
		atomic_store_explicit(&rd->last_act, now, memory_order_relaxed);
		rd->last_batch = now;
	}
	service(rd, false, batch);
	finish_unlock(rd);
}

void srn_rt_progress(struct srn_rt_dev *rd)
{
	note_poll(rd);
	if (pthread_mutex_trylock(&rd->lock) != 0)
		return;
	service(rd, true, false);
	note_poll(rd);
	finish_unlock(rd);
}

void srn_rt_unlock_poll(struct srn_rt_dev *rd)
{
	service(rd, false, false);
	note_poll(rd);
	finish_unlock(rd);
}

void srn_rt_lock_poll(struct srn_rt_dev *rd)
{
	note_poll(rd);
	pthread_mutex_lock(&rd->lock);
	tx_flush(rd);
	if (rx_pass(rd))
		rd->stats_dirty = true;
}

void srn_rt_app_sleeps(struct srn_rt_dev *rd)
{
	/* Its next poll will not come soon: no doorbell batch may wait for it,
	 * and the progress thread, backing off while the application polled,
	 * must watch the socket at once (not after its 15 us window and the
	 * timer slack: ~60 us per hop of an event-driven ping-pong). The
	 * application counts as passive from now on (last_app 0), so the
	 * thread spins between small arrivals while it waits: the answer it
	 * waits for then costs one wake-up (its own) instead of two. */
	bool was_busy = app_busy(rd, srn_rt_now());
	atomic_store_explicit(&rd->last_poll, 0, memory_order_relaxed);
	atomic_store_explicit(&rd->last_act, 0, memory_order_relaxed);
	atomic_store_explicit(&rd->last_app, 0, memory_order_relaxed);
	pthread_mutex_lock(&rd->lock);
	tx_flush(rd);
	if (was_busy) {
		rd->sleep_target = 0;
		rd->rt_ctr[RT_CTR_KICKS]++;
	}
	pthread_mutex_unlock(&rd->lock);
	if (was_busy)
		kick(rd);
}

int srn_rt_counter(struct srn_rt_dev *rd, const char *name, uint64_t *value)
{
	for (int i = 0; i < RT_CTR_MAX; i++)
		if (!strcmp(rt_ctr_names[i], name)) {
			pthread_mutex_lock(&rd->lock);
			*value = rd->rt_ctr[i];
			pthread_mutex_unlock(&rd->lock);
			return 0;
		}
	return -1;
}

/* ---- progress thread ------------------------------------------------- */

static void *progress_thread(void *arg)
{
	struct srn_rt_dev *rd = arg;
	/* the eventfd first: while the application busy-polls, only it is watched */
	struct pollfd pfd[2] = {
		{ .fd = rd->evfd, .events = POLLIN },
		{ .fd = rd->udp.rx_fd, .events = POLLIN },
	};
	bool rx = true, sock = false;

	pthread_mutex_lock(&rd->lock);
	while (!rd->stop) {
		srn_ts now = srn_rt_now();
		/* Back off while the application drives the device itself: its
		 * polls receive, run the timers and send the doorbell; the thread
		 * only looks again when that polling may have stopped. */
		bool busy = app_busy(rd, now);
		/* Woken (kick or timer) while the application is still posting a
		 * doorbell batch, with nothing received and no timer due: leave
		 * the batch until APP_POLL_NS after the last post. */
		srn_ts la = atomic_load_explicit(&rd->last_act, memory_order_relaxed);
		bool hold = !sock && rd->tx.n && now < la + APP_POLL_NS &&
			    now < srn_dev_expiry(rd->core) && !srn_dev_has_output(rd->core);
		if (!busy && !hold)
			service(rd, rx, false);
		now = srn_rt_now();
		if (rd->stats_dirty && now >= rd->stats_last + STATS_PERIOD_NS)
			publish(rd, now);
		srn_ts d = thread_deadline(rd);
		busy = app_busy(rd, now);
		if (busy) {
			srn_ts lp = atomic_load_explicit(&rd->last_poll, memory_order_relaxed);
			if (lp + APP_POLL_NS < d)
				d = lp + APP_POLL_NS;
		}
		rd->sleep_target = d;
		pthread_mutex_unlock(&rd->lock);

		struct timespec ts, *tp = NULL;
		/* A passive device (no verbs call for APP_IDLE_NS: a READ or
		 * atomic responder, the target of WRITEs) that received within
		 * spin_ns looks at its socket again at once instead of
		 * sleeping: the next request, typically tens of microseconds
		 * away, finds the thread awake, and the sender does not pay
		 * for waking it. Never while the application drives the device
		 * (its polls receive) or has been calling it lately (two
		 * spinning perftest processes already own both cores). */
		srn_ts lapp = atomic_load_explicit(&rd->last_app, memory_order_relaxed);
		bool spin = !busy && rd->spin_ns && now < rd->last_rx + rd->spin_ns &&
			    now >= lapp + APP_IDLE_NS;
		if (spin) {
			rd->rt_ctr[RT_CTR_RX_SPINS]++;
			d = now;
		}
		if (d != SRN_TS_NEVER) {
			now = srn_rt_now();
			uint64_t dt = d > now ? d - now : 0;
			ts.tv_sec = (time_t)(dt / 1000000000ull);
			ts.tv_nsec = (long)(dt % 1000000000ull);
			tp = &ts;
		}
		pfd[1].revents = 0;
		if (spin)
			sched_yield();        /* a spinner leaves the CPU to anyone runnable */
		int r = ppoll(pfd, busy ? 1 : 2, tp, NULL);
		/* after a busy period the socket may hold what nobody read */
		sock = r > 0 && (pfd[1].revents & (POLLIN | POLLERR));
		rx = busy || sock;
		if (r > 0 && (pfd[0].revents & POLLIN)) {
			uint64_t v;
			ssize_t rr = read(rd->evfd, &v, sizeof v);
			(void)rr;
		}
		/* never make a polling application wait for the lock: while it
		 * holds it, it is busy - sleep another window */
		bool locked = false;
		while (app_busy(rd, srn_rt_now())) {
			if (pthread_mutex_trylock(&rd->lock) == 0) {
				locked = true;
				break;
			}
			struct timespec w = { 0, (long)APP_POLL_NS };
			(void)ppoll(pfd, 1, &w, NULL);
		}
		if (!locked)
			pthread_mutex_lock(&rd->lock);
		rd->rt_ctr[RT_CTR_WAKEUPS]++;
	}
	pthread_mutex_unlock(&rd->lock);
	return NULL;
}

/* ---- open / close ---------------------------------------------------- */

static void dev_free(struct srn_rt_dev *rd)
{
	if (rd->shm) {
		publish(rd, srn_rt_now());
		srn_rt_shm_destroy(rd->shm);
	}
	srn_rt_pcap_close(rd->pcap);
	srn_rt_cc_stop(rd);
	if (rd->core)
		srn_dev_del(rd->core);
	srn_rt_udp_close(&rd->udp);
	srn_rt_rxbatch_free(&rd->rx);
	srn_rt_txbatch_free(&rd->tx);
	if (rd->evfd >= 0)
		close(rd->evfd);
	pthread_mutex_destroy(&rd->lock);
	free(rd);
}

static struct srn_rt_dev *dev_create(const struct srn_rt_devcfg *cfg,
				     const struct srn_rt_hooks *hooks, int *err)
{
	struct srn_rt_dev *rd = calloc(1, sizeof *rd);
	if (!rd) {
		*err = ENOMEM;
		return NULL;
	}
	rd->cfg = *cfg;
	if (!rd->cfg.port)
		rd->cfg.port = SRN_ROCEV2_UDP_PORT;
	if (!rd->cfg.guid)
		rd->cfg.guid = srn_rt_guid_derive(rd->cfg.name, rd->cfg.ip);
	if (hooks)
		rd->hooks = *hooks;
	rd->evfd = -1;
	rd->udp.rx_fd = -1;
	for (int i = 0; i < SRN_RT_NSEND; i++)
		rd->udp.tx_fd[i] = -1;
	rd->sleep_target = SRN_TS_NEVER;
	pthread_mutex_init(&rd->lock, NULL);

	int r;
	if ((r = srn_rt_rxbatch_init(&rd->rx)) < 0 || (r = srn_rt_txbatch_init(&rd->tx)) < 0)
		goto fail;
	if (rd->cfg.fabric.sin_port) {
		if ((r = srn_rt_udp_open_fabric(&rd->udp, rd->cfg.ip, rd->cfg.port,
						&rd->cfg.fabric)) < 0)
			goto fail;
		/* the port is active once the fabric has echoed our HELLO */
		if ((r = srn_rt_fabric_hello(&rd->udp, FABRIC_HELLO_MS)) < 0) {
			char a[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &rd->cfg.fabric.sin_addr, a, sizeof a);
			fprintf(stderr, "softrnic: %s: the fabric at %s:%u did not answer HELLO "
				"within %d ms: %s (is `softrnic fabric --listen %s:%u` running?)\n",
				rd->cfg.name, a, ntohs(rd->cfg.fabric.sin_port), FABRIC_HELLO_MS,
				strerror(-r), a, ntohs(rd->cfg.fabric.sin_port));
			goto fail;
		}
	} else if ((r = srn_rt_udp_open(&rd->udp, rd->cfg.ip, rd->cfg.port,
					    !rd->cfg.no_offload)) < 0) {
		goto fail;
	}
	rd->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rd->evfd < 0) {
		r = -errno;
		goto fail;
	}

	struct srn_dev_cfg dc;
	srn_dev_cfg_default(&dc);
	srn_rt_gid_from_ip(dc.gid, rd->cfg.ip);
	dc.sports = rd->udp.sports;
	dc.n_sports = SRN_RT_NSEND;
	dc.mem.calloc = mem_calloc;
	dc.mem.free = mem_free;
	dc.mem.user = NULL;
	dc.ack_delay_ns = (rd->cfg.ack_delay_set ? rd->cfg.ack_delay_us : SRN_RT_ACK_DELAY_US) * 1000u;
	rd->spin_ns = (srn_ts)(rd->cfg.rx_spin_set ? rd->cfg.rx_spin_us : SRN_RT_RX_SPIN_US) * 1000u;
	if ((r = srn_rt_cc_config(rd, &rd->cfg, &dc)) < 0)     /* SOFTRNIC_CC*: cc_ctl.c */
		goto fail;
	int cr = srn_dev_new(&rd->core, &dc);
	if (cr < 0) {
		fprintf(stderr, "softrnic: %s: cannot create device: %s\n", rd->cfg.name,
			srn_strerror(cr));
		r = cr == SRN_ENOMEM ? -ENOMEM : -EINVAL;
		rd->core = NULL;
		goto fail;
	}
	if (rd->cfg.pcap_path[0]) {
		rd->pcap = srn_rt_pcap_open(rd->cfg.pcap_path);
		if (!rd->pcap) {
			r = -EIO;
			goto fail;
		}
	}
	const char *names[SRN_CTR_MAX + RT_CTR_MAX];
	for (int i = 0; i < SRN_CTR_MAX; i++)
		names[i] = srn_ctr_names[i];
	for (int i = 0; i < RT_CTR_MAX; i++)
		names[SRN_CTR_MAX + i] = rt_ctr_names[i];
	rd->shm = srn_rt_shm_create(&rd->cfg, names, SRN_CTR_MAX + RT_CTR_MAX);
	if (rd->shm)
		publish(rd, srn_rt_now());

	/* the thread takes no signals: they stay with the application's threads */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pr = pthread_create(&rd->thread, NULL, progress_thread, rd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pr) {
		r = -pr;
		goto fail;
	}
	rd->thread_started = true;
	srn_rt_cc_start(rd);                    /* `softrnic cc load` socket */
	char tname[16] = "srn-";           /* thread names are at most 15 chars */
	memcpy(tname + 4, rd->cfg.name, strnlen(rd->cfg.name, sizeof tname - 5));
	pthread_setname_np(rd->thread, tname);
	return rd;
fail:
	*err = -r;
	dev_free(rd);
	return NULL;
}

struct srn_rt_dev *srn_rt_dev_open(const struct srn_rt_devcfg *cfg, const struct srn_rt_hooks *hooks)
{
	if (!cfg || !cfg->name[0]) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&reg_lock);
	int free_slot = -1;
	for (int i = 0; i < SRN_RT_MAX_DEVS; i++) {
		if (reg[i] && strcmp(reg[i]->cfg.name, cfg->name) == 0) {
			struct srn_rt_dev *rd = reg[i];
			rd->refcnt++;
			pthread_mutex_unlock(&reg_lock);
			return rd;
		}
		if (!reg[i] && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		pthread_mutex_unlock(&reg_lock);
		errno = EMFILE;
		return NULL;
	}
	int err = 0;
	struct srn_rt_dev *rd = dev_create(cfg, hooks, &err);
	if (rd) {
		rd->refcnt = 1;
		reg[free_slot] = rd;
	}
	pthread_mutex_unlock(&reg_lock);
	if (!rd)
		errno = err ? err : EIO;
	return rd;
}

void srn_rt_dev_close(struct srn_rt_dev *rd)
{
	if (!rd)
		return;
	pthread_mutex_lock(&reg_lock);
	if (--rd->refcnt > 0) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	for (int i = 0; i < SRN_RT_MAX_DEVS; i++)
		if (reg[i] == rd)
			reg[i] = NULL;
	pthread_mutex_unlock(&reg_lock);

	pthread_mutex_lock(&rd->lock);
	rd->stop = true;
	pthread_mutex_unlock(&rd->lock);
	kick(rd);
	pthread_join(rd->thread, NULL);
	rd->thread_started = false;
	dev_free(rd);
}
