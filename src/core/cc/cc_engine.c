/*
 * cc_engine.c - the CC engine object: configuration, creation, inputs
 * (events from the pipes, firmware signals), the rate-update FIFO output,
 * and read-only observation. The clocked behaviour is in cc_step.c.
 */
#include "cc_int.h"

void srn_cc_cfg_default(struct srn_cc_cfg *cfg)
{
	*cfg = (struct srn_cc_cfg){
		.n_procs = 16,
		.tx_fifo_depth = 256,
		.rx_fifo_depth = 256,
		.n_classes = 5,
		.coalesce = true,
		.ctx_cache_entries = 64,
		.ctx_store_flows = 65536,
		.cycle_ns = 1,
		.proc_ns = 100,
		.ctx_miss_ns = 200,
		.rate_fifo_depth = 64,
		.line_rate_kbps = 100u * SOFTRNIC_CC_KBPS_PER_GBPS,
		.min_rate_kbps = 1u * SOFTRNIC_CC_KBPS_PER_MBPS,
		.default_rate_kbps = 100u * SOFTRNIC_CC_KBPS_PER_GBPS,
		.new_flow_rtt_request = true,
		.seed = 0x5eed,
		.algo = &srn_cc_algo_dcqcn,
	};
	/* less important types are thinned earlier (source 004 fig. 7) */
	cfg->wred[SOFTRNIC_CC_EV_TX]       = (struct srn_cc_wred){ 192, 256 };
	cfg->wred[SOFTRNIC_CC_EV_RTT_SENT] = (struct srn_cc_wred){ 224, 256 };
	cfg->wred[SOFTRNIC_CC_EV_ACK]      = (struct srn_cc_wred){ 192, 256 };
	cfg->wred[SOFTRNIC_CC_EV_CNP]      = (struct srn_cc_wred){ 224, 256 };
	cfg->wred[SOFTRNIC_CC_EV_NACK]     = (struct srn_cc_wred){ 224, 256 };
	cfg->wred[SOFTRNIC_CC_EV_RTT]      = (struct srn_cc_wred){ 224, 256 };
	static const uint8_t map[SOFTRNIC_CC_EV_NTYPES] = {
		[SOFTRNIC_CC_EV_TX] = 0, [SOFTRNIC_CC_EV_RTT_SENT] = 0, [SOFTRNIC_CC_EV_CNP] = 1,
		[SOFTRNIC_CC_EV_NACK] = 2, [SOFTRNIC_CC_EV_ACK] = 3, [SOFTRNIC_CC_EV_RTT] = 4,
		[SOFTRNIC_CC_EV_FW] = 4,
	};
	for (unsigned t = 0; t < SOFTRNIC_CC_EV_NTYPES; t++)
		cfg->type_class[t] = map[t];
}

static int algo_check(const struct softrnic_cc_algo *a)
{
	if (!a || a->abi_version != SOFTRNIC_CC_ABI_VERSION || a->ctx_size > SOFTRNIC_CC_CTX_SIZE ||
	    !a->on_event)
		return SRN_EINVAL;
	return 0;
}

static int cfg_check(const struct srn_cc_cfg *c)
{
	if (c->n_procs == 0 || c->n_procs > SRN_CC_MAX_PROCS)
		return SRN_EINVAL;
	if (c->tx_fifo_depth == 0 || c->rx_fifo_depth == 0 || c->rate_fifo_depth == 0)
		return SRN_EINVAL;
	if (c->n_classes == 0 || c->n_classes > SOFTRNIC_CC_MAX_CLASSES)
		return SRN_EINVAL;
	for (unsigned t = 0; t < SOFTRNIC_CC_EV_NTYPES; t++) {
		if (c->type_class[t] >= c->n_classes)
			return SRN_EINVAL;
		if (t == SOFTRNIC_CC_EV_FW)
			continue;
		uint32_t depth = srn_cc_ev_is_tx(t) ? c->tx_fifo_depth : c->rx_fifo_depth;
		/* TH2 <= depth: P(drop) reaches 1 before the FIFO can overflow */
		if (c->wred[t].th1 > c->wred[t].th2 || c->wred[t].th2 > depth)
			return SRN_EINVAL;
	}
	if (c->ctx_cache_entries < c->n_procs || c->ctx_store_flows == 0 ||
	    c->ctx_store_flows > (1u << 30))
		return SRN_EINVAL;
	if (c->line_rate_kbps == 0 || c->min_rate_kbps > c->line_rate_kbps ||
	    c->default_rate_kbps < c->min_rate_kbps || c->default_rate_kbps > c->line_rate_kbps)
		return SRN_EINVAL;
	return algo_check(c->algo);
}

