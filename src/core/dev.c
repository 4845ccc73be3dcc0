/*
 * dev.c - the device: object tables, receive dispatch, output scheduler,
 * counters and event queues.
 *
 * Call order of a packet:
 *   srn_dev_recv -> ICRC check -> srn_pkt_parse -> QPN lookup -> source,
 *   P_Key, transport and state checks -> ECN (CNP) -> srn_resp_recv
 *   (requests) or srn_comp_recv (responses)
 *   srn_dev_send -> ready list (round robin) -> CNP | srn_resp_emit |
 *   srn_req_emit -> ICRC
 * With congestion control (cfg.cc, cong.c): RTT probe packets are taken
 * before the parser, probe answers go out before the ready list, a QP's
 * request packets wait for its pacer, and CNPs/ACKs/NAKs/sent bursts are
 * events for the CC engine.
 */
#include "core_int.h"

const char *const srn_ctr_names[SRN_CTR_MAX] = {
	"tx_pkts", "tx_bytes", "rx_pkts", "rx_bytes",
	"tx_req_pkts", "tx_resp_pkts", "tx_acks", "tx_cnps",
	"retransmit_pkts", "retry_timeouts", "rnr_retries",
	"tx_nak_seq", "tx_nak_rnr", "tx_nak_inv_req", "tx_nak_rem_access",
	"tx_nak_rem_op", "rx_nak_seq", "rx_nak_rnr", "rx_nak_other",
	"dup_requests", "dup_read_reexec", "dup_atomic_replay", "oos_req_dropped",
	"dup_acks", "ghost_acks", "rx_ecn_ce", "rx_cnps",
	"retry_exc_err", "rnr_retry_exc_err", "completions", "completion_errors",
	"uc_msg_dropped", "ud_dropped_no_recv", "rd_atomic_wait",
	"drop_malformed", "drop_bad_icrc", "drop_unknown_qpn", "drop_bad_src",
	"drop_bad_state", "drop_bad_opcode", "drop_bad_qkey", "drop_bad_pkey",
	"drop_bad_length", "drop_cq_overflow", "drop_resp_queue_full",
	"tx_nak_rd_atomic_exc",
	"cc_events", "cc_event_drops", "cc_rate_updates", "cc_rate_stale",
	"cc_pace_waits", "cc_rate_kbps_last", "cc_algo_swaps",
	"tx_rtt_probes", "rx_rtt_probes", "tx_rtt_responses", "rx_rtt_responses",
	"drop_rtt_probe", "rx_nak_seq_repeat", "rx_icrc_other_id", "acks_delayed",
};
_Static_assert(sizeof(srn_ctr_names) / sizeof(srn_ctr_names[0]) == SRN_CTR_MAX, "counter names");

const char *const srn_qp_state_names[7] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

const char *srn_strerror(int err)
{
	switch (err) {
	case SRN_OK: return "ok";
	case SRN_EINVAL: return "invalid argument";
	case SRN_ENOMEM: return "out of memory or queue full";
	case SRN_ESTATE: return "wrong object state";
	case SRN_EBUSY: return "object in use";
	case SRN_ENOENT: return "no such object";
	case SRN_EAGAIN: return "nothing available";
	case SRN_ERANGE: return "value out of range";
	case SRN_EDROP: return "packet dropped";
	default: return "unknown error";
	}
}

void srn_dev_cfg_default(struct srn_dev_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_qp = 1024;
	cfg->max_mr = 4096;
	cfg->max_mw = 4096;
	cfg->max_qp_wr = 4096;
	cfg->max_sge = 32;
	cfg->max_inline = 256;
	cfg->max_cqe = 65536;
	cfg->max_rd_atomic = 16;
	cfg->qpn_timewait = 100ull * 1000 * 1000;    /* 100 ms */
	cfg->ack_coalesce = 16;
	cfg->cnp_interval_ns = 50000;
	cfg->qpn_seed = 2;
	cfg->max_inflight_pkts = 1024;
}

#define SRN_AEV_CAP 256u

