/*
 * qp.c - queue pairs: create (RC, UC, UD), modify (the transition table of
 * qp_transition.c + value checks, then srn_qp_modify), query, destroy, and
 * the QPN -> QP table used when completions are polled.
 *
 * Every EINVAL of ibv_modify_qp is decided before the core is called, so a
 * rejected modify leaves the QP exactly as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "srn_verbs.h"
#include "softrnic/softrnic.h"

/* ------------------------------------------------------------------------ */
/* QPN table (per device, under the runtime lock)                            */

static unsigned qp_hash_slot(uint32_t qpn) { return (qpn * 2654435761u) >> 24 & (SRN_VERBS_QP_HASH - 1); }

struct srn_vqp *srn_verbs_qp_lookup(struct srn_vdev *vdev, uint32_t qpn)
{
	struct srn_vqp *q = vdev->qp_hash[qp_hash_slot(qpn)];

	while (q && q->qp.qp_num != qpn)
		q = q->hnext;
	return q;
}

static void qp_hash_add(struct srn_vdev *vdev, struct srn_vqp *q)
{
	unsigned s = qp_hash_slot(q->qp.qp_num);

	q->hnext = vdev->qp_hash[s];
	vdev->qp_hash[s] = q;
}

static void qp_hash_del(struct srn_vdev *vdev, struct srn_vqp *q)
{
	for (struct srn_vqp **pp = &vdev->qp_hash[qp_hash_slot(q->qp.qp_num)]; *pp; pp = &(*pp)->hnext)
		if (*pp == q) {
			*pp = q->hnext;
			return;
		}
}

/* ------------------------------------------------------------------------ */
int srn_verbs_ah_convert(struct ibv_context *ctx, const struct ibv_ah_attr *in, struct srn_ah_attr *out)
{
	(void)ctx;
	/* RoCE has no LIDs: every address is global (the kernel rejects a
	 * non-GRH AH on a RoCE port with EINVAL, and so do we) */
	if (!in->is_global)
		return EINVAL;
	if (in->port_num != SRN_VERBS_PORT)
		return EINVAL;
	if (in->grh.sgid_index >= 1)          /* gid_tbl_len 1 */
		return EINVAL;
	if (in->grh.flow_label > 0xfffff)
		return EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out->dgid, in->grh.dgid.raw, 16);
	out->sgid_index = in->grh.sgid_index;
	out->hop_limit = in->grh.hop_limit;
	out->traffic_class = in->grh.traffic_class;
	out->flow_label = in->grh.flow_label;
	out->sl = in->sl;
	out->port_num = in->port_num;
	return 0;
}

static void ah_to_ibv(const struct srn_ah_attr *a, struct ibv_ah_attr *o)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->grh.dgid.raw, a->dgid, 16);
	o->grh.sgid_index = a->sgid_index;
	o->grh.hop_limit = a->hop_limit;
	o->grh.traffic_class = a->traffic_class;
	o->grh.flow_label = a->flow_label;
	o->sl = a->sl;
	o->port_num = a->port_num;
	o->is_global = 1;
}

/* ------------------------------------------------------------------------ */
#define SRN_SEND_OPS_OK (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV | \
			 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)

/* q->pd is the PD (or parent domain) the QP was created with: its
 * allocator made q and the builder buffers when mem_custom/wrb_custom say so */
static void free_vqp(struct srn_vqp *q)
{
	srn_verbs_obj_free(q->pd, q->wrb, SOFTRNIC_RES_TYPE_QP_BUF, q->wrb_custom[0]);
	srn_verbs_obj_free(q->pd, q->wrb_sge, SOFTRNIC_RES_TYPE_QP_BUF, q->wrb_custom[1]);
	srn_verbs_obj_free(q->pd, q->wrb_inl, SOFTRNIC_RES_TYPE_QP_BUF, q->wrb_custom[2]);
	pthread_mutex_destroy(&q->qp.mutex);
	pthread_cond_destroy(&q->qp.cond);
	srn_verbs_obj_free(q->pd, q, SOFTRNIC_RES_TYPE_QP, q->mem_custom);
}

