/*
 * comp.c - the completer: processes responses (ACK, NAK, RDMA READ
 * responses, atomic ACKs) arriving at a requester.
 *
 * State machine (one pass per received response):
 *   CHECK_PSN -> DUPLICATE | GHOST | CHECK_OP
 *   CHECK_OP  -> ACK | READ | ATOMIC | NAK_SEQ | NAK_RNR | NAK_ERR | DROP
 *   ACK/READ/ATOMIC -> (IMPLICIT_RETRY) -> DONE
 *
 * PSN-05 regions relative to comp.psn (oldest unacknowledged) and req.max_psn
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

static void complete_wqe(struct srn_qp *qp, struct srn_swqe *w, uint8_t status, bool force)
{
	w->state = SRN_WQE_DONE;
	srn_qp_send_cqe(qp, w, status, force);
	if (w->counted_rd) {
		w->counted_rd = false;
		if (qp->req.rd_atomic)
			qp->req.rd_atomic--;
	}
	qp->sq_head++;
	qp->sq_n--;
}

void srn_comp_fail(struct srn_qp *qp, uint8_t status)
{
	if (qp->sq_head != qp->sq_tail)
		complete_wqe(qp, srn_sq_at(qp, qp->sq_head), status, true);
	srn_qp_to_err(qp);
}

enum ack_result { ACK_NONE, ACK_PROGRESS, ACK_IMPLICIT_NAK };

/* Acknowledge every PSN before upto (exclusive). A READ/ATOMIC whose range
 * lies entirely before upto but is not answered means its responses were
 * lost: implicit NAK. */
static enum ack_result ack_upto(struct srn_qp *qp, uint32_t upto)
{
	enum ack_result r = ACK_NONE;
	while (qp->sq_head != qp->sq_tail) {
		struct srn_swqe *w = srn_sq_at(qp, qp->sq_head);
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
			qp->comp.psn = srn_psn_add(w->last_psn, 1);
			complete_wqe(qp, w, SRN_WC_SUCCESS, false);
			r = ACK_PROGRESS;
			continue;
		}
		/* part of a multi-packet message acknowledged */
		if (SRN_PSN_GT(upto, qp->comp.psn)) {
			qp->comp.psn = upto;
			r = ACK_PROGRESS;
		}
		break;
	}
	return r;
}

/* after progress: keep the cursor at or after the oldest unacked PSN,
 * reset retry budgets, restart the timer, report a pending local error */
static void after_progress(struct srn_qp *qp, srn_ts now)
{
	if (qp->sq_cur < qp->sq_head || SRN_PSN_LT(qp->req.psn, qp->comp.psn))
		srn_req_rewind(qp, qp->comp.psn);
	qp->req.retry_left = qp->attr.retry_cnt;
	qp->req.rnr_left = qp->attr.rnr_retry;
	qp->comp.implicit_done = false;
	srn_req_timer_update(qp, now, true);
}

/* Go back to comp.psn and resend from there, once per PSN (PSN-15): a
 * second request for the same PSN (GOBACK_REPEAT) changes nothing; with the
 * retry budget spent the QP fails (GOBACK_FAILED). */
enum goback { GOBACK_DONE, GOBACK_REPEAT, GOBACK_FAILED };

static enum goback go_back_once(struct srn_qp *qp, srn_ts now)
{
	if (qp->comp.implicit_done && qp->comp.implicit_psn == qp->comp.psn)
		return GOBACK_REPEAT;
	if (qp->req.retry_left == 0) {
		srn_ctr_inc(qp->dev, SRN_CTR_RETRY_EXC_ERR);
		srn_comp_fail(qp, SRN_WC_RETRY_EXC_ERR);
		return GOBACK_FAILED;
	}
	qp->req.retry_left--;
	qp->comp.implicit_done = true;
	qp->comp.implicit_psn = qp->comp.psn;
	srn_req_rewind(qp, qp->comp.psn);
	srn_req_timer_update(qp, now, true);
	return GOBACK_DONE;
}

static void check_head_error(struct srn_qp *qp)
{
	if (qp->sq_head == qp->sq_tail || qp->sq_head != qp->sq_cur)
		return;
	struct srn_swqe *w = srn_sq_at(qp, qp->sq_head);
	if (w->err_status)
		srn_comp_fail(qp, w->err_status);
}

static void take_aeth(struct srn_qp *qp, const struct srn_pkt *p)
{
	if (!(p->info->mask & SRN_M_AETH))
		return;
	qp->comp.msn = p->aeth_msn;
	if ((p->aeth_syn >> 5) == SRN_AETH_ACK)
		qp->comp.credits = p->aeth_syn & 0x1f;
}