int srn_dev_new(struct srn_dev **out, const struct srn_dev_cfg *cfg)
{
	if (!out || !cfg || !cfg->mem.calloc || !cfg->mem.free || cfg->max_qp == 0 ||
	    cfg->max_qp > (1u << 23) || cfg->max_mr == 0 || cfg->max_mr > (1u << 24) - 1)
		return SRN_EINVAL;
	struct srn_dev *dev = cfg->mem.calloc(1, sizeof(*dev), cfg->mem.user);
	if (!dev)
		return SRN_ENOMEM;
	dev->cfg = *cfg;
	if (dev->cfg.ack_coalesce == 0)
		dev->cfg.ack_coalesce = 16;
	if (dev->cfg.cnp_interval_ns == 0)
		dev->cfg.cnp_interval_ns = 50000;
	if (dev->cfg.max_inflight_pkts == 0)
		dev->cfg.max_inflight_pkts = 1024;
	if (dev->cfg.max_rd_atomic == 0)
		dev->cfg.max_rd_atomic = 1;
	if (dev->cfg.max_sge == 0)
		dev->cfg.max_sge = 1;
	srn_list_init(&dev->qps);
	srn_list_init(&dev->cqs);
	srn_list_init(&dev->srqs);
	srn_list_init(&dev->ready);
	dev->next_pdn = 1;
	dev->qpt = srn_mem_calloc(dev, cfg->max_qp, sizeof(*dev->qpt));
	dev->qpn_free_at = srn_mem_calloc(dev, cfg->max_qp, sizeof(*dev->qpn_free_at));
	dev->qpn_used = srn_mem_calloc(dev, cfg->max_qp, sizeof(*dev->qpn_used));
	dev->mrt = srn_mem_calloc(dev, cfg->max_mr, sizeof(*dev->mrt));
	dev->mr_gen = srn_mem_calloc(dev, cfg->max_mr, sizeof(*dev->mr_gen));
	dev->timers.cap = cfg->max_qp * SRN_TIMER_KINDS;
	dev->timers.h = srn_mem_calloc(dev, dev->timers.cap, sizeof(*dev->timers.h));
	dev->aev_cap = SRN_AEV_CAP;
	dev->aev = srn_mem_calloc(dev, dev->aev_cap, sizeof(*dev->aev));
	if (!dev->qpt || !dev->qpn_free_at || !dev->qpn_used || !dev->mrt || !dev->mr_gen ||
	    !dev->timers.h || !dev->aev) {
		srn_dev_del(dev);
		return SRN_ENOMEM;
	}
	dev->qpn_cursor = (cfg->qpn_seed >= 2 ? cfg->qpn_seed - 2 : 0) % cfg->max_qp;
	if (cfg->cc) {
		int rc = srn_cong_new(dev);
		if (rc) {
			srn_dev_del(dev);
			return rc;
		}
	}
	*out = dev;
	return SRN_OK;
}

void srn_dev_del(struct srn_dev *dev)
{
	if (!dev)
		return;
	while (!srn_list_empty(&dev->qps)) {
		struct srn_qp *qp = srn_container_of(dev->qps.next, struct srn_qp, node);
		srn_qp_del(qp, dev->now);
	}
	while (!srn_list_empty(&dev->srqs)) {
		struct srn_srq *srq = srn_container_of(dev->srqs.next, struct srn_srq, node);
		srq->refcnt = 0;
		srn_srq_del(srq);
	}
	while (!srn_list_empty(&dev->cqs)) {
		struct srn_cq *cq = srn_container_of(dev->cqs.next, struct srn_cq, node);
		cq->refcnt = 0;
		srn_cq_del(cq);
	}
	srn_mw_dev_del(dev);            /* windows hold their MRs */
	if (dev->mrt)
		for (uint32_t i = 0; i < dev->cfg.max_mr; i++)
			if (dev->mrt[i])
				srn_mr_dereg(dev, dev->mrt[i]);
	srn_mem_free(dev, dev->qpt);
	srn_mem_free(dev, dev->qpn_free_at);
	srn_mem_free(dev, dev->qpn_used);
	srn_mem_free(dev, dev->mrt);
	srn_mem_free(dev, dev->mr_gen);
	srn_mem_free(dev, dev->timers.h);
	srn_mem_free(dev, dev->aev);
	srn_cong_del(dev);
	dev->cfg.mem.free(dev, dev->cfg.mem.user);
}

