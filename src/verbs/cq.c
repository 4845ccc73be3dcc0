/*
 * cq.c - completion queues and completion channels.
 *
 *   ibv_create_cq / create_cq_ex -> srn_cq_new (user pointer = our srn_vcq)
 *   poll_cq      -> srn_rt_progress (busy pollers drive the NIC), then
 *                   srn_cq_poll under the device lock, srn_cqe -> ibv_wc
 *   req_notify   -> srn_cq_arm; when an armed CQ gets a CQE the runtime calls
 *                   srn_verbs_cq_event_hook, which writes the CQ's id into its
 *                   channel's pipe; ibv_get_cq_event reads it (blocking unless
 *                   the application set O_NONBLOCK on channel->fd).
 *   destroy_cq   -> EBUSY while a QP uses it; then waits until every event
 *                   handed out by ibv_get_cq_event/ibv_get_async_event was
 *                   acknowledged (comp_events_completed, as rdma-core does).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <endian.h>

#include "srn_verbs.h"
#include "softrnic/softrnic.h"

/* ------------------------------------------------------------------------ */
/* completion channels                                                        */

SRN_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct srn_channel *ch;
	int p[2];

	if (to_sctx(context)->remote) {
		errno = EOPNOTSUPP;       /* no completion events across processes */
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC)) {
		int e = errno;
		free(ch);
		errno = e;
		return NULL;
	}
	fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
	pthread_mutex_init(&ch->lock, NULL);
	ch->ch.context = context;
	ch->ch.fd = p[0];
	ch->ch.refcnt = 0;
	ch->wfd = p[1];
	return &ch->ch;
}

