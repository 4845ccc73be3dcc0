/*
 * qp.c - queue pairs: creation (the transport chosen, every buffer sized
 * here), the QP state machine (modify), RESET, query, destroy with QPN
 * time-wait (PSN-19), and the doorbells post_send / post_recv.
 *
 * The transport is chosen once, here (transport_of); everything after
 * asks the QP's ops table.
 */
#include "core_int.h"

/* responder messages in progress per context: 1 = strictly in order */
#define RESP_MSGS 1u

static const struct srn_transport_ops *transport_of(enum srn_qp_type type)
{
	switch (type) {
	case SRN_QPT_RC: return &srn_rc_ops;
	case SRN_QPT_UC: return &srn_uc_ops;
	case SRN_QPT_UD: return &srn_ud_ops;
	}
	return NULL;
}

bool srn_qp_release_acks(struct srn_qp *qp)
{
	if (!qp || !qp->resp.out.n)
		return false;
	qp->resp.out.q[qp->resp.out.head].t = 0;      /* due long ago */
	srn_timer_cancel(&qp->dev->timers, &qp->resp.ack_timer);
	srn_qp_sched(qp);
	return true;
}

/* ------------------------------------------------------------------------ */
/* reset */

static void cancel_timers(struct srn_qp *qp)
{
	struct srn_theap *hp = &qp->dev->timers;
	srn_timer_cancel(hp, &qp->req.rto);
	srn_timer_cancel(hp, &qp->req.rnr);
	srn_timer_cancel(hp, &qp->resp.ack_timer);
}

static void qp_reset(struct srn_qp *qp)
{
	cancel_timers(qp);
	srn_qp_unsched(qp);
	qp->sq.head = qp->sq.tail = qp->sq.n = 0;
	if (!qp->init.srq) {
		qp->rq.head = 0;
		qp->rq.n = 0;
	}
	srn_req_reset(&qp->req);
	srn_resp_reset(&qp->resp);
	memset(&qp->cnp, 0, sizeof(qp->cnp));
}

/* ------------------------------------------------------------------------ */
/* create / destroy */

static void qp_free(struct srn_dev *dev, struct srn_qp *qp)
{
	if (qp->sq.ring) {
		srn_mem_free(dev, qp->sq.ring[0].sge);
		srn_mem_free(dev, qp->sq.ring[0].host);
		srn_mem_free(dev, qp->sq.ring[0].inl);
	}
	srn_mem_free(dev, qp->sq.ring);
	srn_rq_free(dev, &qp->rq);
	if (qp->resp.msgs)
		srn_mem_free(dev, qp->resp.msgs[0].wqe.sge);
	srn_mem_free(dev, qp->resp.msgs);
	srn_mem_free(dev, qp->resp.res);
	srn_rspq_free(dev, &qp->resp.out);
	srn_mem_free(dev, qp);
}

/* the send queue: WQEs with their SGE, host-pointer and inline blocks */
static int alloc_sq(struct srn_dev *dev, struct srn_qp *qp, const struct srn_qp_init *init)
{
	uint32_t cap = init->max_send_wr ? init->max_send_wr : 1;
	uint32_t nsge = init->max_send_sge ? init->max_send_sge : 1;
	uint32_t ninl = init->max_inline_data ? init->max_inline_data : 1;
	qp->sq.ring = srn_mem_calloc(dev, cap, sizeof(*qp->sq.ring));
	if (!qp->sq.ring)
		return SRN_ENOMEM;
	qp->sq.cap = cap;
	struct srn_swqe *w0 = &qp->sq.ring[0];
	w0->sge = srn_mem_calloc(dev, (size_t)cap * nsge, sizeof(*w0->sge));
	w0->host = srn_mem_calloc(dev, (size_t)cap * nsge, sizeof(*w0->host));
	w0->inl = srn_mem_calloc(dev, (size_t)cap * ninl, 1);
	if (!w0->sge || !w0->host || !w0->inl)
		return SRN_ENOMEM;
	for (uint32_t i = 1; i < cap; i++) {
		qp->sq.ring[i].sge = w0->sge + (size_t)i * nsge;
		qp->sq.ring[i].host = w0->host + (size_t)i * nsge;
		qp->sq.ring[i].inl = w0->inl + (size_t)i * ninl;
	}
	return SRN_OK;
}