uint32_t srn_pd_alloc(struct srn_dev *dev)
{
	uint32_t pdn = dev->next_pdn++;
	if (dev->next_pdn == 0)
		dev->next_pdn = 1;
	return pdn;
}

const uint64_t *srn_dev_counters(const struct srn_dev *dev) { return dev->ctr; }
uint64_t *srn_dev_counters_mut(struct srn_dev *dev) { return dev->ctr; }

/* ------------------------------------------------------------------------ */
/* events */

void srn_dev_async(struct srn_dev *dev, enum srn_async_type type, struct srn_qp *qp,
		   struct srn_srq *srq, struct srn_cq *cq)
{
	if (dev->aev_n == dev->aev_cap) {
		/* full: drop the oldest (the runtime drains it after every call) */
		dev->aev_head = (dev->aev_head + 1) % dev->aev_cap;
		dev->aev_n--;
	}
	struct srn_async_event *ev = &dev->aev[(dev->aev_head + dev->aev_n) % dev->aev_cap];
	ev->type = type;
	ev->qp = qp;
	ev->srq = srq;
	ev->cq = cq;
	dev->aev_n++;
}

int srn_dev_next_async_event(struct srn_dev *dev, struct srn_async_event *ev)
{
	if (dev->aev_n == 0)
		return SRN_EAGAIN;
	*ev = dev->aev[dev->aev_head];
	dev->aev_head = (dev->aev_head + 1) % dev->aev_cap;
	dev->aev_n--;
	return SRN_OK;
}

/* drop events that name an object being destroyed */
static void aev_forget(struct srn_dev *dev, const void *obj)
{
	for (uint32_t i = 0; i < dev->aev_n; i++) {
		struct srn_async_event *ev = &dev->aev[(dev->aev_head + i) % dev->aev_cap];
		if ((void *)ev->qp == obj || (void *)ev->srq == obj || (void *)ev->cq == obj)
			ev->qp = NULL, ev->srq = NULL, ev->cq = NULL, ev->type = SRN_EV_DEVICE_FATAL + 100;
	}
	/* compact */
	uint32_t w = 0;
	for (uint32_t i = 0; i < dev->aev_n; i++) {
		struct srn_async_event e = dev->aev[(dev->aev_head + i) % dev->aev_cap];
		if ((int)e.type == SRN_EV_DEVICE_FATAL + 100)
			continue;
		dev->aev[(dev->aev_head + w) % dev->aev_cap] = e;
		w++;
	}
	dev->aev_n = w;
}

void srn_dev_forget_obj(struct srn_dev *dev, const void *obj)
{
	aev_forget(dev, obj);
	struct srn_cq **pp = &dev->cqev_head;
	dev->cqev_tail = NULL;
	while (*pp) {
		if ((void *)*pp == obj) {
			(*pp)->in_ev = false;
			*pp = (*pp)->ev_next;
			continue;
		}
		dev->cqev_tail = *pp;
		pp = &(*pp)->ev_next;
	}
}

void srn_cq_notify(struct srn_cq *cq)
{
	struct srn_dev *dev = cq->dev;
	if (cq->in_ev)
		return;
	cq->in_ev = true;
	cq->ev_next = NULL;
	if (dev->cqev_tail)
		dev->cqev_tail->ev_next = cq;
	else
		dev->cqev_head = cq;
	dev->cqev_tail = cq;
}

struct srn_cq *srn_dev_next_cq_event(struct srn_dev *dev)
{
	struct srn_cq *cq = dev->cqev_head;
	if (!cq)
		return NULL;
	dev->cqev_head = cq->ev_next;
	if (!dev->cqev_head)
		dev->cqev_tail = NULL;
	cq->in_ev = false;
	cq->ev_next = NULL;
	return cq;
}

/* ------------------------------------------------------------------------ */
/* receive */

static bool gid_eq(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 16) == 0; }

static bool op_matches_qp(const struct srn_qp *qp, uint32_t mask)
{
	switch (qp->init.type) {
	case SRN_QPT_RC: return mask & SRN_M_RC;
	case SRN_QPT_UC: return mask & SRN_M_UC;
	case SRN_QPT_UD: return mask & SRN_M_UD;
	}
	return false;
}

