/*
 * qp.c - queue pairs: creation (every buffer sized here), the QP state
 * machine (modify), flush to ERR, RESET, query, destroy with QPN time-wait
 * (PSN-19), and the doorbells post_send / post_recv.
 */
#include "core_int.h"

/* ------------------------------------------------------------------------ */
/* helpers shared by req/comp/resp */

uint32_t srn_qp_npsn(const struct srn_qp *qp, uint32_t len)
{
	uint32_t mtu = qp->mtu;
	return len == 0 ? 1 : (uint32_t)(((uint64_t)len + mtu - 1) / mtu);
}

static uint32_t flow_hash(uint32_t a, uint32_t b)
{
	uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u + (a << 6) + (a >> 2));
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

void srn_qp_fill_meta(const struct srn_qp *qp, const struct srn_ah_attr *ah, uint32_t dqpn,
		      struct srn_pkt_meta *meta)
{
	const struct srn_dev *dev = qp->dev;
	memset(meta, 0, sizeof(*meta));
	memcpy(meta->src_gid, dev->cfg.gid, 16);
	memcpy(meta->dst_gid, ah->dgid, 16);
	uint32_t h = flow_hash(qp->qpn, dqpn);
	if (dev->cfg.n_sports && dev->cfg.sports)
		meta->sport = dev->cfg.sports[h % dev->cfg.n_sports];   /* W-02 */
	else
		meta->sport = (uint16_t)(0xC000u | (h & 0x3fffu));
	meta->dport = SRN_ROCEV2_UDP_PORT;
	meta->ecn = 2;                                /* ECT(0) (W-03) */
	meta->dscp = (uint8_t)(ah->traffic_class >> 2);
	meta->ttl = ah->hop_limit ? ah->hop_limit : 64;
	meta->ip_id = 0;
}

size_t srn_pkt_finalize(uint8_t *buf, size_t hdr, uint32_t paylen, const struct srn_pkt_meta *meta)
{
	uint8_t pad = srn_pad_for(paylen);
	size_t len = hdr + paylen;
	memset(buf + len, 0, pad);
	len += pad + SRN_ICRC_LEN;
	struct srn_ip_info ip;
	memset(&ip, 0, sizeof(ip));
	memcpy(ip.src, meta->src_gid, 16);
	memcpy(ip.dst, meta->dst_gid, 16);
	ip.ip_id = 0;
	ip.df = true;
	ip.sport = meta->sport;
	ip.dport = meta->dport;
	ip.ttl = meta->ttl;
	ip.tos = (uint8_t)((meta->dscp << 2) | (meta->ecn & 3));
	srn_icrc_store(&ip, buf, len);
	return len;
}

static uint8_t wc_opcode_of(uint8_t wr_op)
{
	switch (wr_op) {
	case SRN_WR_RDMA_WRITE:
	case SRN_WR_RDMA_WRITE_WITH_IMM: return SRN_WC_RDMA_WRITE;
	case SRN_WR_RDMA_READ: return SRN_WC_RDMA_READ;
	case SRN_WR_ATOMIC_CMP_AND_SWP: return SRN_WC_COMP_SWAP;
	case SRN_WR_ATOMIC_FETCH_AND_ADD: return SRN_WC_FETCH_ADD;
	case SRN_WR_BIND_MW: return SRN_WC_BIND_MW;
	case SRN_WR_LOCAL_INV: return SRN_WC_LOCAL_INV;
	default: return SRN_WC_SEND;
	}
}

void srn_qp_send_cqe(struct srn_qp *qp, struct srn_swqe *w, uint8_t status, bool force)
{
	bool signaled = qp->init.sq_sig_all || (w->wr.send_flags & SRN_SEND_SIGNALED);
	if (!signaled && status == SRN_WC_SUCCESS && !force)
		return;
	struct srn_cqe c;
	memset(&c, 0, sizeof(c));
	c.wr_id = w->wr.wr_id;
	c.status = status;
	c.opcode = wc_opcode_of(w->wr.opcode);
	c.byte_len = w->length;
	c.qp_num = qp->qpn;
	srn_cq_push(qp->init.send_cq, &c, false);
}

