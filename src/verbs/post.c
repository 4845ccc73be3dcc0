/*
 * post.c - ibv_post_send / ibv_post_recv / ibv_post_srq_recv: each
 * ibv_*_wr is converted on the stack into the core's srn_*_wr (SGE lists
 * are passed through as they are: struct ibv_sge and struct srn_sge have the
 * same layout) and queued by the core under the device lock. Nothing is
 * allocated. On the first failing WR, *bad_wr points at it and its errno is
 * returned (EINVAL: bad opcode for the QP type, too many SGEs, inline too
 * large, wrong QP state, a bad window bind (mw.c); ENOMEM: queue full), as
 * rdma-core's providers do.
 * srn_rt_unlock_doorbell() then puts the packets on the wire before the verb
 * returns - unless the application is busy-polling its CQs (a poll within
 * the last 15 us): then a partial batch waits for that next poll, so a burst
 * of posts leaves in one sendmmsg (the progress thread sends it if the poll
 * does not come).
 */
#include <string.h>
#include <assert.h>

#include "srn_verbs.h"

static_assert(sizeof(struct ibv_sge) == sizeof(struct srn_sge), "sge layout");
static_assert(offsetof(struct ibv_sge, addr) == offsetof(struct srn_sge, addr), "sge.addr");
static_assert(offsetof(struct ibv_sge, length) == offsetof(struct srn_sge, length), "sge.length");
static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct srn_sge, lkey), "sge.lkey");

static bool opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:        /* memory windows (mw.c) */
	case IBV_WR_BIND_MW:
		return t == IBV_QPT_RC || t == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return t == IBV_QPT_RC;
	default:   /* TSO, DRIVER1, ATOMIC_WRITE: not offered */
		return false;
	}
}

int srn_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct srn_vqp *q = to_sqp(qp);
	struct srn_rt_dev *rd = q->ctx->rd;
	srn_ts now = srn_rt_now();
	int err = 0;

	srn_rt_lock(rd);
	for (; wr; wr = wr->next) {
		struct srn_send_wr s;
		int rc;

		if (!opcode_ok(qp->qp_type, wr->opcode) || wr->num_sge < 0 ||
		    (qp->qp_type == IBV_QPT_UD && !wr->wr.ud.ah)) {
			err = EINVAL;
			break;
		}
		memset(&s, 0, sizeof(s));
		s.wr_id = wr->wr_id;
		s.opcode = (uint8_t)wr->opcode;
		s.send_flags = wr->send_flags;
		s.sg_list = (const struct srn_sge *)wr->sg_list;
		s.num_sge = (uint32_t)wr->num_sge;
		switch (wr->opcode) {
		case IBV_WR_SEND_WITH_IMM:
			s.imm_be = wr->imm_data;
			break;
		case IBV_WR_SEND_WITH_INV:
		case IBV_WR_LOCAL_INV:
			s.invalidate_rkey = wr->invalidate_rkey;
			break;
		case IBV_WR_BIND_MW:
			rc = srn_verbs_mw_bind_wr(qp, wr->bind_mw.mw, wr->bind_mw.rkey,
						  &wr->bind_mw.bind_info, &s);
			if (rc) {
				err = rc;
				goto out;
			}
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			s.imm_be = wr->imm_data;
			/* fall through */
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_READ:
			s.remote_addr = wr->wr.rdma.remote_addr;
			s.rkey = wr->wr.rdma.rkey;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			s.remote_addr = wr->wr.atomic.remote_addr;
			s.rkey = wr->wr.atomic.rkey;
			s.compare_add = wr->wr.atomic.compare_add;
			s.swap = wr->wr.atomic.swap;
			break;
		default:
			break;
		}
		if (qp->qp_type == IBV_QPT_UD) {
			s.ah = &to_sah(wr->wr.ud.ah)->attr;
			s.remote_qpn = wr->wr.ud.remote_qpn;
			s.remote_qkey = wr->wr.ud.remote_qkey;
		}
		rc = srn_qp_post_send(q->core, &s, now);
		if (rc) {
			err = srn_verbs_errno(rc);
			break;
		}
	}
out:
	srn_rt_unlock_doorbell(rd);
	if (err)
		*bad = wr;
	return err;
}

/* Post a chain of receives to a QP's receive queue (qp) or an SRQ (srq),
 * under the device lock; stops at the first bad one (*bad). */
static int post_recv_chain(struct srn_rt_dev *rd, struct srn_qp *qp, struct srn_srq *srq,
			   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int err = 0;

	srn_rt_lock(rd);
	for (; wr; wr = wr->next) {
		struct srn_recv_wr r;
		int rc;

		if (wr->num_sge < 0) {
			err = EINVAL;
			break;
		}
		r.wr_id = wr->wr_id;
		r.sg_list = (const struct srn_sge *)wr->sg_list;
		r.num_sge = (uint32_t)wr->num_sge;
		rc = qp ? srn_qp_post_recv(qp, &r) : srn_srq_post(srq, &r);
		if (rc) {
			err = srn_verbs_errno(rc);
			break;
		}
	}
	srn_rt_unlock(rd);
	if (err)
		*bad = wr;
	return err;
}

int srn_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct srn_vqp *q = to_sqp(qp);

	if (q->srq) {          /* receives go to the SRQ */
		*bad = wr;
		return EINVAL;
	}
	return post_recv_chain(q->ctx->rd, q->core, NULL, wr, bad);
}

int srn_verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct srn_vsrq *s = to_ssrq(srq);

	return post_recv_chain(s->ctx->rd, NULL, s->core, wr, bad);
}
