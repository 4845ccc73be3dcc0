/*
 * comp.c - the completer: processes responses (ACK, NAK, RDMA READ
 * responses, atomic ACKs) arriving at a requester.
 *
 * State machine (one pass per received response), rxe style: a step enum
 * with a name table, each step a small function returning the next:
 *   CHECK_PSN -> DUPLICATE | GHOST | CHECK_OP
 *   CHECK_OP  -> ACK | READ | ATOMIC | NAK_SEQ | NAK_RNR | NAK_ERR | DROP
 *   ACK/READ/ATOMIC -> (IMPLICIT_RETRY) -> DONE
 *
 * PSN-05 regions relative to comp.psn (oldest unacknowledged) and max_psn
 * (point of maximum advance): [comp.psn, max_psn) is unacknowledged and
 * advances; [max_psn - 2^23, comp.psn) is the duplicate region (credits and
 * MSN are taken, then dropped); everything else - at or beyond max_psn, or
 * more than 2^23 behind it - is the invalid region (ghost, dropped).
 * PSN-17: an ACK completes every WQE up to its PSN.
 */
#include "core_int.h"

enum comp_state {
	COMP_ST_CHECK_PSN, COMP_ST_DUPLICATE, COMP_ST_GHOST, COMP_ST_CHECK_OP,
	COMP_ST_ACK, COMP_ST_READ, COMP_ST_ATOMIC, COMP_ST_NAK_SEQ, COMP_ST_NAK_RNR,
	COMP_ST_NAK_ERR, COMP_ST_IMPLICIT_RETRY, COMP_ST_DROP, COMP_ST_DONE,
	COMP_ST_NSTATES
};
const char *const srn_comp_state_names[COMP_ST_NSTATES] = {
	"CHECK_PSN", "DUPLICATE", "GHOST", "CHECK_OP", "ACK", "READ", "ATOMIC", "NAK_SEQ",
	"NAK_RNR", "NAK_ERR", "IMPLICIT_RETRY", "DROP", "DONE",
};

struct comp_run {
	struct srn_qp *qp;
	struct srn_reqctx *rq;
	const struct srn_pkt *p;
	srn_ts now;
};

enum ack_result { ACK_NONE, ACK_PROGRESS, ACK_IMPLICIT_NAK };

/* Acknowledge every PSN before upto (exclusive). A READ/ATOMIC whose range
 * lies entirely before upto but is not answered means its responses were
 * lost: implicit NAK. */
static enum ack_result ack_upto(struct srn_qp *qp, uint32_t upto)
{
	enum ack_result r = ACK_NONE;
	struct srn_reqctx *rq = &qp->req;
	while (qp->sq.head != qp->sq.tail) {
		struct srn_swqe *w = srn_sq_at(&qp->sq, qp->sq.head);
		if (w->state == SRN_WQE_POSTED || w->err_status)
			break;
		if (!SRN_PSN_LT(w->first_psn, upto))
			break;
		if (srn_wqe_is_rd_atomic(w)) {
			if (SRN_PSN_LT(w->last_psn, upto))
				return ACK_IMPLICIT_NAK;
			break;
		}
		if (SRN_PSN_LT(w->last_psn, upto)) {
			rq->comp.psn = srn_psn_add(w->last_psn, 1);
			srn_sq_complete_head(qp, SRN_WC_SUCCESS, false);
			r = ACK_PROGRESS;
			continue;
		}
		/* part of a multi-packet message acknowledged */
		if (SRN_PSN_GT(upto, rq->comp.psn)) {
			rq->comp.psn = upto;
			r = ACK_PROGRESS;
		}
		break;
	}
	return r;
}

/* after progress: keep the cursor at or after the oldest unacked PSN,
 * reset retry budgets, restart the timer */
static void after_progress(struct srn_qp *qp, srn_ts now)
{
	struct srn_reqctx *rq = &qp->req;
	if (rq->cur < qp->sq.head || SRN_PSN_LT(rq->psn, rq->comp.psn))
		srn_req_rewind(rq, rq->comp.psn);
	rq->retry_left = qp->attr.retry_cnt;
	rq->rnr_left = qp->attr.rnr_retry;
	rq->comp.implicit_done = false;
	srn_req_timer_update(rq, now, true);
}