static void recv_flush_cqe(struct srn_qp *qp, uint64_t wr_id)
{
	struct srn_cqe c;
	memset(&c, 0, sizeof(c));
	c.wr_id = wr_id;
	c.status = SRN_WC_WR_FLUSH_ERR;
	c.opcode = SRN_WC_RECV;
	c.qp_num = qp->qpn;
	srn_cq_push(qp->init.recv_cq, &c, false);
}

/* SQD: report SQ_DRAINED once nothing is outstanding */
void srn_qp_check_drained(struct srn_qp *qp)
{
	if (qp->attr.qp_state != SRN_QPS_SQD || qp->req.drain_notified)
		return;
	if (qp->sq_head != qp->sq_cur || qp->req.pkt != 0)
		return;
	qp->req.drain_notified = true;
	qp->attr.sq_draining = false;
	if (qp->attr.en_sqd_async_notify)
		srn_dev_async(qp->dev, SRN_EV_SQ_DRAINED, qp, NULL, NULL);
}

bool srn_qp_has_output(const struct srn_qp *qp)
{
	enum srn_qp_state st = qp->attr.qp_state;
	if (st == SRN_QPS_RESET)
		return false;
	if (qp->cnp_pending && st != SRN_QPS_ERR)
		return true;
	if (qp->resp.q_n)
		return true;
	if (qp->cc.probe_pending && (st == SRN_QPS_RTS || st == SRN_QPS_SQD))
		return true;
	return srn_req_can_send(qp) && !srn_cong_held(qp);
}

bool srn_qp_release_acks(struct srn_qp *qp)
{
	if (!qp || !qp->resp.q_n)
		return false;
	qp->resp.q[qp->resp.q_head].t = 0;      /* due long ago */
	srn_timer_cancel(qp->dev, &qp->ack_timer);
	srn_qp_sched(qp);
	return true;
}

struct srn_qp *srn_qp_lookup(struct srn_dev *dev, uint32_t qpn)
{
	if (qpn < 2 || qpn - 2 >= dev->cfg.max_qp)
		return NULL;
	struct srn_qp *qp = dev->qpt[qpn - 2];
	return (qp && qp->qpn == qpn) ? qp : NULL;
}

/* ------------------------------------------------------------------------ */
/* flush / reset */

void srn_qp_to_err(struct srn_qp *qp)
{
	if (qp->attr.qp_state == SRN_QPS_ERR)
		return;
	struct srn_dev *dev = qp->dev;
	qp->attr.qp_state = SRN_QPS_ERR;
	qp->req.state = SRN_REQ_ST_ERROR;
	qp->resp.state = SRN_RESP_ST_ERROR;
	srn_timer_cancel(dev, &qp->req.rto);
	srn_timer_cancel(dev, &qp->req.rnr);
	srn_timer_cancel(dev, &qp->ack_timer);
	/* every outstanding send WR completes with WR_FLUSH_ERR */
	while (qp->sq_n) {
		struct srn_swqe *w = srn_sq_at(qp, qp->sq_head);
		srn_qp_send_cqe(qp, w, SRN_WC_WR_FLUSH_ERR, true);
		qp->sq_head++;
		qp->sq_n--;
	}
	qp->sq_cur = qp->sq_tail = qp->sq_head;
	qp->req.pkt = 0;
	qp->req.rd_atomic = 0;
	if (qp->resp.have_wqe) {
		recv_flush_cqe(qp, qp->resp.wqe.wr_id);
		qp->resp.have_wqe = false;
	}
	if (!qp->init.srq) {
		struct srn_rwqe w;
		while (qp->rq.n) {
			w = qp->rq.ring[qp->rq.head];
			qp->rq.head = (qp->rq.head + 1) % qp->rq.cap;
			qp->rq.n--;
			recv_flush_cqe(qp, w.wr_id);
		}
	} else {
		srn_dev_async(dev, SRN_EV_QP_LAST_WQE_REACHED, qp, NULL, NULL);
	}
	qp->cnp_pending = false;
	srn_resp_purge_for_err(qp);
	srn_qp_unsched(qp);
	srn_qp_sched(qp);
}

