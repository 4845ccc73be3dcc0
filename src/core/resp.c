/*
 * resp.c - the responder: checks and executes incoming requests and queues
 * the responses, which are generated lazily at srn_dev_send time.
 *
 * RC state machine per request (resp_rc):
 *   CHECK_PSN -> EXECUTE (PSN == ePSN, PSN-07)
 *             -> DUPLICATE (PSN-08..11)
 *             -> OUT_OF_SEQUENCE (PSN-12: one NAK per gap)
 *   EXECUTE   -> CHECK_OPSEQ -> CHECK_LENGTH -> CHECK_RESOURCES -> SEND |
 *                WRITE | READ | ATOMIC -> ACKNOWLEDGE
 *   any check failing -> ERROR_NAK (NAK, QP -> ERR, async event); an
 *   exhausted receive queue -> RNR_NAK. rkeys are translated by
 *   srn_rkey_xlate (an MR's or a memory window's, mw.c); SEND_WITH_INV
 *   invalidates a window (a key it may not invalidate: NAK invalid request).
 * UC (PSN-13) and UD (PSN-14) share the execution steps without ACKs.
 *
 * Response queue: ACK/NAK/READ response/atomic ACK entries in PSN order;
 * consecutive ACK entries collapse into the latest (PSN-17/18), so one ACK
 * covers a burst; an ACK is forced at least every cfg.ack_coalesce packets.
 * No memory is touched by a request that fails a check (PSN-21).
 */
#include "core_int.h"

const char *const srn_resp_state_names[SRN_RESP_ST_NSTATES] = {
	"IDLE", "SEND", "WRITE", "UC_DROP", "ERROR",
};

enum exec_result {
	EXEC_OK, EXEC_RNR, EXEC_INV_REQ, EXEC_ACCESS, EXEC_ACCESS_INV, EXEC_OP_ERR,
	EXEC_LEN_ERR, EXEC_BUSY, EXEC_RD_ATOMIC_EXC, EXEC_INV_RKEY,
};

void srn_resp_reset(struct srn_qp *qp)
{
	struct srn_sge *sge = qp->resp.wqe.sge;
	struct srn_res *res = qp->resp.res;
	struct srn_rsp *q = qp->resp.q;
	uint32_t res_cap = qp->resp.res_cap, q_cap = qp->resp.q_cap;
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->resp.wqe.sge = sge;
	qp->resp.res = res;
	qp->resp.q = q;
	qp->resp.res_cap = res_cap;
	qp->resp.q_cap = q_cap;
	if (res)
		memset(res, 0, res_cap * sizeof(*res));
	qp->resp.state = SRN_RESP_ST_IDLE;
}

/* ------------------------------------------------------------------------ */
/* response queue */

static struct srn_rsp *rsp_tail(struct srn_qp *qp)
{
	if (!qp->resp.q_n)
		return NULL;
	return &qp->resp.q[(qp->resp.q_head + qp->resp.q_n - 1) % qp->resp.q_cap];
}

static struct srn_rsp *rsp_push(struct srn_qp *qp, uint8_t type)
{
	if (qp->resp.q_n == qp->resp.q_cap)
		return NULL;
	struct srn_rsp *e = &qp->resp.q[(qp->resp.q_head + qp->resp.q_n) % qp->resp.q_cap];
	memset(e, 0, sizeof(*e));
	e->type = type;
	qp->resp.q_n++;
	return e;
}

static void rsp_pop(struct srn_qp *qp)
{
	qp->resp.q_head = (qp->resp.q_head + 1) % qp->resp.q_cap;
	qp->resp.q_n--;
}

static bool rsp_space(const struct srn_qp *qp, uint32_t n)
{
	return qp->resp.q_cap - qp->resp.q_n >= n;
}

static bool queue_ack(struct srn_qp *qp, uint32_t psn)
{
	struct srn_rsp *t = rsp_tail(qp);
	if (t && t->type == SRN_RSP_ACK) {     /* coalesce into the latest */
		if (!SRN_PSN_LT(psn, t->psn))
			t->psn = psn;
		t->msn = qp->resp.msn;
		qp->resp.since_ack = 0;
		return true;
	}
	struct srn_rsp *e = rsp_push(qp, SRN_RSP_ACK);
	if (!e)
		return false;
	e->psn = psn;
	e->msn = qp->resp.msn;
	e->syn = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
	e->t = qp->dev->now;
	e->txseq = qp->req_tx_seq;
	qp->resp.since_ack = 0;
	return true;
}

