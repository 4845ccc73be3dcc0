/*
 * cong.c - congestion control in the transport (CC-01, CC-02, CC-09..CC-13):
 * the device's srn_cc engine, the per-QP pacer of the TX pipe and the RTT
 * probes. A device created with cfg.cc owns one engine; every RC/UC QP is a
 * flow whose ID is its QPN. Everything is called by the device with the
 * device's time and never blocks, reads a clock or allocates (the engine
 * and the answer ring are allocated in srn_cong_new).
 *
 * Call order:
 *   TX pipe  srn_dev_send -> probe answers first (srn_cong_emit_answer) ->
 *            ready QP: CNP | probe request (srn_cong_emit_probe) | responses
 *            | srn_cong_may_send (pacer; else arm the QP's pace timer and
 *            skip it) -> srn_req_emit -> srn_cong_on_tx (TX event, debit)
 *   RX pipe  srn_dev_recv -> opcode 0xC0/0xC1: srn_cong_recv_probe;
 *            CNP: srn_cong_on_cnp; AETH (ACK/NAK): srn_cong_on_aeth
 *   engine   every event is posted through the engine's direct interface
 *            (srn_cc_post_event: a function call, no lock) and followed by
 *            pump(): handle_expiry up to now, then the TX rate-update FIFO
 *            is drained into the QPs' pacers (RTT requests set
 *            probe_pending). With the device engine configuration
 *            (srn_dev_cc_cfg_default: instantaneous processors) an event's
 *            rate update reaches the pacer within the call that posted it;
 *            with timed processors srn_dev_expiry carries the engine's
 *            deadline.
 */
#include "core_int.h"

/* header bytes of the largest request packet besides its payload:
 * BTH + RETH + ImmDt + pad + ICRC, rounded up */
#define SRN_REQ_HDR_MAX 48u
#define SRN_CC_OVERHEAD_DEFAULT 28u     /* IPv4 + UDP: what the kernel adds */

void srn_dev_cc_cfg_default(struct srn_cc_cfg *cc, const struct softrnic_cc_algo *algo,
			    uint32_t max_qp, uint32_t line_rate_kbps)
{
	srn_cc_cfg_default(cc);
	cc->n_procs = 8;
	cc->ctx_cache_entries = 64;
	cc->ctx_store_flows = max_qp ? max_qp : 1;
	cc->cycle_ns = 0;
	cc->proc_ns = 0;
	cc->ctx_miss_ns = 0;
	if (line_rate_kbps) {
		cc->line_rate_kbps = line_rate_kbps;
		cc->default_rate_kbps = line_rate_kbps;
		if (cc->min_rate_kbps > line_rate_kbps)
			cc->min_rate_kbps = line_rate_kbps;
	}
	if (algo)
		cc->algo = algo;
}

int srn_cong_new(struct srn_dev *dev)
{
	const struct srn_cc_cfg *cfg = dev->cfg.cc;
	if (cfg->min_rate_kbps == 0)    /* a rate of 0 would stop a flow for good */
		return SRN_EINVAL;
	struct srn_cong *c = srn_mem_calloc(dev, 1, sizeof(*c));
	if (!c)
		return SRN_ENOMEM;
	c->cfg = *cfg;
	c->overhead = dev->cfg.cc_wire_overhead ? dev->cfg.cc_wire_overhead : SRN_CC_OVERHEAD_DEFAULT;
	c->burst = dev->cfg.cc_burst_bytes;
	int rc = srn_cc_engine_new(&c->eng, &c->cfg, &dev->cfg.mem);
	if (rc) {
		srn_mem_free(dev, c);
		return rc;
	}
	dev->cc = c;
	dev->cfg.cc = &c->cfg;          /* never keep the caller's pointer */
	return SRN_OK;
}

void srn_cong_del(struct srn_dev *dev)
{
	if (!dev->cc)
		return;
	srn_cc_engine_del(dev->cc->eng);
	srn_mem_free(dev, dev->cc);
	dev->cc = NULL;
}

const struct srn_cc_engine *srn_dev_cc_engine(const struct srn_dev *dev)
{
	return dev->cc ? dev->cc->eng : NULL;
}