static void note_ecn(struct srn_qp *qp, const struct srn_pkt *p, const struct srn_pkt_meta *meta, srn_ts now)
{
	struct srn_dev *dev = qp->dev;
	if (meta->ecn != 3)
		return;
	srn_ctr_inc(dev, SRN_CTR_RX_ECN_CE);
	if (qp->cnp_pending)
		return;
	if (qp->cnp_sent_once && now - qp->cnp_last < dev->cfg.cnp_interval_ns)
		return;
	/* CNP goes to the QP that sent the marked packet */
	if (qp->init.type == SRN_QPT_UD) {
		if (!(p->info->mask & SRN_M_DETH))
			return;
		qp->cnp_dqpn = p->deth_sqpn;
	} else {
		qp->cnp_dqpn = qp->attr.dest_qp_num;
	}
	memcpy(qp->cnp_dgid, meta->src_gid, 16);
	qp->cnp_pending = true;
	qp->cnp_last = now;
	qp->cnp_sent_once = true;
}

int srn_dev_recv(struct srn_dev *dev, const uint8_t *pkt, size_t len,
		 const struct srn_pkt_meta *meta, srn_ts now)
{
	srn_dev_tick(dev, now);
	srn_ctr_inc(dev, SRN_CTR_RX_PKTS);
	dev->ctr[SRN_CTR_RX_BYTES] += len;
	if (!pkt || !meta || len < SRN_BTH_LEN + SRN_ICRC_LEN) {
		srn_ctr_inc(dev, SRN_CTR_DROP_MALFORMED);
		return SRN_EDROP;
	}
	struct srn_ip_info ip;
	memset(&ip, 0, sizeof(ip));
	memcpy(ip.src, meta->src_gid, 16);
	memcpy(ip.dst, meta->dst_gid, 16);
	ip.ip_id = meta->ip_id;
	ip.df = true;
	ip.sport = meta->sport;
	ip.dport = meta->dport;
	ip.ttl = meta->ttl;
	ip.tos = (uint8_t)((meta->dscp << 2) | (meta->ecn & 3));
	uint16_t id = ip.ip_id;
	if (srn_icrc_check_ids(&ip, pkt, len, meta->ip_id_exact ? 1 : SRN_GSO_ID_SPAN, &id) != 0) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_ICRC);
		return SRN_EDROP;
	}
	if (id != ip.ip_id)
		srn_ctr_inc(dev, SRN_CTR_RX_ICRC_OTHER_ID);
	if (dev->cc && srn_is_cc_probe(pkt[0]))
		return srn_cong_recv_probe(dev, pkt, len, meta, now);
	struct srn_pkt p;
	int rc = srn_pkt_parse(&p, pkt, len);
	if (rc != 0) {
		srn_ctr_inc(dev, rc == SRN_WIRE_EOPCODE ? SRN_CTR_DROP_BAD_OPCODE : SRN_CTR_DROP_MALFORMED);
		return SRN_EDROP;
	}
	struct srn_qp *qp = srn_qp_lookup(dev, p.dqpn);
	if (!qp) {
		srn_ctr_inc(dev, SRN_CTR_DROP_UNKNOWN_QPN);
		return SRN_EDROP;
	}
	uint32_t mask = p.info->mask;
	if (mask & SRN_M_CNP) {
		if (qp->init.type != SRN_QPT_UD && !gid_eq(meta->src_gid, qp->attr.ah.dgid)) {
			srn_ctr_inc(dev, SRN_CTR_DROP_BAD_SRC);
			return SRN_EDROP;
		}
		srn_ctr_inc(dev, SRN_CTR_RX_CNPS);
		srn_cong_on_cnp(qp, now);       /* CNP event of the sender's flow */
		return SRN_OK;
	}
	if (!op_matches_qp(qp, mask)) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_OPCODE);
		return SRN_EDROP;
	}
	if (p.pkey != SRN_DEFAULT_PKEY) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_PKEY);
		return SRN_EDROP;
	}
	enum srn_qp_state st = qp->attr.qp_state;
	if (st == SRN_QPS_RESET || st == SRN_QPS_INIT || st == SRN_QPS_ERR) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_STATE);
		return SRN_EDROP;
	}
	if (qp->init.type != SRN_QPT_UD && !gid_eq(meta->src_gid, qp->attr.ah.dgid)) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_SRC);
		return SRN_EDROP;
	}
	note_ecn(qp, &p, meta, now);
	if (mask & SRN_M_REQ) {
		srn_resp_recv(qp, &p, meta, len, now);
	} else if (mask & SRN_M_RESP) {
		if (qp->init.type != SRN_QPT_RC || st == SRN_QPS_RTR) {
			srn_ctr_inc(dev, SRN_CTR_DROP_BAD_STATE);
			srn_qp_sched(qp);
			return SRN_EDROP;
		}
		if (mask & SRN_M_AETH)
			srn_cong_on_aeth(qp, &p, now);
		srn_comp_recv(qp, &p, now);
	} else {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_OPCODE);
		return SRN_EDROP;
	}
	srn_qp_sched(qp);
	return SRN_OK;
}