static void queue_nak(struct srn_qp *qp, uint8_t syn, uint32_t psn)
{
	struct srn_rsp *e = rsp_push(qp, SRN_RSP_NAK);
	if (!e) {
		/* full: the NAK replaces the newest entry (the peer retries anyway) */
		e = &qp->resp.q[(qp->resp.q_head + qp->resp.q_cap - 1) % qp->resp.q_cap];
		memset(e, 0, sizeof(*e));
		e->type = SRN_RSP_NAK;
	}
	e->syn = syn;
	e->psn = psn;
	e->msn = qp->resp.msn;
}

void srn_resp_purge_for_err(struct srn_qp *qp)
{
	for (uint32_t i = 0; i < qp->resp.q_n; i++) {
		struct srn_rsp *e = &qp->resp.q[(qp->resp.q_head + i) % qp->resp.q_cap];
		if (e->type != SRN_RSP_NAK)
			e->type = SRN_RSP_NONE;
	}
}

/* ------------------------------------------------------------------------ */
/* receive WQE placement */

static uint32_t recv_pdn(const struct srn_qp *qp)
{
	return qp->init.srq ? qp->init.srq->pdn : qp->init.pdn;
}

static bool take_rwqe(struct srn_qp *qp)
{
	if (qp->resp.have_wqe)
		return true;
	bool ok = qp->init.srq ? srn_srq_take(qp->init.srq, &qp->resp.wqe)
			       : srn_rq_pop(&qp->rq, &qp->resp.wqe);
	if (ok) {
		qp->resp.have_wqe = true;
		qp->resp.offset = 0;
	}
	return ok;
}

static uint64_t rwqe_len(const struct srn_rwqe *w)
{
	uint64_t t = 0;
	for (uint32_t i = 0; i < w->num_sge; i++)
		t += w->sge[i].length;
	return t;
}

/* Place len bytes at offset off of the receive WQE. Checks everything before
 * copying a byte: EXEC_LEN_ERR if it does not fit, EXEC_OP_ERR on a local
 * protection error. */
static enum exec_result rwqe_write(struct srn_qp *qp, const struct srn_rwqe *w, uint32_t off,
				   const uint8_t *src, uint32_t len)
{
	if ((uint64_t)off + len > rwqe_len(w))
		return EXEC_LEN_ERR;
	uint32_t pdn = recv_pdn(qp);
	for (int pass = 0; pass < 2; pass++) {
		uint32_t o = off, l = len;
		const uint8_t *s = src;
		for (uint32_t i = 0; i < w->num_sge && l; i++) {
			const struct srn_sge *g = &w->sge[i];
			if (o >= g->length) {
				o -= g->length;
				continue;
			}
			uint8_t *host = srn_mr_xlate(qp->dev, g->lkey, pdn, g->addr, g->length,
						     SRN_ACCESS_LOCAL_WRITE);
			if (!host)
				return EXEC_OP_ERR;
			uint32_t n = g->length - o < l ? g->length - o : l;
			if (pass == 1) {
				memcpy(host + o, s, n);
				s += n;
			}
			l -= n;
			o = 0;
		}
	}
	return EXEC_OK;
}

static void recv_cqe(struct srn_qp *qp, uint8_t status, uint8_t opcode, uint32_t byte_len,
		     uint32_t flags, uint32_t imm, bool se)
{
	struct srn_cqe c;
	memset(&c, 0, sizeof(c));
	c.wr_id = qp->resp.wqe.wr_id;
	c.status = status;
	c.opcode = opcode;
	c.byte_len = byte_len;
	c.imm_be = imm;
	c.wc_flags = flags;
	c.qp_num = qp->qpn;
	c.src_qp = qp->attr.dest_qp_num;
	c.pkey_index = qp->attr.pkey_index;
	memcpy(c.src_gid, qp->attr.ah.dgid, 16);
	memcpy(c.dst_gid, qp->dev->cfg.gid, 16);
	qp->resp.have_wqe = false;
	srn_cq_push(qp->init.recv_cq, &c, se);
}

/* ------------------------------------------------------------------------ */
/* execution steps shared by RC and UC */

static bool op_first(uint32_t m) { return (m & SRN_M_FIRST) != 0; }
static bool op_last(uint32_t m) { return (m & SRN_M_LAST) != 0; }

static enum exec_result check_opseq(struct srn_qp *qp, uint32_t m)
{
	switch (qp->resp.state) {
	case SRN_RESP_ST_SEND:
		return (m & SRN_M_SEND) && !op_first(m) ? EXEC_OK : EXEC_INV_REQ;
	case SRN_RESP_ST_WRITE:
		return (m & SRN_M_WRITE) && !op_first(m) ? EXEC_OK : EXEC_INV_REQ;
	default:
		if (m & (SRN_M_READ | SRN_M_ATOMIC))
			return EXEC_OK;
		return op_first(m) ? EXEC_OK : EXEC_INV_REQ;
	}
}