/* the responder: messages in progress, saved READ/ATOMIC results, responses */
static int alloc_resp(struct srn_dev *dev, struct srn_respctx *rc)
{
	uint32_t max_sge = dev->cfg.max_sge;
	rc->msgs = srn_mem_calloc(dev, RESP_MSGS, sizeof(*rc->msgs));
	if (!rc->msgs)
		return SRN_ENOMEM;
	rc->nmsgs = RESP_MSGS;
	struct srn_sge *sge = srn_mem_calloc(dev, (size_t)RESP_MSGS * max_sge, sizeof(*sge));
	if (!sge)
		return SRN_ENOMEM;
	for (uint32_t i = 0; i < RESP_MSGS; i++)
		rc->msgs[i].wqe.sge = sge + (size_t)i * max_sge;
	rc->res_cap = dev->cfg.max_rd_atomic;
	rc->res = srn_mem_calloc(dev, rc->res_cap, sizeof(*rc->res));
	if (!rc->res)
		return SRN_ENOMEM;
	return srn_rspq_alloc(dev, &rc->out, 2 * dev->cfg.max_rd_atomic + 64);
}

static int check_init(const struct srn_dev *dev, const struct srn_qp_init *init,
		      const struct srn_transport_ops *ops)
{
	if (!ops || !init->send_cq || !init->recv_cq)
		return SRN_EINVAL;
	if (init->srq && !ops->srq_ok)
		return SRN_EINVAL;
	const struct srn_dev_cfg *cfg = &dev->cfg;
	if (init->max_send_wr > cfg->max_qp_wr || init->max_recv_wr > cfg->max_qp_wr ||
	    init->max_send_sge > cfg->max_sge || init->max_recv_sge > cfg->max_sge ||
	    init->max_inline_data > cfg->max_inline)
		return SRN_ERANGE;
	return SRN_OK;
}

/* the attributes of a new QP in RESET */
static void init_attr(struct srn_qp *qp)
{
	bool fixed_mtu = !qp->ops->connected;          /* UD: the largest */
	qp->attr.qp_state = SRN_QPS_RESET;
	qp->attr.path_mtu = fixed_mtu ? 5 : 3;
	qp->mtu = fixed_mtu ? SRN_UD_MTU : srn_mtu_bytes(qp->attr.path_mtu);
	qp->attr.max_rd_atomic = 1;
	qp->attr.max_dest_rd_atomic = 1;
	qp->attr.port_num = 1;
	qp->attr.max_send_wr = qp->sq.cap;
	qp->attr.max_recv_wr = qp->init.srq ? 0 : qp->rq.cap;
	qp->attr.max_send_sge = qp->init.max_send_sge;
	qp->attr.max_recv_sge = qp->init.max_recv_sge;
	qp->attr.max_inline_data = qp->init.max_inline_data;
}

int srn_qp_new(struct srn_dev *dev, const struct srn_qp_init *init, struct srn_qp **out)
{
	if (!dev || !init || !out)
		return SRN_EINVAL;
	const struct srn_transport_ops *ops = transport_of(init->type);
	int rc = check_init(dev, init, ops);
	if (rc)
		return rc;
	uint32_t slot = srn_qptab_find_slot(dev);
	if (slot == UINT32_MAX)
		return SRN_ENOMEM;
	struct srn_qp *qp = srn_mem_calloc(dev, 1, sizeof(*qp));
	if (!qp)
		return SRN_ENOMEM;
	qp->dev = dev;
	qp->ops = ops;
	qp->init = *init;
	qp->req.qp = qp;
	qp->resp.qp = qp;
	rc = alloc_sq(dev, qp, init);
	if (rc == SRN_OK && !init->srq)
		rc = srn_rq_alloc(dev, &qp->rq, init->max_recv_wr ? init->max_recv_wr : 1,
				  init->max_recv_sge);
	if (rc == SRN_OK)
		rc = alloc_resp(dev, &qp->resp);
	if (rc != SRN_OK) {
		qp_free(dev, qp);
		return rc;
	}
	srn_qptab_insert(dev, qp, slot);
	srn_list_init(&qp->ready);
	srn_list_add_tail(&dev->qps, &qp->node);
	srn_timer_init(&qp->req.rto, srn_req_rto_fn, &qp->req);
	srn_timer_init(&qp->req.rnr, srn_req_rnr_fn, &qp->req);
	srn_timer_init(&qp->resp.ack_timer, srn_sched_timer_fn, qp);
	srn_cong_qp_init(qp, dev->now);
	init_attr(qp);
	init->send_cq->refcnt++;
	init->recv_cq->refcnt++;
	if (init->srq)
		init->srq->refcnt++;
	qp_reset(qp);
	*out = qp;
	return SRN_OK;
}

