/*
 * resp.c - the responder state machines of the connected transports, as
 * rxe draws them: an explicit step enum with a name table, run as a loop
 * over small step functions that each return the next step. Execution
 * itself (placement, READ/ATOMIC resources) is exec.c's.
 *
 * RC (PSN-06..12, 20, 21), per request packet:
 *   CHECK_STATE -> CHECK_PSN -> DUPLICATE       (PSN < ePSN: PSN-08..11)
 *                            -> OUT_OF_SEQUENCE (PSN > ePSN: PSN-12, one NAK per gap)
 *                            -> CHECK_ROOM      (PSN == ePSN: PSN-07)
 *   CHECK_ROOM  -> EXECUTE -> ADVANCE -> ACKNOWLEDGE -> DONE
 *                          -> RNR_NAK (no receive WQE)
 *                          -> ERROR_NAK (NAK, QP -> ERR, async event)
 *   A full response queue drops the request unexecuted (DROP_BUSY): the
 *   requester retries.
 * UC (PSN-13), per request packet:
 *   CHECK_STATE -> CHECK_SEQUENCE -> EXECUTE -> ADVANCE | DROP_MESSAGE
 * Besides the step, the context keeps the message sequence in progress
 * (rc->seq: IDLE, SEND, WRITE, UC_DROP, ERROR), which the opcode-sequence
 * check reads.
 */
#include "core_int.h"

enum resp_step {
	RESP_CHECK_STATE, RESP_CHECK_PSN, RESP_DUPLICATE, RESP_OUT_OF_SEQUENCE, RESP_CHECK_ROOM,
	RESP_EXECUTE, RESP_ADVANCE, RESP_ACKNOWLEDGE, RESP_RNR_NAK, RESP_ERROR_NAK, RESP_DROP_BUSY,
	RESP_CHECK_SEQUENCE, RESP_DROP_MESSAGE, RESP_DONE, RESP_NSTEPS
};
const char *const srn_resp_step_names[RESP_NSTEPS] = {
	"CHECK_STATE", "CHECK_PSN", "DUPLICATE", "OUT_OF_SEQUENCE", "CHECK_ROOM", "EXECUTE",
	"ADVANCE", "ACKNOWLEDGE", "RNR_NAK", "ERROR_NAK", "DROP_BUSY", "CHECK_SEQUENCE",
	"DROP_MESSAGE", "DONE",
};

struct resp_run {
	struct srn_respctx *rc;
	const struct srn_pkt *p;
	enum srn_exec ex;
};

static struct srn_dev *dev_of(const struct resp_run *r) { return r->rc->qp->dev; }

void srn_resp_reset(struct srn_respctx *rc)
{
	rc->seq = SRN_RESP_SEQ_IDLE;
	rc->epsn = rc->msn = rc->last_psn = rc->since_ack = 0;
	rc->nak_sent = false;
	for (uint32_t i = 0; i < rc->nmsgs; i++) {
		struct srn_rmsg *m = &rc->msgs[i];
		struct srn_sge *sge = m->wqe.sge;
		memset(m, 0, sizeof(*m));
		m->wqe.sge = sge;
	}
	if (rc->res)
		memset(rc->res, 0, rc->res_cap * sizeof(*rc->res));
	rc->res_next = 0;
	rc->out.head = rc->out.n = 0;
}

/* a responder in ERR drops what still arrives */
static bool in_error(struct resp_run *r)
{
	if (r->rc->seq != SRN_RESP_SEQ_ERROR)
		return false;
	srn_ctr_inc(dev_of(r), SRN_CTR_DROP_BAD_STATE);
	return true;
}

static enum resp_step step_check_state(struct resp_run *r)
{
	return in_error(r) ? RESP_DONE : RESP_CHECK_PSN;
}

static enum resp_step step_check_psn(struct resp_run *r)
{
	int32_t d = srn_psn_diff(r->p->psn, r->rc->epsn);
	if (d < 0)
		return RESP_DUPLICATE;
	return d > 0 ? RESP_OUT_OF_SEQUENCE : RESP_CHECK_ROOM;
}

/* PSN-09: a duplicate READ is executed again from memory if it is a subset
 * of the original */