struct ibv_qp *srn_verbs_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	struct srn_context *sctx = to_sctx(context);
	const uint32_t known = (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS << 1) - 1;
	struct srn_qp_init init;
	struct srn_qp_attr qa;
	struct srn_vqp *q;
	int rc;

	if (sctx->remote)
		return srn_remote_create_qp(sctx, a);
	if (a->comp_mask & ~known) {
		errno = EINVAL;
		return NULL;
	}
	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;   /* XRC domains, TSO, RSS, source QPN: not offered */
		return NULL;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || a->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	switch (a->qp_type) {
	case IBV_QPT_RC: case IBV_QPT_UC: case IBV_QPT_UD:
		break;
	case IBV_QPT_XRC_SEND: case IBV_QPT_XRC_RECV: case IBV_QPT_RAW_PACKET: case IBV_QPT_DRIVER:
		errno = EOPNOTSUPP;
		return NULL;
	default:
		errno = EINVAL;
		return NULL;
	}
	if (!a->send_cq || !a->recv_cq || a->send_cq->context != context ||
	    a->recv_cq->context != context || (a->srq && a->srq->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~(uint64_t)SRN_SEND_OPS_OK)) {
		errno = EOPNOTSUPP;   /* TSO, ATOMIC_WRITE */
		return NULL;
	}

	{
		bool custom;

		q = srn_verbs_obj_alloc(to_spd(a->pd), sizeof(*q), SOFTRNIC_RES_TYPE_QP, &custom);
		if (!q) {
			errno = ENOMEM;
			return NULL;
		}
		q->mem_custom = custom;
	}
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	q->ctx = sctx;
	q->id = srn_verbs_new_id();
	q->pd = to_spd(a->pd);
	q->scq = to_scq(a->send_cq);
	q->rcq = to_scq(a->recv_cq);
	q->srq = a->srq ? to_ssrq(a->srq) : NULL;
	q->sq_sig_all = a->sq_sig_all != 0;

	memset(&init, 0, sizeof(init));
	init.type = (enum srn_qp_type)a->qp_type;
	init.pdn = q->pd->pdn;
	init.send_cq = q->scq->core;
	init.recv_cq = q->rcq->core;
	init.srq = q->srq ? q->srq->core : NULL;
	init.max_send_wr = a->cap.max_send_wr;
	init.max_send_sge = a->cap.max_send_sge;
	init.max_inline_data = a->cap.max_inline_data;
	init.max_recv_wr = q->srq ? 0 : a->cap.max_recv_wr;
	init.max_recv_sge = q->srq ? 0 : a->cap.max_recv_sge;
	init.sq_sig_all = q->sq_sig_all;
	init.user = q;

	srn_rt_lock(sctx->rd);
	rc = srn_qp_new(sctx->core, &init, &q->core);
	if (!rc) {
		srn_qp_query(q->core, &qa);
		q->qp.qp_num = srn_qp_num(q->core);
		qp_hash_add(sctx->vdev, q);
	}
	srn_rt_unlock(sctx->rd);
	if (rc) {
		free_vqp(q);
		errno = srn_verbs_errno(rc);
		return NULL;
	}
	q->cap_send_wr = qa.max_send_wr;
	q->cap_recv_wr = qa.max_recv_wr;
	q->cap_send_sge = qa.max_send_sge;
	q->cap_recv_sge = qa.max_recv_sge;
	q->cap_inline = qa.max_inline_data;

	rc = 0;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		size_t n = q->cap_send_wr ? q->cap_send_wr : 1;
		q->wrb = srn_verbs_obj_alloc(q->pd, n * sizeof(*q->wrb), SOFTRNIC_RES_TYPE_QP_BUF,
					     &q->wrb_custom[0]);
		q->wrb_sge = srn_verbs_obj_alloc(q->pd, n * (q->cap_send_sge ? q->cap_send_sge : 1) *
						 sizeof(*q->wrb_sge), SOFTRNIC_RES_TYPE_QP_BUF,
						 &q->wrb_custom[1]);
		q->wrb_inl = q->cap_inline ? srn_verbs_obj_alloc(q->pd, n * q->cap_inline,
								 SOFTRNIC_RES_TYPE_QP_BUF,
								 &q->wrb_custom[2]) : NULL;
		if (!q->wrb || !q->wrb_sge || (q->cap_inline && !q->wrb_inl))
			rc = ENOMEM;
		q->has_qp_ex = true;
		q->send_ops_flags = a->send_ops_flags;
	}
	if (rc) {
		srn_rt_lock(sctx->rd);
		qp_hash_del(sctx->vdev, q);
		srn_qp_del(q->core, srn_rt_now());
		srn_rt_unlock(sctx->rd);
		free_vqp(q);
		errno = rc;
		return NULL;
	}
	if (q->has_qp_ex)
		srn_verbs_qp_ex_init_ops(q);

	q->qp.context = context;
	q->qp.qp_context = a->qp_context;
	q->qp.pd = a->pd;
	q->qp.send_cq = a->send_cq;
	q->qp.recv_cq = a->recv_cq;
	q->qp.srq = a->srq;
	q->qp.handle = q->qp.qp_num;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_type = a->qp_type;
	q->qp.events_completed = 0;

	a->cap.max_send_wr = q->cap_send_wr;
	a->cap.max_send_sge = q->cap_send_sge;
	a->cap.max_inline_data = q->cap_inline;
	a->cap.max_recv_wr = q->cap_recv_wr;
	a->cap.max_recv_sge = q->cap_recv_sge;

	__atomic_add_fetch(&q->pd->users, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&sctx->reg_lock);
	q->next = sctx->qps;
	sctx->qps = q;
	pthread_mutex_unlock(&sctx->reg_lock);
	return &q->qp;
}

