/*
 * ud.c - the Unreliable Datagram transport: every WR names its
 * destination (address handle, remote QPN and QKey), every message is one
 * packet of at most 4096 bytes with a DETH, no PSN check (PSN-14). A
 * received message lands behind a 40-byte GRH area whose last 20 bytes are
 * the IPv4 header it arrived with, as RoCEv2 UD receivers report it.
 */
#include "core_int.h"

static void ud_address(struct srn_qp *qp, const struct srn_swqe *w, uint32_t k, bool last,
		       struct srn_pkt *p, struct srn_pkt_meta *meta)
{
	(void)k;
	(void)last;
	p->opcode = w->wr.opcode == SRN_WR_SEND_WITH_IMM ? SRN_OP_UD_SEND_ONLY_IMM : SRN_OP_UD_SEND_ONLY;
	p->dqpn = w->wr.remote_qpn;
	/* a QKey with the high bit set means "the QP's own QKey" */
	p->deth_qkey = (w->wr.remote_qkey & 0x80000000u) ? qp->attr.qkey : w->wr.remote_qkey;
	p->deth_sqpn = qp->qpn;
	srn_path_meta(qp, &w->ah, p->dqpn, meta);
}

/* the GRH area: zeros, then the IPv4 header at 20..39 */
static void ud_grh(uint8_t grh[SRN_GRH_LEN], const struct srn_pkt_meta *meta, size_t pktlen)
{
	struct srn_ip_info ip;
	srn_roce_ip_info(&ip, meta);
	memset(grh, 0, SRN_GRH_LEN);
	srn_ipv4_write(grh + 20, &ip, (uint16_t)(SRN_IPV4_UDP_HDR_LEN + pktlen));
}

static void ud_recv_req(struct srn_qp *qp, const struct srn_pkt *p, const struct srn_pkt_meta *meta,
			size_t pktlen, srn_ts now)
{
	(void)now;
	struct srn_dev *dev = qp->dev;
	struct srn_respctx *rc = &qp->resp;
	if (p->deth_qkey != qp->attr.qkey) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_QKEY);
		return;
	}
	if (p->paylen > SRN_UD_MTU) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_LENGTH);
		return;
	}
	struct srn_rmsg *m = srn_resp_cur(rc);
	if (!srn_exec_take_rwqe(rc, m)) {
		srn_ctr_inc(dev, SRN_CTR_UD_DROPPED_NO_RECV);
		return;
	}
	uint8_t grh[SRN_GRH_LEN];
	ud_grh(grh, meta, pktlen);
	uint32_t pdn = srn_exec_recv_pdn(qp);
	int r = srn_place_rwqe(dev, pdn, &m->wqe, 0, grh, SRN_GRH_LEN);
	if (r == SRN_OK)
		r = srn_place_rwqe(dev, pdn, &m->wqe, SRN_GRH_LEN, p->payload, p->paylen);
	struct srn_cqe c;
	memset(&c, 0, sizeof(c));
	c.wr_id = m->wqe.wr_id;
	c.status = r == SRN_OK ? SRN_WC_SUCCESS : r == SRN_ERANGE ? SRN_WC_LOC_LEN_ERR : SRN_WC_LOC_PROT_ERR;
	c.opcode = SRN_WC_RECV;
	c.byte_len = SRN_GRH_LEN + p->paylen;
	c.wc_flags = SRN_WC_GRH;
	if (p->info->mask & SRN_M_IMMDT) {
		c.wc_flags |= SRN_WC_WITH_IMM;
		c.imm_be = p->imm_be;
	}
	c.qp_num = qp->qpn;
	c.src_qp = p->deth_sqpn;
	c.pkey_index = qp->attr.pkey_index;
	memcpy(c.src_gid, meta->src_gid, 16);
	memcpy(c.dst_gid, meta->dst_gid, 16);
	m->have_wqe = false;
	srn_cq_push(qp->init.recv_cq, &c, p->se);
}

#define WR(op) (1u << (op))

const struct srn_transport_ops srn_ud_ops = {
	.name = "UD",
	.type = SRN_QPT_UD,
	.op_mask = SRN_M_UD,
	.wr_ops = WR(SRN_WR_SEND) | WR(SRN_WR_SEND_WITH_IMM),
	.reliable = false,
	.connected = false,
	.srq_ok = true,
	.paced = false,
	.per_wr_address = true,
	.max_msg = SRN_UD_MTU,
	.recv_req = ud_recv_req,
	.recv_resp = NULL,
	.req_address = ud_address,
	.emit = srn_xmit_qp,
	.has_output = srn_xmit_has_output,
};
