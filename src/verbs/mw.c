/*
 * mw.c - memory windows: ibv_alloc_mw / ibv_dealloc_mw / ibv_bind_mw (the
 * context ops behind rdma-core's inline wrappers), and the conversion of a
 * type 2 bind (IBV_WR_BIND_MW, ibv_wr_bind_mw) into a core WR. The rules
 * themselves (which bind, which invalidation, which remote access) are the
 * core's (src/core/mw.c); a bind that breaks one is a completion with
 * IBV_WC_MW_BIND_ERR, as with a hardware RNIC.
 *
 * Errnos at the verbs edge, as rdma-core's providers:
 *   ibv_alloc_mw: type other than 1 or 2 -> EINVAL; table full -> ENOMEM.
 *   ibv_bind_mw (after the inline checks of verbs.h: not type 1 -> EINVAL,
 *     addr/length without MR -> EINVAL, MR of another PD -> EPERM):
 *     window, MR or QP of another context, QP not RC/UC, ZERO_BASED or
 *     unknown access flags -> EINVAL; then the errnos of ibv_post_send.
 *     On success mw->rkey is the new rkey (ibv_inc_rkey of the old one);
 *     it takes effect when the bind executes, in SQ order.
 *   IBV_WR_BIND_MW: a type 1 window (use ibv_bind_mw), no window, window
 *     or MR of another context, unknown access flags -> EINVAL. mw->rkey
 *     is left to the caller, as rxe and mlx5 leave it.
 */
#include <stdlib.h>
#include <string.h>

#include "srn_verbs.h"

#define MW_ACCESS_OK (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)

struct ibv_mw *srn_verbs_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct srn_context *sctx = to_sctx(pd->context);
	struct srn_vpd *vpd = to_spd(pd);
	struct srn_mw_info info;
	struct srn_vmw *m;
	int rc;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	srn_rt_lock(sctx->rd);
	rc = srn_mw_alloc(sctx->core, vpd->pdn, (enum srn_mw_type)type, &m->core);
	if (!rc)
		srn_mw_info(m->core, &info);
	srn_rt_unlock(sctx->rd);
	if (rc) {
		free(m);
		errno = srn_verbs_errno(rc);
		return NULL;
	}
	m->pd = vpd;
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = info.rkey;
	m->mw.handle = info.handle;
	m->mw.type = type;
	__atomic_add_fetch(&vpd->users, 1, __ATOMIC_ACQ_REL);
	return &m->mw;
}

int srn_verbs_dealloc_mw(struct ibv_mw *mw)
{
	struct srn_context *sctx = to_sctx(mw->context);
	struct srn_vmw *m = to_smw(mw);
	int rc;

	srn_rt_lock(sctx->rd);
	rc = srn_mw_dealloc(sctx->core, m->core);
	srn_rt_unlock(sctx->rd);
	if (rc)
		return srn_verbs_errno(rc);
	__atomic_sub_fetch(&m->pd->users, 1, __ATOMIC_ACQ_REL);
	free(m);
	return 0;
}

/* the part both bind paths share: window, MR and access into s->bind */
static int fill_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *bi, struct srn_send_wr *s)
{
	struct srn_mw_info info;

	if (!mw || mw->context != qp->context)
		return EINVAL;
	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC)
		return EINVAL;
	if (bi->mw_access_flags & ~(unsigned int)MW_ACCESS_OK)
		return EINVAL;
	if (bi->mr && bi->mr->context != qp->context)
		return EINVAL;
	if (!bi->mr && (bi->addr || bi->length))
		return EINVAL;
	srn_mw_info(to_smw(mw)->core, &info);    /* the handle never changes */
	s->opcode = SRN_WR_BIND_MW;
	s->bind.mw_handle = info.handle;
	s->bind.rkey = rkey;
	s->bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
	s->bind.addr = bi->addr;
	s->bind.length = bi->length;
	s->bind.access = bi->mw_access_flags;
	return 0;
}

int srn_verbs_mw_bind_wr(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey,
			 const struct ibv_mw_bind_info *bi, struct srn_send_wr *s)
{
	if (mw && mw->type != IBV_MW_TYPE_2)
		return EINVAL;            /* type 1 windows bind with ibv_bind_mw */
	return fill_bind(qp, mw, rkey, bi, s);
}

int srn_verbs_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct srn_vqp *q = to_sqp(qp);
	struct srn_send_wr s;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int rc;

	if (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;            /* never for type 1 (o10-36.2.2) */
	memset(&s, 0, sizeof(s));
	rc = fill_bind(qp, mw, rkey, &mw_bind->bind_info, &s);
	if (rc)
		return rc;
	s.wr_id = mw_bind->wr_id;
	s.send_flags = mw_bind->send_flags;
	srn_rt_lock(q->ctx->rd);
	rc = srn_qp_post_send(q->core, &s, srn_rt_now());
	srn_rt_unlock_doorbell(q->ctx->rd);
	if (rc)
		return srn_verbs_errno(rc);
	/* the caller may send the new rkey on this QP right away (it leaves
	 * after the bind); a failed bind completes with MW_BIND_ERR and the
	 * caller restores the old rkey (ibv_bind_mw(3)) */
	mw->rkey = rkey;
	return 0;
}
