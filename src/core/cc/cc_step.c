/*
 * cc_step.c - the clocked part of the engine: the round-robin selector and
 * type-to-class mapper (CC-04), CCP control placing events through the CAM
 * into slices and the FF array (CC-05..CC-07), the arbiter (CC-08) and the
 * processor farm running the algorithm against the context store (CC-09),
 * feeding the TX rate-update FIFO (CC-10) and new flows (CC-11).
 *
 * srn_cc_handle_expiry(now) replays everything due up to `now` in time
 * order; at equal times a processor completion comes first, then a grant,
 * then a selector step. The selector and the arbiter each act at most once
 * per CCC cycle (cfg.cycle_ns); a processor is busy for
 * max(1, invocations) * proc_ns (+ ctx_miss_ns on a context cache miss).
 */
#include "cc_int.h"

static inline struct srn_cc_ff_entry *ff_at(struct srn_cc_engine *e, uint32_t s, uint32_t cls)
{
	return &e->ff[(size_t)s * e->cfg.n_classes + cls];
}

static inline srn_ts max_ts(srn_ts a, srn_ts b) { return a > b ? a : b; }

/* the TX rate-update FIFO (CC-10): a processor's output, or a firmware one */
int srn_cc_rq_push(struct srn_cc_engine *eng, const struct srn_cc_rate_update *u)
{
	if (eng->rq_count == eng->cfg.rate_fifo_depth)
		return SRN_ENOMEM;
	uint32_t tail = (eng->rq_head + eng->rq_count) % eng->cfg.rate_fifo_depth;
	eng->rq[tail] = *u;
	eng->rq_count++;
	eng->ctr[SRN_CC_CTR_RATE_UPDATES]++;
	if (u->rtt_request)
		eng->ctr[SRN_CC_CTR_RTT_REQUESTS]++;
	return 0;
}

void srn_cc_slice_input(struct srn_cc_engine *e, uint32_t s, enum srn_cc_slice_input in, srn_ts t)
{
	struct srn_cc_slice *sl = &e->slice[s];
	enum srn_cc_slice_state from = sl->state, to = srn_cc_slice_next(from, in);
	if (to == SRN_CC_SLICE_NSTATES)
		return;         /* callers check; not an edge of fig. 9 */
	e->trans[((size_t)s * SRN_CC_SLICE_NSTATES + from) * SRN_CC_SLICE_NSTATES + to]++;
	sl->state = to;
	if (to == SRN_CC_SLICE_ARB && from != SRN_CC_SLICE_ARB) {
		sl->arb_since = t;
		e->n_arb++;
	} else if (from == SRN_CC_SLICE_ARB && to != SRN_CC_SLICE_ARB) {
		e->n_arb--;
	}
	if (to == SRN_CC_SLICE_IDLE)
		e->sel_stalled = false;     /* an idle slice may take a CAM miss */
	if (e->cfg.on_transition)
		e->cfg.on_transition(e->cfg.trace_user, s, from, to, in, t);
}

/* ---- selector side: CCP control places one event ------------------------ */

static bool slice_is_free(const struct srn_cc_engine *e, uint32_t s)
{
	return e->slice[s].state == SRN_CC_SLICE_IDLE && !e->proc[s].running;
}

/* true if placed; false: it must wait (and the selector stalls) */
static bool place(struct srn_cc_engine *e, const struct srn_cc_ev *ev, srn_ts t, bool first_try)
{
	uint32_t cls = e->cfg.type_class[ev->type];
	uint32_t s;
	bool hit = srn_cc_cam_lookup(&e->cam, ev->flow_id, &s) == 0;
	if (!hit) {
		/* miss: wait for an idle processor, then pick one at random (CC-05) */
		uint32_t cand[SRN_CC_MAX_PROCS], n = 0;
		for (uint32_t i = 0; i < e->cfg.n_procs; i++)
			if (slice_is_free(e, i))
				cand[n++] = i;
		if (n == 0) {
			if (first_try)
				e->ctr[SRN_CC_CTR_CAM_STALLS]++;
			return false;
		}
		s = cand[n == 1 ? 0 : srn_cc_prng_below(&e->prng, n)];
	}
	struct srn_cc_ff_entry *ent = ff_at(e, s, cls);
	if (ent->count && !e->cfg.coalesce) {
		if (first_try)
			e->ctr[SRN_CC_CTR_COALESCE_STALLS]++;
		return false;
	}
	if (hit) {
		e->ctr[SRN_CC_CTR_CAM_HITS]++;
	} else {
		e->ctr[SRN_CC_CTR_CAM_MISSES]++;
		e->ctr[SRN_CC_CTR_CAM_WRITES]++;
		srn_cc_cam_write(&e->cam, s, ev->flow_id);
	}
	if (ent->count)
		e->ctr[SRN_CC_CTR_COALESCED]++;
	srn_cc_ff_merge(ent, ev);
	e->slice[s].nonempty |= 1u << cls;
	srn_cc_slice_input(e, s, SRN_CC_IN_EVENT, t);
	return true;
}

