/*
 * cq.c - completion queues: a ring of CQEs sized at creation, arm/notify.
 */
#include "core_int.h"

int srn_cq_new(struct srn_dev *dev, uint32_t ncqe, void *user, struct srn_cq **out)
{
	if (!dev || !out || ncqe == 0)
		return SRN_EINVAL;
	if (ncqe > dev->cfg.max_cqe)
		return SRN_ERANGE;
	struct srn_cq *cq = srn_mem_calloc(dev, 1, sizeof(*cq));
	if (!cq)
		return SRN_ENOMEM;
	cq->ring = srn_mem_calloc(dev, ncqe, sizeof(*cq->ring));
	if (!cq->ring) {
		srn_mem_free(dev, cq);
		return SRN_ENOMEM;
	}
	cq->dev = dev;
	cq->cap = ncqe;
	cq->user = user;
	srn_list_add_tail(&dev->cqs, &cq->node);
	*out = cq;
	return SRN_OK;
}

int srn_cq_del(struct srn_cq *cq)
{
	if (!cq)
		return SRN_EINVAL;
	if (cq->refcnt)
		return SRN_EBUSY;
	struct srn_dev *dev = cq->dev;
	srn_dev_forget_obj(dev, cq);
	srn_list_del(&cq->node);
	srn_mem_free(dev, cq->ring);
	srn_mem_free(dev, cq);
	return SRN_OK;
}

void srn_cq_push(struct srn_cq *cq, const struct srn_cqe *cqe, bool solicited)
{
	struct srn_dev *dev = cq->dev;
	if (cq->n == cq->cap) {
		srn_ctr_inc(dev, SRN_CTR_DROP_CQ_OVERFLOW);
		if (!cq->overflowed) {
			cq->overflowed = true;
			srn_dev_async(dev, SRN_EV_CQ_ERR, NULL, NULL, cq);
		}
		return;
	}
	struct srn_cqe *e = &cq->ring[(cq->head + cq->n) % cq->cap];
	*e = *cqe;
	e->ts = dev->now;               /* completion timestamp (device clock) */
	cq->n++;
	srn_ctr_inc(dev, SRN_CTR_COMPLETIONS);
	if (cqe->status != SRN_WC_SUCCESS) {
		srn_ctr_inc(dev, SRN_CTR_COMPLETION_ERRORS);
		solicited = true;   /* error completions wake solicited-only waiters too */
	}
	if (cq->armed && (!cq->armed_sol || solicited)) {
		cq->armed = false;
		srn_cq_notify(cq);
	}
}

int srn_cq_poll(struct srn_cq *cq, struct srn_cqe *out, int n)
{
	int got = 0;
	while (got < n && cq->n) {
		out[got++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->n--;
	}
	if (got)
		cq->overflowed = false;
	return got;
}

void srn_cq_arm(struct srn_cq *cq, bool solicited_only)
{
	/* a second arm without solicited_only widens the request */
	if (cq->armed && !solicited_only)
		cq->armed_sol = false;
	else if (!cq->armed)
		cq->armed_sol = solicited_only;
	cq->armed = true;
}

int srn_cq_resize(struct srn_cq *cq, uint32_t ncqe)
{
	struct srn_dev *dev = cq->dev;
	if (ncqe == 0 || ncqe < cq->n)
		return SRN_EINVAL;
	if (ncqe > dev->cfg.max_cqe)
		return SRN_ERANGE;
	struct srn_cqe *ring = srn_mem_calloc(dev, ncqe, sizeof(*ring));
	if (!ring)
		return SRN_ENOMEM;
	for (uint32_t i = 0; i < cq->n; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->cap];
	srn_mem_free(dev, cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->cap = ncqe;
	return SRN_OK;
}

uint32_t srn_cq_purge_qp(struct srn_cq *cq, uint32_t qpn)
{
	uint32_t kept = 0, i;
	if (!cq)
		return 0;
	/* compact in place: entry i moves to slot kept (kept <= i) */
	for (i = 0; i < cq->n; i++) {
		const struct srn_cqe *c = &cq->ring[(cq->head + i) % cq->cap];
		if (c->qp_num == qpn)
			continue;
		if (kept != i)
			cq->ring[(cq->head + kept) % cq->cap] = *c;
		kept++;
	}
	uint32_t removed = cq->n - kept;
	cq->n = kept;
	return removed;
}

uint32_t srn_cq_capacity(const struct srn_cq *cq) { return cq->cap; }
void *srn_cq_user(const struct srn_cq *cq) { return cq->user; }