SRN_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = srn_verbs_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

SRN_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct srn_vqp *q = to_sqp(qp);

	return q->has_qp_ex ? &q->qp_ex : NULL;
}

/* ------------------------------------------------------------------------ */
static void attr_to_core(const struct ibv_qp_attr *a, int mask, struct srn_qp_attr *s)
{
	memset(s, 0, sizeof(*s));
	s->qp_state = (enum srn_qp_state)a->qp_state;
	s->cur_qp_state = (enum srn_qp_state)a->cur_qp_state;
	s->path_mtu = (uint8_t)a->path_mtu;
	s->qkey = a->qkey;
	s->rq_psn = a->rq_psn & 0xffffff;
	s->sq_psn = a->sq_psn & 0xffffff;
	s->dest_qp_num = a->dest_qp_num;
	s->qp_access_flags = a->qp_access_flags;
	s->pkey_index = a->pkey_index;
	s->port_num = a->port_num;
	s->timeout = a->timeout;
	s->retry_cnt = a->retry_cnt;
	s->rnr_retry = a->rnr_retry;
	s->min_rnr_timer = a->min_rnr_timer;
	s->max_rd_atomic = a->max_rd_atomic;
	s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	s->en_sqd_async_notify = a->en_sqd_async_notify != 0;
	if (mask & IBV_QP_AV)
		srn_verbs_ah_convert(NULL, &a->ah_attr, &s->ah);
}

/* Remove qpn's CQEs from the unread part of an extended CQ's poll batch,
 * keeping the others in order (the core's srn_cq_purge_qp for the CQEs
 * already taken out of the core). As with two polls of one CQ, the
 * application does not poll the CQ in another thread meanwhile. */
static void batch_purge(struct srn_vcq *v, uint32_t qpn)
{
	int k = v->batch_i;

	if (!v->is_ex)
		return;
	for (int i = v->batch_i; i < v->batch_n; i++)
		if (v->batch[i].qp_num != qpn)
			v->batch[k++] = v->batch[i];
	v->batch_n = k;
}

SRN_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct srn_vqp *q = to_sqp(qp);
	struct srn_context *sctx = q->ctx;
	uint32_t mask = (uint32_t)attr_mask;
	enum ibv_qp_state cur, next, real;
	struct srn_qp_attr s;
	int rc;

	if (sctx->remote)
		return srn_remote_modify_qp(q, attr, attr_mask);
	rc = srn_verbs_qp_attr_check(sctx, attr, attr_mask);
	if (rc)
		return rc;
	attr_to_core(attr, attr_mask, &s);

	srn_rt_lock(sctx->rd);
	real = (enum ibv_qp_state)srn_qp_state(q->core);
	cur = (mask & IBV_QP_CUR_STATE) ? attr->cur_qp_state : real;
	next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	if (cur != real || !srn_verbs_modify_qp_is_ok(cur, next, qp->qp_type, mask)) {
		srn_rt_unlock(sctx->rd);
		return EINVAL;
	}
	rc = srn_qp_modify(q->core, &s, mask, srn_rt_now());
	if (!rc)
		qp->state = (enum ibv_qp_state)srn_qp_state(q->core);
	if (!rc && next == IBV_QPS_RESET) {
		/* the core took the QP's CQEs out of its CQs; an extended CQ may
		 * hold some already, in the batch ibv_start_poll took */
		batch_purge(q->scq, qp->qp_num);
		if (q->rcq != q->scq)
			batch_purge(q->rcq, qp->qp_num);
	}
	srn_rt_unlock(sctx->rd);
	return rc ? srn_verbs_errno(rc) : 0;
}