static void *alloc(const struct srn_mem *m, size_t n, size_t size)
{
	return m->calloc(n, size, m->user);
}

void srn_cc_engine_del(struct srn_cc_engine *eng)
{
	if (!eng)
		return;
	const struct srn_mem m = eng->mem;
	void *parts[] = { eng->txq.ring, eng->rxq.ring, eng->cam.flow, eng->cam.valid, eng->slice,
			  eng->ff, eng->trans, eng->proc, eng->cs.cache, eng->cs.store, eng->rq };
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i])
			m.free(parts[i], m.user);
	m.free(eng, m.user);
}

int srn_cc_engine_new(struct srn_cc_engine **out, const struct srn_cc_cfg *cfg,
		      const struct srn_mem *mem)
{
	if (!out || !cfg || !mem || !mem->calloc || !mem->free)
		return SRN_EINVAL;
	*out = NULL;
	int rc = cfg_check(cfg);
	if (rc)
		return rc;
	struct srn_cc_engine *e = alloc(mem, 1, sizeof(*e));
	if (!e)
		return SRN_ENOMEM;
	e->cfg = *cfg;
	e->mem = *mem;
	uint32_t n = cfg->n_procs;
	uint32_t tsize = 1;
	while (tsize < 2 * cfg->ctx_store_flows)
		tsize <<= 1;
	e->txq.cap = cfg->tx_fifo_depth;
	e->rxq.cap = cfg->rx_fifo_depth;
	e->txq.ring = alloc(mem, cfg->tx_fifo_depth, sizeof(*e->txq.ring));
	e->rxq.ring = alloc(mem, cfg->rx_fifo_depth, sizeof(*e->rxq.ring));
	e->cam.n = n;
	e->cam.flow = alloc(mem, n, sizeof(*e->cam.flow));
	e->cam.valid = alloc(mem, n, sizeof(*e->cam.valid));
	e->slice = alloc(mem, n, sizeof(*e->slice));
	e->ff = alloc(mem, (size_t)n * cfg->n_classes, sizeof(*e->ff));
	e->trans = alloc(mem, (size_t)n * SRN_CC_SLICE_NSTATES * SRN_CC_SLICE_NSTATES, sizeof(*e->trans));
	e->proc = alloc(mem, n, sizeof(*e->proc));
	e->cs.n_cache = cfg->ctx_cache_entries;
	e->cs.cache = alloc(mem, cfg->ctx_cache_entries, sizeof(*e->cs.cache));
	e->cs.store_mask = tsize - 1;
	e->cs.store_max = cfg->ctx_store_flows;
	e->cs.store = alloc(mem, tsize, sizeof(*e->cs.store));
	e->rq = alloc(mem, cfg->rate_fifo_depth, sizeof(*e->rq));
	if (!e->txq.ring || !e->rxq.ring || !e->cam.flow || !e->cam.valid || !e->slice || !e->ff ||
	    !e->trans || !e->proc || !e->cs.cache || !e->cs.store || !e->rq) {
		srn_cc_engine_del(e);
		return SRN_ENOMEM;
	}
	srn_cc_prng_seed(&e->prng, cfg->seed);
	*out = e;
	return 0;
}

int srn_cc_post_event(struct srn_cc_engine *eng, const struct srn_cc_ev *ev, srn_ts now)
{
	if (!eng || !ev || ev->type >= SOFTRNIC_CC_EV_NTYPES)
		return SRN_EINVAL;
	if (now > eng->now)
		eng->now = now;
	now = eng->now;
	eng->ctr[SRN_CC_CTR_EV_POSTED]++;
	if (ev->type == SOFTRNIC_CC_EV_FW) {
		/* no FIFO: consumed before the next one is accepted (CC-03) */
		if (eng->fw_valid) {
			eng->ctr[SRN_CC_CTR_FW_BUSY_REJECTS]++;
			return SRN_EBUSY;
		}
		eng->fw_valid = true;
		eng->fw_ev = *ev;
		eng->fw_t_in = now;
		eng->ctr[SRN_CC_CTR_FW_IN]++;
		return 0;
	}
	bool tx = srn_cc_ev_is_tx(ev->type);
	struct srn_cc_fifo *f = tx ? &eng->txq : &eng->rxq;
	if (srn_cc_wred_drop(&eng->cfg.wred[ev->type], f->count, &eng->prng)) {
		eng->ctr[SRN_CC_CTR_WRED_DROPS]++;
		eng->ctr[SRN_CC_CTR_DROP_TX + ev->type]++;
		return SRN_EDROP;
	}
	if (srn_cc_fifo_push(f, ev, now)) {      /* cannot happen with th2 <= depth */
		eng->ctr[SRN_CC_CTR_FIFO_OVERFLOW]++;
		return SRN_EDROP;
	}
	eng->ctr[tx ? SRN_CC_CTR_TX_FIFO_IN : SRN_CC_CTR_RX_FIFO_IN]++;
	return 0;
}