/* earliest time the selector has something to do */
static srn_ts sel_due(const struct srn_cc_engine *e)
{
	if (e->pending_valid)
		return e->sel_stalled ? SRN_TS_NEVER : e->sel_free;
	srn_ts t = SRN_TS_NEVER;
	const struct srn_cc_fifo_ent *h;
	if ((h = srn_cc_fifo_peek(&e->txq)) && h->t_in < t)
		t = h->t_in;
	if ((h = srn_cc_fifo_peek(&e->rxq)) && h->t_in < t)
		t = h->t_in;
	if (e->fw_valid && e->fw_t_in < t)
		t = e->fw_t_in;
	return t == SRN_TS_NEVER ? t : max_ts(t, e->sel_free);
}

static void sel_step(struct srn_cc_engine *e, srn_ts t)
{
	if (e->pending_valid) {
		if (place(e, &e->pending, t, false))
			e->pending_valid = false;
		else
			e->sel_stalled = true;
		return;
	}
	/* round robin over TX FIFO, RX FIFO, FW unit (CC-04) */
	for (uint32_t k = 0; k < 3; k++) {
		uint32_t src = (e->rr_next + k) % 3;
		struct srn_cc_ev ev;
		if (src < 2) {
			struct srn_cc_fifo *f = src == 0 ? &e->txq : &e->rxq;
			const struct srn_cc_fifo_ent *h = srn_cc_fifo_peek(f);
			if (!h || h->t_in > t)
				continue;
			ev = h->ev;
			srn_cc_fifo_pop(f);
			e->ctr[src == 0 ? SRN_CC_CTR_SEL_TX : SRN_CC_CTR_SEL_RX]++;
		} else {
			if (!e->fw_valid || e->fw_t_in > t)
				continue;
			ev = e->fw_ev;
			e->fw_valid = false;     /* consumed: the next FW event is accepted */
			e->ctr[SRN_CC_CTR_SEL_FW]++;
		}
		e->rr_next = (src + 1) % 3;
		if (!place(e, &ev, t, true)) {
			e->pending = ev;
			e->pending_valid = true;
			e->sel_stalled = true;
		}
		return;
	}
}

/* ---- arbiter and processors --------------------------------------------- */

static bool grantable(const struct srn_cc_engine *e, uint32_t s)
{
	return e->slice[s].state == SRN_CC_SLICE_ARB && !e->proc[s].running;
}

static srn_ts arb_due(const struct srn_cc_engine *e)
{
	if (!e->n_arb)
		return SRN_TS_NEVER;
	srn_ts t = SRN_TS_NEVER;
	for (uint32_t s = 0; s < e->cfg.n_procs; s++)
		if (grantable(e, s) && e->slice[s].arb_since < t)
			t = e->slice[s].arb_since;
	return t == SRN_TS_NEVER ? t : max_ts(t, e->arb_free);
}

static uint32_t clamp_rate(struct srn_cc_engine *e, uint32_t r)
{
	if (r > e->cfg.line_rate_kbps) {
		e->ctr[SRN_CC_CTR_RATE_CLAMPED]++;
		return e->cfg.line_rate_kbps;
	}
	if (r < e->cfg.min_rate_kbps) {
		e->ctr[SRN_CC_CTR_RATE_CLAMPED]++;
		return e->cfg.min_rate_kbps;
	}
	return r;
}