static void dup_read(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct srn_dev *dev = rc->qp->dev;
	struct srn_res *res = srn_res_find(rc, SRN_RES_READ, p->psn);
	if (!res || p->reth_va < res->va ||
	    p->reth_va + (uint64_t)p->reth_len > res->va + (uint64_t)res->len)
		return;                               /* not a subset: dropped */
	if (p->reth_len && !srn_rkey_xlate(rc->qp, p->reth_rkey, p->reth_va, p->reth_len,
					   SRN_ACCESS_REMOTE_READ))
		return;                               /* error before the first response */
	srn_rspq_preempt_from(&rc->out, p->psn);
	struct srn_rsp *e = srn_rspq_push(&rc->out, SRN_RSP_READ);
	if (!e)
		return;
	srn_ctr_inc(dev, SRN_CTR_DUP_READ_REEXEC);
	e->psn = p->psn;
	e->va = p->reth_va;
	e->rkey = p->reth_rkey;
	e->left = p->reth_len;
	e->first = true;
	e->dup = true;
	e->msn = rc->msn;
}

/* PSN-10: a duplicate ATOMIC is answered from its saved result, never again */
static void dup_atomic(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct srn_res *res = srn_res_find(rc, SRN_RES_ATOMIC, p->psn);
	if (!res || res->first_psn != p->psn)
		return;                               /* no saved result */
	struct srn_rsp *e = srn_rspq_push(&rc->out, SRN_RSP_ATOMIC);
	if (!e)
		return;
	srn_ctr_inc(rc->qp->dev, SRN_CTR_DUP_ATOMIC_REPLAY);
	e->dup = true;
	e->psn = p->psn;
	e->orig = res->orig;
	e->msn = rc->msn;
}

static enum resp_step step_duplicate(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	uint32_t m = r->p->info->mask;
	srn_ctr_inc(dev_of(r), SRN_CTR_DUP_REQUESTS);
	rc->nak_sent = false;
	if (m & (SRN_M_SEND | SRN_M_WRITE))
		/* PSN-08: ACK with the PSN of the most recently completed request */
		srn_resp_queue_ack(rc, rc->last_psn);
	else if (m & SRN_M_READ)
		dup_read(rc, r->p);
	else if (m & SRN_M_ATOMIC)
		dup_atomic(rc, r->p);
	return RESP_DONE;
}

/* PSN-12: not executed, one sequence NAK per gap; every earlier request is
 * already executed and gets its (coalesced) ACK first */
static enum resp_step step_out_of_sequence(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	srn_ctr_inc(dev_of(r), SRN_CTR_OOS_REQ_DROPPED);
	if (!rc->nak_sent) {
		if (rc->since_ack)
			srn_resp_queue_ack(rc, rc->last_psn);
		srn_resp_queue_nak(rc, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), rc->epsn);
		rc->nak_sent = true;
	}
	return RESP_DONE;
}

/* keep one slot for an ACK/NAK this packet may need; with no room the
 * request is dropped unexecuted (the requester retries) */
static enum resp_step step_check_room(struct resp_run *r)
{
	return srn_rspq_space(&r->rc->out, 2) ? RESP_EXECUTE : RESP_DROP_BUSY;
}

static enum resp_step step_execute(struct resp_run *r)
{
	r->ex = srn_exec_request(r->rc, r->p);
	switch (r->ex) {
	case SRN_EXEC_OK: return RESP_ADVANCE;
	case SRN_EXEC_BUSY: return RESP_DROP_BUSY;
	case SRN_EXEC_RNR: return RESP_RNR_NAK;
	default: return RESP_ERROR_NAK;
	}
}

static enum resp_step step_drop_busy(struct resp_run *r)
{
	srn_ctr_inc(dev_of(r), SRN_CTR_DROP_RESP_QUEUE_FULL);
	return RESP_DONE;
}

static enum resp_step step_rnr_nak(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	srn_resp_queue_nak(rc, SRN_AETH_SYN(SRN_AETH_RNR_NAK, rc->qp->attr.min_rnr_timer), r->p->psn);
	rc->nak_sent = true;
	return RESP_DONE;
}

/* the NAK code, async event (-1: none) and receive completion status (-1:
 * none) of a failed execution */
