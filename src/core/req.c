/*
 * req.c - the requester: which request packet goes next, and the retry
 * machinery around it.
 *
 * States (rq->state, IBA's requester): IDLE (sending), RNR_WAIT (an RNR NAK
 * stopped it until the RNR timer), ERROR. A WQE moves POSTED -> SENDING ->
 * SENT -> DONE. One packet is one pass of small steps:
 *   CHECK (QP state, SQ, fence, max_rd_atomic, PSN window) -> START (first
 *   packet of a WQE: local keys resolved, PSNs assigned) -> BUILD (reqpkt.c:
 *   the packet from (WQE, k)) -> ADVANCE (cursor, high-water mark, timer;
 *   unreliable transports complete the WQE with its last packet).
 * Timers: RTO (srn_req_rto_fn) and RNR (srn_req_rnr_fn), owned by the
 * context.
 *
 * PSNs (PSN-01..04, 15): rq->psn is the cursor (PSN of the next packet),
 * rq->max_psn the point of maximum advance (next never-used PSN) and
 * rq->comp.psn the oldest unacknowledged PSN. A retry rewinds the cursor to
 * the oldest unacknowledged PSN; packets are rebuilt from the WQE with the
 * PSNs they had, so a retransmission is byte-identical. A READ of n
 * response packets consumes n PSNs (PSN-03).
 */
#include "core_int.h"

/* IBA table 45: RNR NAK timer field (in units of 10 ns) */
static const uint32_t rnr_timer_10ns[32] = {
	65536000, 1000, 2000, 3000, 4000, 6000, 8000, 12000,
	16000, 24000, 32000, 48000, 64000, 96000, 128000, 192000,
	256000, 384000, 512000, 768000, 1024000, 1536000, 2048000, 3072000,
	4096000, 6144000, 8192000, 12288000, 16384000, 24576000, 32768000, 49152000,
};

uint64_t srn_rnr_timer_ns(uint8_t code) { return (uint64_t)rnr_timer_10ns[code & 31] * 10; }
uint64_t srn_rto_ns(uint8_t timeout) { return timeout ? 4096ull << (timeout & 31) : 0; }

void srn_req_reset(struct srn_reqctx *rq)
{
	struct srn_qp *qp = rq->qp;
	struct srn_reqctx keep = *rq;
	memset(rq, 0, sizeof(*rq));
	rq->qp = qp;
	rq->peer = keep.peer;
	rq->rto = keep.rto;
	rq->rnr = keep.rnr;
	rq->tx_last = keep.tx_last;
	rq->tx_seq = keep.tx_seq;
	rq->state = SRN_REQ_ST_IDLE;
	rq->retry_left = qp->attr.retry_cnt;
	rq->rnr_left = qp->attr.rnr_retry;
}

/* ------------------------------------------------------------------------ */
/* CHECK */

enum req_block {
	REQ_OK, REQ_NO_STATE, REQ_EMPTY, REQ_FENCE, REQ_RD_ATOMIC, REQ_WINDOW,
};

static uint32_t psns_needed(const struct srn_qp *qp, const struct srn_swqe *w)
{
	if (w->wr.opcode == SRN_WR_RDMA_READ)
		return srn_qp_npsn(qp, w->length);
	return 1;
}

/* a new WQE of a reliable transport: fence and max_rd_atomic */
static enum req_block check_rd_atomic(const struct srn_qp *qp, const struct srn_swqe *w)
{
	if ((w->wr.send_flags & SRN_SEND_FENCE) && qp->req.rd_atomic)
		return REQ_FENCE;
	uint32_t lim = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
	if (srn_wqe_is_rd_atomic(w) && qp->req.rd_atomic >= lim)
		return REQ_RD_ATOMIC;
	return REQ_OK;
}

/* a new PSN of a reliable transport: window (PSN-04) and in-flight limit */
static enum req_block check_window(const struct srn_qp *qp, const struct srn_swqe *w)
{
	const struct srn_reqctx *rq = &qp->req;
	if (SRN_PSN_LT(rq->psn, rq->max_psn))
		return REQ_OK;                          /* a retransmission */
	uint32_t span = (uint32_t)srn_psn_diff(rq->max_psn, rq->comp.psn);
	uint32_t need = w->state == SRN_WQE_POSTED ? psns_needed(qp, w) : 1;
	uint32_t lim = qp->dev->cfg.max_inflight_pkts;
	if (lim > SRN_PSN_WINDOW)
		lim = SRN_PSN_WINDOW;
	if (span > 0 && (uint64_t)span + need > lim)
		return REQ_WINDOW;
	if ((uint64_t)span + need > SRN_PSN_WINDOW)
		return REQ_WINDOW;
	return REQ_OK;
}