int srn_dev_cc_set_algo(struct srn_dev *dev, const struct softrnic_cc_algo *algo, srn_ts now)
{
	srn_dev_tick(dev, now);
	if (!dev->cc)
		return SRN_ESTATE;
	int rc = srn_cc_set_algo(dev->cc->eng, algo);
	if (rc == SRN_OK)
		srn_ctr_inc(dev, SRN_CTR_CC_ALGO_SWAPS);
	return rc;
}

uint32_t srn_qp_cc_rate(const struct srn_qp *qp)
{
	return qp->cc.on ? qp->cc.pacer.rate_kbps : 0;
}

/* ---- engine: post, run, drain the rate-update FIFO ---------------------- */

/* TX pipe applies a rate update (CC-10): pacer rate; RTT request (CC-11) */
static void apply(struct srn_dev *dev, const struct srn_cc_rate_update *u, srn_ts now)
{
	struct srn_qp *qp = srn_qp_lookup(dev, u->flow_id);
	if (!qp || !qp->cc.on) {
		srn_ctr_inc(dev, SRN_CTR_CC_RATE_STALE);  /* the QP went away meanwhile */
		return;
	}
	srn_cc_pacer_set_rate(&qp->cc.pacer, u->rate_kbps, now);
	srn_ctr_inc(dev, SRN_CTR_CC_RATE_UPDATES);
	dev->ctr[SRN_CTR_CC_RATE_KBPS_LAST] = u->rate_kbps;
	if (u->rtt_request)
		qp->cc.probe_pending = true;
	/* the deadline was computed at the old rate: decide again */
	srn_timer_cancel(&dev->timers, &qp->cc.pace);
	srn_qp_sched(qp);
}

static void pump(struct srn_dev *dev, srn_ts now)
{
	struct srn_cc_engine *eng = dev->cc->eng;
	for (;;) {
		if (srn_cc_expiry(eng) <= now)
			srn_cc_handle_expiry(eng, now);
		struct srn_cc_rate_update u;
		bool any = false;
		while (srn_cc_pop_rate_update(eng, &u) == 0) {
			apply(dev, &u, now);
			any = true;
		}
		/* a pop unblocks processors stalled on a full FIFO: run them */
		if (!any || srn_cc_expiry(eng) > now)
			return;
	}
}

static void post(struct srn_dev *dev, const struct srn_cc_ev *ev)
{
	if (srn_cc_post_event(dev->cc->eng, ev, dev->now) == 0)
		srn_ctr_inc(dev, SRN_CTR_CC_EVENTS);
	else
		srn_ctr_inc(dev, SRN_CTR_CC_EVENT_DROPS);   /* WRED (CC-03) */
	pump(dev, dev->now);
}

static void post_simple(struct srn_qp *qp, uint8_t type, uint32_t sn, uint32_t bytes)
{
	struct srn_dev *dev = qp->dev;
	struct srn_cc_ev ev = { .type = type, .flow_id = qp->qpn, .sn = sn, .bytes = bytes,
				.ts = dev->now };
	post(dev, &ev);
}

srn_ts srn_cong_expiry(const struct srn_dev *dev)
{
	return dev->cc ? srn_cc_expiry(dev->cc->eng) : SRN_TS_NEVER;
}

void srn_cong_handle_expiry(struct srn_dev *dev, srn_ts now)
{
	if (dev->cc)
		pump(dev, now > dev->now ? now : dev->now);
}

/* ---- QPs ----------------------------------------------------------------- */

static uint32_t need_bytes(const struct srn_qp *qp)
{
	return qp->mtu + SRN_REQ_HDR_MAX + qp->dev->cc->overhead;
}

void srn_cong_qp_init(struct srn_qp *qp, srn_ts now)
{
	srn_timer_init(&qp->cc.pace, srn_sched_timer_fn, qp);
	qp->cc.on = qp->dev->cc && qp->ops->paced;
	if (!qp->cc.on)
		return;
	/* CC-11: a new flow starts at the default rate; the engine's first
	 * rate update for it carries the RTT request */
	uint32_t burst = qp->dev->cc->burst;
	srn_cc_pacer_init(&qp->cc.pacer, qp->dev->cc->cfg.default_rate_kbps,
			  burst > need_bytes(qp) ? burst : need_bytes(qp), now);
}