/* ack_upto then after_progress; the result tells whether responses went missing */
static enum ack_result ack_and_progress(struct comp_run *r, uint32_t upto)
{
	enum ack_result a = ack_upto(r->qp, upto);
	if (a == ACK_PROGRESS)
		after_progress(r->qp, r->now);
	return a;
}

/* Go back to comp.psn and resend from there, once per PSN (PSN-15): a
 * second request for the same PSN (GOBACK_REPEAT) changes nothing; with the
 * retry budget spent the QP fails (GOBACK_FAILED). */
enum goback { GOBACK_DONE, GOBACK_REPEAT, GOBACK_FAILED };

static enum goback go_back_once(struct srn_qp *qp, srn_ts now)
{
	struct srn_reqctx *rq = &qp->req;
	if (rq->comp.implicit_done && rq->comp.implicit_psn == rq->comp.psn)
		return GOBACK_REPEAT;
	if (rq->retry_left == 0) {
		srn_ctr_inc(qp->dev, SRN_CTR_RETRY_EXC_ERR);
		srn_qp_fail(qp, SRN_WC_RETRY_EXC_ERR);
		return GOBACK_FAILED;
	}
	rq->retry_left--;
	rq->comp.implicit_done = true;
	rq->comp.implicit_psn = rq->comp.psn;
	srn_req_rewind(rq, rq->comp.psn);
	srn_req_timer_update(rq, now, true);
	return GOBACK_DONE;
}

static void take_aeth(struct srn_reqctx *rq, const struct srn_pkt *p)
{
	if (!(p->info->mask & SRN_M_AETH))
		return;
	rq->comp.msn = p->aeth_msn;
	if ((p->aeth_syn >> 5) == SRN_AETH_ACK)
		rq->comp.credits = p->aeth_syn & 0x1f;
}

static uint8_t nak_status(uint8_t code)
{
	switch (code) {
	case SRN_NAK_INVALID_REQUEST: return SRN_WC_REM_INV_REQ_ERR;
	case SRN_NAK_REMOTE_ACCESS:   return SRN_WC_REM_ACCESS_ERR;
	case SRN_NAK_REMOTE_OP_ERR:   return SRN_WC_REM_OP_ERR;
	case SRN_NAK_INVALID_RD_REQ:  return SRN_WC_REM_INV_RD_REQ_ERR;
	default:                      return SRN_WC_BAD_RESP_ERR;
	}
}

/* ---- steps ---- */

static enum comp_state st_check_psn(struct comp_run *r)
{
	/* the valid window is the 2^23 PSNs before max_psn: first place psn
	 * against max_psn (a PSN exactly 2^23 ahead of comp.psn, or more than
	 * 2^23 behind max_psn, is a ghost) */
	if (srn_psn_diff(r->p->psn, r->rq->max_psn) >= 0)
		return COMP_ST_GHOST;
	if (SRN_PSN_LT(r->p->psn, r->rq->comp.psn))
		return COMP_ST_DUPLICATE;
	return COMP_ST_CHECK_OP;
}

static enum comp_state st_duplicate(struct comp_run *r)
{
	take_aeth(r->rq, r->p);       /* PSN-18: credits even from duplicates */
	srn_ctr_inc(r->qp->dev, SRN_CTR_DUP_ACKS);
	return COMP_ST_NSTATES;
}

static enum comp_state st_ghost(struct comp_run *r)
{
	srn_ctr_inc(r->qp->dev, SRN_CTR_GHOST_ACKS);
	return COMP_ST_NSTATES;
}

static enum comp_state st_check_op(struct comp_run *r)
{
	const struct srn_pkt *p = r->p;
	if (p->opcode == SRN_OP_RC_ACKNOWLEDGE) {
		switch (p->aeth_syn >> 5) {
		case SRN_AETH_ACK: return COMP_ST_ACK;
		case SRN_AETH_RNR_NAK: return COMP_ST_NAK_RNR;
		case SRN_AETH_NAK:
			return (p->aeth_syn & 0x1f) == SRN_NAK_PSN_SEQ_ERR ? COMP_ST_NAK_SEQ : COMP_ST_NAK_ERR;
		default:
			srn_ctr_inc(r->qp->dev, SRN_CTR_DROP_BAD_OPCODE);
			return COMP_ST_NSTATES;
		}
	}
	if (p->info->mask & SRN_M_READ)
		return COMP_ST_READ;
	if (p->info->mask & SRN_M_ATOMIC)
		return COMP_ST_ATOMIC;
	srn_ctr_inc(r->qp->dev, SRN_CTR_DROP_BAD_OPCODE);
	return COMP_ST_NSTATES;
}

