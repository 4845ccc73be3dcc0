/*
 * cnp.c - the notification point (CC-13, W-03): a packet that arrives with
 * ECN-CE makes its QP owe the sender one CNP, at most one per
 * cfg.cnp_interval_ns per QP; the CNP leaves first when the QP's turn
 * comes (xmit.c). CNPs are not ECN-capable.
 */
#include "core_int.h"

void srn_cnp_note(struct srn_qp *qp, uint32_t dqpn, const struct srn_pkt_meta *meta, srn_ts now)
{
	struct srn_dev *dev = qp->dev;
	struct srn_cnp *c = &qp->cnp;
	if (meta->ecn != 3)
		return;
	srn_ctr_inc(dev, SRN_CTR_RX_ECN_CE);
	if (c->pending)
		return;
	if (c->sent_once && now - c->last < dev->cfg.cnp_interval_ns)
		return;
	c->dqpn = dqpn;
	memcpy(c->dgid, meta->src_gid, 16);
	c->pending = true;
	c->last = now;
	c->sent_once = true;
}

ssize_t srn_cnp_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta)
{
	struct srn_ah_attr ah = qp->attr.ah;
	memcpy(ah.dgid, qp->cnp.dgid, 16);
	srn_path_meta(qp, &ah, qp->cnp.dqpn, meta);
	meta->ecn = 0;      /* CNPs are not ECN-capable */
	int n = srn_roce_cnp(buf, cap, qp->cnp.dqpn, meta);
	if (n <= 0)
		return 0;
	qp->cnp.pending = false;
	srn_ctr_inc(qp->dev, SRN_CTR_TX_CNPS);
	return n;
}
