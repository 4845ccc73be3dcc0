/*
 * cmd_fabric.c - `softrnic fabric`: the fabric emulator daemon.
 *
 * A user-space switch on one UDP socket. Devices attach by sending it
 * datagrams that each carry one whole IPv4 packet (IPv4 + UDP + RoCEv2);
 * the switch model of src/fabric (sans-I/O) decides what happens to each
 * packet and when, and the daemon sends the packets that come out as
 * datagrams to the device attached at the destination port. The attachment
 * protocol is specified in docs/fabric.md ("Attachment protocol").
 *
 * Loop: now = clock -> recvmmsg batches -> srn_fabric_input(arrival)
 *       -> srn_fabric_poll(now) until empty -> sendmmsg batches
 *       -> ppoll(socket, timeout = next model departure or stats time).
 * Time is CLOCK_MONOTONIC; the model's epoch (time 0 of down windows) is
 * the daemon's start. A packet's arrival time is the kernel's receive time
 * stamp (SO_TIMESTAMPNS, CLOCK_REALTIME converted to CLOCK_MONOTONIC), not
 * the time the daemon reads it: when the daemon does not run for a while,
 * what came in meanwhile enters the model at the times it came, instead of
 * as one burst. The clock is read before the socket is drained and the
 * model runs only up to it, so its clock never passes a packet that is
 * already waiting in the socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fabric/srn_fabric.h"
#include "softrnic.h"

int srn_cmd_fabric(int argc, char **argv);

#define FAB_BATCH 64
#define FAB_HELLO_PROTO 253  /* IPv4 protocol of HELLO (RFC 3692 experimental) */
#define FAB_RT_PRIO 10       /* --rt without a value: SCHED_FIFO priority */
#define FAB_LATE_NS 1000000u /* a datagram read this long after it came is counted */
#define FAB_BEHIND_NS 100000u /* one that enters the model this much late is counted */

struct fab_peer {
	bool attached;
	struct sockaddr_in addr;
};

struct fab_daemon {
	int fd;
	struct srn_fabric *fab;
	struct srn_fabric_conf *conf;
	struct srn_fabric_cfg cfg;
	uint32_t max_ports;
	struct fab_peer *peers;
	/* receive and send batches */
	uint8_t *rxbuf, *txbuf;
	struct mmsghdr rxm[FAB_BATCH], txm[FAB_BATCH];
	struct iovec rxiov[FAB_BATCH], txiov[FAB_BATCH];
	struct sockaddr_in rxaddr[FAB_BATCH], txaddr[FAB_BATCH];
	union {                     /* control data: SCM_TIMESTAMPNS */
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(struct timespec)) + 64];
	} rxctl[FAB_BATCH];
	unsigned ntx;
	uint64_t model_now;         /* the latest time given to the model */
	/* capture */
	pcap_t *pcap;
	pcap_dumper_t *dump;
	int64_t realtime_off;   /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	uint64_t start;
	/* daemon counters */
	uint64_t rx_dgrams, tx_dgrams, hellos, attaches, reattaches, foreign_src,
		 bad_dgrams, unattached, port_table_full, send_errors;
	/* read time - kernel receive time of the datagrams that had one */
	uint64_t rx_late_sum, rx_late_n, rx_late_max, rx_late_over, rx_no_tstamp;
	/* datagrams whose time stamp was older than the model's clock (they
	 * enter it later than they came): how many by > FAB_BEHIND_NS, and by
	 * how much at most */
	uint64_t rx_behind, rx_behind_max;
};

static volatile sig_atomic_t sig_stop, sig_stats;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		sig_stats = 1;
	else
		sig_stop = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static void fmt_sa(char *out, size_t cap, const struct sockaddr_in *sa)
{
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &sa->sin_addr, a, sizeof(a));
	snprintf(out, cap, "%s:%u", a, ntohs(sa->sin_port));
}

/* ---- configuration ------------------------------------------------------ */
static bool is_stmt_word(const char *a)
{
	return !strcmp(a, "seed") || !strcmp(a, "switch") || !strcmp(a, "default") ||
	       !strcmp(a, "port") || !strncmp(a, "seed=", 5);
}

