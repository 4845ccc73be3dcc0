/*
 * reqpkt.c - a request packet from (WQE, packet index): the requester's
 * packet builder. Everything a packet holds follows from the WQE and k, so
 * any packet of any outstanding WQE can be built again byte-identical - a
 * go-back-N retry does it for a run of packets, a selective retransmission
 * could do it for one. The transport adds the opcode and the destination
 * (ops->req_address); framing goes through the wire module.
 */
#include "core_int.h"

static uint8_t send_opcode(uint8_t base, const struct srn_swqe *w, bool first, bool last)
{
	/* base: 0x00 RC, 0x20 UC */
	bool imm = w->wr.opcode == SRN_WR_SEND_WITH_IMM;
	bool inv = w->wr.opcode == SRN_WR_SEND_WITH_INV;
	if (first && last)
		return base + (inv ? SRN_OP_RC_SEND_ONLY_INV : imm ? SRN_OP_RC_SEND_ONLY_IMM : SRN_OP_RC_SEND_ONLY);
	if (first)
		return base + SRN_OP_RC_SEND_FIRST;
	if (last)
		return base + (inv ? SRN_OP_RC_SEND_LAST_INV : imm ? SRN_OP_RC_SEND_LAST_IMM : SRN_OP_RC_SEND_LAST);
	return base + SRN_OP_RC_SEND_MIDDLE;
}

static uint8_t write_opcode(uint8_t base, const struct srn_swqe *w, bool first, bool last)
{
	bool imm = w->wr.opcode == SRN_WR_RDMA_WRITE_WITH_IMM;
	if (first && last)
		return base + (imm ? SRN_OP_RC_WRITE_ONLY_IMM : SRN_OP_RC_WRITE_ONLY);
	if (first)
		return base + SRN_OP_RC_WRITE_FIRST;
	if (last)
		return base + (imm ? SRN_OP_RC_WRITE_LAST_IMM : SRN_OP_RC_WRITE_LAST);
	return base + SRN_OP_RC_WRITE_MIDDLE;
}

void srn_reqpkt_address_connected(struct srn_qp *qp, const struct srn_swqe *w, uint32_t k,
				  bool last, struct srn_pkt *p, struct srn_pkt_meta *meta)
{
	uint8_t base = qp->ops->op_mask & SRN_M_UC ? 0x20 : 0x00;
	switch (w->wr.opcode) {
	case SRN_WR_SEND:
	case SRN_WR_SEND_WITH_IMM:
	case SRN_WR_SEND_WITH_INV:
		p->opcode = send_opcode(base, w, k == 0, last);
		break;
	case SRN_WR_RDMA_WRITE:
	case SRN_WR_RDMA_WRITE_WITH_IMM:
		p->opcode = write_opcode(base, w, k == 0, last);
		break;
	case SRN_WR_RDMA_READ:
		p->opcode = SRN_OP_RC_READ_REQUEST;
		break;
	case SRN_WR_ATOMIC_CMP_AND_SWP:
		p->opcode = SRN_OP_RC_COMPARE_SWAP;
		break;
	default:
		p->opcode = SRN_OP_RC_FETCH_ADD;
		break;
	}
	p->dqpn = qp->req.peer.qpn;
	p->ackreq = last && qp->ops->reliable;
	srn_path_meta(qp, &qp->req.peer.ah, p->dqpn, meta);
}

/* the RDMA/atomic extended headers and the payload slice of packet k */
static void req_fields(const struct srn_qp *qp, const struct srn_swqe *w, uint32_t k,
		       struct srn_pkt *p, uint32_t *off, uint32_t *plen)
{
	uint32_t mtu = qp->mtu;
	*off = 0;
	*plen = 0;
	switch (w->wr.opcode) {
	case SRN_WR_RDMA_WRITE:
	case SRN_WR_RDMA_WRITE_WITH_IMM:
		p->reth_va = w->wr.remote_addr;
		p->reth_rkey = w->wr.rkey;
		p->reth_len = w->length;
		/* fall through */
	case SRN_WR_SEND:
	case SRN_WR_SEND_WITH_IMM:
	case SRN_WR_SEND_WITH_INV:
		*off = k * mtu;
		*plen = w->length - *off < mtu ? w->length - *off : mtu;
		break;
	case SRN_WR_RDMA_READ:
		/* a retried READ asks only for what is still missing (PSN-09) */
		p->reth_va = w->wr.remote_addr + (uint64_t)k * mtu;
		p->reth_rkey = w->wr.rkey;
		p->reth_len = w->length - k * mtu;
		break;
	case SRN_WR_ATOMIC_CMP_AND_SWP:
		p->atm_va = w->wr.remote_addr;
		p->atm_rkey = w->wr.rkey;
		p->atm_cmp = w->wr.compare_add;
		p->atm_swap_add = w->wr.swap;
		break;
	case SRN_WR_ATOMIC_FETCH_AND_ADD:
		p->atm_va = w->wr.remote_addr;
		p->atm_rkey = w->wr.rkey;
		p->atm_swap_add = w->wr.compare_add;
		break;
	}
}

static bool is_message(uint8_t wr_op)
{
	return wr_op == SRN_WR_SEND || wr_op == SRN_WR_SEND_WITH_IMM || wr_op == SRN_WR_SEND_WITH_INV ||
	       wr_op == SRN_WR_RDMA_WRITE || wr_op == SRN_WR_RDMA_WRITE_WITH_IMM;
}

size_t srn_reqpkt_build(struct srn_qp *qp, const struct srn_swqe *w, uint32_t k, uint8_t *buf,
			size_t cap, struct srn_pkt_meta *meta, bool *last)
{
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	p.pkey = SRN_DEFAULT_PKEY;
	p.psn = srn_psn_add(w->first_psn, k);
	uint32_t off, plen;
	req_fields(qp, w, k, &p, &off, &plen);
	*last = !is_message(w->wr.opcode) || k + 1 >= w->npsn;
	qp->ops->req_address(qp, w, k, *last, &p, meta);
	if (*last) {
		p.imm_be = w->wr.imm_be;
		p.ieth_rkey = w->wr.invalidate_rkey;
		p.se = (w->wr.send_flags & SRN_SEND_SOLICITED) != 0;
	}
	int h = srn_pkt_write_hdrs(buf, cap, &p);
	if (h < 0 || (size_t)h + plen + srn_pad_for(plen) + SRN_ICRC_LEN > cap)
		return 0;
	if (plen)
		srn_place_gather(w, off, buf + h, plen);
	int n = srn_roce_finish(buf, cap, (size_t)h, plen, meta);
	return n < 0 ? 0 : (size_t)n;
}
