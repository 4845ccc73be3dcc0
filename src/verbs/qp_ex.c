/*
 * qp_ex.c - the "new post send" API of QPs created with send_ops_flags
 * (ibv_qp_to_qp_ex, ibv_wr_start ... ibv_wr_complete), memory window binds
 * (ibv_wr_bind_mw, type 2) and local invalidations (ibv_wr_local_inv). WRs are built into
 * buffers allocated when the QP was created (one slot per send WR, with room
 * for max_send_sge SGEs and max_inline_data bytes each) and handed to the
 * core in ibv_wr_complete under one device lock. An error while building
 * (too many WRs, SGEs, inline bytes) is reported by ibv_wr_complete and
 * nothing is posted; an error from the core (e.g. QP state) stops at that
 * WR, earlier WRs of the batch stay posted.
 */
#include <string.h>

#include "srn_verbs.h"

static struct srn_wrbuf *new_wr(struct ibv_qp_ex *qx, uint8_t opcode)
{
	struct srn_vqp *q = to_sqp_ex(qx);
	struct srn_wrbuf *b;

	if (q->wrb_err)
		return NULL;
	if (q->wrb_n >= q->cap_send_wr) {
		q->wrb_err = ENOMEM;
		return NULL;
	}
	b = &q->wrb[q->wrb_n++];
	memset(b, 0, sizeof(*b));
	b->wr.wr_id = qx->wr_id;
	b->wr.send_flags = qx->wr_flags;
	b->wr.opcode = opcode;
	b->wr.sg_list = &q->wrb_sge[(size_t)(b - q->wrb) * q->cap_send_sge];
	return b;
}

static struct srn_wrbuf *cur_wr(struct ibv_qp_ex *qx)
{
	struct srn_vqp *q = to_sqp_ex(qx);

	if (q->wrb_err || !q->wrb_n)
		return NULL;
	return &q->wrb[q->wrb_n - 1];
}

static void wr_start(struct ibv_qp_ex *qx)
{
	struct srn_vqp *q = to_sqp_ex(qx);

	q->wrb_n = 0;
	q->wrb_err = 0;
}

static void wr_abort(struct ibv_qp_ex *qx) { wr_start(qx); }

static int wr_complete(struct ibv_qp_ex *qx)
{
	struct srn_vqp *q = to_sqp_ex(qx);
	srn_ts now = srn_rt_now();
	int err = q->wrb_err;

	if (!err) {
		srn_rt_lock(q->ctx->rd);
		for (uint32_t i = 0; i < q->wrb_n; i++) {
			int rc = srn_qp_post_send(q->core, &q->wrb[i].wr, now);
			if (rc) {
				err = srn_verbs_errno(rc);
				break;
			}
		}
		srn_rt_unlock_doorbell(q->ctx->rd);
	}
	q->wrb_n = 0;
	q->wrb_err = 0;
	return err;
}

static bool op_allowed(struct ibv_qp_ex *qx, uint64_t flag)
{
	struct srn_vqp *q = to_sqp_ex(qx);

	if (!(q->send_ops_flags & flag)) {
		q->wrb_err = EINVAL;
		return false;
	}
	return true;
}

