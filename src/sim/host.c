/*
 * host.c - a simulated host: one real srn_dev with its PD, CQs and MRs,
 * and the host NIC's uplink. Call order for a host:
 *
 *   srn_sim_host_rx     packet from the wire -> srn_dev_recv -> after
 *   srn_sim_host_tx     uplink free -> srn_dev_send (one packet) -> switch
 *   (timer event)       srn_dev_handle_expiry -> after
 *   srn_sim_host_after  poll send completions (flows post more WRITEs),
 *                       reschedule the core's timer, wake the uplink
 *
 * The uplink takes one packet from the core each time it is free and holds
 * the next one back for the packet's serialisation time at the host's line
 * rate, as a NIC's transmit scheduler does; so the core decides what goes
 * next (and, once congestion control is wired into it, when).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "core/cc/srn_cc.h"

static void *mem_calloc(size_t n, size_t size, void *user)
{
	(void)user;
	return calloc(n, size);
}

static void mem_free(void *p, void *user)
{
	(void)user;
	free(p);
}

static int qtab_add(struct srn_sim_host *hs, uint32_t qpn, uint32_t val)
{
	uint32_t i = (qpn * 2654435761u) & hs->qtab_mask;
	for (uint32_t k = 0; k <= hs->qtab_mask; k++, i = (i + 1) & hs->qtab_mask) {
		if (hs->qtab_qpn[i] == UINT32_MAX) {
			hs->qtab_qpn[i] = qpn;
			hs->qtab_flow[i] = val;
			return 0;
		}
	}
	return SRN_ENOMEM;
}

uint32_t srn_sim_host_flow_of(const struct srn_sim_host *hs, uint32_t qpn)
{
	uint32_t i = (qpn * 2654435761u) & hs->qtab_mask;
	for (;;) {
		uint32_t q = hs->qtab_qpn[i];
		if (q == qpn)
			return hs->qtab_flow[i];
		if (q == UINT32_MAX)
			return UINT32_MAX;
		i = (i + 1) & hs->qtab_mask;
	}
}

int srn_sim_host_register_qp(struct srn_sim_host *hs, uint32_t qpn, uint32_t flow, bool recv)
{
	return qtab_add(hs, qpn, flow | (recv ? SRN_SIM_QTAB_RECV : 0));
}

int srn_sim_host_init(struct srn_sim *sim, uint32_t h, char *err, size_t errlen)
{
	const struct srn_sim_scen *sc = sim->sc;
	struct srn_sim_host *hs = &sim->host[h];
	uint32_t nq = 0, depth = 0;
	size_t src_len = 0, sink_len = 0;
	for (uint32_t i = 0; i < sc->nflows; i++) {
		const struct srn_sim_flow_cfg *f = &sc->flow[i];
		if (f->src == h) {
			nq++;
			depth += f->depth;
			if (f->msg > src_len)
				src_len = f->msg;
		}
		if (f->dst == h) {
			nq++;
			hs->nflows_in++;
			if (f->msg > sink_len)
				sink_len = f->msg;
		}
	}
	hs->idx = h;
	hs->ipv4 = srn_sim_host_ipv4(h);
	struct srn_sim_link_cfg up;
	srn_sim_scen_link(sc, h, SRN_SIM_IN, &up);
	hs->up_rate = up.rate_bps;
	for (int i = 0; i < 8; i++)
		hs->l4[i] = (struct srn_l4){ .src = (uint16_t)(49152 + i), .dst = SRN_ROCEV2_UDP_PORT };

	struct srn_dev_cfg cfg;
	srn_dev_cfg_default(&cfg);
	memset(cfg.gid, 0, 16);
	cfg.gid[10] = cfg.gid[11] = 0xff;
	srn_put32(cfg.gid + 12, hs->ipv4);
	cfg.l4 = hs->l4;
	cfg.n_l4 = 8;
	cfg.max_qp = nq + 4;
	cfg.max_mr = 4;
	cfg.max_cqe = depth + 64;
	cfg.qpn_seed = 0x100 + (uint32_t)srn_sim_rng_below(&sim->rng, 0x10000);
	if (sc->inflight)
		cfg.max_inflight_pkts = sc->inflight;
	if (sc->ack_coalesce)
		cfg.ack_coalesce = sc->ack_coalesce;
	cfg.mem.calloc = mem_calloc;
	cfg.mem.free = mem_free;
	/* congestion control: the device's own engine, paced at the uplink's
	 * rate; the pacer counts IPv4 bytes as the links do (28 bytes of IPv4
	 * and UDP header per packet) */
	static const struct softrnic_cc_algo *const algos[SRN_SIM_CC_N] = {
		[SRN_SIM_CC_DCQCN] = &srn_cc_algo_dcqcn,
		[SRN_SIM_CC_DCQCN_PAPER] = &srn_cc_algo_dcqcn_paper,
		[SRN_SIM_CC_DCQCN_SW] = &srn_cc_algo_dcqcn_sw,
		[SRN_SIM_CC_TIMELY] = &srn_cc_algo_timely,
		[SRN_SIM_CC_TIMELY_SEG] = &srn_cc_algo_timely_seg,
	};
	struct srn_cc_cfg cc;
	if (sc->cc != SRN_SIM_CC_NONE) {
		uint64_t kbps = up.rate_bps / 1000;
		srn_dev_cc_cfg_default(&cc, algos[sc->cc], cfg.max_qp,
				       kbps > UINT32_MAX ? UINT32_MAX : (uint32_t)kbps);
		cc.seed = sc->seed * 1000003u + h;
		cfg.cc = &cc;
		cfg.cc_wire_overhead = SRN_SIM_HDR;
	}
	int rc = srn_dev_new(&hs->dev, &cfg);
	if (rc) {
		snprintf(err, errlen, "host %u: srn_dev_new: %s", h, srn_strerror(rc));
		return rc;
	}
	hs->pd = srn_pd_alloc(hs->dev);
	rc = srn_cq_new(hs->dev, depth + 16, NULL, &hs->cq);
	if (!rc)
		rc = srn_cq_new(hs->dev, 16, NULL, &hs->rcq);
	if (rc) {
		snprintf(err, errlen, "host %u: srn_cq_new: %s", h, srn_strerror(rc));
		return rc;
	}
	/* the data the host writes (a pattern) and the region others write into */
	hs->src_len = src_len ? src_len : 8;
	hs->sink_len = sink_len ? sink_len : 8;
	hs->src_buf = malloc(hs->src_len);
	hs->sink_buf = calloc(1, hs->sink_len);
	if (!hs->src_buf || !hs->sink_buf) {
		snprintf(err, errlen, "host %u: out of memory", h);
		return SRN_ENOMEM;
	}
	for (size_t i = 0; i < hs->src_len; i++)
		hs->src_buf[i] = (uint8_t)(i * 131u + h * 7u + 1u);
	rc = srn_mr_reg(hs->dev, hs->pd, hs->src_buf, (uint64_t)(uintptr_t)hs->src_buf, hs->src_len,
			SRN_ACCESS_LOCAL_WRITE, &hs->src_mr);
	if (!rc)
		rc = srn_mr_reg(hs->dev, hs->pd, hs->sink_buf, (uint64_t)(uintptr_t)hs->sink_buf,
				hs->sink_len, SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE,
				&hs->sink_mr);
	if (rc) {
		snprintf(err, errlen, "host %u: srn_mr_reg: %s", h, srn_strerror(rc));
		return rc;
	}
	struct srn_mr_info mi;
	srn_mr_info(hs->src_mr, &mi);
	hs->src_lkey = mi.lkey;
	srn_mr_info(hs->sink_mr, &mi);
	hs->sink_rkey = mi.rkey;

	uint32_t tab = 16;
	while (tab < 2 * nq)
		tab *= 2;
	hs->qtab_qpn = malloc(tab * sizeof(uint32_t));
	hs->qtab_flow = malloc(tab * sizeof(uint32_t));
	if (!hs->qtab_qpn || !hs->qtab_flow) {
		snprintf(err, errlen, "host %u: out of memory", h);
		return SRN_ENOMEM;
	}
	memset(hs->qtab_qpn, 0xff, tab * sizeof(uint32_t));
	hs->qtab_mask = tab - 1;
	return 0;
}