static enum exec_result check_length(const struct srn_qp *qp, const struct srn_pkt *p)
{
	uint32_t m = p->info->mask;
	if (!(m & (SRN_M_SEND | SRN_M_WRITE))) {
		if (p->paylen)
			return EXEC_INV_REQ;
		return EXEC_OK;
	}
	if (op_last(m))
		return p->paylen <= qp->mtu ? EXEC_OK : EXEC_INV_REQ;
	return p->paylen == qp->mtu ? EXEC_OK : EXEC_INV_REQ;
}

static enum exec_result exec_send(struct srn_qp *qp, const struct srn_pkt *p)
{
	uint32_t m = p->info->mask;
	if (op_first(m)) {
		if (!take_rwqe(qp))
			return EXEC_RNR;
		qp->resp.offset = 0;
	}
	/* SEND_WITH_INV: the rkey must be one this QP may invalidate before
	 * a byte of the last packet is placed (mw.c) */
	if (op_last(m) && (m & SRN_M_IETH) && !srn_mw_remote_inv_ok(qp, p->ieth_rkey))
		return EXEC_INV_RKEY;
	enum exec_result r = rwqe_write(qp, &qp->resp.wqe, qp->resp.offset, p->payload, p->paylen);
	if (r != EXEC_OK)
		return r;
	qp->resp.offset += p->paylen;
	if (op_last(m)) {
		uint32_t flags = 0, imm = 0;
		if (m & SRN_M_IMMDT) {
			flags |= SRN_WC_WITH_IMM;
			imm = p->imm_be;
		} else if (m & SRN_M_IETH) {
			/* SEND_WITH_INV: the window's rkey is revoked, then reported */
			srn_mw_remote_inv(qp, p->ieth_rkey);
			flags |= SRN_WC_WITH_INV;
			imm = p->ieth_rkey;
		}
		qp->resp.msn = (qp->resp.msn + 1) & SRN_MSN_MASK;   /* PSN-20 */
		recv_cqe(qp, SRN_WC_SUCCESS, SRN_WC_RECV, qp->resp.offset, flags, imm, p->se);
		qp->resp.state = SRN_RESP_ST_IDLE;
	} else {
		qp->resp.state = SRN_RESP_ST_SEND;
	}
	return EXEC_OK;
}

static enum exec_result exec_write(struct srn_qp *qp, const struct srn_pkt *p)
{
	uint32_t m = p->info->mask;
	if (op_first(m)) {
		if (!(qp->attr.qp_access_flags & SRN_ACCESS_REMOTE_WRITE))
			return EXEC_ACCESS;
		if (p->reth_len > (1u << 31))
			return EXEC_INV_REQ;
		if (p->reth_len && !srn_rkey_xlate(qp, p->reth_rkey, p->reth_va,
						   p->reth_len, SRN_ACCESS_REMOTE_WRITE))
			return EXEC_ACCESS;
		qp->resp.wr_va = p->reth_va;
		qp->resp.wr_rkey = p->reth_rkey;
		qp->resp.wr_left = p->reth_len;
		qp->resp.wr_len = p->reth_len;
	}
	/* total length must match the RETH */
	if (p->paylen > qp->resp.wr_left || (op_last(m) && p->paylen != qp->resp.wr_left))
		return EXEC_INV_REQ;
	bool imm = (m & SRN_M_IMMDT) != 0;
	if (imm && !take_rwqe(qp))
		return EXEC_RNR;
	if (p->paylen) {
		uint8_t *host = srn_rkey_xlate(qp, qp->resp.wr_rkey, qp->resp.wr_va,
					       p->paylen, SRN_ACCESS_REMOTE_WRITE);
		if (!host)
			return EXEC_ACCESS;
		memcpy(host, p->payload, p->paylen);
	}
	qp->resp.wr_va += p->paylen;
	qp->resp.wr_left -= p->paylen;
	if (op_last(m)) {
		qp->resp.msn = (qp->resp.msn + 1) & SRN_MSN_MASK;
		if (imm)
			recv_cqe(qp, SRN_WC_SUCCESS, SRN_WC_RECV_RDMA_WITH_IMM, qp->resp.wr_len,
				 SRN_WC_WITH_IMM, p->imm_be, p->se);
		qp->resp.state = SRN_RESP_ST_IDLE;
	} else {
		qp->resp.state = SRN_RESP_ST_WRITE;
	}
	return EXEC_OK;
}

