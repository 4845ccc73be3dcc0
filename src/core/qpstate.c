/*
 * qpstate.c - a QP's error handling, common to every transport: moving to
 * ERR (every outstanding WR completes with WR_FLUSH_ERR, responses other
 * than NAKs are dropped), failing the WQE at the SQ head with a status
 * (then ERR), and the SQD drain notification.
 */
#include "core_int.h"

static void flush_sq(struct srn_qp *qp)
{
	struct srn_sq *sq = &qp->sq;
	while (sq->n) {
		srn_cqe_send(qp, srn_sq_at(sq, sq->head), SRN_WC_WR_FLUSH_ERR, true);
		sq->head++;
		sq->n--;
	}
	sq->tail = sq->head;
	qp->req.cur = sq->head;
	qp->req.pkt = 0;
	qp->req.rd_atomic = 0;
}

static void flush_rq(struct srn_qp *qp)
{
	struct srn_respctx *rc = &qp->resp;
	for (uint32_t i = 0; i < rc->nmsgs; i++) {
		struct srn_rmsg *m = &rc->msgs[((rc->msn + 1 + i) & SRN_MSN_MASK) % rc->nmsgs];
		if (m->have_wqe) {
			srn_cqe_recv_flush(qp, m->wqe.wr_id);
			m->have_wqe = false;
		}
	}
	if (qp->init.srq) {
		srn_dev_async(qp->dev, SRN_EV_QP_LAST_WQE_REACHED, qp, NULL, NULL);
		return;
	}
	while (qp->rq.n) {
		uint64_t wr_id = qp->rq.ring[qp->rq.head].wr_id;
		qp->rq.head = (qp->rq.head + 1) % qp->rq.cap;
		qp->rq.n--;
		srn_cqe_recv_flush(qp, wr_id);
	}
}

void srn_qp_to_err(struct srn_qp *qp)
{
	if (qp->attr.qp_state == SRN_QPS_ERR)
		return;
	struct srn_dev *dev = qp->dev;
	qp->attr.qp_state = SRN_QPS_ERR;
	qp->req.state = SRN_REQ_ST_ERROR;
	qp->resp.seq = SRN_RESP_SEQ_ERROR;
	srn_timer_cancel(&dev->timers, &qp->req.rto);
	srn_timer_cancel(&dev->timers, &qp->req.rnr);
	srn_timer_cancel(&dev->timers, &qp->resp.ack_timer);
	flush_sq(qp);
	flush_rq(qp);
	qp->cnp.pending = false;
	srn_rspq_purge_for_err(&qp->resp.out);
	srn_qp_unsched(qp);
	srn_qp_sched(qp);
}

void srn_qp_fail(struct srn_qp *qp, uint8_t status)
{
	if (qp->sq.head != qp->sq.tail)
		srn_sq_complete_head(qp, status, true);
	srn_qp_to_err(qp);
}

void srn_qp_check_drained(struct srn_qp *qp)
{
	if (qp->attr.qp_state != SRN_QPS_SQD || qp->req.drain_notified)
		return;
	if (qp->sq.head != qp->req.cur || qp->req.pkt != 0)
		return;
	qp->req.drain_notified = true;
	qp->attr.sq_draining = false;
	if (qp->attr.en_sqd_async_notify)
		srn_dev_async(qp->dev, SRN_EV_SQ_DRAINED, qp, NULL, NULL);
}