int srn_qp_del(struct srn_qp *qp, srn_ts now)
{
	if (!qp)
		return SRN_EINVAL;
	struct srn_dev *dev = qp->dev;
	srn_dev_tick(dev, now);
	cancel_timers(qp);
	srn_cong_qp_del(qp);
	srn_mw_qp_gone(qp);             /* type 2 windows bound to it */
	srn_qp_unsched(qp);
	srn_list_del(&qp->node);
	srn_qptab_remove(dev, qp);
	qp->init.send_cq->refcnt--;
	qp->init.recv_cq->refcnt--;
	if (qp->init.srq)
		qp->init.srq->refcnt--;
	srn_dev_forget_obj(dev, qp);
	qp_free(dev, qp);
	return SRN_OK;
}

uint32_t srn_qp_num(const struct srn_qp *qp) { return qp->qpn; }
enum srn_qp_state srn_qp_state(const struct srn_qp *qp) { return qp->attr.qp_state; }
void *srn_qp_user(const struct srn_qp *qp) { return qp->init.user; }

void srn_qp_query(const struct srn_qp *qp, struct srn_qp_attr *attr)
{
	*attr = qp->attr;
	attr->cur_qp_state = qp->attr.qp_state;
}

/* ------------------------------------------------------------------------ */
/* modify: the QP state machine */

static bool transition_ok(enum srn_qp_state from, enum srn_qp_state to)
{
	if (to == SRN_QPS_RESET || to == SRN_QPS_ERR)
		return true;
	switch (from) {
	case SRN_QPS_RESET: return to == SRN_QPS_INIT;
	case SRN_QPS_INIT:  return to == SRN_QPS_INIT || to == SRN_QPS_RTR;
	case SRN_QPS_RTR:   return to == SRN_QPS_RTS;
	case SRN_QPS_RTS:   return to == SRN_QPS_RTS || to == SRN_QPS_SQD;
	case SRN_QPS_SQD:   return to == SRN_QPS_RTS || to == SRN_QPS_SQD;
	case SRN_QPS_SQE:   return to == SRN_QPS_RTS;
	case SRN_QPS_ERR:   return false;
	}
	return false;
}