SRN_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct srn_channel *ch = to_sch(channel);

	pthread_mutex_lock(&ch->lock);
	if (channel->refcnt) {
		pthread_mutex_unlock(&ch->lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&ch->lock);
	close(channel->fd);
	close(ch->wfd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

/* runtime hook: device lock held; never blocks */
void srn_verbs_cq_event_hook(struct srn_cq *cq, void *arg)
{
	struct srn_vcq *vcq = srn_cq_user(cq);
	ssize_t r;

	(void)arg;
	if (!vcq || !vcq->channel)
		return;
	r = write(vcq->channel->wfd, &vcq->id, sizeof(vcq->id));
	(void)r;   /* a full pipe (8192 pending events) drops the event */
}

SRN_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
				void **cq_context)
{
	struct srn_channel *ch = to_sch(channel);

	srn_rt_app_sleeps(to_sctx(channel->context)->rd);
	for (;;) {
		uint64_t id;
		struct srn_vcq *v;

		if (read(channel->fd, &id, sizeof(id)) != (ssize_t)sizeof(id))
			return -1;
		pthread_mutex_lock(&ch->lock);
		for (v = ch->cqs; v; v = v->ch_next)
			if (v->id == id)
				break;
		if (v) {
			pthread_mutex_lock(&v->cq.mutex);
			v->comp_events_reported++;
			pthread_mutex_unlock(&v->cq.mutex);
			*cq = &v->cq;
			*cq_context = v->cq.cq_context;
			pthread_mutex_unlock(&ch->lock);
			return 0;
		}
		/* event of a CQ destroyed meanwhile: dropped, like the kernel does */
		pthread_mutex_unlock(&ch->lock);
	}
}

SRN_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ------------------------------------------------------------------------ */
/* create / destroy / resize                                                  */

static void free_vcq(struct srn_vcq *vcq)
{
	srn_verbs_obj_free(vcq->pdom, vcq, SOFTRNIC_RES_TYPE_CQ, vcq->mem_custom);
}

static struct srn_vcq *create_cq_common(struct ibv_context *context, int cqe, void *cq_context,
					struct ibv_comp_channel *channel, int comp_vector,
					bool is_ex, uint64_t wc_flags, struct srn_vpd *pdom)
{
	struct srn_context *sctx = to_sctx(context);
	struct srn_vcq *vcq;
	bool custom;
	int rc;

	if (comp_vector < 0 || comp_vector >= context->num_comp_vectors ||
	    cqe < 1 || (uint32_t)cqe > sctx->limits.max_cqe ||
	    (channel && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	vcq = srn_verbs_obj_alloc(pdom, sizeof(*vcq), SOFTRNIC_RES_TYPE_CQ, &custom);
	if (!vcq) {
		errno = ENOMEM;
		return NULL;
	}
	vcq->pdom = pdom;
	vcq->mem_custom = custom;
	vcq->ctx = sctx;
	vcq->id = srn_verbs_new_id();
	vcq->is_ex = is_ex;
	vcq->wc_flags = wc_flags;
	vcq->channel = channel ? to_sch(channel) : NULL;
	pthread_mutex_init(&vcq->cq.mutex, NULL);
	pthread_cond_init(&vcq->cq.cond, NULL);
	vcq->cq.context = context;
	vcq->cq.channel = channel;
	vcq->cq.cq_context = cq_context;

	srn_rt_lock(sctx->rd);
	rc = srn_cq_new(sctx->core, (uint32_t)cqe, vcq, &vcq->core);
	if (!rc)
		vcq->cq.cqe = (int)srn_cq_capacity(vcq->core);
	srn_rt_unlock(sctx->rd);
	if (rc) {
		pthread_mutex_destroy(&vcq->cq.mutex);
		pthread_cond_destroy(&vcq->cq.cond);
		free_vcq(vcq);
		errno = srn_verbs_errno(rc);
		return NULL;
	}
	if (pdom)
		__atomic_add_fetch(&pdom->users, 1, __ATOMIC_ACQ_REL);
	vcq->cq.handle = (uint32_t)vcq->id;
	if (is_ex)
		srn_verbs_cq_ex_init_ops(vcq);

	if (vcq->channel) {
		pthread_mutex_lock(&vcq->channel->lock);
		vcq->ch_next = vcq->channel->cqs;
		vcq->channel->cqs = vcq;
		channel->refcnt++;
		pthread_mutex_unlock(&vcq->channel->lock);
	}
	pthread_mutex_lock(&sctx->reg_lock);
	vcq->next = sctx->cqs;
	sctx->cqs = vcq;
	pthread_mutex_unlock(&sctx->reg_lock);
	return vcq;
}

SRN_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
					struct ibv_comp_channel *channel, int comp_vector)
{
	struct srn_vcq *vcq;

	if (to_sctx(context)->remote)
		return srn_remote_create_cq(to_sctx(context), cqe, cq_context, channel, comp_vector);
	vcq = create_cq_common(context, cqe, cq_context, channel, comp_vector,
					       false, 0, NULL);
	return vcq ? &vcq->cq : NULL;
}

struct ibv_cq_ex *srn_verbs_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct srn_vcq *vcq;
	struct srn_vpd *pdom = NULL;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		/* only a parent domain (its allocators, its thread domain) */
		if (!attr->parent_domain || attr->parent_domain->context != ctx ||
		    !to_spd(attr->parent_domain)->base) {
			errno = EINVAL;
			return NULL;
		}
		pdom = to_spd(attr->parent_domain);
	}
	if (attr->wc_flags & ~(uint64_t)(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
					 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) {
		errno = EOPNOTSUPP;   /* cvlan, flow tag, TM: not offered */
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;   /* IGNORE_OVERRUN is not offered */
		return NULL;
	}
	if (attr->cqe > (uint32_t)INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	vcq = create_cq_common(ctx, (int)attr->cqe, attr->cq_context, attr->channel,
			       (int)attr->comp_vector, true, attr->wc_flags, pdom);
	return vcq ? &vcq->cq_ex : NULL;
}

SRN_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct srn_vcq *vcq = to_scq(cq);
	struct srn_context *sctx = vcq->ctx;
	int rc;

	if (sctx->remote)
		return srn_remote_destroy_cq(vcq);
	srn_rt_lock(sctx->rd);
	rc = srn_cq_del(vcq->core);
	srn_rt_unlock(sctx->rd);
	if (rc)
		return srn_verbs_errno(rc);   /* EBUSY: still used by a QP */

	if (vcq->channel) {
		pthread_mutex_lock(&vcq->channel->lock);
		for (struct srn_vcq **pp = &vcq->channel->cqs; *pp; pp = &(*pp)->ch_next)
			if (*pp == vcq) {
				*pp = vcq->ch_next;
				break;
			}
		vcq->channel->ch.refcnt--;
		pthread_mutex_unlock(&vcq->channel->lock);
	}
	pthread_mutex_lock(&sctx->reg_lock);
	for (struct srn_vcq **pp = &sctx->cqs; *pp; pp = &(*pp)->next)
		if (*pp == vcq) {
			*pp = vcq->next;
			break;
		}
	pthread_mutex_unlock(&sctx->reg_lock);

	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != vcq->comp_events_reported ||
	       cq->async_events_completed != vcq->async_events_reported)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);

	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	if (vcq->pdom)
		__atomic_sub_fetch(&vcq->pdom->users, 1, __ATOMIC_ACQ_REL);
	free_vcq(vcq);
	return 0;
}