SRN_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			    struct ibv_qp_init_attr *init_attr)
{
	struct srn_vqp *q = to_sqp(qp);
	struct srn_qp_attr s;

	if (q->ctx->remote)
		return srn_remote_query_qp(q, attr, attr_mask, init_attr);
	(void)attr_mask;   /* everything is cheap to report */
	srn_rt_lock(q->ctx->rd);
	srn_qp_query(q->core, &s);
	srn_rt_unlock(q->ctx->rd);

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)s.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)s.qp_state;
	attr->path_mtu = (enum ibv_mtu)s.path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qkey = s.qkey;
	attr->rq_psn = s.rq_psn;
	attr->sq_psn = s.sq_psn;
	attr->dest_qp_num = s.dest_qp_num;
	attr->qp_access_flags = s.qp_access_flags;
	attr->cap.max_send_wr = q->cap_send_wr;
	attr->cap.max_recv_wr = q->cap_recv_wr;
	attr->cap.max_send_sge = q->cap_send_sge;
	attr->cap.max_recv_sge = q->cap_recv_sge;
	attr->cap.max_inline_data = q->cap_inline;
	if (qp->qp_type != IBV_QPT_UD)
		ah_to_ibv(&s.ah, &attr->ah_attr);
	attr->pkey_index = s.pkey_index;
	attr->en_sqd_async_notify = s.en_sqd_async_notify;
	attr->sq_draining = s.sq_draining;
	attr->max_rd_atomic = s.max_rd_atomic;
	attr->max_dest_rd_atomic = s.max_dest_rd_atomic;
	attr->min_rnr_timer = s.min_rnr_timer;
	attr->port_num = s.port_num ? s.port_num : SRN_VERBS_PORT;
	attr->timeout = s.timeout;
	attr->retry_cnt = s.retry_cnt;
	attr->rnr_retry = s.rnr_retry;

	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = attr->cap;
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = q->sq_sig_all;
	}
	return 0;
}

SRN_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct srn_vqp *q = to_sqp(qp);
	struct srn_context *sctx = q->ctx;
	int rc;

	if (sctx->remote)
		return srn_remote_destroy_qp(q);
	srn_rt_lock(sctx->rd);
	if (srn_qp_release_acks(q->core)) {
		srn_rt_unlock(sctx->rd);       /* a held ACK leaves first */
		srn_rt_lock(sctx->rd);
	}
	rc = srn_qp_del(q->core, srn_rt_now());
	if (!rc)
		qp_hash_del(sctx->vdev, q);
	srn_rt_unlock(sctx->rd);
	if (rc)
		return srn_verbs_errno(rc);

	pthread_mutex_lock(&sctx->reg_lock);
	for (struct srn_vqp **pp = &sctx->qps; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	pthread_mutex_unlock(&sctx->reg_lock);

	pthread_mutex_lock(&qp->mutex);
	while (qp->events_completed != q->events_reported)
		pthread_cond_wait(&qp->cond, &qp->mutex);
	pthread_mutex_unlock(&qp->mutex);

	__atomic_sub_fetch(&q->pd->users, 1, __ATOMIC_ACQ_REL);
	free_vqp(q);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Not offered: multicast (no IGMP/MLD membership in the UDP transport) and
 * ECE (no vendor enhanced-connection options). */
SRN_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}

SRN_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}

SRN_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return EOPNOTSUPP;
}

SRN_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	if (!ece->vendor_id)
		return EINVAL;   /* rdma-core checks this before asking the provider */
	return EOPNOTSUPP;
}

/*
 * 0 = "data is not guaranteed to be written in order": always a correct
 * answer, and the honest one once out-of-order placement (OOO-*) exists.
 */
SRN_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp; (void)op; (void)flags;
	return 0;
}
