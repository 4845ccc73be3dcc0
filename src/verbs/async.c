/*
 * async.c - asynchronous events. The runtime calls srn_verbs_async_hook
 * (device lock held) for every core event; it writes {type, object kind,
 * object id} into the owning context's pipe (context->async_fd is its read
 * end; device-wide events go to every context of the device).
 * ibv_get_async_event reads it (blocking unless O_NONBLOCK) and resolves the
 * id; events of objects destroyed meanwhile are dropped, as the kernel does.
 * Destroying a QP/CQ/SRQ waits until every event handed out for it was
 * acknowledged (events_completed vs. the count handed out), as rdma-core.
 */
#include <unistd.h>

#include "srn_verbs.h"

static void post_msg(int fd, uint32_t type, uint32_t kind, uint64_t id)
{
	struct srn_async_msg m = { .type = type, .kind = kind, .id = id };
	ssize_t r = write(fd, &m, sizeof(m));   /* < PIPE_BUF: atomic */
	(void)r;
}

void srn_verbs_async_hook(const struct srn_async_event *ev, void *arg)
{
	struct srn_vdev *vdev = arg;

	switch (ev->type) {
	case SRN_EV_CQ_ERR: {
		struct srn_vcq *c = ev->cq ? srn_cq_user(ev->cq) : NULL;
		if (c)
			post_msg(c->ctx->async_wfd, ev->type, SRN_OBJ_CQ, c->id);
		return;
	}
	case SRN_EV_SRQ_ERR:
	case SRN_EV_SRQ_LIMIT_REACHED: {
		struct srn_vsrq *s = ev->srq ? srn_srq_user(ev->srq) : NULL;
		if (s)
			post_msg(s->ctx->async_wfd, ev->type, SRN_OBJ_SRQ, s->id);
		return;
	}
	case SRN_EV_QP_FATAL: case SRN_EV_QP_REQ_ERR: case SRN_EV_QP_ACCESS_ERR:
	case SRN_EV_COMM_EST: case SRN_EV_SQ_DRAINED: case SRN_EV_PATH_MIG:
	case SRN_EV_PATH_MIG_ERR: case SRN_EV_QP_LAST_WQE_REACHED: {
		struct srn_vqp *q = ev->qp ? srn_qp_user(ev->qp) : NULL;
		if (q)
			post_msg(q->ctx->async_wfd, ev->type, SRN_OBJ_QP, q->id);
		return;
	}
	default:   /* device / port events: every context of the device */
		pthread_mutex_lock(&vdev->ctx_lock);
		for (struct srn_context *c = vdev->ctxs; c; c = c->next)
			post_msg(c->async_wfd, ev->type, SRN_OBJ_NONE, 0);
		pthread_mutex_unlock(&vdev->ctx_lock);
		return;
	}
}

SRN_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct srn_context *sctx = to_sctx(context);

	for (;;) {
		struct srn_async_msg m;
		bool found = false;

		if (read(context->async_fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
			return -1;
		event->event_type = (enum ibv_event_type)m.type;
		pthread_mutex_lock(&sctx->reg_lock);
		switch (m.kind) {
		case SRN_OBJ_QP:
			for (struct srn_vqp *q = sctx->qps; q; q = q->next)
				if (q->id == m.id) {
					pthread_mutex_lock(&q->qp.mutex);
					q->events_reported++;
					pthread_mutex_unlock(&q->qp.mutex);
					event->element.qp = &q->qp;
					found = true;
					break;
				}
			break;
		case SRN_OBJ_CQ:
			for (struct srn_vcq *c = sctx->cqs; c; c = c->next)
				if (c->id == m.id) {
					pthread_mutex_lock(&c->cq.mutex);
					c->async_events_reported++;
					pthread_mutex_unlock(&c->cq.mutex);
					event->element.cq = &c->cq;
					found = true;
					break;
				}
			break;
		case SRN_OBJ_SRQ:
			for (struct srn_vsrq *s = sctx->srqs; s; s = s->next)
				if (s->id == m.id) {
					pthread_mutex_lock(&s->srq.mutex);
					s->events_reported++;
					pthread_mutex_unlock(&s->srq.mutex);
					event->element.srq = &s->srq;
					found = true;
					break;
				}
			break;
		default:
			event->element.port_num = SRN_VERBS_PORT;
			found = true;
			break;
		}
		pthread_mutex_unlock(&sctx->reg_lock);
		if (found)
			return 0;
	}
}

SRN_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;
		pthread_mutex_lock(&cq->mutex);
		++cq->async_events_completed;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		return;
	}
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST: case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;
		pthread_mutex_lock(&qp->mutex);
		++qp->events_completed;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		return;
	}
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;
		pthread_mutex_lock(&srq->mutex);
		++srq->events_completed;
		pthread_cond_signal(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		return;
	}
	default:
		return;
	}
}