void srn_sim_host_free(struct srn_sim_host *hs)
{
	if (hs->dev)
		srn_dev_del(hs->dev);   /* frees QPs, CQs and MRs too */
	free(hs->src_buf);
	free(hs->sink_buf);
	free(hs->qtab_qpn);
	free(hs->qtab_flow);
	memset(hs, 0, sizeof(*hs));
}

static void poll_completions(struct srn_sim *sim, struct srn_sim_host *hs)
{
	struct srn_cqe cqe[16];
	int n;
	while ((n = srn_cq_poll(hs->cq, cqe, 16)) > 0) {
		for (int i = 0; i < n; i++) {
			uint32_t v = srn_sim_host_flow_of(hs, cqe[i].qp_num);
			if (v != UINT32_MAX && !(v & SRN_SIM_QTAB_RECV))
				srn_sim_flow_complete(sim, v, &cqe[i]);
		}
	}
}

void srn_sim_host_after(struct srn_sim *sim, uint32_t h)
{
	struct srn_sim_host *hs = &sim->host[h];
	poll_completions(sim, hs);
	srn_sim_sched_set(&sim->sched, sim->id_timer0 + h, srn_dev_expiry(hs->dev));
	uint32_t tx = sim->id_tx0 + h;
	if (srn_sim_sched_get(&sim->sched, tx) == SRN_TS_NEVER && srn_dev_has_output(hs->dev))
		srn_sim_sched_set(&sim->sched, tx, hs->tx_free_at > sim->now ? hs->tx_free_at : sim->now);
}