static void error_of(enum srn_exec ex, uint8_t *nak, int *async, int *wc)
{
	*async = -1;
	*wc = -1;
	switch (ex) {
	case SRN_EXEC_RD_ATOMIC_EXC:
	case SRN_EXEC_INV_REQ:
		*nak = SRN_NAK_INVALID_REQUEST;
		*async = SRN_EV_QP_REQ_ERR;
		break;
	case SRN_EXEC_ACCESS_INV:
		*nak = SRN_NAK_INVALID_REQUEST;
		*async = SRN_EV_QP_ACCESS_ERR;
		break;
	case SRN_EXEC_ACCESS:
		*nak = SRN_NAK_REMOTE_ACCESS;
		*async = SRN_EV_QP_ACCESS_ERR;
		break;
	case SRN_EXEC_LEN_ERR:
		*nak = SRN_NAK_INVALID_REQUEST;
		*wc = SRN_WC_LOC_LEN_ERR;
		break;
	case SRN_EXEC_INV_RKEY:
		/* SEND_WITH_INV of a key this QP may not invalidate: an invalid
		 * request; the receive WQE completes with that status */
		*nak = SRN_NAK_INVALID_REQUEST;
		*async = SRN_EV_QP_REQ_ERR;
		*wc = SRN_WC_REM_INV_REQ_ERR;
		break;
	default:                                       /* SRN_EXEC_OP_ERR */
		*nak = SRN_NAK_REMOTE_OP_ERR;
		*wc = SRN_WC_LOC_PROT_ERR;
		break;
	}
}

/* NAK, then the responder QP goes to ERR with the async event a real RNIC
 * raises; the receive WQE in progress completes with a status if given */
static enum resp_step step_error_nak(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	uint8_t nak;
	int async, wc;
	error_of(r->ex, &nak, &async, &wc);
	if (r->ex == SRN_EXEC_RD_ATOMIC_EXC)
		srn_ctr_inc(dev_of(r), SRN_CTR_TX_NAK_RD_ATOMIC_EXC);
	srn_resp_queue_nak(rc, SRN_AETH_SYN(SRN_AETH_NAK, nak), r->p->psn);
	struct srn_rmsg *m = srn_resp_cur(rc);
	if (wc >= 0 && m->have_wqe)
		srn_cqe_recv(rc, m, (uint8_t)wc, SRN_WC_RECV, m->offset, 0, 0, false);
	if (async >= 0)
		srn_dev_async(rc->qp->dev, (enum srn_async_type)async, rc->qp, NULL, NULL);
	srn_qp_to_err(rc->qp);
	return RESP_DONE;
}

static enum resp_step step_advance(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	const struct srn_pkt *p = r->p;
	uint32_t m = p->info->mask;
	rc->nak_sent = false;
	if (m & SRN_M_READ) {
		uint32_t n = srn_qp_npsn(rc->qp, p->reth_len);
		rc->last_psn = srn_psn_add(p->psn, n - 1);
		rc->epsn = srn_psn_add(p->psn, n);
		rc->since_ack = 0;
		return RESP_DONE;              /* the READ response acknowledges */
	}
	rc->last_psn = p->psn;
	rc->epsn = srn_psn_add(p->psn, 1);
	if (m & SRN_M_ATOMIC) {
		rc->since_ack = 0;
		return RESP_DONE;              /* the atomic ACK acknowledges */
	}
	return RESP_ACKNOWLEDGE;
}

/* PSN-17: ACK when asked, and at least every cfg.ack_coalesce packets */
static enum resp_step step_acknowledge(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	rc->since_ack++;
	if (r->p->ackreq || rc->since_ack >= dev_of(r)->cfg.ack_coalesce)
		srn_resp_queue_ack(rc, r->p->psn);
	return RESP_DONE;
}

typedef enum resp_step (*resp_step_fn)(struct resp_run *r);

static const resp_step_fn rc_steps[RESP_NSTEPS] = {
	[RESP_CHECK_STATE] = step_check_state,
	[RESP_CHECK_PSN] = step_check_psn,
	[RESP_DUPLICATE] = step_duplicate,
	[RESP_OUT_OF_SEQUENCE] = step_out_of_sequence,
	[RESP_CHECK_ROOM] = step_check_room,
	[RESP_EXECUTE] = step_execute,
	[RESP_ADVANCE] = step_advance,
	[RESP_ACKNOWLEDGE] = step_acknowledge,
	[RESP_RNR_NAK] = step_rnr_nak,
	[RESP_ERROR_NAK] = step_error_nak,
	[RESP_DROP_BUSY] = step_drop_busy,
};

