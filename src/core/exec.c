/*
 * exec.c - executing requests at a responder, shared by the transports:
 * the opcode-sequence and length checks, SEND placement into the receive
 * WQE of the message, WRITE placement by address, READ and ATOMIC with
 * their saved results (responder resources), and the response-queue
 * entries (ACK coalescing, NAKs).
 *
 * Per-message state (struct srn_rmsg) holds a message's receive WQE and
 * progress; the responder context keeps the messages in progress keyed by
 * the MSN each will complete with. No memory is touched by a request that
 * fails a check (PSN-21). Remote keys are translated by srn_rkey_xlate (an
 * MR's or a memory window's, mw.c).
 */
#include "core_int.h"

uint32_t srn_exec_recv_pdn(const struct srn_qp *qp)
{
	return qp->init.srq ? qp->init.srq->pdn : qp->init.pdn;
}

bool srn_exec_take_rwqe(struct srn_respctx *rc, struct srn_rmsg *m)
{
	struct srn_qp *qp = rc->qp;
	if (m->have_wqe)
		return true;
	bool ok = qp->init.srq ? srn_srq_take(qp->init.srq, &m->wqe) : srn_rq_pop(&qp->rq, &m->wqe);
	if (ok) {
		m->have_wqe = true;
		m->offset = 0;
	}
	return ok;
}

/* ---- response queue entries ---- */

bool srn_resp_queue_ack(struct srn_respctx *rc, uint32_t psn)
{
	struct srn_rsp *t = srn_rspq_tail(&rc->out);
	if (t && t->type == SRN_RSP_ACK) {     /* coalesce into the latest */
		if (!SRN_PSN_LT(psn, t->psn))
			t->psn = psn;
		t->msn = rc->msn;
		rc->since_ack = 0;
		return true;
	}
	struct srn_rsp *e = srn_rspq_push(&rc->out, SRN_RSP_ACK);
	if (!e)
		return false;
	e->psn = psn;
	e->msn = rc->msn;
	e->syn = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
	e->t = rc->qp->dev->now;
	e->txseq = rc->qp->req.tx_seq;
	rc->since_ack = 0;
	return true;
}

void srn_resp_queue_nak(struct srn_respctx *rc, uint8_t syn, uint32_t psn)
{
	struct srn_rsp *e = srn_rspq_push(&rc->out, SRN_RSP_NAK);
	if (!e) {
		/* full: the NAK replaces the newest entry (the peer retries anyway) */
		e = srn_rspq_tail(&rc->out);
		memset(e, 0, sizeof(*e));
		e->type = SRN_RSP_NAK;
	}
	e->syn = syn;
	e->psn = psn;
	e->msn = rc->msn;
}

/* ---- checks ---- */

static bool op_first(uint32_t m) { return (m & SRN_M_FIRST) != 0; }
static bool op_last(uint32_t m) { return (m & SRN_M_LAST) != 0; }

static enum srn_exec check_opseq(const struct srn_respctx *rc, uint32_t m)
{
	switch (rc->seq) {
	case SRN_RESP_SEQ_SEND:
		return (m & SRN_M_SEND) && !op_first(m) ? SRN_EXEC_OK : SRN_EXEC_INV_REQ;
	case SRN_RESP_SEQ_WRITE:
		return (m & SRN_M_WRITE) && !op_first(m) ? SRN_EXEC_OK : SRN_EXEC_INV_REQ;
	default:
		if (m & (SRN_M_READ | SRN_M_ATOMIC))
			return SRN_EXEC_OK;
		return op_first(m) ? SRN_EXEC_OK : SRN_EXEC_INV_REQ;
	}
}

