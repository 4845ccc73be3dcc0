/*
 * mw.c - memory windows (IBA 10.6.7; srn_core.h "Memory windows").
 *
 * A window lives in the protection table beside the MRs: slot s of the
 * window table answers the key index max_mr + s, so one rkey names either an
 * MR or a window. A window's rkey is (max_mr + s) << 8 | an 8-bit key; the
 * key changes with every bind (the caller chooses it), and the slot's
 * allocation counter seeds it so a deallocated window's rkey does not name
 * its successor. The handle (the first rkey of the window) never changes and
 * names the window in BIND_MW work requests.
 *
 * Hooks (mw.c calls none of these files, so it sits below them):
 *   req.c   srn_mw_req_fenced (req_check), srn_mw_req_exec (srn_req_emit)
 *   comp.c  srn_mw_comp_head (the completer's DONE step)
 *   exec.c, resp.c, respout.c  srn_rkey_xlate (every rkey translation),
 *           srn_mw_remote_inv_ok / srn_mw_remote_inv (SEND_WITH_INV, exec.c)
 *   qp.c    srn_mw_qp_gone (srn_qp_del)     dev.c  srn_mw_dev_del
 *
 * Rules (C10-7x, o10-36/37 of IBA; the verbs man pages ibv_alloc_mw,
 * ibv_bind_mw, ibv_post_send):
 *   bind, both types: the MR exists, is in the window's PD and was
 *     registered with MW_BIND; a window granting REMOTE_WRITE or
 *     REMOTE_ATOMIC needs LOCAL_WRITE on the MR; [addr, addr+length) lies in
 *     the MR; the QP is in the window's PD; the new rkey keeps the index.
 *   type 1: never zero based; length 0 (no MR) unbinds.
 *   type 2: only a free window is bound (invalidate first); length > 0;
 *     usable only through the QP that bound it.
 *   invalidate: type 2 only, exact rkey, window valid; LOCAL_INV through a
 *     QP of the window's PD, SEND_WITH_INV only on the QP it is bound to.
 *     An MR's rkey cannot be invalidated (memory of ibv_reg_mr).
 */
#include "core_int.h"

#define SRN_MW_DEFAULT 4096u

enum srn_mw_state { SRN_MW_FREE, SRN_MW_VALID };

struct srn_mw {
	struct srn_dev *dev;
	uint32_t slot, handle, rkey, pdn;
	uint8_t  type, state;
	uint32_t access;               /* REMOTE_* | ZERO_BASED */
	struct srn_mr *mr;             /* bound MR (NULL: none) */
	uint64_t addr, length;         /* the window: an iova range of mr */
	uint32_t qpn;                  /* type 2: the QP it was bound through */
};

struct srn_mwt {
	struct srn_mw **t;
	uint8_t *gen;                  /* per slot: allocations so far */
	uint32_t n;                    /* slots */
	uint32_t bound2;               /* valid type 2 windows (srn_mw_qp_gone) */
};

#define MW_ACCESS_OK (SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		      SRN_ACCESS_REMOTE_ATOMIC | SRN_ACCESS_ZERO_BASED)

static struct srn_mwt *mwt_get(struct srn_dev *dev)
{
	if (dev->mwt)
		return dev->mwt;
	uint32_t n = dev->cfg.max_mw ? dev->cfg.max_mw : SRN_MW_DEFAULT;
	if ((uint64_t)dev->cfg.max_mr + n > (1u << 24))
		n = (1u << 24) - dev->cfg.max_mr;
	if (n == 0)
		return NULL;
	struct srn_mwt *m = srn_mem_calloc(dev, 1, sizeof(*m));
	if (!m)
		return NULL;
	m->t = srn_mem_calloc(dev, n, sizeof(*m->t));
	m->gen = srn_mem_calloc(dev, n, sizeof(*m->gen));
	if (!m->t || !m->gen) {
		srn_mem_free(dev, m->t);
		srn_mem_free(dev, m->gen);
		srn_mem_free(dev, m);
		return NULL;
	}
	m->n = n;
	dev->mwt = m;
	return m;
}