/* ------------------------------------------------------------------------ */
/* output scheduler: ready list of QPs, round robin, responses first */

void srn_qp_sched(struct srn_qp *qp)
{
	if (srn_list_linked(&qp->ready))
		return;
	if (!srn_qp_has_output(qp))
		return;
	srn_list_add_tail(&qp->dev->ready, &qp->ready);
}

void srn_qp_unsched(struct srn_qp *qp)
{
	if (srn_list_linked(&qp->ready))
		srn_list_del(&qp->ready);
}

static ssize_t emit_cnp(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta)
{
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	p.opcode = SRN_OP_CNP;
	p.pkey = SRN_DEFAULT_PKEY;
	p.becn = true;
	p.dqpn = qp->cnp_dqpn;
	int h = srn_pkt_write_hdrs(buf, cap, &p);
	if (h < 0 || (size_t)h + SRN_CNP_PAYLOAD_LEN + SRN_ICRC_LEN > cap)
		return 0;
	size_t hdr = (size_t)h;
	uint32_t extra = 0;
	if (hdr < SRN_BTH_LEN + SRN_CNP_PAYLOAD_LEN) {
		extra = SRN_BTH_LEN + SRN_CNP_PAYLOAD_LEN - (uint32_t)hdr;
		memset(buf + hdr, 0, extra);
	}
	struct srn_ah_attr ah = qp->attr.ah;
	memcpy(ah.dgid, qp->cnp_dgid, 16);
	srn_qp_fill_meta(qp, &ah, qp->cnp_dqpn, meta);
	meta->ecn = 0;      /* CNPs are not ECN-capable */
	qp->cnp_pending = false;
	srn_ctr_inc(qp->dev, SRN_CTR_TX_CNPS);
	return (ssize_t)srn_pkt_finalize(buf, hdr + extra, 0, meta);
}

/* cfg.ack_delay_ns: is the response queue a lone ACK of a two-way QP that
 * may still wait for the QP's next request? It waits until it is due, or
 * until a request has left after it was queued: the request goes first and
 * the ACK right behind it, so a peer that polls for the ACK finds the
 * request already received when the ACK arrives. */
static bool ack_waits(const struct srn_qp *qp, srn_ts now)
{
	const struct srn_dev *dev = qp->dev;
	if (!dev->cfg.ack_delay_ns || qp->resp.q_n != 1 || qp->attr.qp_state != SRN_QPS_RTS)
		return false;
	const struct srn_rsp *e = &qp->resp.q[qp->resp.q_head];
	return e->type == SRN_RSP_ACK && qp->req_tx_last && qp->req_tx_seq == e->txseq &&
	       now < qp->req_tx_last + SRN_ACK_DELAY_PEER_NS && now < e->t + dev->cfg.ack_delay_ns;
}

