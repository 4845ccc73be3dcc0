/*
 * srq.c - receive queue rings (shared by a QP's own RQ and SRQs) and SRQs
 * with the limit event.
 */
#include "core_int.h"

int srn_rq_alloc(struct srn_dev *dev, struct srn_rq *rq, uint32_t cap, uint32_t max_sge)
{
	memset(rq, 0, sizeof(*rq));
	if (max_sge == 0)
		max_sge = 1;
	rq->ring = srn_mem_calloc(dev, cap, sizeof(*rq->ring));
	rq->sges = srn_mem_calloc(dev, (size_t)(cap ? cap : 1) * max_sge, sizeof(*rq->sges));
	if (!rq->ring || !rq->sges) {
		srn_rq_free(dev, rq);
		return SRN_ENOMEM;
	}
	rq->cap = cap;
	rq->max_sge = max_sge;
	for (uint32_t i = 0; i < cap; i++)
		rq->ring[i].sge = &rq->sges[(size_t)i * max_sge];
	return SRN_OK;
}

void srn_rq_free(struct srn_dev *dev, struct srn_rq *rq)
{
	srn_mem_free(dev, rq->ring);
	srn_mem_free(dev, rq->sges);
	rq->ring = NULL;
	rq->sges = NULL;
	rq->cap = rq->n = 0;
}

int srn_rq_post(struct srn_rq *rq, const struct srn_recv_wr *wr)
{
	if (wr->num_sge > rq->max_sge || (wr->num_sge && !wr->sg_list))
		return SRN_EINVAL;
	if (rq->n == rq->cap)
		return SRN_ENOMEM;
	struct srn_rwqe *w = &rq->ring[(rq->head + rq->n) % rq->cap];
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	for (uint32_t i = 0; i < wr->num_sge; i++)
		w->sge[i] = wr->sg_list[i];
	rq->n++;
	return SRN_OK;
}

bool srn_rq_pop(struct srn_rq *rq, struct srn_rwqe *out)
{
	if (rq->n == 0)
		return false;
	struct srn_rwqe *w = &rq->ring[rq->head];
	out->wr_id = w->wr_id;
	out->num_sge = w->num_sge;
	for (uint32_t i = 0; i < w->num_sge; i++)
		out->sge[i] = w->sge[i];
	rq->head = (rq->head + 1) % rq->cap;
	rq->n--;
	return true;
}

int srn_srq_new(struct srn_dev *dev, const struct srn_srq_init *init, struct srn_srq **out)
{
	if (!dev || !init || !out || init->max_wr == 0)
		return SRN_EINVAL;
	if (init->max_wr > dev->cfg.max_qp_wr || init->max_sge > dev->cfg.max_sge ||
	    init->srq_limit > init->max_wr)
		return SRN_ERANGE;
	struct srn_srq *srq = srn_mem_calloc(dev, 1, sizeof(*srq));
	if (!srq)
		return SRN_ENOMEM;
	if (srn_rq_alloc(dev, &srq->rq, init->max_wr, init->max_sge) != 0) {
		srn_mem_free(dev, srq);
		return SRN_ENOMEM;
	}
	srq->dev = dev;
	srq->pdn = init->pdn;
	srq->max_wr = init->max_wr;
	srq->max_sge = init->max_sge ? init->max_sge : 1;
	srq->limit = init->srq_limit;
	srq->user = init->user;
	srn_list_add_tail(&dev->srqs, &srq->node);
	*out = srq;
	return SRN_OK;
}

int srn_srq_del(struct srn_srq *srq)
{
	if (!srq)
		return SRN_EINVAL;
	if (srq->refcnt)
		return SRN_EBUSY;
	struct srn_dev *dev = srq->dev;
	srn_dev_forget_obj(dev, srq);
	srn_list_del(&srq->node);
	srn_rq_free(dev, &srq->rq);
	srn_mem_free(dev, srq);
	return SRN_OK;
}

int srn_srq_post(struct srn_srq *srq, const struct srn_recv_wr *wr)
{
	if (!srq || !wr)
		return SRN_EINVAL;
	return srn_rq_post(&srq->rq, wr);
}

int srn_srq_set_limit(struct srn_srq *srq, uint32_t limit)
{
	if (limit > srq->max_wr)
		return SRN_ERANGE;
	srq->limit = limit;
	return SRN_OK;
}

void srn_srq_query(const struct srn_srq *srq, uint32_t *max_wr, uint32_t *max_sge, uint32_t *limit)
{
	if (max_wr)
		*max_wr = srq->max_wr;
	if (max_sge)
		*max_sge = srq->max_sge;
	if (limit)
		*limit = srq->limit;
}

void *srn_srq_user(const struct srn_srq *srq) { return srq->user; }

/* take one WQE; fires SRQ_LIMIT_REACHED once when fewer than limit remain */
bool srn_srq_take(struct srn_srq *srq, struct srn_rwqe *out)
{
	if (!srn_rq_pop(&srq->rq, out))
		return false;
	if (srq->limit && srq->rq.n < srq->limit) {
		srq->limit = 0;   /* disarmed until set again */
		srn_dev_async(srq->dev, SRN_EV_SRQ_LIMIT_REACHED, NULL, srq, NULL);
	}
	return true;
}