/* the window whose index bits are key's (NULL: no window there) */
static struct srn_mw *mw_at(const struct srn_dev *dev, uint32_t key)
{
	uint32_t idx = key >> 8;
	if (!dev->mwt || idx < dev->cfg.max_mr || idx - dev->cfg.max_mr >= dev->mwt->n)
		return NULL;
	return dev->mwt->t[idx - dev->cfg.max_mr];
}

static bool key_is_mw(const struct srn_dev *dev, uint32_t key)
{
	return (key >> 8) >= dev->cfg.max_mr;
}

int srn_mw_alloc(struct srn_dev *dev, uint32_t pdn, enum srn_mw_type type, struct srn_mw **out)
{
	if (!dev || !out || pdn == 0 || (type != SRN_MW_TYPE_1 && type != SRN_MW_TYPE_2))
		return SRN_EINVAL;
	struct srn_mwt *m = mwt_get(dev);
	if (!m)
		return SRN_ENOMEM;
	uint32_t s;
	for (s = 0; s < m->n; s++)
		if (!m->t[s])
			break;
	if (s == m->n)
		return SRN_ENOMEM;
	struct srn_mw *mw = srn_mem_calloc(dev, 1, sizeof(*mw));
	if (!mw)
		return SRN_ENOMEM;
	mw->dev = dev;
	mw->slot = s;
	mw->pdn = pdn;
	mw->type = (uint8_t)type;
	mw->handle = (dev->cfg.max_mr + s) << 8 | m->gen[s]++;
	mw->rkey = mw->handle;
	/* a type 1 window is valid from the start (with nothing in it) */
	mw->state = type == SRN_MW_TYPE_1 ? SRN_MW_VALID : SRN_MW_FREE;
	m->t[s] = mw;
	*out = mw;
	return SRN_OK;
}

/* drop the binding: no MR, no range, no access */
static void mw_unbind(struct srn_mw *mw)
{
	if (mw->mr) {
		mw->mr->n_mw--;
		mw->mr = NULL;
	}
	if (mw->type == SRN_MW_TYPE_2 && mw->state == SRN_MW_VALID)
		mw->dev->mwt->bound2--;
	mw->addr = mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
	if (mw->type == SRN_MW_TYPE_2)
		mw->state = SRN_MW_FREE;
}

int srn_mw_dealloc(struct srn_dev *dev, struct srn_mw *mw)
{
	if (!dev || !mw || mw->dev != dev || !dev->mwt || mw->slot >= dev->mwt->n ||
	    dev->mwt->t[mw->slot] != mw)
		return SRN_EINVAL;
	mw_unbind(mw);
	dev->mwt->t[mw->slot] = NULL;
	srn_mem_free(dev, mw);
	return SRN_OK;
}

void srn_mw_info(const struct srn_mw *mw, struct srn_mw_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = mw->handle;
	info->rkey = mw->rkey;
	info->pdn = mw->pdn;
	info->type = mw->type;
	info->access = mw->access;
	info->bound = mw->state == SRN_MW_VALID && mw->length;
	info->addr = mw->addr;
	info->length = mw->length;
}

/* ------------------------------------------------------------------------ */
/* bind and local invalidate, executed by the requester in SQ order */

static struct srn_mw *mw_by_handle(struct srn_dev *dev, uint32_t handle)
{
	struct srn_mw *mw = mw_at(dev, handle);
	return mw && mw->handle == handle ? mw : NULL;
}