static void wr_send(struct ibv_qp_ex *qx)
{
	if (op_allowed(qx, IBV_QP_EX_WITH_SEND))
		new_wr(qx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	struct srn_wrbuf *b;

	if (op_allowed(qx, IBV_QP_EX_WITH_SEND_WITH_IMM) && (b = new_wr(qx, IBV_WR_SEND_WITH_IMM)))
		b->wr.imm_be = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qx, uint32_t rkey)
{
	struct srn_wrbuf *b;

	if (op_allowed(qx, IBV_QP_EX_WITH_SEND_WITH_INV) && (b = new_wr(qx, IBV_WR_SEND_WITH_INV)))
		b->wr.invalidate_rkey = rkey;
}

static void rdma(struct ibv_qp_ex *qx, uint64_t flag, uint8_t op, uint32_t rkey,
		 uint64_t addr, __be32 imm)
{
	struct srn_wrbuf *b;

	if (op_allowed(qx, flag) && (b = new_wr(qx, op))) {
		b->wr.rkey = rkey;
		b->wr.remote_addr = addr;
		b->wr.imm_be = imm;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{ rdma(qx, IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE, rkey, addr, 0); }
static void wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, __be32 imm)
{ rdma(qx, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm); }
static void wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{ rdma(qx, IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ, rkey, addr, 0); }

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	struct srn_wrbuf *b;

	if (op_allowed(qx, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP) &&
	    (b = new_wr(qx, IBV_WR_ATOMIC_CMP_AND_SWP))) {
		b->wr.rkey = rkey;
		b->wr.remote_addr = addr;
		b->wr.compare_add = compare;
		b->wr.swap = swap;
	}
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	struct srn_wrbuf *b;

	if (op_allowed(qx, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) &&
	    (b = new_wr(qx, IBV_WR_ATOMIC_FETCH_AND_ADD))) {
		b->wr.rkey = rkey;
		b->wr.remote_addr = addr;
		b->wr.compare_add = add;
	}
}

static void wr_local_inv(struct ibv_qp_ex *qx, uint32_t rkey)
{
	struct srn_wrbuf *b;

	if (op_allowed(qx, IBV_QP_EX_WITH_LOCAL_INV) && (b = new_wr(qx, IBV_WR_LOCAL_INV)))
		b->wr.invalidate_rkey = rkey;
}

static void wr_bind_mw(struct ibv_qp_ex *qx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *bi)
{
	struct srn_vqp *q = to_sqp_ex(qx);
	struct srn_wrbuf *b;
	int rc;

	if (!op_allowed(qx, IBV_QP_EX_WITH_BIND_MW) || !(b = new_wr(qx, IBV_WR_BIND_MW)))
		return;
	rc = srn_verbs_mw_bind_wr(&q->qp, mw, rkey, bi, &b->wr);
	if (rc)
		q->wrb_err = rc;
}

static void wr_set_ud_addr(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct srn_wrbuf *b = cur_wr(qx);

	if (!b)
		return;
	if (!ah) {
		to_sqp_ex(qx)->wrb_err = EINVAL;
		return;
	}
	b->ah = to_sah(ah)->attr;
	b->wr.ah = &b->ah;
	b->wr.remote_qpn = qpn;
	b->wr.remote_qkey = qkey;
}

static void wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct srn_vqp *q = to_sqp_ex(qx);
	struct srn_wrbuf *b = cur_wr(qx);
	struct srn_sge *sg;

	if (!b)
		return;
	if (!q->cap_send_sge) {
		q->wrb_err = EINVAL;
		return;
	}
	sg = (struct srn_sge *)b->wr.sg_list;
	sg[0].addr = addr;
	sg[0].length = length;
	sg[0].lkey = lkey;
	b->wr.num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_sge *list)
{
	struct srn_vqp *q = to_sqp_ex(qx);
	struct srn_wrbuf *b = cur_wr(qx);

	if (!b)
		return;
	if (n > q->cap_send_sge) {
		q->wrb_err = EINVAL;
		return;
	}
	memcpy((void *)b->wr.sg_list, list, n * sizeof(*list));
	b->wr.num_sge = (uint32_t)n;
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_data_buf *bufs)
{
	struct srn_vqp *q = to_sqp_ex(qx);
	struct srn_wrbuf *b = cur_wr(qx);
	size_t total = 0;
	uint8_t *dst;
	struct srn_sge *sg;

	if (!b)
		return;
	for (size_t i = 0; i < n; i++)
		total += bufs[i].length;
	if (total > q->cap_inline || !q->cap_send_sge) {
		q->wrb_err = EINVAL;
		return;
	}
	dst = q->wrb_inl + (size_t)(b - q->wrb) * q->cap_inline;
	total = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(dst + total, bufs[i].addr, bufs[i].length);
		total += bufs[i].length;
	}
	sg = (struct srn_sge *)b->wr.sg_list;
	sg[0].addr = (uintptr_t)dst;
	sg[0].length = (uint32_t)total;
	sg[0].lkey = 0;
	b->wr.num_sge = total ? 1 : 0;
	b->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t length)
{
	struct ibv_data_buf d = { .addr = addr, .length = length };

	wr_set_inline_data_list(qx, 1, &d);
}

void srn_verbs_qp_ex_init_ops(struct srn_vqp *q)
{
	struct ibv_qp_ex *qx = &q->qp_ex;

	qx->comp_mask = 0;
	qx->wr_start = wr_start;
	qx->wr_complete = wr_complete;
	qx->wr_abort = wr_abort;
	qx->wr_send = wr_send;
	qx->wr_send_imm = wr_send_imm;
	qx->wr_send_inv = wr_send_inv;
	qx->wr_rdma_write = wr_rdma_write;
	qx->wr_rdma_write_imm = wr_rdma_write_imm;
	qx->wr_rdma_read = wr_rdma_read;
	qx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qx->wr_local_inv = wr_local_inv;
	qx->wr_bind_mw = wr_bind_mw;
	qx->wr_set_ud_addr = wr_set_ud_addr;
	qx->wr_set_sge = wr_set_sge;
	qx->wr_set_sge_list = wr_set_sge_list;
	qx->wr_set_inline_data = wr_set_inline_data;
	qx->wr_set_inline_data_list = wr_set_inline_data_list;
	/* wr_send_tso, wr_set_xrc_srqn, wr_atomic_write: not offered
	 * (rejected at create_qp_ex) */
}