static ssize_t qp_output(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now)
{
	ssize_t n;
	if (qp->cnp_pending && qp->attr.qp_state != SRN_QPS_ERR && qp->attr.qp_state != SRN_QPS_RESET) {
		n = emit_cnp(qp, buf, cap, meta);
		if (n > 0)
			return n;
	}
	if (qp->cc.probe_pending &&
	    (qp->attr.qp_state == SRN_QPS_RTS || qp->attr.qp_state == SRN_QPS_SQD)) {
		n = srn_cong_emit_probe(qp, buf, cap, meta, now);
		if (n > 0)
			return n;
	}
	bool ack_wait = qp->resp.q_n && ack_waits(qp, now);
	if (ack_wait && !srn_req_can_send(qp)) {
		/* held: it leaves behind the next request, or at its timer */
		if (!srn_timer_armed(&qp->ack_timer)) {
			const struct srn_rsp *e = &qp->resp.q[qp->resp.q_head];
			srn_timer_set(qp->dev, &qp->ack_timer, e->t + qp->dev->cfg.ack_delay_ns);
			srn_ctr_inc(qp->dev, SRN_CTR_ACKS_DELAYED);
		}
		return 0;
	}
	if (qp->resp.q_n && !ack_wait) {
		srn_timer_cancel(qp->dev, &qp->ack_timer);
		n = srn_resp_emit(qp, buf, cap, meta, now);
		if (n > 0) {
			srn_ctr_inc(qp->dev, SRN_CTR_TX_RESP_PKTS);
			return n;
		}
	}
	if (qp->cc.on && srn_req_can_send(qp) && !srn_cong_may_send(qp, now))
		return 0;               /* the pacer holds it; its pace timer wakes it */
	n = srn_req_emit(qp, buf, cap, meta, now);
	if (n > 0) {
		qp->req_tx_last = now ? now : 1;
		qp->req_tx_seq++;
		srn_ctr_inc(qp->dev, SRN_CTR_TX_REQ_PKTS);
		srn_cong_on_tx(qp, buf, (size_t)n, now);
	}
	return n;
}

ssize_t srn_dev_send(struct srn_dev *dev, uint8_t *buf, size_t cap,
		     struct srn_pkt_meta *meta, srn_ts now)
{
	srn_dev_tick(dev, now);
	if (!buf || !meta || cap < SRN_BTH_LEN + SRN_ICRC_LEN)
		return SRN_EINVAL;
	if (dev->cc && dev->cc->ans_n) {
		/* RTT probe answers jump the queue (CC-12) */
		memset(meta, 0, sizeof(*meta));
		ssize_t n = srn_cong_emit_answer(dev, buf, cap, meta, now);
		if (n > 0) {
			srn_ctr_inc(dev, SRN_CTR_TX_PKTS);
			dev->ctr[SRN_CTR_TX_BYTES] += (uint64_t)n;
			return n;
		}
	}
	while (!srn_list_empty(&dev->ready)) {
		struct srn_qp *qp = srn_container_of(dev->ready.next, struct srn_qp, ready);
		srn_list_del(&qp->ready);
		memset(meta, 0, sizeof(*meta));
		ssize_t n = qp_output(qp, buf, cap, meta, now);
		if (n > 0) {
			srn_qp_sched(qp);
			srn_ctr_inc(dev, SRN_CTR_TX_PKTS);
			dev->ctr[SRN_CTR_TX_BYTES] += (uint64_t)n;
			return n;
		}
	}
	return 0;
}

bool srn_dev_has_output(const struct srn_dev *dev)
{
	if (dev->cc && dev->cc->ans_n)
		return true;
	for (const struct srn_list *l = dev->ready.next; l != &dev->ready; l = l->next)
		if (srn_qp_has_output(srn_container_of(l, const struct srn_qp, ready)))
			return true;
	return false;
}

/* ------------------------------------------------------------------------ */
/* timers */

srn_ts srn_dev_expiry(const struct srn_dev *dev)
{
	srn_ts t = dev->timers.n ? dev->timers.h[0]->deadline : SRN_TS_NEVER;
	srn_ts c = srn_cong_expiry(dev);    /* the CC engine's processors */
	return c < t ? c : t;
}

void srn_dev_handle_expiry(struct srn_dev *dev, srn_ts now)
{
	srn_dev_tick(dev, now);
	srn_cong_handle_expiry(dev, now);
	while (dev->timers.n && dev->timers.h[0]->deadline <= now) {
		struct srn_timer *t = dev->timers.h[0];
		srn_timer_cancel(dev, t);
		/* a pace or delayed-ACK timer only reschedules */
		if (t->kind != SRN_TIMER_PACE && t->kind != SRN_TIMER_ACK)
			srn_req_on_timer(t->qp, t->kind, now);
		srn_qp_sched(t->qp);
	}
}
