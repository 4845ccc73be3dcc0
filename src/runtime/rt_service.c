/*
 * rt_service.c - a service pass of a runtime device (always under its lock):
 *
 *   [receive: port batches -> srn_dev_recv each, answers flushed per batch]
 *   expiry (if due) -> srn_dev_send into the port's TX batch -> port flush
 *   -> CQ / async events to the hooks            (repeated while work remains)
 *
 * The port (port_udp.c, port_fabric.c) owns the sockets; this file only
 * moves packets between it and the core, captures them, and keeps the
 * runtime's counters.
 */
#include <string.h>

#include "rt_dev.h"

const char *const srn_rt_ctr_names[] = {
	"rt_rx_batches", "rt_tx_batches", "rt_rx_trunc", "rt_rx_errors",
	"rt_tx_errors", "rt_tx_no_socket", "rt_wakeups", "rt_kicks",
	/* fabric port: datagrams that are not a valid IPv4/UDP packet; valid
	 * ones not addressed to this device (address or UDP port); HELLO echoes
	 * seen after the attachment */
	"rt_rx_bad_ip", "rt_rx_not_mine", "rt_fabric_hellos",
	/* UDP GSO sends (several packets in one) and GRO datagrams received */
	"rt_tx_gso_sends", "rt_rx_gro_dgrams",
	/* passes of a passive device's thread that looked at the socket
	 * again instead of sleeping (SOFTRNIC_RX_SPIN_US) */
	"rt_rx_spins",
};
_Static_assert(sizeof srn_rt_ctr_names / sizeof srn_rt_ctr_names[0] == SRN_RT_CTR_MAX,
	       "one name per runtime counter");

static void pcap_packet(struct srn_rt_dev *rd, const struct srn_pkt_meta *m,
			const uint8_t *pkt, size_t len)
{
	struct srn_ip_info ip;
	srn_roce_ip_info(&ip, m);
	srn_rt_pcap_write(rd->pcap, &ip, pkt, len);
}

void srn_rt_tx_flush(struct srn_rt_dev *rd)
{
	struct srn_rt_txbatch *b = &rd->port.tx;
	int n = b->n;
	if (!n)
		return;
	int failed = rd->port.ops->flush(&rd->port);
	rd->rt_ctr[SRN_RT_CTR_TX_ERRORS] += (uint64_t)failed;
	/* captured after the send: a GSO segment's IPv4 ID (and ICRC) is known */
	if (rd->pcap)
		for (int i = 0; i < n; i++)
			pcap_packet(rd, &b->meta[i], b->data + (size_t)i * SRN_RT_BUFSZ, b->len[i]);
}

/* Take packets from the core into the TX batch, sending full batches; the
 * last partial batch is sent too unless `defer` (then it waits for the next
 * pass, at the latest the progress thread's wake-up at last_act +
 * APP_POLL_NS). */
static int tx_pump(struct srn_rt_dev *rd, srn_ts now, bool defer)
{
	struct srn_rt_txbatch *b = &rd->port.tx;
	int sent = 0;

	while (sent < TX_BUDGET) {
		uint8_t *buf = b->data + (size_t)b->n * SRN_RT_BUFSZ;
		struct srn_pkt_meta *m = &b->meta[b->n];
		memset(m, 0, sizeof *m);
		ssize_t len = srn_dev_send(rd->core, buf, SRN_RT_BUFSZ, m, now);
		if (len <= 0)
			break;
		sent++;
		int s = rd->port.ops->route(&rd->port, m);
		if (s < 0) {                  /* the core used a token we do not own */
			rd->rt_ctr[SRN_RT_CTR_TX_NO_SOCKET]++;
			continue;
		}
		if (m->src_gid[10] != 0xff)   /* the header says IPv4-mapped; be safe */
			srn_rt_gid_from_ip(m->src_gid, rd->cfg.ip);
		if (!m->l4.dst)
			m->l4.dst = SRN_ROCEV2_UDP_PORT;
		b->len[b->n] = (size_t)len;
		b->sock[b->n] = (uint8_t)s;
		if (++b->n == SRN_RT_BATCH)
			srn_rt_tx_flush(rd);
	}
	if (!defer)
		srn_rt_tx_flush(rd);
	return sent;
}

