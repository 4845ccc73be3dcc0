/*
 * recv.c - srn_dev_recv: a received packet's way to its QP.
 *
 *   ICRC (wire roce.c, for the packet's addressing) -> RTT probe (cong.c,
 *   before the parser) -> srn_pkt_parse -> QPN lookup -> CNP (cong.c) ->
 *   transport, P_Key, QP state and source checks -> ECN (cnp.c) ->
 *   ops->recv_req (requests) or ops->recv_resp (responses)
 *
 * Every drop is counted (W-05) and touches no memory.
 */
#include "core_int.h"

static bool gid_eq(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 16) == 0; }

static int drop(struct srn_dev *dev, enum srn_ctr c)
{
	srn_ctr_inc(dev, c);
	return SRN_EDROP;
}

/* a connected QP takes packets only from its peer's address */
static bool from_peer(const struct srn_qp *qp, const struct srn_pkt_meta *meta)
{
	return !qp->ops->connected || gid_eq(meta->src_gid, qp->resp.peer.ah.dgid);
}

static int recv_cnp(struct srn_dev *dev, struct srn_qp *qp, const struct srn_pkt_meta *meta, srn_ts now)
{
	if (!from_peer(qp, meta))
		return drop(dev, SRN_CTR_DROP_BAD_SRC);
	srn_ctr_inc(dev, SRN_CTR_RX_CNPS);
	srn_cong_on_cnp(qp, now);       /* CNP event of the sender's flow */
	return SRN_OK;
}

/* transport, P_Key, state and source checks of a packet for qp */
static int check_qp(struct srn_dev *dev, const struct srn_qp *qp, const struct srn_pkt *p,
		    const struct srn_pkt_meta *meta)
{
	if (!(p->info->mask & qp->ops->op_mask))
		return drop(dev, SRN_CTR_DROP_BAD_OPCODE);
	if (p->pkey != SRN_DEFAULT_PKEY)
		return drop(dev, SRN_CTR_DROP_BAD_PKEY);
	enum srn_qp_state st = qp->attr.qp_state;
	if (st == SRN_QPS_RESET || st == SRN_QPS_INIT || st == SRN_QPS_ERR)
		return drop(dev, SRN_CTR_DROP_BAD_STATE);
	if (!from_peer(qp, meta))
		return drop(dev, SRN_CTR_DROP_BAD_SRC);
	return SRN_OK;
}

static int dispatch(struct srn_dev *dev, struct srn_qp *qp, const struct srn_pkt *p,
		    const struct srn_pkt_meta *meta, size_t len, srn_ts now)
{
	uint32_t mask = p->info->mask;
	/* the sender of an ECN-CE packet: the datagram's source QP, or the peer */
	srn_cnp_note(qp, qp->ops->per_wr_address ? p->deth_sqpn : qp->resp.peer.qpn, meta, now);
	if (mask & SRN_M_REQ) {
		qp->ops->recv_req(qp, p, meta, len, now);
	} else if (mask & SRN_M_RESP) {
		if (!qp->ops->recv_resp || qp->attr.qp_state == SRN_QPS_RTR) {
			srn_qp_sched(qp);
			return drop(dev, SRN_CTR_DROP_BAD_STATE);
		}
		qp->ops->recv_resp(qp, p, now);
	} else {
		return drop(dev, SRN_CTR_DROP_BAD_OPCODE);
	}
	srn_qp_sched(qp);
	return SRN_OK;
}

int srn_dev_recv(struct srn_dev *dev, const uint8_t *pkt, size_t len,
		 const struct srn_pkt_meta *meta, srn_ts now)
{
	srn_dev_tick(dev, now);
	srn_ctr_inc(dev, SRN_CTR_RX_PKTS);
	dev->ctr[SRN_CTR_RX_BYTES] += len;
	if (!pkt || !meta || len < SRN_BTH_LEN + SRN_ICRC_LEN)
		return drop(dev, SRN_CTR_DROP_MALFORMED);
	uint16_t id = meta->l4.ip_id;
	if (srn_roce_icrc_verify(meta, pkt, len, &id) != 0)
		return drop(dev, SRN_CTR_DROP_BAD_ICRC);
	if (id != meta->l4.ip_id)
		srn_ctr_inc(dev, SRN_CTR_RX_ICRC_OTHER_ID);
	if (dev->cc && srn_is_cc_probe(pkt[0]))
		return srn_cong_recv_probe(dev, pkt, len, meta, now);
	struct srn_pkt p;
	int rc = srn_pkt_parse(&p, pkt, len);
	if (rc != 0)
		return drop(dev, rc == SRN_WIRE_EOPCODE ? SRN_CTR_DROP_BAD_OPCODE : SRN_CTR_DROP_MALFORMED);
	struct srn_qp *qp = srn_qp_lookup(dev, p.dqpn);
	if (!qp)
		return drop(dev, SRN_CTR_DROP_UNKNOWN_QPN);
	if (p.info->mask & SRN_M_CNP)
		return recv_cnp(dev, qp, meta, now);
	rc = check_qp(dev, qp, &p, meta);
	if (rc)
		return rc;
	return dispatch(dev, qp, &p, meta, len, now);
}