static void qp_reset(struct srn_qp *qp)
{
	struct srn_dev *dev = qp->dev;
	srn_timer_cancel(dev, &qp->req.rto);
	srn_timer_cancel(dev, &qp->req.rnr);
	srn_timer_cancel(dev, &qp->ack_timer);
	srn_qp_unsched(qp);
	qp->sq_head = qp->sq_cur = qp->sq_tail = qp->sq_n = 0;
	if (!qp->init.srq) {
		qp->rq.head = 0;
		qp->rq.n = 0;
	}
	srn_req_reset(qp);
	srn_resp_reset(qp);
	memset(&qp->comp, 0, sizeof(qp->comp));
	qp->cnp_pending = false;
	qp->cnp_sent_once = false;
}

/* ------------------------------------------------------------------------ */
/* create / destroy */

static void qp_free(struct srn_dev *dev, struct srn_qp *qp)
{
	if (qp->sq) {
		srn_mem_free(dev, qp->sq[0].sge);
		srn_mem_free(dev, qp->sq[0].host);
		srn_mem_free(dev, qp->sq[0].inl);
	}
	srn_mem_free(dev, qp->sq);
	srn_rq_free(dev, &qp->rq);
	srn_mem_free(dev, qp->resp.wqe.sge);
	srn_mem_free(dev, qp->resp.res);
	srn_mem_free(dev, qp->resp.q);
	srn_mem_free(dev, qp);
}