/* every value range, before anything changes */
static int check_attr(const struct srn_dev *dev, const struct srn_qp_attr *a, uint32_t mask)
{
	if ((mask & SRN_QP_PATH_MTU) && (a->path_mtu < 1 || a->path_mtu > 5))
		return SRN_ERANGE;
	if ((mask & SRN_QP_TIMEOUT) && a->timeout > 31)
		return SRN_ERANGE;
	if ((mask & SRN_QP_RETRY_CNT) && a->retry_cnt > 7)
		return SRN_ERANGE;
	if ((mask & SRN_QP_RNR_RETRY) && a->rnr_retry > 7)
		return SRN_ERANGE;
	if ((mask & SRN_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return SRN_ERANGE;
	if ((mask & SRN_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > dev->cfg.max_rd_atomic)
		return SRN_ERANGE;
	if ((mask & SRN_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > dev->cfg.max_rd_atomic)
		return SRN_ERANGE;
	if ((mask & SRN_QP_SQ_PSN) && a->sq_psn > SRN_PSN_MASK)
		return SRN_ERANGE;
	if ((mask & SRN_QP_RQ_PSN) && a->rq_psn > SRN_PSN_MASK)
		return SRN_ERANGE;
	if ((mask & SRN_QP_DEST_QPN) && a->dest_qp_num > SRN_QPN_MASK)
		return SRN_ERANGE;
	return SRN_OK;
}

/* the other end: the address vector and QPN of both contexts */
static void set_peer(struct srn_qp *qp)
{
	qp->req.peer.qpn = qp->resp.peer.qpn = qp->attr.dest_qp_num;
	qp->req.peer.ah = qp->resp.peer.ah = qp->attr.ah;
}

static void apply_attr(struct srn_qp *qp, const struct srn_qp_attr *a, uint32_t mask)
{
	struct srn_qp_attr *q = &qp->attr;
	if (mask & SRN_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & SRN_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (mask & SRN_QP_PORT)
		q->port_num = a->port_num;
	if (mask & SRN_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & SRN_QP_AV)
		q->ah = a->ah;
	if ((mask & SRN_QP_PATH_MTU) && qp->ops->connected) {
		q->path_mtu = a->path_mtu;
		qp->mtu = srn_mtu_bytes(a->path_mtu);
	}
	if (mask & SRN_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & SRN_QP_RETRY_CNT) {
		q->retry_cnt = a->retry_cnt;
		qp->req.retry_left = a->retry_cnt;
	}
	if (mask & SRN_QP_RNR_RETRY) {
		q->rnr_retry = a->rnr_retry;
		qp->req.rnr_left = a->rnr_retry;
	}
	if (mask & SRN_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & SRN_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & SRN_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & SRN_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
	if (mask & SRN_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & (SRN_QP_AV | SRN_QP_DEST_QPN))
		set_peer(qp);
}

/* PSN-06: the expected PSN is only set on the way to RTR; PSN-02: the start
 * PSN on the way to RTS (or in SQD) */
static void apply_psns(struct srn_qp *qp, const struct srn_qp_attr *a, uint32_t mask,
		       enum srn_qp_state cur, enum srn_qp_state to)
{
	struct srn_reqctx *rq = &qp->req;
	if ((mask & SRN_QP_RQ_PSN) && to == SRN_QPS_RTR && cur == SRN_QPS_INIT) {
		qp->attr.rq_psn = a->rq_psn;
		qp->resp.epsn = a->rq_psn;
		qp->resp.last_psn = srn_psn_add(a->rq_psn, SRN_PSN_MASK);
	}
	if ((mask & SRN_QP_SQ_PSN) && to == SRN_QPS_RTS && (cur == SRN_QPS_RTR || cur == SRN_QPS_SQD) &&
	    qp->sq.head == rq->cur && rq->pkt == 0) {
		qp->attr.sq_psn = a->sq_psn;
		rq->psn = rq->max_psn = rq->comp.psn = a->sq_psn;
	}
	if (to == SRN_QPS_RTS && cur == SRN_QPS_RTR) {
		rq->retry_left = qp->attr.retry_cnt;
		rq->rnr_left = qp->attr.rnr_retry;
		rq->state = SRN_REQ_ST_IDLE;
	}
}

int srn_qp_modify(struct srn_qp *qp, const struct srn_qp_attr *a, uint32_t mask, srn_ts now)
{
	if (!qp || !a)
		return SRN_EINVAL;
	srn_dev_tick(qp->dev, now);
	enum srn_qp_state cur = qp->attr.qp_state;
	enum srn_qp_state to = (mask & SRN_QP_STATE) ? a->qp_state : cur;
	if ((unsigned)to > SRN_QPS_ERR)
		return SRN_EINVAL;
	if ((mask & SRN_QP_CUR_STATE) && a->cur_qp_state != cur &&
	    !(cur == SRN_QPS_SQE || a->cur_qp_state == SRN_QPS_SQE))
		return SRN_ESTATE;
	if ((mask & SRN_QP_STATE) && !transition_ok(cur, to))
		return SRN_ESTATE;
	int rc = check_attr(qp->dev, a, mask);
	if (rc)
		return rc;
	if (to == SRN_QPS_RESET) {
		qp_reset(qp);
		/* as the kernel providers do: RESET removes the QP's completions */
		srn_cq_purge_qp(qp->init.send_cq, qp->qpn);
		if (qp->init.recv_cq != qp->init.send_cq)
			srn_cq_purge_qp(qp->init.recv_cq, qp->qpn);
		qp->attr.qp_state = SRN_QPS_RESET;
		return SRN_OK;
	}
	if (to == SRN_QPS_ERR) {
		srn_qp_to_err(qp);
		return SRN_OK;
	}
	apply_attr(qp, a, mask);
	apply_psns(qp, a, mask, cur, to);
	qp->attr.qp_state = to;
	if (to == SRN_QPS_SQD && cur != SRN_QPS_SQD) {
		qp->attr.sq_draining = true;
		qp->req.drain_notified = false;
		srn_qp_check_drained(qp);
	}
	if (to == SRN_QPS_RTS)
		qp->attr.sq_draining = false;
	srn_qp_sched(qp);
	return SRN_OK;
}

/* ------------------------------------------------------------------------ */
/* doorbells */

static int check_send_wr(const struct srn_qp *qp, const struct srn_send_wr *wr, uint64_t *len_out)
{
	const struct srn_transport_ops *ops = qp->ops;
	if (wr->opcode >= 32 || !(ops->wr_ops & (1u << wr->opcode)))
		return SRN_EINVAL;
	if (wr->num_sge > qp->init.max_send_sge || (wr->num_sge && !wr->sg_list))
		return SRN_EINVAL;
	if ((wr->opcode == SRN_WR_BIND_MW || wr->opcode == SRN_WR_LOCAL_INV) && wr->num_sge)
		return SRN_EINVAL;              /* a local operation moves no data */
	uint64_t len = 0;
	for (uint32_t i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > (1ull << 31))
		return SRN_EINVAL;
	bool atomic = wr->opcode == SRN_WR_ATOMIC_CMP_AND_SWP || wr->opcode == SRN_WR_ATOMIC_FETCH_AND_ADD;
	if (atomic && (wr->num_sge != 1 || len != 8))
		return SRN_EINVAL;
	bool inl = (wr->send_flags & SRN_SEND_INLINE) && !atomic && wr->opcode != SRN_WR_RDMA_READ;
	if (inl && len > qp->init.max_inline_data)
		return SRN_EINVAL;
	if (ops->per_wr_address && !wr->ah)
		return SRN_EINVAL;
	if (ops->max_msg && len > ops->max_msg)
		return SRN_EINVAL;
	*len_out = len;
	return SRN_OK;
}

/* copy the WR into the WQE at the tail (inline data copied now) */
static struct srn_swqe *sq_fill(struct srn_qp *qp, const struct srn_send_wr *wr, uint64_t len)
{
	struct srn_swqe *w = srn_sq_at(&qp->sq, qp->sq.tail);
	struct srn_sge *sge = w->sge;
	uint8_t **host = w->host;
	uint8_t *ibuf = w->inl;
	memset(w, 0, sizeof(*w));
	w->sge = sge;
	w->host = host;
	w->inl = ibuf;
	w->wr = *wr;
	w->wr.sg_list = NULL;
	w->wr.ah = NULL;
	if (wr->ah)
		w->ah = *wr->ah;
	w->length = (uint32_t)len;
	bool atomic = wr->opcode == SRN_WR_ATOMIC_CMP_AND_SWP || wr->opcode == SRN_WR_ATOMIC_FETCH_AND_ADD;
	if ((wr->send_flags & SRN_SEND_INLINE) && !atomic && wr->opcode != SRN_WR_RDMA_READ) {
		uint32_t off = 0;
		for (uint32_t i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length)
				memcpy(ibuf + off, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w->is_inline = true;
		w->wr.num_sge = 0;
		w->resolved = true;
	} else {
		for (uint32_t i = 0; i < wr->num_sge; i++)
			sge[i] = wr->sg_list[i];
	}
	w->state = SRN_WQE_POSTED;
	return w;
}

int srn_qp_post_send(struct srn_qp *qp, const struct srn_send_wr *wr, srn_ts now)
{
	if (!qp || !wr)
		return SRN_EINVAL;
	srn_dev_tick(qp->dev, now);
	enum srn_qp_state st = qp->attr.qp_state;
	if (st == SRN_QPS_RESET || st == SRN_QPS_INIT || st == SRN_QPS_RTR)
		return SRN_ESTATE;
	uint64_t len = 0;
	int rc = check_send_wr(qp, wr, &len);
	if (rc)
		return rc;
	if (qp->sq.n == qp->sq.cap)
		return SRN_ENOMEM;
	struct srn_swqe *w = sq_fill(qp, wr, len);
	qp->sq.tail++;
	qp->sq.n++;
	if (st == SRN_QPS_ERR || st == SRN_QPS_SQE) {
		/* posted in ERR: completes at once with WR_FLUSH_ERR */
		srn_cqe_send(qp, w, SRN_WC_WR_FLUSH_ERR, true);
		qp->sq.head = qp->req.cur = qp->sq.tail;
		qp->sq.n--;
		return SRN_OK;
	}
	srn_qp_sched(qp);
	return SRN_OK;
}

int srn_qp_post_recv(struct srn_qp *qp, const struct srn_recv_wr *wr)
{
	if (!qp || !wr)
		return SRN_EINVAL;
	if (qp->init.srq)
		return SRN_EINVAL;
	if (qp->attr.qp_state == SRN_QPS_RESET)
		return SRN_ESTATE;
	if (wr->num_sge > qp->init.max_recv_sge)
		return SRN_EINVAL;
	int rc = srn_rq_post(&qp->rq, wr);
	if (rc)
		return rc;
	if (qp->attr.qp_state == SRN_QPS_ERR) {
		uint64_t wr_id = qp->rq.ring[qp->rq.head].wr_id;
		qp->rq.head = (qp->rq.head + 1) % qp->rq.cap;
		qp->rq.n--;
		srn_cqe_recv_flush(qp, wr_id);
	}
	return SRN_OK;
}
