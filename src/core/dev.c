/*
 * dev.c - the device: configuration defaults, creation (every table sized
 * here) and destruction, protection domains, counters and timer expiry.
 * The packet paths are recv.c and send.c.
 */
#include "core_int.h"

void srn_dev_cfg_default(struct srn_dev_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_qp = 1024;
	cfg->max_mr = 4096;
	cfg->max_mw = 4096;
	cfg->max_qp_wr = 4096;
	cfg->max_sge = 32;
	cfg->max_inline = 256;
	cfg->max_cqe = 65536;
	cfg->max_rd_atomic = 16;
	cfg->qpn_timewait = 100ull * 1000 * 1000;    /* 100 ms */
	cfg->ack_coalesce = 16;
	cfg->cnp_interval_ns = 50000;
	cfg->qpn_seed = 2;
	cfg->max_inflight_pkts = 1024;
}

#define SRN_AEV_CAP 256u

static bool cfg_ok(const struct srn_dev_cfg *cfg)
{
	return cfg->mem.calloc && cfg->mem.free && cfg->max_qp != 0 && cfg->max_qp <= (1u << 23) &&
	       cfg->max_mr != 0 && cfg->max_mr <= (1u << 24) - 1;
}

static void cfg_fill_defaults(struct srn_dev_cfg *c)
{
	if (c->ack_coalesce == 0)
		c->ack_coalesce = 16;
	if (c->cnp_interval_ns == 0)
		c->cnp_interval_ns = 50000;
	if (c->max_inflight_pkts == 0)
		c->max_inflight_pkts = 1024;
	if (c->max_rd_atomic == 0)
		c->max_rd_atomic = 1;
	if (c->max_sge == 0)
		c->max_sge = 1;
}

static int alloc_tables(struct srn_dev *dev)
{
	const struct srn_dev_cfg *cfg = &dev->cfg;
	dev->qpt = srn_mem_calloc(dev, cfg->max_qp, sizeof(*dev->qpt));
	dev->qpn_free_at = srn_mem_calloc(dev, cfg->max_qp, sizeof(*dev->qpn_free_at));
	dev->qpn_used = srn_mem_calloc(dev, cfg->max_qp, sizeof(*dev->qpn_used));
	dev->mrt = srn_mem_calloc(dev, cfg->max_mr, sizeof(*dev->mrt));
	dev->mr_gen = srn_mem_calloc(dev, cfg->max_mr, sizeof(*dev->mr_gen));
	dev->timers.cap = cfg->max_qp * SRN_QP_TIMERS;
	dev->timers.h = srn_mem_calloc(dev, dev->timers.cap, sizeof(*dev->timers.h));
	dev->aev_cap = SRN_AEV_CAP;
	dev->aev = srn_mem_calloc(dev, dev->aev_cap, sizeof(*dev->aev));
	if (!dev->qpt || !dev->qpn_free_at || !dev->qpn_used || !dev->mrt || !dev->mr_gen ||
	    !dev->timers.h || !dev->aev)
		return SRN_ENOMEM;
	return SRN_OK;
}

int srn_dev_new(struct srn_dev **out, const struct srn_dev_cfg *cfg)
{
	if (!out || !cfg || !cfg_ok(cfg))
		return SRN_EINVAL;
	struct srn_dev *dev = cfg->mem.calloc(1, sizeof(*dev), cfg->mem.user);
	if (!dev)
		return SRN_ENOMEM;
	dev->cfg = *cfg;
	cfg_fill_defaults(&dev->cfg);
	srn_list_init(&dev->qps);
	srn_list_init(&dev->cqs);
	srn_list_init(&dev->srqs);
	srn_list_init(&dev->ready);
	dev->next_pdn = 1;
	int rc = alloc_tables(dev);
	dev->qpn_cursor = (cfg->qpn_seed >= 2 ? cfg->qpn_seed - 2 : 0) % cfg->max_qp;
	if (rc == SRN_OK && cfg->cc)
		rc = srn_cong_new(dev);
	if (rc) {
		srn_dev_del(dev);
		return rc;
	}
	*out = dev;
	return SRN_OK;
}

void srn_dev_del(struct srn_dev *dev)
{
	if (!dev)
		return;
	while (!srn_list_empty(&dev->qps)) {
		struct srn_qp *qp = srn_container_of(dev->qps.next, struct srn_qp, node);
		srn_qp_del(qp, dev->now);
	}
	while (!srn_list_empty(&dev->srqs)) {
		struct srn_srq *srq = srn_container_of(dev->srqs.next, struct srn_srq, node);
		srq->refcnt = 0;
		srn_srq_del(srq);
	}
	while (!srn_list_empty(&dev->cqs)) {
		struct srn_cq *cq = srn_container_of(dev->cqs.next, struct srn_cq, node);
		cq->refcnt = 0;
		srn_cq_del(cq);
	}
	srn_mw_dev_del(dev);            /* windows hold their MRs */
	if (dev->mrt)
		for (uint32_t i = 0; i < dev->cfg.max_mr; i++)
			if (dev->mrt[i])
				srn_mr_dereg(dev, dev->mrt[i]);
	srn_mem_free(dev, dev->qpt);
	srn_mem_free(dev, dev->qpn_free_at);
	srn_mem_free(dev, dev->qpn_used);
	srn_mem_free(dev, dev->mrt);
	srn_mem_free(dev, dev->mr_gen);
	srn_mem_free(dev, dev->timers.h);
	srn_mem_free(dev, dev->aev);
	srn_cong_del(dev);
	dev->cfg.mem.free(dev, dev->cfg.mem.user);
}

uint32_t srn_pd_alloc(struct srn_dev *dev)
{
	uint32_t pdn = dev->next_pdn++;
	if (dev->next_pdn == 0)
		dev->next_pdn = 1;
	return pdn;
}

const uint64_t *srn_dev_counters(const struct srn_dev *dev) { return dev->ctr; }
uint64_t *srn_dev_counters_mut(struct srn_dev *dev) { return dev->ctr; }

srn_ts srn_dev_expiry(const struct srn_dev *dev)
{
	srn_ts t = srn_timer_next(&dev->timers);
	srn_ts c = srn_cong_expiry(dev);    /* the CC engine's processors */
	return c < t ? c : t;
}

void srn_dev_handle_expiry(struct srn_dev *dev, srn_ts now)
{
	srn_dev_tick(dev, now);
	srn_cong_handle_expiry(dev, now);
	srn_timer_run(&dev->timers, now);
}