static enum srn_exec check_length(const struct srn_respctx *rc, const struct srn_pkt *p)
{
	uint32_t m = p->info->mask;
	uint32_t mtu = rc->qp->mtu;
	if (!(m & (SRN_M_SEND | SRN_M_WRITE)))
		return p->paylen ? SRN_EXEC_INV_REQ : SRN_EXEC_OK;
	if (op_last(m))
		return p->paylen <= mtu ? SRN_EXEC_OK : SRN_EXEC_INV_REQ;
	return p->paylen == mtu ? SRN_EXEC_OK : SRN_EXEC_INV_REQ;
}

static enum srn_exec place_result(int rc)
{
	return rc == SRN_OK ? SRN_EXEC_OK : rc == SRN_ERANGE ? SRN_EXEC_LEN_ERR : SRN_EXEC_OP_ERR;
}

/* ---- SEND and WRITE ---- */

static enum srn_exec exec_send(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct srn_qp *qp = rc->qp;
	struct srn_rmsg *m = srn_resp_cur(rc);
	uint32_t mask = p->info->mask;
	if (op_first(mask)) {
		if (!srn_exec_take_rwqe(rc, m))
			return SRN_EXEC_RNR;
		m->offset = 0;
		m->kind = SRN_RMSG_SEND;
	}
	/* SEND_WITH_INV: the rkey must be one this QP may invalidate before a
	 * byte of the last packet is placed (mw.c) */
	if (op_last(mask) && (mask & SRN_M_IETH) && !srn_mw_remote_inv_ok(qp, p->ieth_rkey))
		return SRN_EXEC_INV_RKEY;
	enum srn_exec r = place_result(srn_place_rwqe(qp->dev, srn_exec_recv_pdn(qp), &m->wqe,
						      m->offset, p->payload, p->paylen));
	if (r != SRN_EXEC_OK)
		return r;
	m->offset += p->paylen;
	if (!op_last(mask)) {
		rc->seq = SRN_RESP_SEQ_SEND;
		return SRN_EXEC_OK;
	}
	uint32_t flags = 0, imm = 0;
	if (mask & SRN_M_IMMDT) {
		flags |= SRN_WC_WITH_IMM;
		imm = p->imm_be;
	} else if (mask & SRN_M_IETH) {
		/* SEND_WITH_INV: the window's rkey is revoked, then reported */
		srn_mw_remote_inv(qp, p->ieth_rkey);
		flags |= SRN_WC_WITH_INV;
		imm = p->ieth_rkey;
	}
	m->kind = SRN_RMSG_NONE;
	rc->msn = (rc->msn + 1) & SRN_MSN_MASK;   /* PSN-20 */
	srn_cqe_recv(rc, m, SRN_WC_SUCCESS, SRN_WC_RECV, m->offset, flags, imm, p->se);
	rc->seq = SRN_RESP_SEQ_IDLE;
	return SRN_EXEC_OK;
}

static enum srn_exec write_first(struct srn_respctx *rc, struct srn_rmsg *m, const struct srn_pkt *p)
{
	struct srn_qp *qp = rc->qp;
	if (!(qp->attr.qp_access_flags & SRN_ACCESS_REMOTE_WRITE))
		return SRN_EXEC_ACCESS;
	if (p->reth_len > (1u << 31))
		return SRN_EXEC_INV_REQ;
	if (p->reth_len && !srn_rkey_xlate(qp, p->reth_rkey, p->reth_va, p->reth_len,
					   SRN_ACCESS_REMOTE_WRITE))
		return SRN_EXEC_ACCESS;
	m->kind = SRN_RMSG_WRITE;
	m->va = p->reth_va;
	m->rkey = p->reth_rkey;
	m->left = p->reth_len;
	m->len = p->reth_len;
	return SRN_EXEC_OK;
}