static enum req_block req_check(const struct srn_qp *qp, struct srn_swqe **out)
{
	const struct srn_reqctx *rq = &qp->req;
	if (!srn_qp_is_sending_state(qp) || rq->state != SRN_REQ_ST_IDLE)
		return REQ_NO_STATE;
	if (rq->cur == qp->sq.tail)
		return REQ_EMPTY;
	struct srn_swqe *w = srn_sq_at(&qp->sq, rq->cur);
	if (w->err_status)
		return REQ_NO_STATE;
	if (srn_wqe_is_local(w) && srn_mw_req_fenced(qp, w))
		return REQ_FENCE;
	enum req_block b = REQ_OK;
	if (w->state == SRN_WQE_POSTED) {
		/* SQD: finish what was started, start nothing new */
		if (qp->attr.qp_state == SRN_QPS_SQD)
			return REQ_NO_STATE;
		if (qp->ops->reliable)
			b = check_rd_atomic(qp, w);
	}
	if (b == REQ_OK && qp->ops->reliable)
		b = check_window(qp, w);
	if (b == REQ_OK)
		*out = w;
	return b;
}

bool srn_req_can_send(const struct srn_qp *qp)
{
	struct srn_swqe *w;
	return req_check(qp, &w) == REQ_OK;
}

/* ------------------------------------------------------------------------ */
/* START */

/* The WQE at the cursor failed locally. Completions stay in order: the
 * error CQE is produced when every earlier WQE has completed (at once if
 * none is outstanding); the requester sends nothing past it meanwhile. */
static void req_local_error(struct srn_qp *qp, struct srn_swqe *w, uint8_t status)
{
	w->err_status = status;
	if (qp->sq.head == qp->req.cur)
		srn_qp_fail(qp, status);
}

