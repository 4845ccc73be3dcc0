/*
 * req.c - the requester: turns send WQEs into request packets.
 *
 * Call order: srn_dev_send -> srn_req_emit -> req_check (state, window,
 * max_rd_atomic, fence) -> req_start_wqe (PSN assignment, local key
 * resolution) -> req_build (opcode, headers, gather) -> req_advance.
 * Timers: srn_req_on_timer (retransmission timeout, RNR wait).
 *
 * PSNs (PSN-01..04, 15): req.psn is the cursor (PSN of the next packet),
 * req.max_psn the point of maximum advance (next never-used PSN) and
 * comp.psn the oldest unacknowledged PSN. A retry rewinds the cursor to the
 * oldest unacknowledged PSN; packets are rebuilt from the WQE with the PSNs
 * they had, so a retransmission is byte-identical. A READ of n response
 * packets consumes n PSNs (PSN-03).
 */
#include "core_int.h"

const char *const srn_req_state_names[SRN_REQ_ST_NSTATES] = { "IDLE", "RNR_WAIT", "ERROR" };

/* IBA table 45: RNR NAK timer field (in units of 10 ns) */
static const uint32_t rnr_timer_10ns[32] = {
	65536000, 1000, 2000, 3000, 4000, 6000, 8000, 12000,
	16000, 24000, 32000, 48000, 64000, 96000, 128000, 192000,
	256000, 384000, 512000, 768000, 1024000, 1536000, 2048000, 3072000,
	4096000, 6144000, 8192000, 12288000, 16384000, 24576000, 32768000, 49152000,
};

uint64_t srn_rnr_timer_ns(uint8_t code) { return (uint64_t)rnr_timer_10ns[code & 31] * 10; }
uint64_t srn_rto_ns(uint8_t timeout) { return timeout ? 4096ull << (timeout & 31) : 0; }

bool srn_wqe_is_rd_atomic(const struct srn_swqe *w)
{
	return w->wr.opcode == SRN_WR_RDMA_READ || w->wr.opcode == SRN_WR_ATOMIC_CMP_AND_SWP ||
	       w->wr.opcode == SRN_WR_ATOMIC_FETCH_AND_ADD;
}

static bool is_atomic(const struct srn_swqe *w)
{
	return w->wr.opcode == SRN_WR_ATOMIC_CMP_AND_SWP || w->wr.opcode == SRN_WR_ATOMIC_FETCH_AND_ADD;
}

void srn_req_reset(struct srn_qp *qp)
{
	struct srn_timer rto = qp->req.rto, rnr = qp->req.rnr;
	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.rto = rto;
	qp->req.rnr = rnr;
	qp->req.state = SRN_REQ_ST_IDLE;
	qp->req.retry_left = qp->attr.retry_cnt;
	qp->req.rnr_left = qp->attr.rnr_retry;
}

/* ------------------------------------------------------------------------ */

enum req_block {
	REQ_OK, REQ_NO_STATE, REQ_EMPTY, REQ_FENCE, REQ_RD_ATOMIC, REQ_WINDOW,
};

static uint32_t psns_needed(const struct srn_qp *qp, const struct srn_swqe *w)
{
	if (w->wr.opcode == SRN_WR_RDMA_READ)
		return srn_qp_npsn(qp, w->length);
	return 1;
}

static enum req_block req_check(const struct srn_qp *qp, struct srn_swqe **out)
{
	enum srn_qp_state st = qp->attr.qp_state;
	if (st != SRN_QPS_RTS && st != SRN_QPS_SQD)
		return REQ_NO_STATE;
	if (qp->req.state != SRN_REQ_ST_IDLE)
		return REQ_NO_STATE;
	if (qp->sq_cur == qp->sq_tail)
		return REQ_EMPTY;
	struct srn_swqe *w = srn_sq_at(qp, qp->sq_cur);
	if (w->err_status)
		return REQ_NO_STATE;
	if (srn_wqe_is_local(w) && srn_mw_req_fenced(qp, w))
		return REQ_FENCE;
	if (w->state == SRN_WQE_POSTED) {
		/* SQD: finish what was started, start nothing new */
		if (st == SRN_QPS_SQD)
			return REQ_NO_STATE;
		if (qp->init.type == SRN_QPT_RC) {
			if ((w->wr.send_flags & SRN_SEND_FENCE) && qp->req.rd_atomic)
				return REQ_FENCE;
			uint32_t lim = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
			if (srn_wqe_is_rd_atomic(w) && qp->req.rd_atomic >= lim)
				return REQ_RD_ATOMIC;
		}
	}
	if (qp->init.type == SRN_QPT_RC && !SRN_PSN_LT(qp->req.psn, qp->req.max_psn)) {
		/* a new PSN: window (PSN-04) and in-flight limit */
		uint32_t span = (uint32_t)srn_psn_diff(qp->req.max_psn, qp->comp.psn);
		uint32_t need = w->state == SRN_WQE_POSTED ? psns_needed(qp, w) : 1;
		uint32_t lim = qp->dev->cfg.max_inflight_pkts;
		if (lim > SRN_PSN_WINDOW)
			lim = SRN_PSN_WINDOW;
		if (span > 0 && (uint64_t)span + need > lim)
			return REQ_WINDOW;
		if ((uint64_t)span + need > SRN_PSN_WINDOW)
			return REQ_WINDOW;
	}
	*out = w;
	return REQ_OK;
}