int srn_qp_new(struct srn_dev *dev, const struct srn_qp_init *init, struct srn_qp **out)
{
	if (!dev || !init || !out || !init->send_cq || !init->recv_cq)
		return SRN_EINVAL;
	if (init->type != SRN_QPT_RC && init->type != SRN_QPT_UC && init->type != SRN_QPT_UD)
		return SRN_EINVAL;
	if (init->type == SRN_QPT_UC && init->srq)
		return SRN_EINVAL;
	const struct srn_dev_cfg *cfg = &dev->cfg;
	if (init->max_send_wr > cfg->max_qp_wr || init->max_recv_wr > cfg->max_qp_wr ||
	    init->max_send_sge > cfg->max_sge || init->max_recv_sge > cfg->max_sge ||
	    init->max_inline_data > cfg->max_inline)
		return SRN_ERANGE;
	/* find a QPN: round robin from the cursor, skipping slots in time-wait */
	uint32_t slot = UINT32_MAX;
	for (uint32_t i = 0; i < cfg->max_qp; i++) {
		uint32_t s = (dev->qpn_cursor + i) % cfg->max_qp;
		if (dev->qpt[s])
			continue;
		if (dev->qpn_used[s] && dev->now < dev->qpn_free_at[s])
			continue;
		slot = s;
		break;
	}
	if (slot == UINT32_MAX)
		return SRN_ENOMEM;
	struct srn_qp *qp = srn_mem_calloc(dev, 1, sizeof(*qp));
	if (!qp)
		return SRN_ENOMEM;
	qp->dev = dev;
	qp->init = *init;
	qp->sq_cap = init->max_send_wr ? init->max_send_wr : 1;
	uint32_t nsge = init->max_send_sge ? init->max_send_sge : 1;
	uint32_t ninl = init->max_inline_data;
	qp->sq = srn_mem_calloc(dev, qp->sq_cap, sizeof(*qp->sq));
	struct srn_sge *sges = srn_mem_calloc(dev, (size_t)qp->sq_cap * nsge, sizeof(*sges));
	uint8_t **host = srn_mem_calloc(dev, (size_t)qp->sq_cap * nsge, sizeof(*host));
	uint8_t *inl = srn_mem_calloc(dev, (size_t)qp->sq_cap * (ninl ? ninl : 1), 1);
	if (qp->sq) {
		qp->sq[0].sge = sges;
		qp->sq[0].host = host;
		qp->sq[0].inl = inl;
	} else {
		srn_mem_free(dev, sges);
		srn_mem_free(dev, host);
		srn_mem_free(dev, inl);
	}
	int rc = SRN_OK;
	if (!qp->sq || !sges || !host || !inl)
		rc = SRN_ENOMEM;
	if (rc == SRN_OK) {
		for (uint32_t i = 0; i < qp->sq_cap; i++) {
			qp->sq[i].sge = &sges[(size_t)i * nsge];
			qp->sq[i].host = &host[(size_t)i * nsge];
			qp->sq[i].inl = &inl[(size_t)i * (ninl ? ninl : 1)];
		}
		if (!init->srq)
			rc = srn_rq_alloc(dev, &qp->rq, init->max_recv_wr ? init->max_recv_wr : 1,
					  init->max_recv_sge);
	}
	if (rc == SRN_OK) {
		qp->resp.wqe.sge = srn_mem_calloc(dev, cfg->max_sge, sizeof(struct srn_sge));
		qp->resp.res_cap = cfg->max_rd_atomic;
		qp->resp.res = srn_mem_calloc(dev, qp->resp.res_cap, sizeof(struct srn_res));
		qp->resp.q_cap = 2 * cfg->max_rd_atomic + 64;
		qp->resp.q = srn_mem_calloc(dev, qp->resp.q_cap, sizeof(struct srn_rsp));
		if (!qp->resp.wqe.sge || !qp->resp.res || !qp->resp.q)
			rc = SRN_ENOMEM;
	}
	if (rc != SRN_OK) {
		/* qp_free expects sq[0] to own the blocks */
		if (qp->sq) {
			qp->sq[0].sge = sges;
			qp->sq[0].host = host;
			qp->sq[0].inl = inl;
		}
		qp_free(dev, qp);
		return rc;
	}
	qp->slot = slot;
	qp->qpn = slot + 2;
	dev->qpt[slot] = qp;
	dev->qpn_used[slot] = true;
	dev->qpn_cursor = (slot + 1) % cfg->max_qp;
	srn_list_init(&qp->ready);
	srn_list_add_tail(&dev->qps, &qp->node);
	srn_timer_init(&qp->req.rto, qp, SRN_TIMER_RTO);
	srn_timer_init(&qp->req.rnr, qp, SRN_TIMER_RNR);
	srn_timer_init(&qp->ack_timer, qp, SRN_TIMER_ACK);
	srn_cong_qp_init(qp, dev->now);
	qp->attr.qp_state = SRN_QPS_RESET;
	qp->attr.path_mtu = init->type == SRN_QPT_UD ? 5 : 3;
	qp->mtu = init->type == SRN_QPT_UD ? SRN_UD_MTU : srn_mtu_bytes(qp->attr.path_mtu);
	qp->attr.max_rd_atomic = 1;
	qp->attr.max_dest_rd_atomic = 1;
	qp->attr.port_num = 1;
	qp->attr.max_send_wr = qp->sq_cap;
	qp->attr.max_recv_wr = init->srq ? 0 : qp->rq.cap;
	qp->attr.max_send_sge = init->max_send_sge;
	qp->attr.max_recv_sge = init->max_recv_sge;
	qp->attr.max_inline_data = init->max_inline_data;
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
	srn_timer_cancel(dev, &qp->req.rto);
	srn_timer_cancel(dev, &qp->req.rnr);
	srn_timer_cancel(dev, &qp->ack_timer);
	srn_cong_qp_del(qp);
	srn_mw_qp_gone(qp);             /* type 2 windows bound to it */
	srn_qp_unsched(qp);
	srn_list_del(&qp->node);
	dev->qpt[qp->slot] = NULL;
	dev->qpn_free_at[qp->slot] = dev->now + dev->cfg.qpn_timewait;   /* PSN-19 */
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

int srn_qp_modify(struct srn_qp *qp, const struct srn_qp_attr *a, uint32_t mask, srn_ts now)
{
	if (!qp || !a)
		return SRN_EINVAL;
	struct srn_dev *dev = qp->dev;
	srn_dev_tick(dev, now);
	enum srn_qp_state cur = qp->attr.qp_state;
	enum srn_qp_state to = (mask & SRN_QP_STATE) ? a->qp_state : cur;
	if ((unsigned)to > SRN_QPS_ERR)
		return SRN_EINVAL;
	if ((mask & SRN_QP_CUR_STATE) && a->cur_qp_state != cur &&
	    !(cur == SRN_QPS_SQE || a->cur_qp_state == SRN_QPS_SQE))
		return SRN_ESTATE;
	if ((mask & SRN_QP_STATE) && !transition_ok(cur, to))
		return SRN_ESTATE;
	/* validate everything before changing anything */
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
	if ((mask & SRN_QP_PATH_MTU) && qp->init.type != SRN_QPT_UD) {
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
	/* PSN-06: the expected PSN is only set on the way to RTR */
	if ((mask & SRN_QP_RQ_PSN) && to == SRN_QPS_RTR && cur == SRN_QPS_INIT) {
		q->rq_psn = a->rq_psn;
		qp->resp.epsn = a->rq_psn;
		qp->resp.last_psn = srn_psn_add(a->rq_psn, SRN_PSN_MASK);
	}
	/* PSN-02: the start PSN is set on the way to RTS (or in SQD) */
	if ((mask & SRN_QP_SQ_PSN) && to == SRN_QPS_RTS && (cur == SRN_QPS_RTR || cur == SRN_QPS_SQD) &&
	    qp->sq_head == qp->sq_cur && qp->req.pkt == 0) {
		q->sq_psn = a->sq_psn;
		qp->req.psn = qp->req.max_psn = qp->comp.psn = a->sq_psn;
	}
	if (to == SRN_QPS_RTS && cur == SRN_QPS_RTR) {
		qp->req.retry_left = q->retry_cnt;
		qp->req.rnr_left = q->rnr_retry;
		qp->req.state = SRN_REQ_ST_IDLE;
	}
	q->qp_state = to;
	if (to == SRN_QPS_SQD && cur != SRN_QPS_SQD) {
		q->sq_draining = true;
		qp->req.drain_notified = false;
		srn_qp_check_drained(qp);
	}
	if (to == SRN_QPS_RTS)
		q->sq_draining = false;
	srn_qp_sched(qp);
	return SRN_OK;
}

/* ------------------------------------------------------------------------ */
/* doorbells */

static bool opcode_ok(enum srn_qp_type t, uint8_t op)
{
	switch (op) {
	case SRN_WR_SEND:
	case SRN_WR_SEND_WITH_IMM:
		return true;
	case SRN_WR_RDMA_WRITE:
	case SRN_WR_RDMA_WRITE_WITH_IMM:
	case SRN_WR_BIND_MW:            /* local operations (mw.c) */
	case SRN_WR_LOCAL_INV:
		return t == SRN_QPT_RC || t == SRN_QPT_UC;
	case SRN_WR_RDMA_READ:
	case SRN_WR_ATOMIC_CMP_AND_SWP:
	case SRN_WR_ATOMIC_FETCH_AND_ADD:
	case SRN_WR_SEND_WITH_INV:
		return t == SRN_QPT_RC;
	}
	return false;
}

int srn_qp_post_send(struct srn_qp *qp, const struct srn_send_wr *wr, srn_ts now)
{
	if (!qp || !wr)
		return SRN_EINVAL;
	srn_dev_tick(qp->dev, now);
	enum srn_qp_state st = qp->attr.qp_state;
	if (st == SRN_QPS_RESET || st == SRN_QPS_INIT || st == SRN_QPS_RTR)
		return SRN_ESTATE;
	if (!opcode_ok(qp->init.type, wr->opcode))
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
	bool is_atomic = wr->opcode == SRN_WR_ATOMIC_CMP_AND_SWP || wr->opcode == SRN_WR_ATOMIC_FETCH_AND_ADD;
	if (is_atomic && (wr->num_sge != 1 || len != 8))
		return SRN_EINVAL;
	bool inl = (wr->send_flags & SRN_SEND_INLINE) && !is_atomic && wr->opcode != SRN_WR_RDMA_READ;
	if (inl && len > qp->init.max_inline_data)
		return SRN_EINVAL;
	if (qp->init.type == SRN_QPT_UD) {
		if (!wr->ah)
			return SRN_EINVAL;
		if (len > SRN_UD_MTU)
			return SRN_EINVAL;
	}
	if (qp->sq_n == qp->sq_cap)
		return SRN_ENOMEM;
	struct srn_swqe *w = srn_sq_at(qp, qp->sq_tail);
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
	if (inl) {
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
	qp->sq_tail++;
	qp->sq_n++;
	if (st == SRN_QPS_ERR || st == SRN_QPS_SQE) {
		/* posted in ERR: completes at once with WR_FLUSH_ERR */
		srn_qp_send_cqe(qp, w, SRN_WC_WR_FLUSH_ERR, true);
		qp->sq_head = qp->sq_cur = qp->sq_tail;
		qp->sq_n--;
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
		struct srn_rwqe w = qp->rq.ring[qp->rq.head];
		qp->rq.head = (qp->rq.head + 1) % qp->rq.cap;
		qp->rq.n--;
		recv_flush_cqe(qp, w.wr_id);
	}
	return SRN_OK;
}
