/*
 * rspq.c - a responder's queue of responses waiting for the wire: ACK,
 * NAK, READ response and atomic ACK entries in PSN order. The packets are
 * built lazily when the QP's turn comes (respout.c), so a READ of many
 * packets takes one entry.
 */
#include "core_int.h"

int srn_rspq_alloc(struct srn_dev *dev, struct srn_rspq *q, uint32_t cap)
{
	q->q = srn_mem_calloc(dev, cap, sizeof(*q->q));
	q->cap = q->q ? cap : 0;
	q->head = q->n = 0;
	return q->q ? SRN_OK : SRN_ENOMEM;
}

void srn_rspq_free(struct srn_dev *dev, struct srn_rspq *q)
{
	srn_mem_free(dev, q->q);
	q->q = NULL;
	q->cap = q->head = q->n = 0;
}

struct srn_rsp *srn_rspq_tail(struct srn_rspq *q)
{
	if (!q->n)
		return NULL;
	return &q->q[(q->head + q->n - 1) % q->cap];
}

struct srn_rsp *srn_rspq_push(struct srn_rspq *q, uint8_t type)
{
	if (q->n == q->cap)
		return NULL;
	struct srn_rsp *e = &q->q[(q->head + q->n) % q->cap];
	memset(e, 0, sizeof(*e));
	e->type = type;
	q->n++;
	return e;
}

void srn_rspq_pop(struct srn_rspq *q)
{
	q->head = (q->head + 1) % q->cap;
	q->n--;
}

bool srn_rspq_space(const struct srn_rspq *q, uint32_t n)
{
	return q->cap - q->n >= n;
}

void srn_rspq_purge_for_err(struct srn_rspq *q)
{
	for (uint32_t i = 0; i < q->n; i++) {
		struct srn_rsp *e = &q->q[(q->head + i) % q->cap];
		if (e->type != SRN_RSP_NAK)
			e->type = SRN_RSP_NONE;
	}
}

/* PSN-09: a duplicate READ with an earlier PSN preempts what is queued at or
 * after its PSN (the requester resends everything after it anyway) */
void srn_rspq_preempt_from(struct srn_rspq *q, uint32_t psn)
{
	for (uint32_t i = 0; i < q->n; i++) {
		struct srn_rsp *e = &q->q[(q->head + i) % q->cap];
		if (e->type == SRN_RSP_NAK || e->type == SRN_RSP_NONE)
			continue;
		if (!SRN_PSN_LT(e->psn, psn))
			e->type = SRN_RSP_NONE;
	}
}