static enum srn_exec exec_write(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct srn_qp *qp = rc->qp;
	struct srn_rmsg *m = srn_resp_cur(rc);
	uint32_t mask = p->info->mask;
	if (op_first(mask)) {
		enum srn_exec r = write_first(rc, m, p);
		if (r != SRN_EXEC_OK)
			return r;
	}
	/* total length must match the RETH */
	if (p->paylen > m->left || (op_last(mask) && p->paylen != m->left))
		return SRN_EXEC_INV_REQ;
	bool imm = (mask & SRN_M_IMMDT) != 0;
	if (imm && !srn_exec_take_rwqe(rc, m))
		return SRN_EXEC_RNR;
	if (p->paylen) {
		uint8_t *host = srn_rkey_xlate(qp, m->rkey, m->va, p->paylen, SRN_ACCESS_REMOTE_WRITE);
		if (!host)
			return SRN_EXEC_ACCESS;
		memcpy(host, p->payload, p->paylen);
	}
	m->va += p->paylen;
	m->left -= p->paylen;
	if (!op_last(mask)) {
		rc->seq = SRN_RESP_SEQ_WRITE;
		return SRN_EXEC_OK;
	}
	m->kind = SRN_RMSG_NONE;
	rc->msn = (rc->msn + 1) & SRN_MSN_MASK;
	if (imm)
		srn_cqe_recv(rc, m, SRN_WC_SUCCESS, SRN_WC_RECV_RDMA_WITH_IMM, m->len,
			     SRN_WC_WITH_IMM, p->imm_be, p->se);
	rc->seq = SRN_RESP_SEQ_IDLE;
	return SRN_EXEC_OK;
}

/* ---- READ and ATOMIC: responder resources ---- */

static uint32_t res_cap_eff(const struct srn_respctx *rc)
{
	uint32_t n = rc->qp->attr.max_dest_rd_atomic ? rc->qp->attr.max_dest_rd_atomic : 1;
	return n < rc->res_cap ? n : rc->res_cap;
}

static struct srn_res *res_alloc(struct srn_respctx *rc)
{
	struct srn_res *r = &rc->res[rc->res_next % res_cap_eff(rc)];
	rc->res_next = (rc->res_next + 1) % res_cap_eff(rc);
	memset(r, 0, sizeof(*r));
	return r;
}

/* IBA responder resources (max_dest_rd_atomic): the saved READ/ATOMIC
 * results form a ring of max_dest_rd_atomic slots in arrival order. A new
 * READ/ATOMIC takes the oldest slot; if that slot's answer has not been sent
 * completely even once, max_dest_rd_atomic requests are still outstanding at
 * the requester and this one exceeds its limit: NAK Invalid Request (as rxe
 * and ConnectX do) instead of overwriting a result a duplicate may still
 * need. A READ preempted by a duplicate (PSN-09) stays unanswered until a
 * duplicate's answer completes it. max_dest_rd_atomic 0 accepts none. */
static bool rd_atomic_exceeded(const struct srn_respctx *rc)
{
	if (rc->qp->attr.max_dest_rd_atomic == 0)
		return true;
	const struct srn_res *r = &rc->res[rc->res_next % res_cap_eff(rc)];
	return r->type != SRN_RES_NONE && !r->answered;
}

void srn_res_answered(struct srn_respctx *rc, uint8_t type, uint32_t last_psn)
{
	for (uint32_t i = 0; i < res_cap_eff(rc); i++) {
		struct srn_res *r = &rc->res[i];
		if (r->type == type && r->last_psn == last_psn)
			r->answered = true;
	}
}

struct srn_res *srn_res_find(struct srn_respctx *rc, uint8_t type, uint32_t psn)
{
	for (uint32_t i = 0; i < res_cap_eff(rc); i++) {
		struct srn_res *r = &rc->res[i];
		if (r->type != type)
			continue;
		if (SRN_PSN_LE(r->first_psn, psn) && SRN_PSN_LE(psn, r->last_psn))
			return r;
	}
	return NULL;
}

