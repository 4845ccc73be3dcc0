/*
 * cqe.c - completions of work requests: a send WQE's CQE (unsignaled
 * successes skipped), completing the SQ head, receive completions of a
 * connected responder's messages, and flushed receive WQEs.
 */
#include "core_int.h"

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

void srn_cqe_send(struct srn_qp *qp, struct srn_swqe *w, uint8_t status, bool force)
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

void srn_sq_complete_head(struct srn_qp *qp, uint8_t status, bool force)
{
	struct srn_swqe *w = srn_sq_at(&qp->sq, qp->sq.head);
	w->state = SRN_WQE_DONE;
	srn_cqe_send(qp, w, status, force);
	if (w->counted_rd) {
		w->counted_rd = false;
		if (qp->req.rd_atomic)
			qp->req.rd_atomic--;
	}
	qp->sq.head++;
	qp->sq.n--;
}

void srn_cqe_recv_flush(struct srn_qp *qp, uint64_t wr_id)
{
	struct srn_cqe c;
	memset(&c, 0, sizeof(c));
	c.wr_id = wr_id;
	c.status = SRN_WC_WR_FLUSH_ERR;
	c.opcode = SRN_WC_RECV;
	c.qp_num = qp->qpn;
	srn_cq_push(qp->init.recv_cq, &c, false);
}

void srn_cqe_recv(struct srn_respctx *rc, struct srn_rmsg *m, uint8_t status, uint8_t opcode,
		  uint32_t byte_len, uint32_t flags, uint32_t imm, bool se)
{
	struct srn_qp *qp = rc->qp;
	struct srn_cqe c;
	memset(&c, 0, sizeof(c));
	c.wr_id = m->wqe.wr_id;
	c.status = status;
	c.opcode = opcode;
	c.byte_len = byte_len;
	c.imm_be = imm;
	c.wc_flags = flags;
	c.qp_num = qp->qpn;
	c.src_qp = rc->peer.qpn;
	c.pkey_index = qp->attr.pkey_index;
	memcpy(c.src_gid, rc->peer.ah.dgid, 16);
	memcpy(c.dst_gid, qp->dev->cfg.gid, 16);
	m->have_wqe = false;
	srn_cq_push(qp->init.recv_cq, &c, se);
}
