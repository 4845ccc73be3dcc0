/*
 * xmit.c - a QP's output, in the order every transport shares:
 *   1. a CNP it owes (cnp.c)
 *   2. an RTT probe the CC engine asked for (cong.c)
 *   3. responses (respout.c) - a lone ACK of a two-way QP may wait for the
 *      QP's next request (cfg.ack_delay_ns, below)
 *   4. requests (req.c), when the pacer allows (cong.c)
 * A transport's ops->emit / ops->has_output are these two functions.
 */
#include "core_int.h"

/* cfg.ack_delay_ns: is the response queue a lone ACK of a two-way QP that
 * may still wait for the QP's next request? It waits until it is due, or
 * until a request has left after it was queued: the request goes first and
 * the ACK right behind it, so a peer that polls for the ACK finds the
 * request already received when the ACK arrives. */
static bool ack_waits(const struct srn_qp *qp, srn_ts now)
{
	const struct srn_dev *dev = qp->dev;
	const struct srn_respctx *rc = &qp->resp;
	const struct srn_reqctx *rq = &qp->req;
	if (!dev->cfg.ack_delay_ns || rc->out.n != 1 || qp->attr.qp_state != SRN_QPS_RTS)
		return false;
	const struct srn_rsp *e = &rc->out.q[rc->out.head];
	return e->type == SRN_RSP_ACK && rq->tx_last && rq->tx_seq == e->txseq &&
	       now < rq->tx_last + SRN_ACK_DELAY_PEER_NS && now < e->t + dev->cfg.ack_delay_ns;
}

static bool cnp_due(const struct srn_qp *qp)
{
	enum srn_qp_state st = qp->attr.qp_state;
	return qp->cnp.pending && st != SRN_QPS_ERR && st != SRN_QPS_RESET;
}

/* responses; 0 if none may leave now (a held ACK arms its timer) */
static ssize_t xmit_responses(struct srn_qp *qp, uint8_t *buf, size_t cap,
			      struct srn_pkt_meta *meta, srn_ts now, bool *held)
{
	struct srn_respctx *rc = &qp->resp;
	*held = false;
	if (!rc->out.n)
		return 0;
	if (ack_waits(qp, now)) {
		if (srn_req_can_send(qp))
			return 0;       /* the request goes first, the ACK behind it */
		/* held: it leaves behind the next request, or at its timer */
		if (!srn_timer_armed(&rc->ack_timer)) {
			const struct srn_rsp *e = &rc->out.q[rc->out.head];
			srn_timer_set(&qp->dev->timers, &rc->ack_timer, e->t + qp->dev->cfg.ack_delay_ns);
			srn_ctr_inc(qp->dev, SRN_CTR_ACKS_DELAYED);
		}
		*held = true;
		return 0;
	}
	srn_timer_cancel(&qp->dev->timers, &rc->ack_timer);
	ssize_t n = srn_resp_emit(rc, buf, cap, meta, now);
	if (n > 0)
		srn_ctr_inc(qp->dev, SRN_CTR_TX_RESP_PKTS);
	return n;
}

ssize_t srn_xmit_qp(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now)
{
	ssize_t n;
	if (cnp_due(qp) && (n = srn_cnp_emit(qp, buf, cap, meta)) > 0)
		return n;
	if (qp->cc.probe_pending && srn_qp_is_sending_state(qp) &&
	    (n = srn_cong_emit_probe(qp, buf, cap, meta, now)) > 0)
		return n;
	bool held;
	if ((n = xmit_responses(qp, buf, cap, meta, now, &held)) > 0 || held)
		return n;
	if (qp->cc.on && srn_req_can_send(qp) && !srn_cong_may_send(qp, now))
		return 0;               /* the pacer holds it; its pace timer wakes it */
	n = srn_req_emit(qp, buf, cap, meta, now);
	if (n > 0) {
		qp->req.tx_last = now ? now : 1;
		qp->req.tx_seq++;
		srn_ctr_inc(qp->dev, SRN_CTR_TX_REQ_PKTS);
		srn_cong_on_tx(qp, buf, (size_t)n, now);
	}
	return n;
}

bool srn_xmit_has_output(const struct srn_qp *qp)
{
	enum srn_qp_state st = qp->attr.qp_state;
	if (st == SRN_QPS_RESET)
		return false;
	if (qp->cnp.pending && st != SRN_QPS_ERR)
		return true;
	if (qp->resp.out.n)
		return true;
	if (qp->cc.probe_pending && srn_qp_is_sending_state(qp))
		return true;
	return srn_req_can_send(qp) && !srn_cong_held(qp);
}