static enum comp_state st_ack(struct comp_run *r)
{
	take_aeth(r->rq, r->p);
	if (ack_and_progress(r, srn_psn_add(r->p->psn, 1)) == ACK_IMPLICIT_NAK)
		return COMP_ST_IMPLICIT_RETRY;
	return COMP_ST_DONE;
}

/* the READ WQE at the head that response p belongs to, or NULL */
static struct srn_swqe *read_wqe(struct comp_run *r)
{
	struct srn_qp *qp = r->qp;
	if (qp->sq.head == qp->sq.tail)
		return NULL;
	struct srn_swqe *w = srn_sq_at(&qp->sq, qp->sq.head);
	uint32_t psn = r->p->psn;
	if (w->wr.opcode != SRN_WR_RDMA_READ || w->state == SRN_WQE_POSTED ||
	    SRN_PSN_LT(psn, w->first_psn) || SRN_PSN_GT(psn, w->last_psn))
		return NULL;
	return w;
}

static enum comp_state st_read(struct comp_run *r)
{
	struct srn_qp *qp = r->qp;
	const struct srn_pkt *p = r->p;
	if (ack_and_progress(r, p->psn) == ACK_IMPLICIT_NAK)
		return COMP_ST_IMPLICIT_RETRY;
	struct srn_swqe *w = read_wqe(r);
	if (!w)
		return COMP_ST_DROP;
	if (p->psn != r->rq->comp.psn)
		return COMP_ST_IMPLICIT_RETRY;      /* earlier responses of this READ are missing */
	uint64_t off = (uint64_t)srn_psn_diff(p->psn, w->first_psn) * qp->mtu;
	bool last = (p->info->mask & SRN_M_LAST) != 0;
	bool ok = last ? off + p->paylen == w->length
		       : (p->paylen == qp->mtu && off + qp->mtu < w->length);
	if (!ok) {
		srn_ctr_inc(qp->dev, SRN_CTR_DROP_BAD_LENGTH);
		return COMP_ST_NSTATES;
	}
	take_aeth(r->rq, p);
	if (p->paylen)
		srn_place_scatter(w, (uint32_t)off, p->payload, p->paylen);
	w->rd_bytes = (uint32_t)off + p->paylen;
	r->rq->comp.psn = srn_psn_add(p->psn, 1);
	if (last) {
		r->rq->comp.psn = srn_psn_add(w->last_psn, 1);
		srn_sq_complete_head(qp, SRN_WC_SUCCESS, false);
	}
	after_progress(qp, r->now);
	return COMP_ST_DONE;
}

static enum comp_state st_atomic(struct comp_run *r)
{
	struct srn_qp *qp = r->qp;
	const struct srn_pkt *p = r->p;
	if (ack_and_progress(r, p->psn) == ACK_IMPLICIT_NAK)
		return COMP_ST_IMPLICIT_RETRY;
	if (qp->sq.head == qp->sq.tail)
		return COMP_ST_DROP;
	struct srn_swqe *w = srn_sq_at(&qp->sq, qp->sq.head);
	if (!srn_wqe_is_atomic(w) || w->state == SRN_WQE_POSTED || w->first_psn != p->psn)
		return COMP_ST_DROP;
	take_aeth(r->rq, p);
	uint64_t orig = p->atmack_orig;   /* host-endian into local memory */
	if (w->wr.num_sge && w->host[0])
		memcpy(w->host[0], &orig, sizeof(orig));
	r->rq->comp.psn = srn_psn_add(p->psn, 1);
	srn_sq_complete_head(qp, SRN_WC_SUCCESS, false);
	after_progress(qp, r->now);
	return COMP_ST_DONE;
}

static enum comp_state st_nak_seq(struct comp_run *r)
{
	srn_ctr_inc(r->qp->dev, SRN_CTR_RX_NAK_SEQ);
	take_aeth(r->rq, r->p);
	(void)ack_and_progress(r, r->p->psn);
	/* A go-back from this PSN is already under way (PSN-15): a repeated
	 * sequence NAK without progress - the responder NAKs again for packets
	 * sent before our rewind that the network delivered late - must neither
	 * restart the go-back nor burn the retry budget. A lost retransmission
	 * is covered by the retransmission timer, which counts. */
	switch (go_back_once(r->qp, r->now)) {
	case GOBACK_FAILED:
		return COMP_ST_NSTATES;
	case GOBACK_REPEAT:
		srn_ctr_inc(r->qp->dev, SRN_CTR_RX_NAK_SEQ_REPEAT);
		break;
	case GOBACK_DONE:
		break;
	}
	return COMP_ST_DONE;
}

