/*
 * event.c - what the core has to tell its driver besides packets: async
 * events (QP/SRQ/CQ errors, SRQ limit, SQ drained, last WQE reached) in a
 * ring, and the list of armed CQs that got a completion. The driver drains
 * both after every call (srn_dev_next_async_event, srn_dev_next_cq_event).
 */
#include "core_int.h"

void srn_dev_async(struct srn_dev *dev, enum srn_async_type type, struct srn_qp *qp,
		   struct srn_srq *srq, struct srn_cq *cq)
{
	if (dev->aev_n == dev->aev_cap) {
		/* full: drop the oldest (the runtime drains it after every call) */
		dev->aev_head = (dev->aev_head + 1) % dev->aev_cap;
		dev->aev_n--;
	}
	struct srn_async_event *ev = &dev->aev[(dev->aev_head + dev->aev_n) % dev->aev_cap];
	ev->type = type;
	ev->qp = qp;
	ev->srq = srq;
	ev->cq = cq;
	dev->aev_n++;
}

int srn_dev_next_async_event(struct srn_dev *dev, struct srn_async_event *ev)
{
	if (dev->aev_n == 0)
		return SRN_EAGAIN;
	*ev = dev->aev[dev->aev_head];
	dev->aev_head = (dev->aev_head + 1) % dev->aev_cap;
	dev->aev_n--;
	return SRN_OK;
}

static bool names(const struct srn_async_event *ev, const void *obj)
{
	return (const void *)ev->qp == obj || (const void *)ev->srq == obj ||
	       (const void *)ev->cq == obj;
}

/* drop events that name an object being destroyed, keeping the order */
static void aev_forget(struct srn_dev *dev, const void *obj)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < dev->aev_n; i++) {
		struct srn_async_event e = dev->aev[(dev->aev_head + i) % dev->aev_cap];
		if (names(&e, obj))
			continue;
		dev->aev[(dev->aev_head + w) % dev->aev_cap] = e;
		w++;
	}
	dev->aev_n = w;
}

void srn_dev_forget_obj(struct srn_dev *dev, const void *obj)
{
	aev_forget(dev, obj);
	struct srn_cq **pp = &dev->cqev_head;
	dev->cqev_tail = NULL;
	while (*pp) {
		if ((void *)*pp == obj) {
			(*pp)->in_ev = false;
			*pp = (*pp)->ev_next;
			continue;
		}
		dev->cqev_tail = *pp;
		pp = &(*pp)->ev_next;
	}
}

void srn_cq_notify(struct srn_cq *cq)
{
	struct srn_dev *dev = cq->dev;
	if (cq->in_ev)
		return;
	cq->in_ev = true;
	cq->ev_next = NULL;
	if (dev->cqev_tail)
		dev->cqev_tail->ev_next = cq;
	else
		dev->cqev_head = cq;
	dev->cqev_tail = cq;
}

struct srn_cq *srn_dev_next_cq_event(struct srn_dev *dev)
{
	struct srn_cq *cq = dev->cqev_head;
	if (!cq)
		return NULL;
	dev->cqev_head = cq->ev_next;
	if (!dev->cqev_head)
		dev->cqev_tail = NULL;
	cq->in_ev = false;
	cq->ev_next = NULL;
	return cq;
}