static int load_file(struct srn_fabric_conf *conf, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "softrnic fabric: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	int rc = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		char err[400];
		lineno++;
		if (srn_fabric_conf_parse_line(conf, line, (size_t)n, err, sizeof(err)) < 0) {
			fprintf(stderr, "softrnic fabric: %s: line %u: %s\n", path, lineno, err);
			rc = -1;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

/* statements from argv[first..argc): a new one at each statement word */
static int load_args(struct srn_fabric_conf *conf, int argc, char **argv, int first)
{
	int i = first;
	while (i < argc) {
		if (!is_stmt_word(argv[i])) {
			fprintf(stderr, "softrnic fabric: command line: '%s': expected seed, switch, "
				"default or port (try: softrnic fabric --help)\n", argv[i]);
			return -1;
		}
		char stmt[4096];
		size_t len = 0;
		int j = i;
		do {
			int k = snprintf(stmt + len, sizeof(stmt) - len, "%s%s", j > i ? " " : "", argv[j]);
			if (k < 0 || (size_t)k >= sizeof(stmt) - len) {
				fprintf(stderr, "softrnic fabric: command line: statement too long\n");
				return -1;
			}
			len += (size_t)k;
			j++;
		} while (j < argc && !is_stmt_word(argv[j]));
		char err[400];
		if (srn_fabric_conf_parse_line(conf, stmt, len, err, sizeof(err)) < 0) {
			fprintf(stderr, "softrnic fabric: command line: \"%s\": %s\n", stmt, err);
			return -1;
		}
		i = j;
	}
	return 0;
}

static int parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || colon[1] == 0 || port == 0 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* ---- capture ------------------------------------------------------------ */
static void tap_pcap(void *user, const struct srn_fabric_tap_info *ti, const uint8_t *pkt, size_t len)
{
	struct fab_daemon *d = user;
	uint64_t t = (uint64_t)((int64_t)ti->ts + d->realtime_off);
	struct pcap_pkthdr h;
	h.ts.tv_sec = (time_t)(t / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(t % 1000000000ull); /* ns: nanosecond pcap */
	h.caplen = h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)d->dump, &h, pkt);
}

/* ---- stats -------------------------------------------------------------- */
static void print_stats(struct fab_daemon *d, uint64_t now)
{
	printf("fabric counters at %.3f s\n", (double)(now - d->start) / 1e9);
	printf("  daemon: rx_dgrams=%llu tx_dgrams=%llu hellos=%llu attaches=%llu reattaches=%llu "
	       "foreign_src=%llu bad_dgrams=%llu unattached=%llu port_table_full=%llu "
	       "send_errors=%llu\n",
	       (unsigned long long)d->rx_dgrams, (unsigned long long)d->tx_dgrams,
	       (unsigned long long)d->hellos, (unsigned long long)d->attaches,
	       (unsigned long long)d->reattaches, (unsigned long long)d->foreign_src,
	       (unsigned long long)d->bad_dgrams, (unsigned long long)d->unattached,
	       (unsigned long long)d->port_table_full, (unsigned long long)d->send_errors);
	printf("  daemon rx: rx_late_avg_ns=%llu rx_late_max_ns=%llu rx_late_over_1ms=%llu "
	       "rx_no_tstamp=%llu rx_behind_over_100us=%llu rx_behind_max_ns=%llu\n",
	       (unsigned long long)(d->rx_late_n ? d->rx_late_sum / d->rx_late_n : 0),
	       (unsigned long long)d->rx_late_max, (unsigned long long)d->rx_late_over,
	       (unsigned long long)d->rx_no_tstamp, (unsigned long long)d->rx_behind,
	       (unsigned long long)d->rx_behind_max);
	for (uint32_t p = 0; p < srn_fabric_port_count(d->fab); p++) {
		char ip[16], sa[64] = "not attached";
		srn_fabric_fmt_ipv4(ip, srn_fabric_port_ipv4(d->fab, p));
		if (d->peers[p].attached)
			fmt_sa(sa, sizeof(sa), &d->peers[p].addr);
		printf("  port %s (%s)\n", ip, sa);
		for (int dir = 0; dir < 2; dir++) {
			const uint64_t *c = srn_fabric_counters(d->fab, p, (enum srn_fabric_dir)dir);
			printf("    %-3s:", srn_fabric_dir_names[dir]);
			for (int i = 0; i < SRN_FABRIC_CTR_MAX; i++)
				if (c[i] || i == SRN_FABRIC_CTR_PKTS_IN || i == SRN_FABRIC_CTR_PKTS_OUT)
					printf(" %s=%llu", srn_fabric_ctr_names[i], (unsigned long long)c[i]);
			printf("\n");
		}
	}
	fflush(stdout);
}

/* ---- datagrams ---------------------------------------------------------- */
static void flush_tx(struct fab_daemon *d)
{
	unsigned done = 0;
	while (done < d->ntx) {
		int n = sendmmsg(d->fd, d->txm + done, d->ntx - done, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* this datagram cannot go (EAGAIN: socket buffer full; an
			 * unreachable peer): count it and go on with the rest */
			d->send_errors++;
			done++;
			continue;
		}
		d->tx_dgrams += (unsigned)n;
		done += (unsigned)n;
	}
	d->ntx = 0;
}

static void attach(struct fab_daemon *d, uint32_t port, const struct sockaddr_in *from, bool hello)
{
	struct fab_peer *pe = &d->peers[port];
	bool same = pe->attached && pe->addr.sin_addr.s_addr == from->sin_addr.s_addr &&
		    pe->addr.sin_port == from->sin_port;
	if (same)
		return;
	if (pe->attached && !hello) {
		d->foreign_src++;
		return;
	}
	char ip[16], sa[64];
	srn_fabric_fmt_ipv4(ip, srn_fabric_port_ipv4(d->fab, port));
	fmt_sa(sa, sizeof(sa), from);
	fprintf(stderr, "softrnic fabric: port %s %sattached to %s\n", ip, pe->attached ? "re" : "", sa);
	if (pe->attached)
		d->reattaches++;
	else
		d->attaches++;
	pe->attached = true;
	pe->addr = *from;
}

/* the port of address ip, created with the configured/default knobs */
static int port_for(struct fab_daemon *d, uint32_t ip)
{
	int p = srn_fabric_port_find(d->fab, ip);
	if (p >= 0)
		return p;
	struct srn_fabric_port_cfg pc;
	srn_fabric_conf_port_cfg(d->conf, ip, &pc);
	p = srn_fabric_add_port(d->fab, ip, &pc);
	if (p < 0)
		d->port_table_full++;
	return p;
}

static void handle_dgram(struct fab_daemon *d, const uint8_t *b, size_t len,
			 const struct sockaddr_in *from, uint64_t now)
{
	d->rx_dgrams++;
	if (len < 20 || (b[0] >> 4) != 4) {
		d->bad_dgrams++;
		return;
	}
	uint32_t src = srn_get32(b + 12);
	bool valid = srn_fabric_ipv4_valid(b, len);
	if (valid && len == 20 && b[9] == FAB_HELLO_PROTO && srn_get32(b + 16) == 0) {
		d->hellos++;
		int p = port_for(d, src);
		if (p < 0)
			return;
		attach(d, (uint32_t)p, from, true);
		sendto(d->fd, b, len, 0, (const struct sockaddr *)from, sizeof(*from));
		return;
	}
	int p = valid ? port_for(d, src) : srn_fabric_port_find(d->fab, src);
	if (p < 0) {
		if (!valid)
			d->bad_dgrams++;
		return;
	}
	if (valid)
		attach(d, (uint32_t)p, from, false);
	srn_fabric_input(d->fab, (uint32_t)p, b, len, now);
}

static void run_model(struct fab_daemon *d, uint64_t now)
{
	if (now > d->model_now)
		d->model_now = now;
	for (;;) {
		uint32_t port;
		uint8_t *buf = d->txbuf + (size_t)d->ntx * d->cfg.slot_size;
		int n = srn_fabric_poll(d->fab, now, &port, buf, d->cfg.slot_size);
		if (n <= 0)
			break;
		if (!d->peers[port].attached) {
			d->unattached++;
			continue;
		}
		d->txaddr[d->ntx] = d->peers[port].addr;
		d->txiov[d->ntx].iov_len = (size_t)n;
		if (++d->ntx == FAB_BATCH)
			flush_tx(d);
	}
	flush_tx(d);
}

/* The kernel's receive time of datagram i in CLOCK_MONOTONIC (off:
 * CLOCK_REALTIME - CLOCK_MONOTONIC of this batch), or 0 if it has none. */
static uint64_t rx_tstamp(struct fab_daemon *d, int i, int64_t off)
{
	struct msghdr *mh = &d->rxm[i].msg_hdr;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS ||
		    c->cmsg_len < CMSG_LEN(sizeof(struct timespec)))
			continue;
		struct timespec ts;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		int64_t t = (int64_t)ts_ns(&ts) - off;
		return t > 0 ? (uint64_t)t : 0;
	}
	return 0;
}