static bool req_start(struct srn_qp *qp, struct srn_swqe *w)
{
	struct srn_reqctx *rq = &qp->req;
	if (!srn_place_resolve(qp, w)) {
		req_local_error(qp, w, SRN_WC_LOC_PROT_ERR);
		return false;
	}
	w->npsn = srn_wqe_is_atomic(w) ? 1 : srn_qp_npsn(qp, w->length);
	w->first_psn = rq->psn;
	w->last_psn = srn_psn_add(w->first_psn, w->npsn - 1);
	w->state = SRN_WQE_SENDING;
	if (qp->ops->reliable && srn_wqe_is_rd_atomic(w) && !w->counted_rd) {
		w->counted_rd = true;
		rq->rd_atomic++;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* ADVANCE */

static void req_advance(struct srn_qp *qp, struct srn_swqe *w, uint32_t psn, bool last, srn_ts now)
{
	struct srn_reqctx *rq = &qp->req;
	bool reliable = qp->ops->reliable;
	if (reliable && SRN_PSN_LT(psn, rq->max_psn))
		srn_ctr_inc(qp->dev, SRN_CTR_RETRANSMIT_PKTS);
	if (last) {
		rq->psn = srn_psn_add(w->last_psn, 1);
		rq->pkt = 0;
		w->state = SRN_WQE_SENT;
		rq->cur++;
	} else {
		rq->psn = srn_psn_add(psn, 1);
		rq->pkt++;
	}
	if (reliable) {
		if (SRN_PSN_GT(rq->psn, rq->max_psn))
			rq->max_psn = rq->psn;
		if (rq->retrying && !SRN_PSN_LT(rq->psn, rq->max_psn))
			rq->retrying = false;
		srn_req_timer_update(rq, now, false);
	} else if (last) {
		/* UC/UD: complete once the last packet is on the wire */
		srn_sq_complete_head(qp, SRN_WC_SUCCESS, false);
		srn_qp_check_drained(qp);
	}
}

ssize_t srn_req_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now)
{
	struct srn_swqe *w = NULL;
	enum req_block b = req_check(qp, &w);
	/* BIND_MW / LOCAL_INV: executed here, in SQ order, no packet (mw.c) */
	while (b == REQ_OK && srn_wqe_is_local(w)) {
		if (!srn_mw_req_exec(qp, w))
			return 0;
		b = req_check(qp, &w);
	}
	switch (b) {
	case REQ_OK:
		break;
	case REQ_RD_ATOMIC:
	case REQ_FENCE:
		srn_ctr_inc(qp->dev, SRN_CTR_RD_ATOMIC_WAIT);
		return 0;
	default:
		return 0;
	}
	if (w->state == SRN_WQE_POSTED && !req_start(qp, w))
		return 0;
	uint32_t psn = srn_psn_add(w->first_psn, qp->req.pkt);
	bool last;
	size_t len = srn_reqpkt_build(qp, w, qp->req.pkt, buf, cap, meta, &last);
	if (!len)
		return 0;
	req_advance(qp, w, psn, last, now);
	return (ssize_t)len;
}

/* ------------------------------------------------------------------------ */
/* retry */

void srn_req_rewind(struct srn_reqctx *rq, uint32_t psn)
{
	struct srn_qp *qp = rq->qp;
	uint64_t i;
	for (i = qp->sq.head; i != qp->sq.tail; i++) {
		struct srn_swqe *w = srn_sq_at(&qp->sq, i);
		if (w->state == SRN_WQE_POSTED)
			break;
		if (SRN_PSN_LE(w->first_psn, psn) && SRN_PSN_LE(psn, w->last_psn)) {
			bool atomic = srn_wqe_is_atomic(w);
			rq->cur = i;
			rq->pkt = atomic ? 0 : (uint32_t)srn_psn_diff(psn, w->first_psn);
			rq->psn = atomic ? w->first_psn : psn;
			if (SRN_PSN_LT(rq->psn, rq->max_psn)) {
				rq->retrying = true;
				rq->retry_psn = rq->psn;
			}
			return;
		}
	}
	/* psn is not inside any sent WQE: it is the next new PSN */
	rq->cur = i;
	rq->pkt = 0;
	rq->psn = psn;
}

void srn_req_timer_update(struct srn_reqctx *rq, srn_ts now, bool restart)
{
	struct srn_qp *qp = rq->qp;
	struct srn_theap *hp = &qp->dev->timers;
	uint64_t rto = srn_rto_ns(qp->attr.timeout);
	if (!qp->ops->reliable || rto == 0 || rq->state != SRN_REQ_ST_IDLE ||
	    rq->comp.psn == rq->max_psn) {
		srn_timer_cancel(hp, &rq->rto);
		return;
	}
	if (restart || !srn_timer_armed(&rq->rto))
		srn_timer_set(hp, &rq->rto, now + rto);
}

static bool timers_apply(const struct srn_qp *qp)
{
	return qp->attr.qp_state != SRN_QPS_ERR && qp->attr.qp_state != SRN_QPS_RESET;
}

/* PSN-15/16: the oldest unacknowledged request is resent, within retry_cnt */
static void rto_fired(struct srn_reqctx *rq, srn_ts now)
{
	struct srn_qp *qp = rq->qp;
	if (!timers_apply(qp) || rq->comp.psn == rq->max_psn || rq->state != SRN_REQ_ST_IDLE)
		return;
	srn_ctr_inc(qp->dev, SRN_CTR_RETRY_TIMEOUTS);
	if (rq->retry_left == 0) {
		srn_ctr_inc(qp->dev, SRN_CTR_RETRY_EXC_ERR);
		srn_qp_fail(qp, SRN_WC_RETRY_EXC_ERR);
		return;
	}
	rq->retry_left--;
	rq->comp.implicit_done = false;   /* a NAK after this go-back counts again */
	srn_req_rewind(rq, rq->comp.psn);
	srn_req_timer_update(rq, now, true);
}

void srn_req_rto_fn(struct srn_timer *t, srn_ts now)
{
	struct srn_reqctx *rq = t->owner;
	rto_fired(rq, now);
	srn_qp_sched(rq->qp);
}

/* the RNR wait is over: resend from the oldest unacknowledged PSN */
void srn_req_rnr_fn(struct srn_timer *t, srn_ts now)
{
	struct srn_reqctx *rq = t->owner;
	if (timers_apply(rq->qp) && rq->state == SRN_REQ_ST_RNR_WAIT) {
		rq->state = SRN_REQ_ST_IDLE;
		srn_req_rewind(rq, rq->comp.psn);
		srn_req_timer_update(rq, now, true);
	}
	srn_qp_sched(rq->qp);
}