static void to_algo_event(const struct srn_cc_engine *e, const struct srn_cc_ff_entry *f,
			  uint32_t cls, const struct srn_cc_proc *p, uint32_t s, srn_ts t,
			  struct softrnic_cc_event *ev)
{
	*ev = (struct softrnic_cc_event){
		.type = f->last_type, .class_id = (uint8_t)cls, .type_mask = f->type_mask,
		.flow_id = p->flow_id, .flow_hash = p->flow_hash, .proc_id = s,
		.count = f->count, .sn_first = f->sn_first, .sn_last = f->sn_last,
		.fw_data = f->fw_data, .bytes = f->bytes, .ts_first = f->ts_first,
		.ts_last = f->ts_last, .now = t, .rtt_t1 = f->rtt_t1, .rtt_t2 = f->rtt_t2,
		.rtt_t3 = f->rtt_t3, .rtt_t4 = f->rtt_t4, .cur_rate_kbps = p->res.rate_kbps,
		.line_rate_kbps = e->cfg.line_rate_kbps, .min_rate_kbps = e->cfg.min_rate_kbps,
		.params = e->cfg.algo->params,
	};
}

/* The arbiter grants slice s its processor: processor ID, flow ID (the CAM
 * entry through the mux) and the flow-ID hash go to the processor, which
 * loads the context and runs the algorithm on each non-empty class entry. */
static void grant(struct srn_cc_engine *e, uint32_t s, srn_ts t)
{
	const struct softrnic_cc_algo *a = e->cfg.algo;
	struct srn_cc_proc *p = &e->proc[s];
	struct srn_cc_slice *sl = &e->slice[s];
	srn_cc_slice_input(e, s, SRN_CC_IN_GRANT, t);
	e->ctr[SRN_CC_CTR_GRANTS]++;
	p->flow_id = e->cam.flow[s];
	p->flow_hash = srn_cc_flow_hash(p->flow_id);
	p->running = true;
	p->blocked = false;
	p->started = t;
	p->invocations = 0;
	p->runs++;
	e->ctr[SRN_CC_CTR_PROC_RUNS]++;

	enum srn_cc_ctx_src src = SRN_CC_CTX_HIT;
	int line = srn_cc_ctx_acquire(&e->cs, p->flow_id, &src, e->ctr);
	/* cfg guarantees cache >= n_procs, so a line is always free */
	p->line = (uint32_t)line;
	struct srn_cc_flow_rec *rec = &e->cs.cache[line].rec;
	p->res = (struct softrnic_cc_result){ .rate_kbps = rec->rate_kbps };
	p->publish = false;
	if (src != SRN_CC_CTX_NEW && rec->algo_gen != e->algo_gen) {
		/* written by an algorithm swapped out since (CC-14): start over */
		rec->ctx = (struct softrnic_cc_ctx){ 0 };
		src = SRN_CC_CTX_NEW;
		e->ctr[SRN_CC_CTR_CTX_REINITS]++;
	}
	rec->algo_gen = e->algo_gen;
	if (src == SRN_CC_CTX_NEW) {
		/* CC-11: default rate, and ask for an RTT probe */
		p->res.rate_kbps = e->cfg.default_rate_kbps;
		p->res.rtt_request = e->cfg.new_flow_rtt_request;
		if (a->init) {
			struct softrnic_cc_flow_info fi = {
				.flow_id = p->flow_id, .flow_hash = p->flow_hash,
				.default_rate_kbps = e->cfg.default_rate_kbps,
				.line_rate_kbps = e->cfg.line_rate_kbps,
				.min_rate_kbps = e->cfg.min_rate_kbps, .now = t, .params = a->params,
			};
			a->init(&rec->ctx, &fi, &p->res);
		}
		if (e->cfg.new_flow_rtt_request)
			p->res.rtt_request = 1;
		p->res.rate_kbps = clamp_rate(e, p->res.rate_kbps);
		p->publish = true;
	}
	for (uint32_t cls = 0; cls < e->cfg.n_classes; cls++) {
		if (!(sl->nonempty & (1u << cls)))
			continue;
		struct srn_cc_ff_entry *f = ff_at(e, s, cls);
		struct softrnic_cc_event ev;
		to_algo_event(e, f, cls, p, s, t, &ev);
		a->on_event(&rec->ctx, &ev, &p->res);
		p->res.rate_kbps = clamp_rate(e, p->res.rate_kbps);
		p->invocations++;
		e->ctr[SRN_CC_CTR_ALGO_CALLS]++;
		*f = (struct srn_cc_ff_entry){ 0 };
	}
	sl->nonempty = 0;
	e->sel_stalled = false;         /* FF entries are free again */
	if (p->res.rate_kbps != rec->rate_kbps || p->res.rtt_request)
		p->publish = true;
	srn_ts busy = (srn_ts)(p->invocations ? p->invocations : 1) * e->cfg.proc_ns;
	if (src != SRN_CC_CTX_HIT)
		busy += e->cfg.ctx_miss_ns;
	p->done_at = t + busy;
}