static uint32_t res_cap_eff(const struct srn_qp *qp)
{
	uint32_t n = qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
	return n < qp->resp.res_cap ? n : qp->resp.res_cap;
}

static struct srn_res *res_alloc(struct srn_qp *qp)
{
	struct srn_res *r = &qp->resp.res[qp->resp.res_next % res_cap_eff(qp)];
	qp->resp.res_next = (qp->resp.res_next + 1) % res_cap_eff(qp);
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
static bool rd_atomic_exceeded(const struct srn_qp *qp)
{
	if (qp->attr.max_dest_rd_atomic == 0)
		return true;
	const struct srn_res *r = &qp->resp.res[qp->resp.res_next % res_cap_eff(qp)];
	return r->type != SRN_RES_NONE && !r->answered;
}

/* the response packet with PSN last_psn ended an answer: its slot is free */
static void res_answered(struct srn_qp *qp, uint8_t type, uint32_t last_psn)
{
	for (uint32_t i = 0; i < res_cap_eff(qp); i++) {
		struct srn_res *r = &qp->resp.res[i];
		if (r->type == type && r->last_psn == last_psn)
			r->answered = true;
	}
}

static enum exec_result exec_read(struct srn_qp *qp, const struct srn_pkt *p)
{
	if (rd_atomic_exceeded(qp))
		return EXEC_RD_ATOMIC_EXC;
	if (!(qp->attr.qp_access_flags & SRN_ACCESS_REMOTE_READ))
		return EXEC_ACCESS;
	if (p->reth_len > (1u << 31))
		return EXEC_INV_REQ;
	if (p->reth_len && !srn_rkey_xlate(qp, p->reth_rkey, p->reth_va,
					   p->reth_len, SRN_ACCESS_REMOTE_READ))
		return EXEC_ACCESS;
	if (!rsp_space(qp, 1))
		return EXEC_BUSY;
	uint32_t n = srn_qp_npsn(qp, p->reth_len);
	qp->resp.msn = (qp->resp.msn + 1) & SRN_MSN_MASK;
	struct srn_res *r = res_alloc(qp);
	r->type = SRN_RES_READ;
	r->first_psn = p->psn;
	r->last_psn = srn_psn_add(p->psn, n - 1);
	r->va = p->reth_va;
	r->rkey = p->reth_rkey;
	r->len = p->reth_len;
	r->msn = qp->resp.msn;
	struct srn_rsp *e = rsp_push(qp, SRN_RSP_READ);
	e->psn = p->psn;
	e->va = p->reth_va;
	e->rkey = p->reth_rkey;
	e->left = p->reth_len;
	e->first = true;
	e->msn = qp->resp.msn;
	return EXEC_OK;
}

static enum exec_result exec_atomic(struct srn_qp *qp, const struct srn_pkt *p)
{
	if (rd_atomic_exceeded(qp))
		return EXEC_RD_ATOMIC_EXC;
	if (!(qp->attr.qp_access_flags & SRN_ACCESS_REMOTE_ATOMIC))
		return EXEC_ACCESS;
	if (p->atm_va & 7)
		return EXEC_ACCESS_INV;             /* misaligned: invalid request */
	uint8_t *host = srn_rkey_xlate(qp, p->atm_rkey, p->atm_va, 8, SRN_ACCESS_REMOTE_ATOMIC);
	if (!host)
		return EXEC_ACCESS;
	if (!rsp_space(qp, 1))
		return EXEC_BUSY;
	/* executed exactly once, on the host-endian 64-bit word (as RNICs on x86) */
	uint64_t orig, v;
	memcpy(&orig, host, 8);
	if (p->opcode == SRN_OP_RC_COMPARE_SWAP)
		v = orig == p->atm_cmp ? p->atm_swap_add : orig;
	else
		v = orig + p->atm_swap_add;
	memcpy(host, &v, 8);
	qp->resp.msn = (qp->resp.msn + 1) & SRN_MSN_MASK;
	struct srn_res *r = res_alloc(qp);
	r->type = SRN_RES_ATOMIC;
	r->first_psn = r->last_psn = p->psn;
	r->va = p->atm_va;
	r->rkey = p->atm_rkey;
	r->len = 8;
	r->orig = orig;
	r->msn = qp->resp.msn;
	struct srn_rsp *e = rsp_push(qp, SRN_RSP_ATOMIC);
	e->psn = p->psn;
	e->orig = orig;
	e->msn = qp->resp.msn;
	return EXEC_OK;
}

static enum exec_result execute(struct srn_qp *qp, const struct srn_pkt *p)
{
	uint32_t m = p->info->mask;
	enum exec_result r = check_opseq(qp, m);
	if (r == EXEC_OK)
		r = check_length(qp, p);
	if (r != EXEC_OK)
		return r;
	if (m & SRN_M_SEND)
		return exec_send(qp, p);
	if (m & SRN_M_WRITE)
		return exec_write(qp, p);
	if (m & SRN_M_READ)
		return exec_read(qp, p);
	if (m & SRN_M_ATOMIC)
		return exec_atomic(qp, p);
	return EXEC_INV_REQ;
}

/* ------------------------------------------------------------------------ */
/* RC */

/* NAK, then the responder QP goes to ERR with the async event a real RNIC
 * raises; the receive WQE in progress completes with status if given */
static void rc_fatal(struct srn_qp *qp, uint8_t nak_code, uint32_t psn, int async, int wc_status)
{
	queue_nak(qp, SRN_AETH_SYN(SRN_AETH_NAK, nak_code), psn);
	if (wc_status >= 0 && qp->resp.have_wqe)
		recv_cqe(qp, (uint8_t)wc_status, SRN_WC_RECV, qp->resp.offset, 0, 0, false);
	if (async >= 0)
		srn_dev_async(qp->dev, (enum srn_async_type)async, qp, NULL, NULL);
	srn_qp_to_err(qp);
}

static struct srn_res *res_find(struct srn_qp *qp, uint8_t type, uint32_t psn)
{
	for (uint32_t i = 0; i < res_cap_eff(qp); i++) {
		struct srn_res *r = &qp->resp.res[i];
		if (r->type != type)
			continue;
		if (SRN_PSN_LE(r->first_psn, psn) && SRN_PSN_LE(psn, r->last_psn))
			return r;
	}
	return NULL;
}

/* PSN-09: a duplicate READ with an earlier PSN preempts what is queued at or
 * after its PSN (the requester resends everything after it anyway) */
static void preempt_from(struct srn_qp *qp, uint32_t psn)
{
	for (uint32_t i = 0; i < qp->resp.q_n; i++) {
		struct srn_rsp *e = &qp->resp.q[(qp->resp.q_head + i) % qp->resp.q_cap];
		if (e->type == SRN_RSP_NAK || e->type == SRN_RSP_NONE)
			continue;
		if (!SRN_PSN_LT(e->psn, psn))
			e->type = SRN_RSP_NONE;
	}
}

static void rc_duplicate(struct srn_qp *qp, const struct srn_pkt *p)
{
	struct srn_dev *dev = qp->dev;
	uint32_t m = p->info->mask;
	srn_ctr_inc(dev, SRN_CTR_DUP_REQUESTS);
	qp->resp.nak_sent = false;
	if (m & (SRN_M_SEND | SRN_M_WRITE)) {
		/* PSN-08: ACK with the PSN of the most recently completed request */
		queue_ack(qp, qp->resp.last_psn);
		return;
	}
	if (m & SRN_M_READ) {
		struct srn_res *r = res_find(qp, SRN_RES_READ, p->psn);
		if (!r || p->reth_va < r->va ||
		    p->reth_va + (uint64_t)p->reth_len > r->va + (uint64_t)r->len)
			return;                               /* not a subset: dropped */
		if (p->reth_len && !srn_rkey_xlate(qp, p->reth_rkey, p->reth_va,
						   p->reth_len, SRN_ACCESS_REMOTE_READ))
			return;                               /* error before the first response */
		preempt_from(qp, p->psn);
		struct srn_rsp *e = rsp_push(qp, SRN_RSP_READ);
		if (!e)
			return;
		srn_ctr_inc(dev, SRN_CTR_DUP_READ_REEXEC);
		e->psn = p->psn;
		e->va = p->reth_va;
		e->rkey = p->reth_rkey;
		e->left = p->reth_len;
		e->first = true;
		e->dup = true;
		e->msn = qp->resp.msn;
		return;
	}
	if (m & SRN_M_ATOMIC) {
		struct srn_res *r = res_find(qp, SRN_RES_ATOMIC, p->psn);
		if (!r || r->first_psn != p->psn)
			return;                               /* PSN-10: no saved result */
		struct srn_rsp *e = rsp_push(qp, SRN_RSP_ATOMIC);
		if (!e)
			return;
		srn_ctr_inc(dev, SRN_CTR_DUP_ATOMIC_REPLAY);
		e->dup = true;
		e->psn = p->psn;
		e->orig = r->orig;
		e->msn = qp->resp.msn;
	}
}

static void resp_rc(struct srn_qp *qp, const struct srn_pkt *p)
{
	struct srn_dev *dev = qp->dev;
	uint32_t m = p->info->mask;
	if (qp->resp.state == SRN_RESP_ST_ERROR) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_STATE);
		return;
	}
	int32_t d = srn_psn_diff(p->psn, qp->resp.epsn);
	if (d < 0) {
		rc_duplicate(qp, p);
		return;
	}
	if (d > 0) {
		/* PSN-12: not executed, one sequence NAK per gap; every earlier
		 * request is already executed and gets its (coalesced) ACK first */
		srn_ctr_inc(dev, SRN_CTR_OOS_REQ_DROPPED);
		if (!qp->resp.nak_sent) {
			if (qp->resp.since_ack)
				queue_ack(qp, qp->resp.last_psn);
			queue_nak(qp, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), qp->resp.epsn);
			qp->resp.nak_sent = true;
		}
		return;
	}
	/* PSN == ePSN: keep one slot for an ACK/NAK this packet may need; with
	 * no room the request is dropped unexecuted (the requester retries) */
	if (!rsp_space(qp, 2)) {
		srn_ctr_inc(dev, SRN_CTR_DROP_RESP_QUEUE_FULL);
		return;
	}
	enum exec_result r = execute(qp, p);
	switch (r) {
	case EXEC_OK:
		break;
	case EXEC_BUSY:
		srn_ctr_inc(dev, SRN_CTR_DROP_RESP_QUEUE_FULL);
		return;
	case EXEC_RD_ATOMIC_EXC:
		srn_ctr_inc(dev, SRN_CTR_TX_NAK_RD_ATOMIC_EXC);
		rc_fatal(qp, SRN_NAK_INVALID_REQUEST, p->psn, SRN_EV_QP_REQ_ERR, -1);
		return;
	case EXEC_RNR:
		queue_nak(qp, SRN_AETH_SYN(SRN_AETH_RNR_NAK, qp->attr.min_rnr_timer), p->psn);
		qp->resp.nak_sent = true;
		return;
	case EXEC_INV_REQ:
		rc_fatal(qp, SRN_NAK_INVALID_REQUEST, p->psn, SRN_EV_QP_REQ_ERR, -1);
		return;
	case EXEC_ACCESS_INV:
		rc_fatal(qp, SRN_NAK_INVALID_REQUEST, p->psn, SRN_EV_QP_ACCESS_ERR, -1);
		return;
	case EXEC_ACCESS:
		rc_fatal(qp, SRN_NAK_REMOTE_ACCESS, p->psn, SRN_EV_QP_ACCESS_ERR, -1);
		return;
	case EXEC_LEN_ERR:
		rc_fatal(qp, SRN_NAK_INVALID_REQUEST, p->psn, -1, SRN_WC_LOC_LEN_ERR);
		return;
	case EXEC_INV_RKEY:
		/* SEND_WITH_INV of a key this QP may not invalidate: an invalid
		 * request; the receive WQE completes with that status */
		rc_fatal(qp, SRN_NAK_INVALID_REQUEST, p->psn, SRN_EV_QP_REQ_ERR,
			 SRN_WC_REM_INV_REQ_ERR);
		return;
	case EXEC_OP_ERR:
		rc_fatal(qp, SRN_NAK_REMOTE_OP_ERR, p->psn, -1, SRN_WC_LOC_PROT_ERR);
		return;
	}
	qp->resp.nak_sent = false;
	if (m & SRN_M_READ) {
		uint32_t n = srn_qp_npsn(qp, p->reth_len);
		qp->resp.last_psn = srn_psn_add(p->psn, n - 1);
		qp->resp.epsn = srn_psn_add(p->psn, n);
		qp->resp.since_ack = 0;
		return;
	}
	qp->resp.last_psn = p->psn;
	qp->resp.epsn = srn_psn_add(p->psn, 1);
	if (m & SRN_M_ATOMIC) {
		qp->resp.since_ack = 0;
		return;
	}
	qp->resp.since_ack++;
	if (p->ackreq || qp->resp.since_ack >= dev->cfg.ack_coalesce)
		queue_ack(qp, p->psn);
}