int srn_cc_pop_rate_update(struct srn_cc_engine *eng, struct srn_cc_rate_update *upd)
{
	if (!eng->rq_count)
		return SRN_EAGAIN;
	*upd = eng->rq[eng->rq_head];
	eng->rq_head = (eng->rq_head + 1) % eng->cfg.rate_fifo_depth;
	eng->rq_count--;
	/* room again: blocked completions retry, no earlier than the latest
	 * time the engine has seen (the pop itself carries no time) */
	for (uint32_t i = 0; i < eng->cfg.n_procs; i++) {
		struct srn_cc_proc *p = &eng->proc[i];
		if (p->blocked) {
			p->blocked = false;
			if (p->done_at < eng->now)
				p->done_at = eng->now;
		}
	}
	return 0;
}

static int fw_signal(struct srn_cc_engine *eng, uint32_t proc, enum srn_cc_slice_input in, srn_ts now)
{
	if (!eng || proc >= eng->cfg.n_procs)
		return SRN_EINVAL;
	if (now > eng->now)
		eng->now = now;
	if (srn_cc_slice_next(eng->slice[proc].state, in) == SRN_CC_SLICE_NSTATES) {
		eng->ctr[SRN_CC_CTR_BAD_SIGNALS]++;
		return SRN_ESTATE;
	}
	srn_cc_slice_input(eng, proc, in, eng->now);
	return 0;
}

int srn_cc_fw_override(struct srn_cc_engine *eng, uint32_t proc, srn_ts now)
{
	int rc = fw_signal(eng, proc, SRN_CC_IN_FW_OVERRIDE, now);
	if (!rc)
		eng->ctr[SRN_CC_CTR_FW_OVERRIDES]++;
	return rc;
}

int srn_cc_fw_release(struct srn_cc_engine *eng, uint32_t proc, srn_ts now)
{
	int rc = fw_signal(eng, proc, SRN_CC_IN_FW_RELEASE, now);
	if (!rc)
		eng->ctr[SRN_CC_CTR_FW_RELEASES]++;
	return rc;
}

int srn_cc_fw_set_rate(struct srn_cc_engine *eng, uint32_t flow_id, uint32_t rate_kbps,
		       bool rtt_request, srn_ts now)
{
	if (!eng)
		return SRN_EINVAL;
	if (now > eng->now)
		eng->now = now;
	if (rate_kbps > eng->cfg.line_rate_kbps)
		rate_kbps = eng->cfg.line_rate_kbps;
	if (rate_kbps < eng->cfg.min_rate_kbps)
		rate_kbps = eng->cfg.min_rate_kbps;
	struct srn_cc_rate_update u = { .flow_id = flow_id, .rate_kbps = rate_kbps,
					.rtt_request = rtt_request, .proc_id = UINT32_MAX,
					.ts = eng->now };
	int rc = srn_cc_rq_push(eng, &u);
	if (rc)
		return rc;
	bool in_cache;
	struct srn_cc_flow_rec *r = srn_cc_ctx_find(&eng->cs, flow_id, &in_cache);
	if (r)
		r->rate_kbps = rate_kbps;
	eng->ctr[SRN_CC_CTR_FW_RATE_SETS]++;
	return 0;
}

int srn_cc_set_algo(struct srn_cc_engine *eng, const struct softrnic_cc_algo *algo)
{
	if (!eng || algo_check(algo))
		return SRN_EINVAL;
	eng->cfg.algo = algo;
	eng->algo_gen++;
	eng->ctr[SRN_CC_CTR_ALGO_SWAPS]++;
	return 0;
}

const struct softrnic_cc_algo *srn_cc_algo(const struct srn_cc_engine *eng) { return eng->cfg.algo; }