void srn_cong_qp_del(struct srn_qp *qp)
{
	struct srn_dev *dev = qp->dev;
	srn_timer_cancel(&dev->timers, &qp->cc.pace);
	if (qp->cc.on)
		(void)srn_cc_flow_del(dev->cc->eng, qp->qpn);   /* ENOENT: never sent */
}

bool srn_cong_held(const struct srn_qp *qp)
{
	return qp->cc.on && srn_timer_armed(&qp->cc.pace) && qp->cc.pace.deadline > qp->dev->now;
}

bool srn_cong_may_send(struct srn_qp *qp, srn_ts now)
{
	if (!qp->cc.on)
		return true;
	struct srn_cc_pacer *p = &qp->cc.pacer;
	uint32_t need = need_bytes(qp);
	if (p->burst_bytes < need)
		p->burst_bytes = need;          /* the path MTU grew at RTR */
	srn_ts t = srn_cc_pacer_next_send_time(p, need, now);
	if (t <= now)
		return true;
	if (!srn_timer_armed(&qp->cc.pace) || qp->cc.pace.deadline != t)
		srn_timer_set(&qp->dev->timers, &qp->cc.pace, t);
	srn_ctr_inc(qp->dev, SRN_CTR_CC_PACE_WAITS);
	return false;
}

void srn_cong_on_tx(struct srn_qp *qp, const uint8_t *pkt, size_t len, srn_ts now)
{
	if (!qp->cc.on)
		return;
	uint32_t bytes = (uint32_t)len + qp->dev->cc->overhead;
	srn_cc_pacer_on_send(&qp->cc.pacer, bytes, now);
	post_simple(qp, SOFTRNIC_CC_EV_TX, srn_get24(pkt + 9), bytes);
}

void srn_cong_on_cnp(struct srn_qp *qp, srn_ts now)
{
	(void)now;
	if (qp->cc.on)
		post_simple(qp, SOFTRNIC_CC_EV_CNP, 0, 0);
}

void srn_cong_on_aeth(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now)
{
	(void)now;
	if (!qp->cc.on)
		return;
	uint8_t type = p->aeth_syn >> 5;
	/* ACK; NAK (sequence error: the responder saw a gap) or RNR NAK */
	post_simple(qp, type == SRN_AETH_ACK ? SOFTRNIC_CC_EV_ACK : SOFTRNIC_CC_EV_NACK, p->psn, 0);
}

/* ---- RTT probes (CC-12; docs/wire.md "RTT probe") ------------------------ */

ssize_t srn_cong_emit_probe(struct srn_qp *qp, uint8_t *buf, size_t cap,
			    struct srn_pkt_meta *meta, srn_ts now)
{
	if (cap < SRN_CC_PROBE_PKT_LEN)
		return 0;
	uint32_t seq = ++qp->cc.probe_seq;
	/* T1: the time the probe leaves (the driver transmits what send returns) */
	srn_cc_probe_build_req(buf + SRN_BTH_LEN, cap - SRN_BTH_LEN, qp->qpn, seq, now);
	srn_path_meta(qp, &qp->req.peer.ah, qp->req.peer.qpn, meta);
	int len = srn_roce_vendor(buf, cap, SRN_OP_CC_PROBE_REQ, qp->req.peer.qpn, seq,
				  SRN_CC_PROBE_LEN, meta);
	if (len <= 0)
		return 0;
	qp->cc.probe_pending = false;
	qp->cc.probe_out = true;
	srn_ctr_inc(qp->dev, SRN_CTR_TX_RTT_PROBES);
	uint32_t bytes = (uint32_t)len + qp->dev->cc->overhead;
	srn_cc_pacer_on_send(&qp->cc.pacer, bytes, now);
	post_simple(qp, SOFTRNIC_CC_EV_RTT_SENT, seq, bytes);
	return len;
}

static bool gid_eq(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 16) == 0; }

static int probe_drop(struct srn_dev *dev)
{
	srn_ctr_inc(dev, SRN_CTR_DROP_RTT_PROBE);
	return SRN_EDROP;
}