/* ------------------------------------------------------------------------ */
/* UC (PSN-13) */

static void uc_abandon(struct srn_qp *qp)
{
	if (qp->resp.state == SRN_RESP_ST_SEND || qp->resp.state == SRN_RESP_ST_WRITE)
		srn_ctr_inc(qp->dev, SRN_CTR_UC_MSG_DROPPED);
	/* a partially filled receive WQE is reused for the next message */
	qp->resp.offset = 0;
	qp->resp.state = SRN_RESP_ST_IDLE;
}

static void resp_uc(struct srn_qp *qp, const struct srn_pkt *p)
{
	struct srn_dev *dev = qp->dev;
	uint32_t m = p->info->mask;
	if (qp->resp.state == SRN_RESP_ST_ERROR) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_STATE);
		return;
	}
	if (qp->resp.state == SRN_RESP_ST_UC_DROP) {
		if (!op_first(m)) {
			srn_ctr_inc(dev, SRN_CTR_UC_MSG_DROPPED);
			return;
		}
		qp->resp.state = SRN_RESP_ST_IDLE;
		qp->resp.epsn = p->psn;
	}
	if (p->psn != qp->resp.epsn) {
		uc_abandon(qp);
		if (!op_first(m)) {
			srn_ctr_inc(dev, SRN_CTR_UC_MSG_DROPPED);
			qp->resp.state = SRN_RESP_ST_UC_DROP;
			return;
		}
		qp->resp.epsn = p->psn;      /* a First/Only starts a new message */
	} else if (op_first(m) && qp->resp.state != SRN_RESP_ST_IDLE) {
		uc_abandon(qp);
	}
	enum exec_result r = execute(qp, p);
	switch (r) {
	case EXEC_OK:
		qp->resp.epsn = srn_psn_add(p->psn, 1);
		return;
	case EXEC_LEN_ERR:
	case EXEC_OP_ERR:
		if (qp->resp.have_wqe)
			recv_cqe(qp, r == EXEC_LEN_ERR ? SRN_WC_LOC_LEN_ERR : SRN_WC_LOC_PROT_ERR,
				 SRN_WC_RECV, qp->resp.offset, 0, 0, false);
		break;
	case EXEC_RNR:
		srn_ctr_inc(dev, SRN_CTR_UD_DROPPED_NO_RECV);
		break;
	default:
		break;
	}
	/* the rest of this message is dropped */
	srn_ctr_inc(dev, SRN_CTR_UC_MSG_DROPPED);
	qp->resp.offset = 0;
	qp->resp.state = SRN_RESP_ST_UC_DROP;
	qp->resp.epsn = srn_psn_add(p->psn, 1);
}