/* A datagram's arrival time in the model: its kernel receive time, kept
 * non-decreasing (not before the model's latest time: a datagram that came
 * before it was read late, after the model ran past it) and not after the
 * time it was read (clock conversion error); the read time if it has none. */
static uint64_t rx_arrival(struct fab_daemon *d, uint64_t kt, uint64_t read)
{
	if (!kt) {
		d->rx_no_tstamp++;
		return read;
	}
	if (kt <= read) {
		uint64_t late = read - kt;
		d->rx_late_sum += late;
		d->rx_late_n++;
		if (late > d->rx_late_max)
			d->rx_late_max = late;
		if (late > FAB_LATE_NS)
			d->rx_late_over++;
	}
	uint64_t t = kt < read ? kt : read;
	if (t >= d->model_now)
		return t;
	if (d->model_now - t > FAB_BEHIND_NS)
		d->rx_behind++;
	if (d->model_now - t > d->rx_behind_max)
		d->rx_behind_max = d->model_now - t;
	return d->model_now;
}

/* Drain the socket: each datagram into the model at its arrival time.
 * upto: the time read before the drain - whatever came before it is in the
 * socket now (but for the kernel's own delivery delay), so the model can
 * run up to it; between batches it runs up to the latest arrival (not past
 * upto), so departures go out during a long drain. */