/* the port's sink: a packet into the core (captured first, with the IPv4 ID
 * its ICRC really has when the port only had a hint) */
static void rx_packet(void *ctx, const uint8_t *pkt, size_t len, struct srn_pkt_meta *meta)
{
	struct srn_rt_dev *rd = ctx;
	if (!rd->rx_now)
		rd->rx_now = srn_rt_now();
	if (rd->pcap) {
		if (!meta->l4.ip_id_exact)
			(void)srn_roce_icrc_verify(meta, pkt, len, &meta->l4.ip_id);
		pcap_packet(rd, meta, pkt, len);
	}
	(void)srn_dev_recv(rd->core, pkt, len, meta, rd->rx_now);
}

static void rx_malformed(void *ctx)
{
	struct srn_rt_dev *rd = ctx;
	srn_dev_counters_mut(rd->core)[SRN_CTR_DROP_MALFORMED]++;
}

/* One receive batch into the core; returns datagrams received. */
static int rx_round(struct srn_rt_dev *rd)
{
	const struct srn_rt_rx_sink sink = { .packet = rx_packet, .malformed = rx_malformed, .ctx = rd };
	rd->rx_now = 0;
	int n = rd->port.ops->recv(&rd->port, &sink);
	if (n < 0) {
		rd->rt_ctr[SRN_RT_CTR_RX_ERRORS]++;
		return 0;
	}
	if (n > 0)
		rd->rt_ctr[SRN_RT_CTR_RX_BATCHES]++;
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

/* Up to RX_ROUNDS receive batches into the core; whatever the core has to
 * send in answer (ACKs, read responses) leaves per batch. */
bool srn_rt_rx_pass(struct srn_rt_dev *rd)
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

void srn_rt_service(struct srn_rt_dev *rd, bool rx, bool defer)
{
	bool work = false;

	if (rx) {
		srn_rt_tx_flush(rd);              /* a deferred doorbell goes first */
		rd->port.rx_bytes = 0;
		work = srn_rt_rx_pass(rd);
	}
	srn_ts now = srn_rt_now();
	/* small arrivals (requests, small messages) make the thread spin for
	 * the next ones; a large pass ends the spin: bulk data gains more from
	 * the batches that build up while it sleeps (fewer, fuller receive
	 * calls and ACKs) */
	if (work)
		rd->last_rx = rd->port.rx_bytes < RX_SPIN_MAX_BYTES ? now : 0;
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

void srn_rt_publish(struct srn_rt_dev *rd, srn_ts now)
{
	if (!rd->shm)
		return;
	memcpy(rd->pub, srn_dev_counters(rd->core), SRN_CTR_MAX * sizeof(uint64_t));
	memcpy(rd->pub + SRN_CTR_MAX, rd->rt_ctr, sizeof rd->rt_ctr);
	srn_rt_shm_publish(rd->shm, rd->pub, SRN_CTR_MAX + SRN_RT_CTR_MAX);
	rd->stats_dirty = false;
	rd->stats_last = now;
}

/* When the thread must next wake up. */
srn_ts srn_rt_thread_deadline(struct srn_rt_dev *rd)
{
	srn_ts d = srn_dev_expiry(rd->core);
	if (srn_dev_has_output(rd->core))
		d = 0;
	if (rd->port.tx.n) {                  /* a deferred doorbell */
		srn_ts la = atomic_load_explicit(&rd->last_act, memory_order_relaxed);
		if (la + APP_POLL_NS < d)
			d = la + APP_POLL_NS;
	}
	if (rd->stats_dirty && rd->shm && rd->stats_last + STATS_PERIOD_NS < d)
		d = rd->stats_last + STATS_PERIOD_NS;
	return d;
}