/* The processor signals completion: CCP control reads the flow ID from the
 * CAM by processor ID and sends flow, rate and RTT request to the TX
 * rate-update FIFO; the context is written back. */
static void complete(struct srn_cc_engine *e, uint32_t s, srn_ts t)
{
	struct srn_cc_proc *p = &e->proc[s];
	if (p->publish) {
		struct srn_cc_rate_update u = { .flow_id = e->cam.flow[s],
			.rate_kbps = p->res.rate_kbps, .rtt_request = p->res.rtt_request != 0,
			.proc_id = s, .ts = t };
		if (srn_cc_rq_push(e, &u)) {
			p->blocked = true;      /* FIFO full: wait for the TX pipe */
			e->ctr[SRN_CC_CTR_RATE_FIFO_STALLS]++;
			return;
		}
	}
	e->cs.cache[p->line].rec.rate_kbps = p->res.rate_kbps;
	srn_cc_ctx_release(&e->cs, p->line);
	p->running = false;
	e->ctr[SRN_CC_CTR_PROC_DONE]++;
	enum srn_cc_slice_state st = e->slice[s].state;
	if (st == SRN_CC_SLICE_BUSY || st == SRN_CC_SLICE_MORE_WORK_A)
		srn_cc_slice_input(e, s, SRN_CC_IN_DONE, t);
	else
		e->ctr[SRN_CC_CTR_DONE_IGNORED]++;  /* firmware took the slice meanwhile */
	e->sel_stalled = false;
}

static srn_ts done_due(const struct srn_cc_engine *e, uint32_t *which)
{
	srn_ts t = SRN_TS_NEVER;
	for (uint32_t s = 0; s < e->cfg.n_procs; s++) {
		const struct srn_cc_proc *p = &e->proc[s];
		if (p->running && !p->blocked && p->done_at < t) {
			t = p->done_at;
			*which = s;
		}
	}
	return t;
}

srn_ts srn_cc_expiry(const struct srn_cc_engine *e)
{
	uint32_t w = 0;
	srn_ts t = done_due(e, &w), a = arb_due(e), s = sel_due(e);
	if (a < t)
		t = a;
	if (s < t)
		t = s;
	return t;
}

void srn_cc_handle_expiry(struct srn_cc_engine *e, srn_ts now)
{
	if (now > e->now)
		e->now = now;
	now = e->now;
	for (;;) {
		uint32_t w = 0;
		srn_ts td = done_due(e, &w), ta = arb_due(e), tsel = sel_due(e);
		srn_ts t = td < ta ? td : ta;
		if (tsel < t)
			t = tsel;
		if (t == SRN_TS_NEVER || t > now)
			return;
		if (td == t) {
			complete(e, w, t);
		} else if (ta == t) {
			uint32_t n = e->cfg.n_procs;
			for (uint32_t k = 0; k < n; k++) {
				uint32_t s = (e->arb_next + k) % n;
				if (grantable(e, s) && e->slice[s].arb_since <= t) {
					grant(e, s, t);
					e->arb_next = (s + 1) % n;
					break;
				}
			}
			e->arb_free = t + e->cfg.cycle_ns;
		} else {
			sel_step(e, t);
			e->sel_free = t + e->cfg.cycle_ns;
		}
	}
}