static void run(const resp_step_fn *steps, struct resp_run *r, enum resp_step st)
{
	while (st != RESP_DONE && steps[st])
		st = steps[st](r);
}

void srn_resp_rc(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct resp_run r = { .rc = rc, .p = p };
	run(rc_steps, &r, RESP_CHECK_STATE);
}

/* ------------------------------------------------------------------------ */
/* UC (PSN-13) */

static void uc_abandon(struct srn_respctx *rc)
{
	if (rc->seq == SRN_RESP_SEQ_SEND || rc->seq == SRN_RESP_SEQ_WRITE)
		srn_ctr_inc(rc->qp->dev, SRN_CTR_UC_MSG_DROPPED);
	/* a partially filled receive WQE is reused for the next message */
	srn_resp_cur(rc)->offset = 0;
	rc->seq = SRN_RESP_SEQ_IDLE;
}

/* a mismatch on a First/Only starts a new message with ePSN = its PSN; on
 * a Middle/Last it drops every packet until the next First/Only */
static enum resp_step uc_check_sequence(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	const struct srn_pkt *p = r->p;
	bool first = (p->info->mask & SRN_M_FIRST) != 0;
	if (rc->seq == SRN_RESP_SEQ_UC_DROP) {
		if (!first) {
			srn_ctr_inc(dev_of(r), SRN_CTR_UC_MSG_DROPPED);
			return RESP_DONE;
		}
		rc->seq = SRN_RESP_SEQ_IDLE;
		rc->epsn = p->psn;
	}
	if (p->psn != rc->epsn) {
		uc_abandon(rc);
		if (!first) {
			srn_ctr_inc(dev_of(r), SRN_CTR_UC_MSG_DROPPED);
			rc->seq = SRN_RESP_SEQ_UC_DROP;
			return RESP_DONE;
		}
		rc->epsn = p->psn;
	} else if (first && rc->seq != SRN_RESP_SEQ_IDLE) {
		uc_abandon(rc);
	}
	return RESP_EXECUTE;
}

static enum resp_step uc_execute(struct resp_run *r)
{
	r->ex = srn_exec_request(r->rc, r->p);
	return r->ex == SRN_EXEC_OK ? RESP_ADVANCE : RESP_DROP_MESSAGE;
}

static enum resp_step uc_advance(struct resp_run *r)
{
	r->rc->epsn = srn_psn_add(r->p->psn, 1);
	return RESP_DONE;
}

/* the rest of this message is dropped; a receive WQE it used completes in
 * error if the data could not be placed */
static enum resp_step uc_drop_message(struct resp_run *r)
{
	struct srn_respctx *rc = r->rc;
	struct srn_rmsg *m = srn_resp_cur(rc);
	if ((r->ex == SRN_EXEC_LEN_ERR || r->ex == SRN_EXEC_OP_ERR) && m->have_wqe)
		srn_cqe_recv(rc, m, r->ex == SRN_EXEC_LEN_ERR ? SRN_WC_LOC_LEN_ERR : SRN_WC_LOC_PROT_ERR,
			     SRN_WC_RECV, m->offset, 0, 0, false);
	else if (r->ex == SRN_EXEC_RNR)
		srn_ctr_inc(dev_of(r), SRN_CTR_UD_DROPPED_NO_RECV);
	srn_ctr_inc(dev_of(r), SRN_CTR_UC_MSG_DROPPED);
	m->offset = 0;
	rc->seq = SRN_RESP_SEQ_UC_DROP;
	rc->epsn = srn_psn_add(r->p->psn, 1);
	return RESP_DONE;
}

static enum resp_step uc_check_state(struct resp_run *r)
{
	return in_error(r) ? RESP_DONE : RESP_CHECK_SEQUENCE;
}

static const resp_step_fn uc_steps[RESP_NSTEPS] = {
	[RESP_CHECK_STATE] = uc_check_state,
	[RESP_CHECK_SEQUENCE] = uc_check_sequence,
	[RESP_EXECUTE] = uc_execute,
	[RESP_ADVANCE] = uc_advance,
	[RESP_DROP_MESSAGE] = uc_drop_message,
};

void srn_resp_uc(struct srn_respctx *rc, const struct srn_pkt *p)
{
	struct resp_run r = { .rc = rc, .p = p };
	run(uc_steps, &r, RESP_CHECK_STATE);
}