bool srn_req_can_send(const struct srn_qp *qp)
{
	struct srn_swqe *w;
	return req_check(qp, &w) == REQ_OK;
}

/* resolve local SGEs to host pointers; false on a protection error */
static bool req_resolve(struct srn_qp *qp, struct srn_swqe *w)
{
	if (w->resolved)
		return true;
	uint32_t acc = srn_wqe_is_rd_atomic(w) ? SRN_ACCESS_LOCAL_WRITE : 0;
	for (uint32_t i = 0; i < w->wr.num_sge; i++) {
		const struct srn_sge *s = &w->sge[i];
		if (s->length == 0) {
			w->host[i] = NULL;
			continue;
		}
		w->host[i] = srn_mr_xlate(qp->dev, s->lkey, qp->init.pdn, s->addr, s->length, acc);
		if (!w->host[i])
			return false;
	}
	w->resolved = true;
	return true;
}

/* copy len bytes at message offset off out of the WQE's buffers */
static void wqe_gather(const struct srn_swqe *w, uint32_t off, uint8_t *dst, uint32_t len)
{
	if (w->is_inline) {
		memcpy(dst, w->inl + off, len);
		return;
	}
	for (uint32_t i = 0; i < w->wr.num_sge && len; i++) {
		uint32_t sl = w->sge[i].length;
		if (off >= sl) {
			off -= sl;
			continue;
		}
		uint32_t n = sl - off < len ? sl - off : len;
		memcpy(dst, w->host[i] + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

static void req_start_wqe(struct srn_qp *qp, struct srn_swqe *w)
{
	if (w->wr.opcode == SRN_WR_RDMA_READ)
		w->npsn = srn_qp_npsn(qp, w->length);
	else if (is_atomic(w) || qp->init.type == SRN_QPT_UD)
		w->npsn = 1;
	else
		w->npsn = srn_qp_npsn(qp, w->length);
	w->first_psn = qp->req.psn;
	w->last_psn = srn_psn_add(w->first_psn, w->npsn - 1);
	w->state = SRN_WQE_SENDING;
	if (qp->init.type == SRN_QPT_RC && srn_wqe_is_rd_atomic(w) && !w->counted_rd) {
		w->counted_rd = true;
		qp->req.rd_atomic++;
	}
}

static uint8_t send_opcode(uint8_t base, const struct srn_swqe *w, bool first, bool last)
{
	/* base: 0x00 RC, 0x20 UC */
	bool imm = w->wr.opcode == SRN_WR_SEND_WITH_IMM;
	bool inv = w->wr.opcode == SRN_WR_SEND_WITH_INV;
	if (first && last)
		return base + (inv ? SRN_OP_RC_SEND_ONLY_INV : imm ? SRN_OP_RC_SEND_ONLY_IMM : SRN_OP_RC_SEND_ONLY);
	if (first)
		return base + SRN_OP_RC_SEND_FIRST;
	if (last)
		return base + (inv ? SRN_OP_RC_SEND_LAST_INV : imm ? SRN_OP_RC_SEND_LAST_IMM : SRN_OP_RC_SEND_LAST);
	return base + SRN_OP_RC_SEND_MIDDLE;
}

static uint8_t write_opcode(uint8_t base, const struct srn_swqe *w, bool first, bool last)
{
	bool imm = w->wr.opcode == SRN_WR_RDMA_WRITE_WITH_IMM;
	if (first && last)
		return base + (imm ? SRN_OP_RC_WRITE_ONLY_IMM : SRN_OP_RC_WRITE_ONLY);
	if (first)
		return base + SRN_OP_RC_WRITE_FIRST;
	if (last)
		return base + (imm ? SRN_OP_RC_WRITE_LAST_IMM : SRN_OP_RC_WRITE_LAST);
	return base + SRN_OP_RC_WRITE_MIDDLE;
}

/* The WQE at the cursor failed locally. Completions stay in order: the
 * error CQE is produced when every earlier WQE has completed (at once if
 * none is outstanding); the requester sends nothing past it meanwhile. */
static void req_local_error(struct srn_qp *qp, struct srn_swqe *w, uint8_t status)
{
	w->err_status = status;
	if (qp->sq_head == qp->sq_cur)
		srn_comp_fail(qp, status);
}

ssize_t srn_req_emit(struct srn_qp *qp, uint8_t *buf, size_t cap, struct srn_pkt_meta *meta, srn_ts now)
{
	struct srn_dev *dev = qp->dev;
	struct srn_swqe *w = NULL;
	enum req_block b = req_check(qp, &w);
	/* BIND_MW / LOCAL_INV: executed here, in SQ order, no packet (mw.c) */
	while (b == REQ_OK && srn_wqe_is_local(w)) {
		if (!srn_mw_req_exec(qp, w))
			return 0;
		b = req_check(qp, &w);
	}
	switch (b) {
	case REQ_OK:
		break;
	case REQ_RD_ATOMIC:
	case REQ_FENCE:
		srn_ctr_inc(dev, SRN_CTR_RD_ATOMIC_WAIT);
		return 0;
	default:
		return 0;
	}
	if (w->state == SRN_WQE_POSTED) {
		if (!req_resolve(qp, w)) {
			req_local_error(qp, w, SRN_WC_LOC_PROT_ERR);
			return 0;
		}
		req_start_wqe(qp, w);
	}
	enum srn_qp_type type = qp->init.type;
	uint32_t mtu = qp->mtu;
	uint32_t k = qp->req.pkt;
	uint32_t psn = srn_psn_add(w->first_psn, k);
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	p.pkey = SRN_DEFAULT_PKEY;
	p.psn = psn;
	p.dqpn = type == SRN_QPT_UD ? w->wr.remote_qpn : qp->attr.dest_qp_num;
	uint32_t off = 0, plen = 0;
	bool last_pkt = true;         /* last packet of this WQE */
	uint8_t base = type == SRN_QPT_UC ? 0x20 : 0x00;
	switch (w->wr.opcode) {
	case SRN_WR_SEND:
	case SRN_WR_SEND_WITH_IMM:
	case SRN_WR_SEND_WITH_INV:
		if (type == SRN_QPT_UD) {
			p.opcode = w->wr.opcode == SRN_WR_SEND_WITH_IMM ? SRN_OP_UD_SEND_ONLY_IMM : SRN_OP_UD_SEND_ONLY;
			p.deth_qkey = (w->wr.remote_qkey & 0x80000000u) ? qp->attr.qkey : w->wr.remote_qkey;
			p.deth_sqpn = qp->qpn;
			plen = w->length;
			break;
		}
		off = k * mtu;
		plen = w->length - off < mtu ? w->length - off : mtu;
		last_pkt = k + 1 >= w->npsn;
		p.opcode = send_opcode(base, w, k == 0, last_pkt);
		break;
	case SRN_WR_RDMA_WRITE:
	case SRN_WR_RDMA_WRITE_WITH_IMM:
		off = k * mtu;
		plen = w->length - off < mtu ? w->length - off : mtu;
		last_pkt = k + 1 >= w->npsn;
		p.opcode = write_opcode(base, w, k == 0, last_pkt);
		p.reth_va = w->wr.remote_addr;
		p.reth_rkey = w->wr.rkey;
		p.reth_len = w->length;
		break;
	case SRN_WR_RDMA_READ:
		/* a retried READ asks only for what is still missing (PSN-09) */
		p.opcode = SRN_OP_RC_READ_REQUEST;
		p.reth_va = w->wr.remote_addr + (uint64_t)k * mtu;
		p.reth_rkey = w->wr.rkey;
		p.reth_len = w->length - k * mtu;
		break;
	case SRN_WR_ATOMIC_CMP_AND_SWP:
		p.opcode = SRN_OP_RC_COMPARE_SWAP;
		p.atm_va = w->wr.remote_addr;
		p.atm_rkey = w->wr.rkey;
		p.atm_cmp = w->wr.compare_add;
		p.atm_swap_add = w->wr.swap;
		break;
	case SRN_WR_ATOMIC_FETCH_AND_ADD:
		p.opcode = SRN_OP_RC_FETCH_ADD;
		p.atm_va = w->wr.remote_addr;
		p.atm_rkey = w->wr.rkey;
		p.atm_swap_add = w->wr.compare_add;
		break;
	default:
		req_local_error(qp, w, SRN_WC_LOC_QP_OP_ERR);
		return 0;
	}
	if (last_pkt) {
		p.imm_be = w->wr.imm_be;
		p.ieth_rkey = w->wr.invalidate_rkey;
		p.se = (w->wr.send_flags & SRN_SEND_SOLICITED) != 0;
		p.ackreq = type == SRN_QPT_RC;
	}
	p.pad = srn_pad_for(plen);
	int h = srn_pkt_write_hdrs(buf, cap, &p);
	if (h < 0 || (size_t)h + plen + p.pad + SRN_ICRC_LEN > cap)
		return 0;
	if (plen)
		wqe_gather(w, off, buf + h, plen);
	if (type == SRN_QPT_UD)
		srn_qp_fill_meta(qp, &w->ah, p.dqpn, meta);
	else
		srn_qp_fill_meta(qp, &qp->attr.ah, p.dqpn, meta);
	size_t len = srn_pkt_finalize(buf, (size_t)h, plen, meta);

	/* advance */
	bool retrans = type == SRN_QPT_RC && SRN_PSN_LT(psn, qp->req.max_psn);
	if (retrans)
		srn_ctr_inc(dev, SRN_CTR_RETRANSMIT_PKTS);
	if (last_pkt) {
		qp->req.psn = srn_psn_add(w->last_psn, 1);
		qp->req.pkt = 0;
		w->state = SRN_WQE_SENT;
		qp->sq_cur++;
	} else {
		qp->req.psn = srn_psn_add(psn, 1);
		qp->req.pkt++;
	}
	if (type == SRN_QPT_RC) {
		if (SRN_PSN_GT(qp->req.psn, qp->req.max_psn))
			qp->req.max_psn = qp->req.psn;
		if (qp->req.retrying && !SRN_PSN_LT(qp->req.psn, qp->req.max_psn))
			qp->req.retrying = false;
		srn_req_timer_update(qp, now, false);
	} else if (last_pkt) {
		/* UC/UD: complete once the last packet is on the wire */
		w->state = SRN_WQE_DONE;
		srn_qp_send_cqe(qp, w, SRN_WC_SUCCESS, false);
		qp->sq_head++;
		qp->sq_n--;
		srn_qp_check_drained(qp);
	}
	return (ssize_t)len;
}

/* ------------------------------------------------------------------------ */
/* retry */

void srn_req_rewind(struct srn_qp *qp, uint32_t psn)
{
	uint64_t i;
	for (i = qp->sq_head; i != qp->sq_tail; i++) {
		struct srn_swqe *w = srn_sq_at(qp, i);
		if (w->state == SRN_WQE_POSTED)
			break;
		if (SRN_PSN_LE(w->first_psn, psn) && SRN_PSN_LE(psn, w->last_psn)) {
			qp->sq_cur = i;
			qp->req.pkt = is_atomic(w) ? 0 : (uint32_t)srn_psn_diff(psn, w->first_psn);
			qp->req.psn = is_atomic(w) ? w->first_psn : psn;
			if (SRN_PSN_LT(qp->req.psn, qp->req.max_psn)) {
				qp->req.retrying = true;
				qp->req.retry_psn = qp->req.psn;
			}
			return;
		}
	}
	/* psn is not inside any sent WQE: it is the next new PSN */
	qp->sq_cur = i;
	qp->req.pkt = 0;
	qp->req.psn = psn;
}

void srn_req_timer_update(struct srn_qp *qp, srn_ts now, bool restart)
{
	struct srn_dev *dev = qp->dev;
	uint64_t rto = srn_rto_ns(qp->attr.timeout);
	if (qp->init.type != SRN_QPT_RC || rto == 0 || qp->req.state != SRN_REQ_ST_IDLE ||
	    qp->comp.psn == qp->req.max_psn) {
		srn_timer_cancel(dev, &qp->req.rto);
		return;
	}
	if (restart || !srn_timer_armed(&qp->req.rto))
		srn_timer_set(dev, &qp->req.rto, now + rto);
}

void srn_req_on_timer(struct srn_qp *qp, uint8_t kind, srn_ts now)
{
	struct srn_dev *dev = qp->dev;
	if (qp->attr.qp_state == SRN_QPS_ERR || qp->attr.qp_state == SRN_QPS_RESET)
		return;
	switch (kind) {
	case SRN_TIMER_RTO:
		if (qp->comp.psn == qp->req.max_psn || qp->req.state != SRN_REQ_ST_IDLE)
			return;
		srn_ctr_inc(dev, SRN_CTR_RETRY_TIMEOUTS);
		if (qp->req.retry_left == 0) {
			srn_ctr_inc(dev, SRN_CTR_RETRY_EXC_ERR);
			srn_comp_fail(qp, SRN_WC_RETRY_EXC_ERR);
			return;
		}
		qp->req.retry_left--;
		qp->comp.implicit_done = false;   /* a NAK after this go-back counts again */
		srn_req_rewind(qp, qp->comp.psn);
		srn_req_timer_update(qp, now, true);
		break;
	case SRN_TIMER_RNR:
		if (qp->req.state != SRN_REQ_ST_RNR_WAIT)
			return;
		qp->req.state = SRN_REQ_ST_IDLE;
		srn_req_rewind(qp, qp->comp.psn);
		srn_req_timer_update(qp, now, true);
		break;
	}
}