/* copy len bytes at message offset off into the WQE's local buffers */
static void wqe_scatter(struct srn_swqe *w, uint32_t off, const uint8_t *src, uint32_t len)
{
	for (uint32_t i = 0; i < w->wr.num_sge && len; i++) {
		uint32_t sl = w->sge[i].length;
		if (off >= sl) {
			off -= sl;
			continue;
		}
		uint32_t n = sl - off < len ? sl - off : len;
		memcpy(w->host[i] + off, src, n);
		src += n;
		len -= n;
		off = 0;
	}
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

void srn_comp_recv(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now)
{
	struct srn_dev *dev = qp->dev;
	uint32_t psn = p->psn;
	uint32_t mask = p->info->mask;
	enum comp_state st = COMP_ST_CHECK_PSN;
	enum ack_result r;
	struct srn_swqe *w;

	for (;;) {
		switch (st) {
		case COMP_ST_CHECK_PSN:
			/* the valid window is the 2^23 PSNs before max_psn: first
			 * place psn against max_psn (a PSN exactly 2^23 ahead of
			 * comp.psn, or more than 2^23 behind max_psn, is a ghost) */
			if (srn_psn_diff(psn, qp->req.max_psn) >= 0)
				st = COMP_ST_GHOST;
			else if (SRN_PSN_LT(psn, qp->comp.psn))
				st = COMP_ST_DUPLICATE;
			else
				st = COMP_ST_CHECK_OP;
			break;

		case COMP_ST_DUPLICATE:
			take_aeth(qp, p);       /* PSN-18: credits even from duplicates */
			srn_ctr_inc(dev, SRN_CTR_DUP_ACKS);
			return;

		case COMP_ST_GHOST:
			srn_ctr_inc(dev, SRN_CTR_GHOST_ACKS);
			return;

		case COMP_ST_CHECK_OP:
			if (p->opcode == SRN_OP_RC_ACKNOWLEDGE) {
				switch (p->aeth_syn >> 5) {
				case SRN_AETH_ACK: st = COMP_ST_ACK; break;
				case SRN_AETH_RNR_NAK: st = COMP_ST_NAK_RNR; break;
				case SRN_AETH_NAK:
					st = (p->aeth_syn & 0x1f) == SRN_NAK_PSN_SEQ_ERR ? COMP_ST_NAK_SEQ : COMP_ST_NAK_ERR;
					break;
				default:
					srn_ctr_inc(dev, SRN_CTR_DROP_BAD_OPCODE);
					return;
				}
			} else if (mask & SRN_M_READ) {
				st = COMP_ST_READ;
			} else if (mask & SRN_M_ATOMIC) {
				st = COMP_ST_ATOMIC;
			} else {
				srn_ctr_inc(dev, SRN_CTR_DROP_BAD_OPCODE);
				return;
			}
			break;

		case COMP_ST_ACK:
			take_aeth(qp, p);
			r = ack_upto(qp, srn_psn_add(psn, 1));
			if (r == ACK_IMPLICIT_NAK) {
				st = COMP_ST_IMPLICIT_RETRY;
				break;
			}
			if (r == ACK_PROGRESS)
				after_progress(qp, now);
			st = COMP_ST_DONE;
			break;

		case COMP_ST_READ: {
			r = ack_upto(qp, psn);
			if (r == ACK_IMPLICIT_NAK) {
				st = COMP_ST_IMPLICIT_RETRY;
				break;
			}
			if (r == ACK_PROGRESS)
				after_progress(qp, now);
			if (qp->sq_head == qp->sq_tail) {
				st = COMP_ST_DROP;
				break;
			}
			w = srn_sq_at(qp, qp->sq_head);
			if (w->wr.opcode != SRN_WR_RDMA_READ || w->state == SRN_WQE_POSTED ||
			    SRN_PSN_LT(psn, w->first_psn) || SRN_PSN_GT(psn, w->last_psn)) {
				st = COMP_ST_DROP;
				break;
			}
			if (psn != qp->comp.psn) {
				/* earlier responses of this READ are missing */
				st = COMP_ST_IMPLICIT_RETRY;
				break;
			}
			uint32_t mtu = qp->mtu;
			uint64_t off = (uint64_t)srn_psn_diff(psn, w->first_psn) * mtu;
			bool last = (mask & SRN_M_LAST) != 0;
			bool ok = last ? off + p->paylen == w->length
				       : (p->paylen == mtu && off + mtu < w->length);
			if (!ok) {
				srn_ctr_inc(dev, SRN_CTR_DROP_BAD_LENGTH);
				return;
			}
			take_aeth(qp, p);
			if (p->paylen)
				wqe_scatter(w, (uint32_t)off, p->payload, p->paylen);
			w->rd_bytes = (uint32_t)off + p->paylen;
			qp->comp.psn = srn_psn_add(psn, 1);
			if (last) {
				qp->comp.psn = srn_psn_add(w->last_psn, 1);
				complete_wqe(qp, w, SRN_WC_SUCCESS, false);
			}
			after_progress(qp, now);
			st = COMP_ST_DONE;
			break;
		}

		case COMP_ST_ATOMIC:
			r = ack_upto(qp, psn);
			if (r == ACK_IMPLICIT_NAK) {
				st = COMP_ST_IMPLICIT_RETRY;
				break;
			}
			if (r == ACK_PROGRESS)
				after_progress(qp, now);
			if (qp->sq_head == qp->sq_tail) {
				st = COMP_ST_DROP;
				break;
			}
			w = srn_sq_at(qp, qp->sq_head);
			if (!srn_wqe_is_rd_atomic(w) || w->wr.opcode == SRN_WR_RDMA_READ ||
			    w->state == SRN_WQE_POSTED || w->first_psn != psn) {
				st = COMP_ST_DROP;
				break;
			}
			take_aeth(qp, p);
			{
				uint64_t orig = p->atmack_orig;   /* host-endian into local memory */
				if (w->wr.num_sge && w->host[0])
					memcpy(w->host[0], &orig, sizeof(orig));
			}
			qp->comp.psn = srn_psn_add(psn, 1);
			complete_wqe(qp, w, SRN_WC_SUCCESS, false);
			after_progress(qp, now);
			st = COMP_ST_DONE;
			break;

		case COMP_ST_NAK_SEQ:
			srn_ctr_inc(dev, SRN_CTR_RX_NAK_SEQ);
			take_aeth(qp, p);
			r = ack_upto(qp, psn);
			if (r == ACK_PROGRESS)
				after_progress(qp, now);
			/* A go-back from this PSN is already under way (PSN-15): a
			 * repeated sequence NAK without progress - the responder
			 * NAKs again for packets sent before our rewind that the
			 * network delivered late - must neither restart the
			 * go-back nor burn the retry budget. A lost retransmission
			 * is covered by the retransmission timer, which counts. */
			switch (go_back_once(qp, now)) {
			case GOBACK_FAILED:
				return;
			case GOBACK_REPEAT:
				srn_ctr_inc(dev, SRN_CTR_RX_NAK_SEQ_REPEAT);
				break;
			case GOBACK_DONE:
				break;
			}
			st = COMP_ST_DONE;
			break;

		case COMP_ST_NAK_RNR:
			srn_ctr_inc(dev, SRN_CTR_RX_NAK_RNR);
			r = ack_upto(qp, psn);
			if (r == ACK_PROGRESS)
				after_progress(qp, now);
			if (qp->attr.rnr_retry != 7) {
				if (qp->req.rnr_left == 0) {
					srn_ctr_inc(dev, SRN_CTR_RNR_RETRY_EXC_ERR);
					srn_comp_fail(qp, SRN_WC_RNR_RETRY_EXC_ERR);
					return;
				}
				qp->req.rnr_left--;
			}
			srn_ctr_inc(dev, SRN_CTR_RNR_RETRIES);
			srn_req_rewind(qp, qp->comp.psn);
			qp->req.state = SRN_REQ_ST_RNR_WAIT;
			srn_timer_cancel(dev, &qp->req.rto);
			srn_timer_set(dev, &qp->req.rnr, now + srn_rnr_timer_ns(p->aeth_syn & 0x1f));
			st = COMP_ST_DONE;
			break;

		case COMP_ST_NAK_ERR:
			srn_ctr_inc(dev, SRN_CTR_RX_NAK_OTHER);
			r = ack_upto(qp, psn);
			(void)r;
			srn_comp_fail(qp, nak_status(p->aeth_syn & 0x1f));
			return;

		case COMP_ST_IMPLICIT_RETRY:
			/* responses of a READ/ATOMIC went missing: go back once per PSN */
			switch (go_back_once(qp, now)) {
			case GOBACK_FAILED:
				return;
			case GOBACK_REPEAT:
				st = COMP_ST_DROP;
				break;
			case GOBACK_DONE:
				st = COMP_ST_DONE;
				break;
			}
			break;

		case COMP_ST_DROP:
			srn_ctr_inc(dev, SRN_CTR_DROP_BAD_OPCODE);
			return;

		case COMP_ST_DONE:
			srn_mw_comp_head(qp);       /* executed BIND_MW / LOCAL_INV */
			check_head_error(qp);
			srn_qp_check_drained(qp);
			return;

		case COMP_ST_NSTATES:
			return;
		}
	}
}