static void receive(struct fab_daemon *d, uint64_t upto)
{
	for (int round = 0; round < 16; round++) {
		for (int i = 0; i < FAB_BATCH; i++) {
			d->rxm[i].msg_hdr.msg_namelen = sizeof(d->rxaddr[i]);
			d->rxm[i].msg_hdr.msg_controllen = sizeof(d->rxctl[i].buf);
			d->rxiov[i].iov_len = d->cfg.slot_size + 1; /* one more: oversize seen */
		}
		int n = recvmmsg(d->fd, d->rxm, FAB_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		/* this batch's read time and CLOCK_REALTIME - CLOCK_MONOTONIC */
		struct timespec rt;
		uint64_t m0 = mono_ns();
		clock_gettime(CLOCK_REALTIME, &rt);
		uint64_t now = mono_ns();
		int64_t off = (int64_t)ts_ns(&rt) - (int64_t)(m0 + (now - m0) / 2);
		for (int i = 0; i < n; i++) {
			uint64_t t = rx_arrival(d, rx_tstamp(d, i, off), now);
			d->model_now = t;
			handle_dgram(d, d->rxiov[i].iov_base, d->rxm[i].msg_len, &d->rxaddr[i], t);
		}
		run_model(d, d->model_now < upto ? d->model_now : upto);
		if (n < FAB_BATCH)
			return;
	}
}

/* ---- main --------------------------------------------------------------- */
static int setup(struct fab_daemon *d, const struct sockaddr_in *listen, const char *pcap_path,
		 bool pcap_drops)
{
	d->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (d->fd < 0) {
		perror("softrnic fabric: socket");
		return -1;
	}
	int sz = 8 << 20;
	setsockopt(d->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(d->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (bind(d->fd, (const struct sockaddr *)listen, sizeof(*listen)) < 0) {
		char sa[64];
		fmt_sa(sa, sizeof(sa), listen);
		fprintf(stderr, "softrnic fabric: bind %s: %s\n", sa, strerror(errno));
		return -1;
	}
	size_t bytes = (size_t)FAB_BATCH * (d->cfg.slot_size + 1);
	d->rxbuf = malloc(bytes);
	d->txbuf = malloc(bytes);
	d->peers = calloc(d->cfg.max_ports, sizeof(*d->peers));
	if (!d->rxbuf || !d->txbuf || !d->peers) {
		fprintf(stderr, "softrnic fabric: out of memory\n");
		return -1;
	}
	/* the kernel's receive time of each datagram: the model's arrival time */
	int on = 1;
	if (setsockopt(d->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) < 0)
		fprintf(stderr, "softrnic fabric: warning: SO_TIMESTAMPNS: %s: packets enter the "
			"switch when the daemon reads them\n", strerror(errno));
	for (int i = 0; i < FAB_BATCH; i++) {
		d->rxiov[i].iov_base = d->rxbuf + (size_t)i * (d->cfg.slot_size + 1);
		d->rxm[i].msg_hdr = (struct msghdr){ .msg_name = &d->rxaddr[i],
						     .msg_iov = &d->rxiov[i], .msg_iovlen = 1,
						     .msg_control = d->rxctl[i].buf,
						     .msg_controllen = sizeof(d->rxctl[i].buf) };
		d->txiov[i].iov_base = d->txbuf + (size_t)i * d->cfg.slot_size;
		d->txm[i].msg_hdr = (struct msghdr){ .msg_name = &d->txaddr[i],
						     .msg_namelen = sizeof(d->txaddr[i]),
						     .msg_iov = &d->txiov[i], .msg_iovlen = 1 };
	}
	if (pcap_path) {
		d->pcap = pcap_open_dead_with_tstamp_precision(DLT_RAW, 65535, PCAP_TSTAMP_PRECISION_NANO);
		d->dump = d->pcap ? pcap_dump_open(d->pcap, pcap_path) : NULL;
		if (!d->dump) {
			fprintf(stderr, "softrnic fabric: %s: %s\n", pcap_path,
				d->pcap ? pcap_geterr(d->pcap) : "pcap_open_dead failed");
			return -1;
		}
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		uint64_t mono = mono_ns();
		d->realtime_off = (int64_t)((uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec) -
				  (int64_t)mono;
		d->cfg.tap = tap_pcap;
		d->cfg.tap_user = d;
		d->cfg.tap_drops = pcap_drops;
	}
	int rc = srn_fabric_new(&d->fab, &d->cfg, NULL);
	if (rc < 0) {
		fprintf(stderr, "softrnic fabric: cannot create the switch (%d: %s)\n", rc,
			rc == SRN_ENOMEM ? "out of memory" : "bad switch settings");
		return -1;
	}
	for (uint32_t i = 0; i < d->conf->nports; i++) {
		struct srn_fabric_port_cfg pc;
		srn_fabric_conf_port_cfg(d->conf, d->conf->port[i].ipv4, &pc);
		if (srn_fabric_add_port(d->fab, d->conf->port[i].ipv4, &pc) < 0) {
			fprintf(stderr, "softrnic fabric: cannot add port %u (switch ports=%u)\n", i,
				d->cfg.max_ports);
			return -1;
		}
	}
	return 0;
}

/* --rt: SCHED_FIFO at prio; refused -> a warning, the daemon runs on */
static int set_rt(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
		return 0;
	fprintf(stderr, "softrnic fabric: warning: --rt: cannot run SCHED_FIFO priority %d (%s); "
		"running at normal priority, so when the daemon is not scheduled its packets "
		"leave late\n", prio, strerror(errno));
	return -1;
}

static void teardown(struct fab_daemon *d)
{
	if (d->dump) {
		pcap_dump_flush(d->dump);
		pcap_dump_close(d->dump);
	}
	if (d->pcap)
		pcap_close(d->pcap);
	srn_fabric_del(d->fab);
	if (d->fd >= 0)
		close(d->fd);
	free(d->rxbuf);
	free(d->txbuf);
	free(d->peers);
}

static int loop(struct fab_daemon *d, double stats_secs)
{
	sigset_t block, orig;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &orig);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	/* wake-ups within microseconds of the model's departure times */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	uint64_t period = stats_secs > 0 ? (uint64_t)(stats_secs * 1e9) : 0;
	uint64_t next_stats = period ? d->start + period : UINT64_MAX;
	for (;;) {
		/* The time first, then what came since the last pass (at its
		 * arrival times), then the model up to that time: the model's
		 * clock does not pass a datagram still in the socket, even if
		 * the daemon is preempted between the drain and the clock. */
		uint64_t now = mono_ns();
		receive(d, now);
		run_model(d, now);
		if (now >= next_stats) {
			print_stats(d, now);
			next_stats += period;
			if (next_stats <= now)
				next_stats = now + period;
		}
		uint64_t wake = srn_fabric_expiry(d->fab);
		if (next_stats < wake)
			wake = next_stats;
		struct timespec ts, *tsp = NULL;
		if (wake != UINT64_MAX) {
			uint64_t t = mono_ns();
			uint64_t dt = wake > t ? wake - t : 0;
			ts.tv_sec = (time_t)(dt / 1000000000ull);
			ts.tv_nsec = (long)(dt % 1000000000ull);
			tsp = &ts;
		}
		struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
		if (ppoll(&pfd, 1, tsp, &orig) < 0 && errno != EINTR) {
			perror("softrnic fabric: ppoll");
			return 1;
		}
		if (sig_stop) {
			uint64_t t = mono_ns();
			receive(d, t);
			run_model(d, t);
			print_stats(d, mono_ns());
			return 0;
		}
		if (sig_stats) {
			sig_stats = 0;
			print_stats(d, mono_ns());
		}
	}
}

int srn_cmd_fabric(int argc, char **argv)
{
	struct sockaddr_in listen_sa;
	parse_listen("127.0.0.1:4790", &listen_sa);
	const char *config = NULL, *pcap_path = NULL, *seed_s = NULL, *stats_s = NULL;
	bool pcap_drops = false;
	int rt_prio = 0;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(help_fabric, stdout);
			return 0;
		}
		if (!strcmp(a, "--pcap-drops")) {
			pcap_drops = true;
			continue;
		}
		if (!strcmp(a, "--rt")) {
			rt_prio = FAB_RT_PRIO;
			continue;
		}
		if (!strncmp(a, "--rt=", 5)) {
			char *end;
			long v = strtol(a + 5, &end, 10);
			if (a[5] == 0 || *end || v < 1 || v > 99) {
				fprintf(stderr, "softrnic fabric: --rt=%s: expected a priority 1..99\n", a + 5);
				return 2;
			}
			rt_prio = (int)v;
			continue;
		}
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (strncmp(a, "--", 2) != 0)
			break;
		static const char *const opts[] = { "--listen", "--config", "--seed", "--stats", "--pcap" };
		const char **dst[] = { NULL, &config, &seed_s, &stats_s, &pcap_path };
		const char *val = NULL;
		size_t k;
		for (k = 0; k < 5; k++) {
			size_t l = strlen(opts[k]);
			if (!strncmp(a, opts[k], l) && a[l] == '=') {
				val = a + l + 1;
				break;
			}
			if (!strcmp(a, opts[k])) {
				if (i + 1 >= argc) {
					fprintf(stderr, "softrnic fabric: %s needs a value\n", a);
					return 2;
				}
				val = argv[++i];
				break;
			}
		}
		if (k == 5) {
			fprintf(stderr, "softrnic fabric: unknown option '%s' (try: softrnic fabric --help)\n", a);
			return 2;
		}
		if (k == 0) {
			if (parse_listen(val, &listen_sa) < 0) {
				fprintf(stderr, "softrnic fabric: --listen '%s': expected IPV4:PORT\n", val);
				return 2;
			}
		} else {
			*dst[k] = val;
		}
	}

	static struct srn_fabric_conf conf;
	srn_fabric_conf_init(&conf);
	if (config && load_file(&conf, config) < 0)
		return 2;
	if (load_args(&conf, argc, argv, i) < 0)
		return 2;
	if (seed_s) {
		char stmt[128], err[300];
		int k = snprintf(stmt, sizeof(stmt), "seed %s", seed_s);
		if (k < 0 || (size_t)k >= sizeof(stmt) ||
		    srn_fabric_conf_parse_line(&conf, stmt, (size_t)k, err, sizeof(err)) < 0) {
			fprintf(stderr, "softrnic fabric: --seed '%s': expected an integer\n", seed_s);
			return 2;
		}
	}
	char err[400];
	if (srn_fabric_conf_check(&conf, err, sizeof(err)) < 0) {
		fprintf(stderr, "softrnic fabric: configuration: %s\n", err);
		return 2;
	}
	double stats_secs = 0;
	if (stats_s) {
		char *end;
		stats_secs = strtod(stats_s, &end);
		if (*end || !(stats_secs >= 0) || stats_secs > 86400) {
			fprintf(stderr, "softrnic fabric: --stats '%s': expected seconds (0..86400)\n", stats_s);
			return 2;
		}
	}

	static struct fab_daemon d;
	memset(&d, 0, sizeof(d));
	d.fd = -1;
	d.conf = &conf;
	srn_fabric_cfg_default(&d.cfg);
	srn_fabric_conf_switch_cfg(&conf, &d.cfg);
	d.start = mono_ns();
	d.cfg.epoch = d.start;
	int rc = 1;
	if (setup(&d, &listen_sa, pcap_path, pcap_drops) == 0) {
		char sa[64], rt[48] = "";
		fmt_sa(sa, sizeof(sa), &listen_sa);
		if (rt_prio && set_rt(rt_prio) == 0)
			snprintf(rt, sizeof(rt), ", SCHED_FIFO priority %d", rt_prio);
		fprintf(stderr, "softrnic fabric: listening on %s, seed %llu, %u configured port(s)%s\n",
			sa, (unsigned long long)d.cfg.seed, conf.nports, rt);
		rc = loop(&d, stats_secs);
	}
	teardown(&d);
	return rc;
}