SRN_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct srn_vcq *vcq = to_scq(cq);
	struct srn_context *sctx = vcq->ctx;
	int rc;

	if (sctx->remote)
		return EOPNOTSUPP;
	if (cqe < 1 || (uint32_t)cqe > sctx->limits.max_cqe)
		return EINVAL;
	srn_rt_lock(sctx->rd);
	rc = srn_cq_resize(vcq->core, (uint32_t)cqe);
	if (!rc)
		cq->cqe = (int)srn_cq_capacity(vcq->core);
	srn_rt_unlock(sctx->rd);
	return rc ? srn_verbs_errno(rc) : 0;
}

/* ------------------------------------------------------------------------ */
/* polling                                                                    */

static void cqe_to_wc(const struct srn_cqe *c, struct ibv_wc *wc, enum ibv_qp_type qpt)
{
	wc->wr_id = c->wr_id;
	wc->status = (enum ibv_wc_status)c->status;
	wc->opcode = (enum ibv_wc_opcode)c->opcode;
	wc->vendor_err = c->vendor_err;
	wc->byte_len = c->byte_len;
	wc->wc_flags = c->wc_flags;
	if (c->wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = c->imm_be;
	else
		wc->imm_data = c->imm_be;
	wc->qp_num = c->qp_num;
	wc->src_qp = c->src_qp;
	wc->pkey_index = c->pkey_index;
	wc->slid = 0;
	wc->sl = c->sl;
	wc->dlid_path_bits = 0;
	if (qpt == IBV_QPT_UD && c->opcode >= IBV_WC_RECV && c->status == IBV_WC_SUCCESS)
		wc->wc_flags |= IBV_WC_GRH;
}

/* polls up to n CQEs into out[]; device lock held. The core has already
 * written the GRH area of UD receives into the receive buffers. */
int srn_verbs_cq_poll_locked(struct srn_vcq *vcq, struct srn_cqe *out, int n)
{
	return srn_cq_poll(vcq->core, out, n);
}

static enum ibv_qp_type cqe_qp_type(struct srn_vdev *vdev, const struct srn_cqe *c)
{
	struct srn_vqp *q;

	if (c->opcode < IBV_WC_RECV)
		return IBV_QPT_RC;     /* only receive completions depend on it */
	q = srn_verbs_qp_lookup(vdev, c->qp_num);
	return q ? q->qp.qp_type : IBV_QPT_RC;
}

int srn_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct srn_vcq *vcq = to_scq(cq);
	struct srn_context *sctx = vcq->ctx;
	struct srn_cqe buf[SRN_VERBS_CQ_BATCH];
	int total = 0;

	if (n <= 0)
		return n < 0 ? -EINVAL : 0;
	srn_rt_lock_poll(sctx->rd);     /* receive pass: busy pollers drive the NIC */
	while (total < n) {
		int want = n - total < SRN_VERBS_CQ_BATCH ? n - total : SRN_VERBS_CQ_BATCH;
		int got = srn_verbs_cq_poll_locked(vcq, buf, want);

		if (got < 0) {
			if (!total)
				total = -srn_verbs_errno(got);
			break;
		}
		for (int i = 0; i < got; i++)
			cqe_to_wc(&buf[i], &wc[total + i], cqe_qp_type(sctx->vdev, &buf[i]));
		total += got;
		if (got < want)
			break;
	}
	srn_rt_unlock_poll(sctx->rd);
	return total;
}

int srn_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct srn_vcq *vcq = to_scq(cq);

	srn_rt_lock(vcq->ctx->rd);
	srn_cq_arm(vcq->core, solicited_only != 0);
	srn_rt_unlock(vcq->ctx->rd);
	return 0;
}