int srn_cc_set_type_class(struct srn_cc_engine *eng, unsigned type, unsigned class_id)
{
	if (!eng || type >= SOFTRNIC_CC_EV_NTYPES || class_id >= eng->cfg.n_classes)
		return SRN_EINVAL;
	eng->cfg.type_class[type] = (uint8_t)class_id;
	return 0;
}

int srn_cc_type_class(const struct srn_cc_engine *eng, unsigned type)
{
	if (!eng || type >= SOFTRNIC_CC_EV_NTYPES)
		return SRN_EINVAL;
	return eng->cfg.type_class[type];
}

int srn_cc_flow_del(struct srn_cc_engine *eng, uint32_t flow_id)
{
	if (!eng)
		return SRN_EINVAL;
	return srn_cc_ctx_remove(&eng->cs, flow_id);
}

/* ---- observation --------------------------------------------------------- */
const uint64_t *srn_cc_counters(const struct srn_cc_engine *eng) { return eng->ctr; }
uint32_t srn_cc_n_procs(const struct srn_cc_engine *eng) { return eng->cfg.n_procs; }
uint32_t srn_cc_fifo_depth(const struct srn_cc_engine *eng, bool tx)
{
	return tx ? eng->txq.count : eng->rxq.count;
}
bool srn_cc_fw_pending(const struct srn_cc_engine *eng) { return eng->fw_valid; }
uint32_t srn_cc_rate_fifo_depth(const struct srn_cc_engine *eng) { return eng->rq_count; }
bool srn_cc_selector_stalled(const struct srn_cc_engine *eng) { return eng->pending_valid; }

enum srn_cc_slice_state srn_cc_slice_state_of(const struct srn_cc_engine *eng, uint32_t slice)
{
	return slice < eng->cfg.n_procs ? eng->slice[slice].state : SRN_CC_SLICE_NSTATES;
}

uint64_t srn_cc_transitions(const struct srn_cc_engine *eng, uint32_t slice,
			    enum srn_cc_slice_state from, enum srn_cc_slice_state to)
{
	if (from >= SRN_CC_SLICE_NSTATES || to >= SRN_CC_SLICE_NSTATES)
		return 0;
	uint64_t sum = 0;
	for (uint32_t s = 0; s < eng->cfg.n_procs; s++)
		if (slice == UINT32_MAX || slice == s)
			sum += eng->trans[((size_t)s * SRN_CC_SLICE_NSTATES + from) * SRN_CC_SLICE_NSTATES + to];
	return sum;
}

int srn_cc_cam_search(const struct srn_cc_engine *eng, uint32_t flow_id, uint32_t *proc)
{
	return srn_cc_cam_lookup(&eng->cam, flow_id, proc);
}

int srn_cc_cam_read(const struct srn_cc_engine *eng, uint32_t proc, uint32_t *flow_id)
{
	if (proc >= eng->cfg.n_procs)
		return SRN_EINVAL;
	if (!eng->cam.valid[proc])
		return SRN_ENOENT;
	*flow_id = eng->cam.flow[proc];
	return 0;
}

int srn_cc_ff_read(const struct srn_cc_engine *eng, uint32_t proc, uint32_t class_id,
		   struct srn_cc_ff_entry *out)
{
	if (proc >= eng->cfg.n_procs || class_id >= eng->cfg.n_classes)
		return SRN_EINVAL;
	*out = eng->ff[(size_t)proc * eng->cfg.n_classes + class_id];
	return 0;
}

int srn_cc_proc_info(const struct srn_cc_engine *eng, uint32_t proc, struct srn_cc_proc_info *out)
{
	if (proc >= eng->cfg.n_procs)
		return SRN_EINVAL;
	const struct srn_cc_proc *p = &eng->proc[proc];
	*out = (struct srn_cc_proc_info){ .running = p->running, .flow_id = p->flow_id,
		.flow_hash = p->flow_hash, .started = p->started, .done_at = p->done_at,
		.invocations = p->invocations, .runs = p->runs };
	return 0;
}

int srn_cc_flow_state(const struct srn_cc_engine *eng, uint32_t flow_id, struct srn_cc_flow_state *out)
{
	bool in_cache;
	/* the store is not modified; the lookup helper is shared with writers */
	const struct srn_cc_flow_rec *r =
		srn_cc_ctx_find((struct srn_cc_ctxstore *)&eng->cs, flow_id, &in_cache);
	if (!r)
		return SRN_ENOENT;
	out->rate_kbps = r->rate_kbps;
	out->in_cache = in_cache;
	out->ctx = r->ctx;
	return 0;
}