/* 0, or SRN_EINVAL if the bind breaks a rule (nothing changed) */
static int mw_bind(struct srn_qp *qp, const struct srn_send_wr *wr)
{
	struct srn_dev *dev = qp->dev;
	struct srn_mw *mw = mw_by_handle(dev, wr->bind.mw_handle);
	uint32_t acc = wr->bind.access;
	if (!mw || (wr->bind.rkey >> 8) != (mw->rkey >> 8))
		return SRN_EINVAL;
	if (acc & ~(uint32_t)MW_ACCESS_OK)
		return SRN_EINVAL;
	if (mw->pdn != qp->init.pdn)                      /* C10-72 */
		return SRN_EINVAL;
	struct srn_mr *mr = NULL;
	if (wr->bind.length) {
		mr = srn_mr_lookup(dev, wr->bind.mr_lkey);
		if (!mr || mr->pdn != mw->pdn)
			return SRN_EINVAL;
	}
	if (mw->type == SRN_MW_TYPE_1) {
		if (acc & SRN_ACCESS_ZERO_BASED)          /* o10-36.2.2 */
			return SRN_EINVAL;
	} else {
		if (mw->state != SRN_MW_FREE || !mr)      /* o10-37.2.30, .40 */
			return SRN_EINVAL;
	}
	if (mr) {
		if (!(mr->access & SRN_ACCESS_MW_BIND))   /* C10-73 */
			return SRN_EINVAL;
		if ((acc & (SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & SRN_ACCESS_LOCAL_WRITE)) /* C10-74 */
			return SRN_EINVAL;
		uint64_t a = wr->bind.addr, l = wr->bind.length;
		if (a < mr->iova || l > mr->length || a - mr->iova > mr->length - l) /* C10-75 */
			return SRN_EINVAL;
	}
	bool was_valid2 = mw->type == SRN_MW_TYPE_2 && mw->state == SRN_MW_VALID;
	if (mw->mr)
		mw->mr->n_mw--;
	mw->mr = mr;
	if (mr)
		mr->n_mw++;
	mw->addr = mr ? wr->bind.addr : 0;
	mw->length = mr ? wr->bind.length : 0;
	mw->access = mr ? acc : 0;
	mw->rkey = (mw->rkey & ~0xffu) | (wr->bind.rkey & 0xffu);
	mw->state = SRN_MW_VALID;
	if (mw->type == SRN_MW_TYPE_2) {
		mw->qpn = qp->qpn;
		if (!was_valid2)
			dev->mwt->bound2++;
	}
	return SRN_OK;
}

/* type 2, exact rkey, valid, same PD; remote: only through the QP it is
 * bound to */
static struct srn_mw *mw_invalidatable(struct srn_qp *qp, uint32_t rkey, bool remote)
{
	struct srn_dev *dev = qp->dev;
	if (!key_is_mw(dev, rkey))
		return NULL;             /* ibv_reg_mr memory is not invalidatable */
	struct srn_mw *mw = mw_at(dev, rkey);
	if (!mw || mw->rkey != rkey || mw->type != SRN_MW_TYPE_2 || mw->state != SRN_MW_VALID)
		return NULL;
	if (mw->pdn != qp->init.pdn)
		return NULL;
	if (remote && mw->qpn != qp->qpn)
		return NULL;
	return mw;
}

bool srn_mw_req_fenced(const struct srn_qp *qp, const struct srn_swqe *w)
{
	return (w->wr.send_flags & SRN_SEND_FENCE) && w->state == SRN_WQE_POSTED &&
	       qp->sq.head != qp->req.cur;
}

static void complete_local(struct srn_qp *qp, struct srn_swqe *w)
{
	w->state = SRN_WQE_DONE;
	srn_cqe_send(qp, w, SRN_WC_SUCCESS, false);
	qp->sq.head++;
	qp->sq.n--;
}

bool srn_mw_req_exec(struct srn_qp *qp, struct srn_swqe *w)
{
	if (w->state == SRN_WQE_POSTED) {
		int rc = SRN_EINVAL;
		if (w->wr.opcode == SRN_WR_BIND_MW) {
			rc = mw_bind(qp, &w->wr);
		} else {
			struct srn_mw *mw = mw_invalidatable(qp, w->wr.invalidate_rkey, false);
			if (mw) {
				mw_unbind(mw);
				rc = SRN_OK;
			}
		}
		if (rc) {
			/* IBA: a Memory Management Operation Error; in order, the
			 * QP to ERR when the earlier WQEs have completed */
			w->err_status = SRN_WC_MW_BIND_ERR;
			if (qp->sq.head == qp->req.cur)
				srn_qp_fail(qp, SRN_WC_MW_BIND_ERR);
			return false;
		}
		/* no PSN: it sits between the PSNs of its neighbours */
		w->npsn = 0;
		w->first_psn = qp->req.psn;
		w->last_psn = srn_psn_add(qp->req.psn, SRN_PSN_MASK);
		w->state = SRN_WQE_SENT;
	}
	/* executed now, or before a retry rewound the cursor: step over it */
	bool at_head = qp->sq.head == qp->req.cur;
	qp->req.cur++;
	if (at_head && w->state == SRN_WQE_SENT)
		complete_local(qp, w);
	return true;
}

void srn_mw_comp_head(struct srn_qp *qp)
{
	while (qp->sq.head != qp->sq.tail && qp->sq.head != qp->req.cur) {
		struct srn_swqe *w = srn_sq_at(&qp->sq, qp->sq.head);
		if (!srn_wqe_is_local(w) || w->state != SRN_WQE_SENT)
			return;
		complete_local(qp, w);
	}
}

/* ------------------------------------------------------------------------ */
/* the responder */

uint8_t *srn_rkey_xlate(struct srn_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
			uint32_t access)
{
	struct srn_dev *dev = qp->dev;
	if (!key_is_mw(dev, rkey))
		return srn_mr_xlate(dev, rkey, qp->init.pdn, va, len, access);
	const struct srn_mw *mw = mw_at(dev, rkey);
	if (!mw || mw->rkey != rkey || mw->state != SRN_MW_VALID || !mw->mr)
		return NULL;
	if (mw->pdn != qp->init.pdn)
		return NULL;
	if (mw->type == SRN_MW_TYPE_2 && mw->qpn != qp->qpn)  /* bound to one QP */
		return NULL;
	if ((mw->access & access) != access)
		return NULL;
	uint64_t off;                                    /* offset in the window */
	if (mw->access & SRN_ACCESS_ZERO_BASED) {
		off = va;
	} else {
		if (va < mw->addr)
			return NULL;
		off = va - mw->addr;
	}
	if (len > mw->length || off > mw->length - len)
		return NULL;
	/* the window lies in its MR (checked at bind; the MR cannot change
	 * while it is bound) */
	const struct srn_mr *mr = mw->mr;
	return mr->addr + (mw->addr - mr->iova) + off;
}

bool srn_mw_remote_inv_ok(struct srn_qp *qp, uint32_t rkey)
{
	return mw_invalidatable(qp, rkey, true) != NULL;
}

void srn_mw_remote_inv(struct srn_qp *qp, uint32_t rkey)
{
	struct srn_mw *mw = mw_invalidatable(qp, rkey, true);
	if (mw)
		mw_unbind(mw);
}

/* ------------------------------------------------------------------------ */
/* teardown */

void srn_mw_qp_gone(struct srn_qp *qp)
{
	struct srn_mwt *m = qp->dev->mwt;
	if (!m || !m->bound2)
		return;
	/* its QPN could name a new QP after the time-wait: no window may
	 * stay bound to it */
	for (uint32_t s = 0; s < m->n && m->bound2; s++) {
		struct srn_mw *mw = m->t[s];
		if (mw && mw->type == SRN_MW_TYPE_2 && mw->state == SRN_MW_VALID &&
		    mw->qpn == qp->qpn)
			mw_unbind(mw);
	}
}

void srn_mw_dev_del(struct srn_dev *dev)
{
	struct srn_mwt *m = dev->mwt;
	if (!m)
		return;
	for (uint32_t s = 0; s < m->n; s++)
		if (m->t[s])
			srn_mw_dealloc(dev, m->t[s]);
	srn_mem_free(dev, m->t);
	srn_mem_free(dev, m->gen);
	srn_mem_free(dev, m);
	dev->mwt = NULL;
}
