/*
 * respout.c - a responder's packets: ACK and NAK, atomic ACK, and READ
 * responses generated one packet at a time from the response queue (a
 * READ's source memory is translated again for every packet, so memory
 * deregistered meanwhile stops the answer: PSN-09). Framing goes through
 * the wire module (srn_pkt_write_hdrs, srn_roce_finish).
 */
#include "core_int.h"

static ssize_t build(struct srn_respctx *rc, uint8_t *buf, size_t cap, struct srn_pkt *p,
		     const uint8_t *payload, uint32_t plen, struct srn_pkt_meta *meta)
{
	p->pkey = SRN_DEFAULT_PKEY;
	p->dqpn = rc->peer.qpn;
	int h = srn_pkt_write_hdrs(buf, cap, p);
	if (h < 0 || (size_t)h + plen + srn_pad_for(plen) + SRN_ICRC_LEN > cap)
		return -1;
	if (plen)
		memcpy(buf + h, payload, plen);
	srn_path_meta(rc->qp, &rc->peer.ah, p->dqpn, meta);
	int n = srn_roce_finish(buf, cap, (size_t)h, plen, meta);
	return n < 0 ? -1 : n;
}

static void count_nak(struct srn_dev *dev, uint8_t syn)
{
	if ((syn >> 5) == SRN_AETH_RNR_NAK) {
		srn_ctr_inc(dev, SRN_CTR_TX_NAK_RNR);
		return;
	}
	switch (syn & 0x1f) {
	case SRN_NAK_PSN_SEQ_ERR: srn_ctr_inc(dev, SRN_CTR_TX_NAK_SEQ); break;
	case SRN_NAK_REMOTE_ACCESS: srn_ctr_inc(dev, SRN_CTR_TX_NAK_REM_ACCESS); break;
	case SRN_NAK_REMOTE_OP_ERR: srn_ctr_inc(dev, SRN_CTR_TX_NAK_REM_OP); break;
	default: srn_ctr_inc(dev, SRN_CTR_TX_NAK_INV_REQ); break;
	}
}

static ssize_t emit_ack(struct srn_respctx *rc, struct srn_rsp *e, uint8_t *buf, size_t cap,
			struct srn_pkt_meta *meta)
{
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	p.opcode = SRN_OP_RC_ACKNOWLEDGE;
	p.psn = e->psn;
	p.aeth_syn = e->syn;
	p.aeth_msn = e->msn;
	ssize_t n = build(rc, buf, cap, &p, NULL, 0, meta);
	if (n < 0)
		return 0;
	if (e->type == SRN_RSP_ACK)
		srn_ctr_inc(rc->qp->dev, SRN_CTR_TX_ACKS);
	else
		count_nak(rc->qp->dev, e->syn);
	srn_rspq_pop(&rc->out);
	return n;
}

static ssize_t emit_atomic_ack(struct srn_respctx *rc, struct srn_rsp *e, uint8_t *buf, size_t cap,
			       struct srn_pkt_meta *meta)
{
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	p.opcode = SRN_OP_RC_ATOMIC_ACKNOWLEDGE;
	p.psn = e->psn;
	p.aeth_syn = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
	p.aeth_msn = e->msn;
	p.atmack_orig = e->orig;
	ssize_t n = build(rc, buf, cap, &p, NULL, 0, meta);
	if (n < 0)
		return 0;
	srn_res_answered(rc, SRN_RES_ATOMIC, e->psn);
	srn_rspq_pop(&rc->out);
	return n;
}

/* the next packet of a READ answer; -1: the source memory went away and the
 * answer was given up (PSN-09), look at the next entry */
static ssize_t emit_read(struct srn_respctx *rc, struct srn_rsp *e, uint8_t *buf, size_t cap,
			 struct srn_pkt_meta *meta)
{
	struct srn_qp *qp = rc->qp;
	uint32_t plen = e->left < qp->mtu ? e->left : qp->mtu;
	bool last = e->left <= qp->mtu;
	const uint8_t *src = NULL;
	if (plen) {
		src = srn_rkey_xlate(qp, e->rkey, e->va, plen, SRN_ACCESS_REMOTE_READ);
		if (!src) {
			srn_ctr_inc(qp->dev, SRN_CTR_DROP_BAD_STATE);
			srn_res_answered(rc, SRN_RES_READ,
					 srn_psn_add(e->psn, srn_qp_npsn(qp, e->left) - 1));
			srn_rspq_pop(&rc->out);
			return -1;
		}
	}
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	if (e->first)
		p.opcode = last ? SRN_OP_RC_READ_RESPONSE_ONLY : SRN_OP_RC_READ_RESPONSE_FIRST;
	else
		p.opcode = last ? SRN_OP_RC_READ_RESPONSE_LAST : SRN_OP_RC_READ_RESPONSE_MIDDLE;
	p.psn = e->psn;
	p.aeth_syn = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
	p.aeth_msn = e->msn;
	ssize_t n = build(rc, buf, cap, &p, src, plen, meta);
	if (n < 0)
		return 0;
	e->first = false;
	e->psn = srn_psn_add(e->psn, 1);
	e->va += plen;
	e->left -= plen;
	if (last) {
		srn_res_answered(rc, SRN_RES_READ, p.psn);
		srn_rspq_pop(&rc->out);
	}
	return n;
}

ssize_t srn_resp_emit(struct srn_respctx *rc, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta,
		      srn_ts now)
{
	(void)now;
	while (rc->out.n) {
		struct srn_rsp *e = &rc->out.q[rc->out.head];
		ssize_t n;
		if (rc->qp->attr.qp_state == SRN_QPS_ERR && e->type != SRN_RSP_NAK)
			e->type = SRN_RSP_NONE;
		switch (e->type) {
		case SRN_RSP_ACK:
		case SRN_RSP_NAK:
			return emit_ack(rc, e, buf, cap, meta);
		case SRN_RSP_ATOMIC:
			return emit_atomic_ack(rc, e, buf, cap, meta);
		case SRN_RSP_READ:
			n = emit_read(rc, e, buf, cap, meta);
			if (n >= 0)
				return n;
			continue;
		default:
			srn_rspq_pop(&rc->out);
			continue;
		}
	}
	return 0;
}