/* ------------------------------------------------------------------------ */
/* UD (PSN-14: no PSN check) */

static uint16_t ip_csum(const uint8_t *h)
{
	uint32_t s = 0;
	for (int i = 0; i < 20; i += 2)
		s += srn_get16(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void resp_ud(struct srn_qp *qp, const struct srn_pkt *p, const struct srn_pkt_meta *meta,
		    size_t pktlen)
{
	struct srn_dev *dev = qp->dev;
	if (p->deth_qkey != qp->attr.qkey) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_QKEY);
		return;
	}
	if (p->paylen > SRN_UD_MTU) {
		srn_ctr_inc(dev, SRN_CTR_DROP_BAD_LENGTH);
		return;
	}
	if (!take_rwqe(qp)) {
		srn_ctr_inc(dev, SRN_CTR_UD_DROPPED_NO_RECV);
		return;
	}
	/* the first 40 bytes are the GRH area; an IPv4 header sits at 20..39 */
	uint8_t grh[SRN_GRH_LEN];
	memset(grh, 0, sizeof(grh));
	uint8_t *ip = grh + 20;
	ip[0] = 0x45;
	ip[1] = (uint8_t)((meta->dscp << 2) | (meta->ecn & 3));
	srn_put16(ip + 2, (uint16_t)(20 + 8 + pktlen));
	srn_put16(ip + 4, meta->ip_id);
	srn_put16(ip + 6, 0x4000);
	ip[8] = meta->ttl;
	ip[9] = 17;
	memcpy(ip + 12, meta->src_gid + 12, 4);
	memcpy(ip + 16, meta->dst_gid + 12, 4);
	srn_put16(ip + 10, ip_csum(ip));
	enum exec_result r = rwqe_write(qp, &qp->resp.wqe, 0, grh, SRN_GRH_LEN);
	if (r == EXEC_OK)
		r = rwqe_write(qp, &qp->resp.wqe, SRN_GRH_LEN, p->payload, p->paylen);
	struct srn_cqe c;
	memset(&c, 0, sizeof(c));
	c.wr_id = qp->resp.wqe.wr_id;
	c.status = r == EXEC_OK ? SRN_WC_SUCCESS : r == EXEC_LEN_ERR ? SRN_WC_LOC_LEN_ERR : SRN_WC_LOC_PROT_ERR;
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
	qp->resp.have_wqe = false;
	srn_cq_push(qp->init.recv_cq, &c, p->se);
}

