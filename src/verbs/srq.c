/*
 * srq.c - shared receive queues: create, modify (IBV_SRQ_LIMIT arms the
 * limit event; IBV_SRQ_MAX_WR, i.e. resizing, is not supported by the core
 * and the device does not report IBV_DEVICE_SRQ_RESIZE -> EINVAL), query,
 * destroy (EBUSY while QPs use it; waits for async-event acks).
 */
#include <stdlib.h>
#include <string.h>

#include "srn_verbs.h"

SRN_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *ia)
{
	struct srn_context *sctx = to_sctx(pd->context);
	struct srn_srq_init init;
	struct srn_vsrq *s;
	uint32_t max_wr, max_sge, limit;
	int rc;

	if (sctx->remote) {
		errno = EOPNOTSUPP;       /* an imported context of another process */
		return NULL;
	}
	if (ia->attr.max_wr == 0 || ia->attr.max_wr > sctx->limits.max_qp_wr ||
	    ia->attr.max_sge > sctx->limits.max_sge || ia->attr.srq_limit > ia->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->ctx = sctx;
	s->pd = to_spd(pd);
	s->id = srn_verbs_new_id();
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);

	init.pdn = s->pd->pdn;
	init.max_wr = ia->attr.max_wr;
	init.max_sge = ia->attr.max_sge;
	init.srq_limit = ia->attr.srq_limit;
	init.user = s;
	srn_rt_lock(sctx->rd);
	rc = srn_srq_new(sctx->core, &init, &s->core);
	if (!rc)
		srn_srq_query(s->core, &max_wr, &max_sge, &limit);
	srn_rt_unlock(sctx->rd);
	if (rc) {
		if (s->core) {
			srn_rt_lock(sctx->rd);
			srn_srq_del(s->core);
			srn_rt_unlock(sctx->rd);
		}
		pthread_mutex_destroy(&s->srq.mutex);
		pthread_cond_destroy(&s->srq.cond);
		free(s);
		errno = srn_verbs_errno(rc);
		return NULL;
	}
	s->max_sge = max_sge;
	ia->attr.max_wr = max_wr;
	ia->attr.max_sge = max_sge;

	s->srq.context = pd->context;
	s->srq.srq_context = ia->srq_context;
	s->srq.pd = pd;
	s->srq.handle = (uint32_t)s->id;
	s->srq.events_completed = 0;
	__atomic_add_fetch(&s->pd->users, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&sctx->reg_lock);
	s->next = sctx->srqs;
	sctx->srqs = s;
	pthread_mutex_unlock(&sctx->reg_lock);
	return &s->srq;
}

SRN_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct srn_vsrq *s = to_ssrq(srq);
	uint32_t max_wr, max_sge, limit;
	int rc = 0;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL;   /* resize not supported (no IBV_DEVICE_SRQ_RESIZE) */
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	srn_rt_lock(s->ctx->rd);
	srn_srq_query(s->core, &max_wr, &max_sge, &limit);
	if (attr->srq_limit > max_wr)
		rc = SRN_EINVAL;
	else
		rc = srn_srq_set_limit(s->core, attr->srq_limit);
	srn_rt_unlock(s->ctx->rd);
	return rc ? srn_verbs_errno(rc) : 0;
}

SRN_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct srn_vsrq *s = to_ssrq(srq);
	uint32_t max_wr, max_sge, limit;

	srn_rt_lock(s->ctx->rd);
	srn_srq_query(s->core, &max_wr, &max_sge, &limit);
	srn_rt_unlock(s->ctx->rd);
	attr->max_wr = max_wr;
	attr->max_sge = max_sge;
	attr->srq_limit = limit;
	return 0;
}

SRN_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct srn_vsrq *s = to_ssrq(srq);
	struct srn_context *sctx = s->ctx;
	int rc;

	srn_rt_lock(sctx->rd);
	rc = srn_srq_del(s->core);
	srn_rt_unlock(sctx->rd);
	if (rc)
		return srn_verbs_errno(rc);

	pthread_mutex_lock(&sctx->reg_lock);
	for (struct srn_vsrq **pp = &sctx->srqs; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	pthread_mutex_unlock(&sctx->reg_lock);

	pthread_mutex_lock(&srq->mutex);
	while (srq->events_completed != s->events_reported)
		pthread_cond_wait(&srq->cond, &srq->mutex);
	pthread_mutex_unlock(&srq->mutex);

	__atomic_sub_fetch(&s->pd->users, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s);
	return 0;
}