static enum srn_exec exec_read(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct srn_qp *qp = rc->qp;
	if (rd_atomic_exceeded(rc))
		return SRN_EXEC_RD_ATOMIC_EXC;
	if (!(qp->attr.qp_access_flags & SRN_ACCESS_REMOTE_READ))
		return SRN_EXEC_ACCESS;
	if (p->reth_len > (1u << 31))
		return SRN_EXEC_INV_REQ;
	if (p->reth_len && !srn_rkey_xlate(qp, p->reth_rkey, p->reth_va, p->reth_len,
					   SRN_ACCESS_REMOTE_READ))
		return SRN_EXEC_ACCESS;
	if (!srn_rspq_space(&rc->out, 1))
		return SRN_EXEC_BUSY;
	uint32_t n = srn_qp_npsn(qp, p->reth_len);
	rc->msn = (rc->msn + 1) & SRN_MSN_MASK;
	struct srn_res *r = res_alloc(rc);
	r->type = SRN_RES_READ;
	r->first_psn = p->psn;
	r->last_psn = srn_psn_add(p->psn, n - 1);
	r->va = p->reth_va;
	r->rkey = p->reth_rkey;
	r->len = p->reth_len;
	r->msn = rc->msn;
	struct srn_rsp *e = srn_rspq_push(&rc->out, SRN_RSP_READ);
	e->psn = p->psn;
	e->va = p->reth_va;
	e->rkey = p->reth_rkey;
	e->left = p->reth_len;
	e->first = true;
	e->msn = rc->msn;
	return SRN_EXEC_OK;
}

static enum srn_exec exec_atomic(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct srn_qp *qp = rc->qp;
	if (rd_atomic_exceeded(rc))
		return SRN_EXEC_RD_ATOMIC_EXC;
	if (!(qp->attr.qp_access_flags & SRN_ACCESS_REMOTE_ATOMIC))
		return SRN_EXEC_ACCESS;
	if (p->atm_va & 7)
		return SRN_EXEC_ACCESS_INV;             /* misaligned: invalid request */
	uint8_t *host = srn_rkey_xlate(qp, p->atm_rkey, p->atm_va, 8, SRN_ACCESS_REMOTE_ATOMIC);
	if (!host)
		return SRN_EXEC_ACCESS;
	if (!srn_rspq_space(&rc->out, 1))
		return SRN_EXEC_BUSY;
	/* executed exactly once, on the host-endian 64-bit word (as RNICs on x86) */
	uint64_t orig, v;
	memcpy(&orig, host, 8);
	if (p->opcode == SRN_OP_RC_COMPARE_SWAP)
		v = orig == p->atm_cmp ? p->atm_swap_add : orig;
	else
		v = orig + p->atm_swap_add;
	memcpy(host, &v, 8);
	rc->msn = (rc->msn + 1) & SRN_MSN_MASK;
	struct srn_res *r = res_alloc(rc);
	r->type = SRN_RES_ATOMIC;
	r->first_psn = r->last_psn = p->psn;
	r->va = p->atm_va;
	r->rkey = p->atm_rkey;
	r->len = 8;
	r->orig = orig;
	r->msn = rc->msn;
	struct srn_rsp *e = srn_rspq_push(&rc->out, SRN_RSP_ATOMIC);
	e->psn = p->psn;
	e->orig = orig;
	e->msn = rc->msn;
	return SRN_EXEC_OK;
}

enum srn_exec srn_exec_request(struct srn_respctx *rc, const struct srn_pkt *p)
{
	uint32_t m = p->info->mask;
	enum srn_exec r = check_opseq(rc, m);
	if (r == SRN_EXEC_OK)
		r = check_length(rc, p);
	if (r != SRN_EXEC_OK)
		return r;
	if (m & SRN_M_SEND)
		return exec_send(rc, p);
	if (m & SRN_M_WRITE)
		return exec_write(rc, p);
	if (m & SRN_M_READ)
		return exec_read(rc, p);
	if (m & SRN_M_ATOMIC)
		return exec_atomic(rc, p);
	return SRN_EXEC_INV_REQ;
}