void srn_sim_host_tx(struct srn_sim *sim, uint32_t h)
{
	struct srn_sim_host *hs = &sim->host[h];
	struct srn_pkt_meta meta;
	uint32_t tx = sim->id_tx0 + h;
	ssize_t n = srn_dev_send(hs->dev, sim->txbuf + SRN_SIM_HDR, SRN_MAX_PKT, &meta, sim->now);
	if (n <= 0) {
		srn_sim_sched_set(&sim->sched, tx, SRN_TS_NEVER);
	} else {
		size_t len = srn_sim_frame_wrap(sim->txbuf, (size_t)n, &meta);
		srn_fabric_input(sim->fab, h, sim->txbuf, len, sim->now);
		srn_sim_sched_set(&sim->sched, 0, srn_fabric_expiry(sim->fab));
		hs->tx_free_at = sim->now + srn_sim_ser_time(hs->up_rate, len);
		srn_sim_sched_set(&sim->sched, tx, hs->tx_free_at);
	}
	srn_sim_sched_set(&sim->sched, sim->id_timer0 + h, srn_dev_expiry(hs->dev));
}

void srn_sim_host_rx(struct srn_sim *sim, uint32_t h, const uint8_t *pkt, size_t len)
{
	struct srn_sim_host *hs = &sim->host[h];
	struct srn_pkt_meta meta;
	const uint8_t *p;
	size_t plen;
	if (!srn_sim_frame_unwrap(pkt, len, &meta, &p, &plen))
		return;
	/* goodput: payload of the in-order data packet the responder accepts */
	struct srn_sim_flow *fl = NULL;
	uint32_t psn = 0, paylen = 0;
	if (plen >= SRN_BTH_LEN) {
		uint32_t v = srn_sim_host_flow_of(hs, srn_get24(p + 5));
		if (v != UINT32_MAX && (v & SRN_SIM_QTAB_RECV)) {
			fl = &sim->flow[v & ~SRN_SIM_QTAB_RECV];
			struct srn_pkt pk;
			psn = srn_get24(p + 9) & SRN_PSN_MASK;
			if (psn != fl->rx_epsn || srn_pkt_parse(&pk, p, plen) != 0 ||
			    !(pk.info->mask & SRN_M_WRITE))
				fl = NULL;
			else
				paylen = pk.paylen;
		}
	}
	int rc = srn_dev_recv(hs->dev, p, plen, &meta, sim->now);
	if (fl && rc == 0) {
		fl->rx_bytes += paylen;
		fl->rx_epsn = srn_psn_add(fl->rx_epsn, 1);
	}
	srn_sim_host_after(sim, h);
}