int srn_cong_recv_probe(struct srn_dev *dev, const uint8_t *pkt, size_t len,
			const struct srn_pkt_meta *meta, srn_ts now)
{
	(void)now;
	struct srn_cong *c = dev->cc;
	/* exact size, TVer 0, PadCnt 0, default P_Key (W-05) */
	if (len != SRN_CC_PROBE_PKT_LEN || (pkt[1] & 0x3f) != 0 || srn_get16(pkt + 2) != SRN_DEFAULT_PKEY)
		return probe_drop(dev);
	struct srn_cc_probe pr;
	if (srn_cc_probe_parse(pkt + SRN_BTH_LEN, SRN_CC_PROBE_LEN, &pr))
		return probe_drop(dev);
	struct srn_qp *qp = srn_qp_lookup(dev, srn_get24(pkt + 5));
	if (!qp || !qp->cc.on || !gid_eq(meta->src_gid, qp->req.peer.ah.dgid))
		return probe_drop(dev);
	enum srn_qp_state st = qp->attr.qp_state;
	if (pkt[0] == SRN_OP_CC_PROBE_REQ) {
		/* answered by this NIC at once, whatever the QP has queued (CC-12) */
		if (pr.kind != SRN_CC_PROBE_REQ || pr.flow_id != qp->req.peer.qpn ||
		    (st != SRN_QPS_RTR && st != SRN_QPS_RTS && st != SRN_QPS_SQD) ||
		    c->ans_n == SRN_CC_ANSWERS)
			return probe_drop(dev);
		struct srn_cc_answer *a = &c->ans[(c->ans_head + c->ans_n) % SRN_CC_ANSWERS];
		a->qpn = qp->qpn;
		a->dqpn = pr.flow_id;
		memcpy(a->dgid, meta->src_gid, 16);
		memcpy(a->req, pkt + SRN_BTH_LEN, SRN_CC_PROBE_LEN);
		a->t2 = dev->now;               /* T2: arrival */
		c->ans_n++;
		srn_ctr_inc(dev, SRN_CTR_RX_RTT_PROBES);
		return SRN_OK;
	}
	/* an answer to our probe: only the latest one, once */
	if (pr.kind != SRN_CC_PROBE_RESP || pr.flow_id != qp->qpn || pr.seq != qp->cc.probe_seq ||
	    !qp->cc.probe_out || (st != SRN_QPS_RTS && st != SRN_QPS_SQD))
		return probe_drop(dev);
	qp->cc.probe_out = false;
	srn_ctr_inc(dev, SRN_CTR_RX_RTT_RESPONSES);
	struct srn_cc_ev ev;
	srn_cc_probe_event(&pr, dev->now, &ev);     /* T4: arrival */
	ev.flow_id = qp->qpn;
	post(dev, &ev);
	return SRN_OK;
}

ssize_t srn_cong_emit_answer(struct srn_dev *dev, uint8_t *buf, size_t cap,
			     struct srn_pkt_meta *meta, srn_ts now)
{
	struct srn_cong *c = dev->cc;
	if (cap < SRN_CC_PROBE_PKT_LEN)
		return 0;
	while (c->ans_n) {
		struct srn_cc_answer *a = &c->ans[c->ans_head];
		c->ans_head = (c->ans_head + 1) % SRN_CC_ANSWERS;
		c->ans_n--;
		struct srn_qp *qp = srn_qp_lookup(dev, a->qpn);
		if (!qp) {
			srn_ctr_inc(dev, SRN_CTR_DROP_RTT_PROBE);
			continue;
		}
		srn_ts t3 = now > a->t2 ? now : a->t2;      /* T3: departure */
		if (!srn_cc_probe_answer(a->req, SRN_CC_PROBE_LEN, a->t2, t3, buf + SRN_BTH_LEN,
					 cap - SRN_BTH_LEN)) {
			srn_ctr_inc(dev, SRN_CTR_DROP_RTT_PROBE);
			continue;
		}
		struct srn_ah_attr ah = qp->req.peer.ah;
		memcpy(ah.dgid, a->dgid, 16);
		srn_path_meta(qp, &ah, a->dqpn, meta);
		int len = srn_roce_vendor(buf, cap, SRN_OP_CC_PROBE_RESP, a->dqpn,
					  srn_get32(a->req + 8), SRN_CC_PROBE_LEN, meta);
		if (len <= 0) {
			srn_ctr_inc(dev, SRN_CTR_DROP_RTT_PROBE);
			continue;
		}
		srn_ctr_inc(dev, SRN_CTR_TX_RTT_RESPONSES);
		return len;
	}
	return 0;
}