void srn_resp_recv(struct srn_qp *qp, const struct srn_pkt *p, const struct srn_pkt_meta *meta,
		   size_t pktlen, srn_ts now)
{
	(void)now;
	switch (qp->init.type) {
	case SRN_QPT_RC: resp_rc(qp, p); break;
	case SRN_QPT_UC: resp_uc(qp, p); break;
	case SRN_QPT_UD: resp_ud(qp, p, meta, pktlen); break;
	}
}

/* ------------------------------------------------------------------------ */
/* response generation */

static ssize_t build(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt *p,
		     const uint8_t *payload, uint32_t plen, struct srn_pkt_meta *meta)
{
	p->pkey = SRN_DEFAULT_PKEY;
	p->dqpn = qp->attr.dest_qp_num;
	p->pad = srn_pad_for(plen);
	int h = srn_pkt_write_hdrs(buf, cap, p);
	if (h < 0 || (size_t)h + plen + p->pad + SRN_ICRC_LEN > cap)
		return -1;
	if (plen)
		memcpy(buf + h, payload, plen);
	srn_qp_fill_meta(qp, &qp->attr.ah, p->dqpn, meta);
	return (ssize_t)srn_pkt_finalize(buf, (size_t)h, plen, meta);
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

ssize_t srn_resp_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now)
{
	(void)now;
	struct srn_dev *dev = qp->dev;
	while (qp->resp.q_n) {
		struct srn_rsp *e = &qp->resp.q[qp->resp.q_head];
		struct srn_pkt p;
		memset(&p, 0, sizeof(p));
		ssize_t n;
		if (qp->attr.qp_state == SRN_QPS_ERR && e->type != SRN_RSP_NAK)
			e->type = SRN_RSP_NONE;
		switch (e->type) {
		case SRN_RSP_ACK:
		case SRN_RSP_NAK:
			p.opcode = SRN_OP_RC_ACKNOWLEDGE;
			p.psn = e->psn;
			p.aeth_syn = e->syn;
			p.aeth_msn = e->msn;
			n = build(qp, buf, cap, &p, NULL, 0, meta);
			if (n < 0)
				return 0;
			if (e->type == SRN_RSP_ACK)
				srn_ctr_inc(dev, SRN_CTR_TX_ACKS);
			else
				count_nak(dev, e->syn);
			rsp_pop(qp);
			return n;
		case SRN_RSP_ATOMIC:
			p.opcode = SRN_OP_RC_ATOMIC_ACKNOWLEDGE;
			p.psn = e->psn;
			p.aeth_syn = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
			p.aeth_msn = e->msn;
			p.atmack_orig = e->orig;
			n = build(qp, buf, cap, &p, NULL, 0, meta);
			if (n < 0)
				return 0;
			res_answered(qp, SRN_RES_ATOMIC, e->psn);
			rsp_pop(qp);
			return n;
		case SRN_RSP_READ: {
			uint32_t plen = e->left < qp->mtu ? e->left : qp->mtu;
			bool last = e->left <= qp->mtu;
			const uint8_t *src = NULL;
			if (plen) {
				src = srn_rkey_xlate(qp, e->rkey, e->va, plen, SRN_ACCESS_REMOTE_READ);
				if (!src) {
					/* memory went away: stop answering (PSN-09); the
					 * responder gives this READ up */
					srn_ctr_inc(dev, SRN_CTR_DROP_BAD_STATE);
					res_answered(qp, SRN_RES_READ,
						     srn_psn_add(e->psn, srn_qp_npsn(qp, e->left) - 1));
					rsp_pop(qp);
					continue;
				}
			}
			if (e->first)
				p.opcode = last ? SRN_OP_RC_READ_RESPONSE_ONLY : SRN_OP_RC_READ_RESPONSE_FIRST;
			else
				p.opcode = last ? SRN_OP_RC_READ_RESPONSE_LAST : SRN_OP_RC_READ_RESPONSE_MIDDLE;
			p.psn = e->psn;
			p.aeth_syn = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
			p.aeth_msn = e->msn;
			n = build(qp, buf, cap, &p, src, plen, meta);
			if (n < 0)
				return 0;
			e->first = false;
			e->psn = srn_psn_add(e->psn, 1);
			e->va += plen;
			e->left -= plen;
			if (last) {
				res_answered(qp, SRN_RES_READ, p.psn);
				rsp_pop(qp);
			}
			return n;
		}
		default:
			rsp_pop(qp);
			continue;
		}
	}
	return 0;
}