static enum comp_state st_nak_rnr(struct comp_run *r)
{
	struct srn_qp *qp = r->qp;
	struct srn_reqctx *rq = r->rq;
	srn_ctr_inc(qp->dev, SRN_CTR_RX_NAK_RNR);
	(void)ack_and_progress(r, r->p->psn);
	if (qp->attr.rnr_retry != 7) {
		if (rq->rnr_left == 0) {
			srn_ctr_inc(qp->dev, SRN_CTR_RNR_RETRY_EXC_ERR);
			srn_qp_fail(qp, SRN_WC_RNR_RETRY_EXC_ERR);
			return COMP_ST_NSTATES;
		}
		rq->rnr_left--;
	}
	srn_ctr_inc(qp->dev, SRN_CTR_RNR_RETRIES);
	srn_req_rewind(rq, rq->comp.psn);
	rq->state = SRN_REQ_ST_RNR_WAIT;
	srn_timer_cancel(&qp->dev->timers, &rq->rto);
	srn_timer_set(&qp->dev->timers, &rq->rnr, r->now + srn_rnr_timer_ns(r->p->aeth_syn & 0x1f));
	return COMP_ST_DONE;
}

static enum comp_state st_nak_err(struct comp_run *r)
{
	srn_ctr_inc(r->qp->dev, SRN_CTR_RX_NAK_OTHER);
	(void)ack_upto(r->qp, r->p->psn);
	srn_qp_fail(r->qp, nak_status(r->p->aeth_syn & 0x1f));
	return COMP_ST_NSTATES;
}

/* responses of a READ/ATOMIC went missing: go back once per PSN */
static enum comp_state st_implicit_retry(struct comp_run *r)
{
	switch (go_back_once(r->qp, r->now)) {
	case GOBACK_FAILED: return COMP_ST_NSTATES;
	case GOBACK_REPEAT: return COMP_ST_DROP;
	default: return COMP_ST_DONE;
	}
}

static enum comp_state st_drop(struct comp_run *r)
{
	srn_ctr_inc(r->qp->dev, SRN_CTR_DROP_BAD_OPCODE);
	return COMP_ST_NSTATES;
}

/* report a pending local error of the head WQE once everything before it is done */
static enum comp_state st_done(struct comp_run *r)
{
	struct srn_qp *qp = r->qp;
	srn_mw_comp_head(qp);       /* executed BIND_MW / LOCAL_INV */
	if (qp->sq.head != qp->sq.tail && qp->sq.head == r->rq->cur) {
		struct srn_swqe *w = srn_sq_at(&qp->sq, qp->sq.head);
		if (w->err_status)
			srn_qp_fail(qp, w->err_status);
	}
	srn_qp_check_drained(qp);
	return COMP_ST_NSTATES;
}

typedef enum comp_state (*comp_step_fn)(struct comp_run *r);
static const comp_step_fn comp_steps[COMP_ST_NSTATES] = {
	[COMP_ST_CHECK_PSN] = st_check_psn, [COMP_ST_DUPLICATE] = st_duplicate,
	[COMP_ST_GHOST] = st_ghost,         [COMP_ST_CHECK_OP] = st_check_op,
	[COMP_ST_ACK] = st_ack,             [COMP_ST_READ] = st_read,
	[COMP_ST_ATOMIC] = st_atomic,       [COMP_ST_NAK_SEQ] = st_nak_seq,
	[COMP_ST_NAK_RNR] = st_nak_rnr,     [COMP_ST_NAK_ERR] = st_nak_err,
	[COMP_ST_IMPLICIT_RETRY] = st_implicit_retry,
	[COMP_ST_DROP] = st_drop,           [COMP_ST_DONE] = st_done,
};

void srn_comp_recv(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now)
{
	struct comp_run r = { .qp = qp, .rq = &qp->req, .p = p, .now = now };
	enum comp_state st = COMP_ST_CHECK_PSN;
	while (st != COMP_ST_NSTATES)
		st = comp_steps[st](&r);
}
