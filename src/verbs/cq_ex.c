/*
 * cq_ex.c - the extended CQ polling API (ibv_start_poll / ibv_next_poll /
 * ibv_end_poll and the ibv_wc_read_* accessors) of CQs made by
 * ibv_create_cq_ex: the standard WC fields (IBV_WC_STANDARD_FLAGS) and the
 * completion timestamps - IBV_WC_EX_WITH_COMPLETION_TIMESTAMP in the device
 * clock (ns of CLOCK_MONOTONIC, hca_core_clock 1 GHz, the time of the
 * device call that completed the work) and _WALLCLOCK (the same instant in
 * CLOCK_REALTIME ns, converted with the clocks' offset read when the batch
 * was polled). ibv_query_rt_values_ex reads the device clock.
 *
 * CQEs are taken from the core in small batches; every CQE handed out by
 * start_poll/next_poll is consumed, the rest of a batch stays for the next
 * start_poll, so end_poll loses nothing.
 */
#include <string.h>
#include <time.h>

#include "srn_verbs.h"

static const struct srn_cqe *cur(struct ibv_cq_ex *cq)
{
	struct srn_vcq *v = to_scq_ex(cq);
	return &v->batch[v->batch_i - 1];
}

static int advance(struct ibv_cq_ex *cq)
{
	struct srn_vcq *v = to_scq_ex(cq);
	const struct srn_cqe *c;

	if (v->batch_i >= v->batch_n) {
		int got;

		srn_rt_lock_poll(v->ctx->rd);
		got = srn_verbs_cq_poll_locked(v, v->batch, SRN_VERBS_CQ_BATCH);
		srn_rt_unlock_poll(v->ctx->rd);
		v->batch_i = 0;
		v->batch_n = got > 0 ? got : 0;
		if (got > 0 && (v->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) {
			struct timespec rt;
			clock_gettime(CLOCK_REALTIME, &rt);
			v->wall_off = (int64_t)((uint64_t)rt.tv_sec * 1000000000ull +
						(uint64_t)rt.tv_nsec) - (int64_t)srn_rt_now();
		}
		if (got < 0)
			return srn_verbs_errno(got);
		if (!got)
			return ENOENT;
	}
	c = &v->batch[v->batch_i++];
	cq->wr_id = c->wr_id;
	cq->status = (enum ibv_wc_status)c->status;
	v->cur_wc_flags = c->wc_flags;
	if (c->opcode >= IBV_WC_RECV && c->status == IBV_WC_SUCCESS) {
		struct srn_vqp *q;

		srn_rt_lock(v->ctx->rd);
		q = srn_verbs_qp_lookup(v->ctx->vdev, c->qp_num);
		if (q && q->qp.qp_type == IBV_QPT_UD)
			v->cur_wc_flags |= IBV_WC_GRH;
		srn_rt_unlock(v->ctx->rd);
	}
	return 0;
}

static int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	if (attr && attr->comp_mask)
		return EINVAL;
	return advance(cq);
}

static int next_poll(struct ibv_cq_ex *cq) { return advance(cq); }
static void end_poll(struct ibv_cq_ex *cq) { (void)cq; }

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq)
{ return (enum ibv_wc_opcode)cur(cq)->opcode; }
static uint32_t read_vendor_err(struct ibv_cq_ex *cq) { return cur(cq)->vendor_err; }
static uint32_t read_byte_len(struct ibv_cq_ex *cq) { return cur(cq)->byte_len; }
static __be32 read_imm_data(struct ibv_cq_ex *cq) { return cur(cq)->imm_be; }
static uint32_t read_qp_num(struct ibv_cq_ex *cq) { return cur(cq)->qp_num; }
static uint32_t read_src_qp(struct ibv_cq_ex *cq) { return cur(cq)->src_qp; }
static unsigned int read_wc_flags(struct ibv_cq_ex *cq) { return to_scq_ex(cq)->cur_wc_flags; }
static uint32_t read_slid(struct ibv_cq_ex *cq) { (void)cq; return 0; }
static uint8_t read_sl(struct ibv_cq_ex *cq) { return cur(cq)->sl; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq) { (void)cq; return 0; }
static uint64_t read_completion_ts(struct ibv_cq_ex *cq) { return cur(cq)->ts; }
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	return (uint64_t)((int64_t)cur(cq)->ts + to_scq_ex(cq)->wall_off);
}

int srn_verbs_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	uint64_t ns;

	(void)ctx;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		ns = srn_rt_now();          /* the device clock: ns, a normal timespec */
		values->raw_clock.tv_sec = (time_t)(ns / 1000000000ull);
		values->raw_clock.tv_nsec = (long)(ns % 1000000000ull);
	}
	return 0;
}

void srn_verbs_cq_ex_init_ops(struct srn_vcq *v)
{
	struct ibv_cq_ex *cq = &v->cq_ex;

	cq->comp_mask = 0;
	cq->start_poll = start_poll;
	cq->next_poll = next_poll;
	cq->end_poll = end_poll;
	cq->read_opcode = read_opcode;
	cq->read_vendor_err = read_vendor_err;
	cq->read_wc_flags = read_wc_flags;
	/* only the accessors of the requested standard fields, as providers do */
	if (v->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cq->read_byte_len = read_byte_len;
	if (v->wc_flags & IBV_WC_EX_WITH_IMM)
		cq->read_imm_data = read_imm_data;
	if (v->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cq->read_qp_num = read_qp_num;
	if (v->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cq->read_src_qp = read_src_qp;
	if (v->wc_flags & IBV_WC_EX_WITH_SLID)
		cq->read_slid = read_slid;
	if (v->wc_flags & IBV_WC_EX_WITH_SL)
		cq->read_sl = read_sl;
	if (v->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cq->read_dlid_path_bits = read_dlid_path_bits;
	if (v->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cq->read_completion_ts = read_completion_ts;
	if (v->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cq->read_completion_wallclock_ns = read_completion_wallclock_ns;
}
