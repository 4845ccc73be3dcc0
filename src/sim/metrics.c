/*
 * metrics.c - summary numbers from the recorded series: Jain's fairness
 * index over the metrics window, time to converge to the max-min fair
 * share (every active flow within 10% for 5 consecutive samples, after the
 * last flow start, and still so at the end of the run - see
 * srn_sim_converge_sample; samples of at least 50 packets), queue percentiles, link utilisation, flow
 * completion times and counters.
 *
 * Sample k (k = 0, 1, ...) covers the interval ((k)dt, (k+1)dt]; the window
 * [t0, t1) takes the samples whose interval lies inside it.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

#define CONV_TOL     0.10
#define CONV_SAMPLES 5

double srn_sim_jain(const double *x, size_t n)
{
	double s = 0, s2 = 0;
	for (size_t i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	if (n == 0 || s2 == 0)
		return 1.0;
	return s * s / ((double)n * s2);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t srn_sim_quantile(uint64_t *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	/* nearest rank: the smallest value with at least q*n values <= it */
	size_t r = (size_t)(q * (double)n + 0.999999999);
	if (r == 0)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

/* max-min fair shares (Gbit/s of payload) of the active flows by
 * progressive filling over the host uplinks and the switch output ports */
static void fair_shares(const struct srn_sim *sim, const bool *active, double *share)
{
	const struct srn_sim_scen *sc = sim->sc;
	uint32_t nr = 2 * sim->nhosts;
	double *rem = calloc(nr, sizeof(double));
	uint32_t *cnt = calloc(nr, sizeof(uint32_t));
	bool *frozen = calloc(sim->nflows, sizeof(bool));
	if (!rem || !cnt || !frozen)
		goto out;
	double eff = srn_sim_payload_efficiency(sc->mtu);
	for (uint32_t h = 0; h < sim->nhosts; h++) {
		struct srn_sim_link_cfg l;
		srn_sim_scen_link(sc, h, SRN_SIM_IN, &l);
		rem[2 * h] = (double)l.rate_bps / 1e9 * eff;
		srn_sim_scen_link(sc, h, SRN_SIM_OUT, &l);
		rem[2 * h + 1] = (double)l.rate_bps / 1e9 * eff;
	}
	uint32_t left = 0;
	for (uint32_t f = 0; f < sim->nflows; f++) {
		share[f] = 0;
		frozen[f] = !active[f];
		if (active[f])
			left++;
	}
	while (left) {
		memset(cnt, 0, nr * sizeof(uint32_t));
		for (uint32_t f = 0; f < sim->nflows; f++)
			if (!frozen[f]) {
				cnt[2 * sc->flow[f].src]++;
				cnt[2 * sc->flow[f].dst + 1]++;
			}
		double inc = -1;
		for (uint32_t r = 0; r < nr; r++)
			if (cnt[r] && (inc < 0 || rem[r] / cnt[r] < inc))
				inc = rem[r] / cnt[r];
		for (uint32_t r = 0; r < nr; r++)
			rem[r] -= inc * cnt[r];
		for (uint32_t f = 0; f < sim->nflows; f++) {
			if (frozen[f])
				continue;
			share[f] += inc;
			uint32_t a = 2 * sc->flow[f].src, b = 2 * sc->flow[f].dst + 1;
			if (rem[a] <= 1e-9 * (1 + inc) || rem[b] <= 1e-9 * (1 + inc)) {
				frozen[f] = true;
				left--;
			}
		}
	}
out:
	free(rem);
	free(cnt);
	free(frozen);
}

/* flow f carries traffic during all of sample k */
static bool active_in(const struct srn_sim_flow *fl, srn_ts a, srn_ts b)
{
	if (fl->cfg->start > a)
		return false;
	if ((fl->done || fl->failed) && fl->end < b)
		return false;
	return true;
}

int64_t srn_sim_converge_sample(const double *rate, const double *share, uint32_t nsamples,
				uint32_t nflows, uint32_t first)
{
	int64_t entry = -1;     /* first sample of the run that made the state converged */
	bool conv = false;
	uint32_t in_run = 0, out_run = 0;
	for (uint32_t k = first; k < nsamples; k++) {
		bool ok = false, any = false;
		for (uint32_t f = 0; f < nflows; f++) {
			double sh = share[(size_t)k * nflows + f];
			if (sh < 0)
				continue;
			double r = rate[(size_t)k * nflows + f];
			if (!any)
				ok = true;
			any = true;
			if (r < sh * (1 - CONV_TOL) || r > sh * (1 + CONV_TOL))
				ok = false;
		}
		if (ok) {
			in_run++;
			out_run = 0;
			if (!conv && in_run == CONV_SAMPLES) {
				conv = true;
				entry = (int64_t)k + 1 - CONV_SAMPLES;
			}
		} else {
			out_run++;
			in_run = 0;
			if (conv && out_run == CONV_SAMPLES) {
				conv = false;
				entry = -1;
			}
		}
	}
	return conv ? entry : -1;
}

/* Samples of the convergence test are groups of g series samples, g the
 * smallest for which the smallest fair share delivers CONV_RES_PKTS MTU
 * payloads per group: one packet more or less is then 2% of the share, well
 * inside the 10% band (a 10 us sample at 20 Gbit/s holds 6 packets of 4 KiB,
 * and one packet is 17%: every sample would be "out" on jitter alone). */
#define CONV_RES_PKTS 50

static void convergence(const struct srn_sim *sim, struct srn_sim_metrics *m)
{
	const struct srn_sim_series *s = &sim->ser;
	uint32_t nf = sim->nflows;
	size_t cells = (size_t)(s->n ? s->n : 1) * (nf ? nf : 1);
	bool *act = calloc(nf ? nf : 1, sizeof(bool)), *prev = calloc(nf ? nf : 1, sizeof(bool));
	double *share = calloc(nf ? nf : 1, sizeof(double));
	double *shr = calloc(cells, sizeof(double));
	double *grate = calloc(cells, sizeof(double)), *gshr = calloc(cells, sizeof(double));
	m->converge_ref = 0;
	for (uint32_t f = 0; f < nf; f++)
		if (sim->sc->flow[f].start > m->converge_ref)
			m->converge_ref = sim->sc->flow[f].start;
	m->converged = false;
	m->converge_time = 0;
	m->converge_group = 0;
	if (!act || !prev || !share || !shr || !grate || !gshr || s->dt == 0)
		goto out;
	/* the first sample that lies wholly after the last flow start */
	uint32_t first = (uint32_t)((m->converge_ref + s->dt - 1) / s->dt);
	bool have = false;
	double min_share = 0;
	for (uint32_t k = first; k < s->n; k++) {
		srn_ts a = (srn_ts)k * s->dt, b = a + s->dt;
		for (uint32_t f = 0; f < nf; f++)
			act[f] = active_in(&sim->flow[f], a, b);
		if (!have || memcmp(act, prev, nf * sizeof(bool))) {
			fair_shares(sim, act, share);
			memcpy(prev, act, nf * sizeof(bool));
			have = true;
		}
		for (uint32_t f = 0; f < nf; f++) {
			shr[(size_t)k * nf + f] = act[f] ? share[f] : -1;
			if (act[f] && share[f] > 0 && (min_share == 0 || share[f] < min_share))
				min_share = share[f];
		}
	}
	if (min_share == 0)
		goto out;
	/* ns for CONV_RES_PKTS payloads at the smallest share (Gbit/s = bit/ns) */
	double need = CONV_RES_PKTS * (double)sim->sc->mtu * 8.0 / min_share;
	uint32_t g = (uint32_t)(need / (double)s->dt);
	if ((double)g * (double)s->dt < need)
		g++;
	if (g == 0)
		g = 1;
	m->converge_group = (srn_ts)g * s->dt;
	uint32_t ng = (s->n - first) / g;
	for (uint32_t j = 0; j < ng; j++) {
		for (uint32_t f = 0; f < nf; f++) {
			uint64_t bytes = 0;
			double sh = 0;
			for (uint32_t i = 0; i < g; i++) {
				size_t at = (size_t)(first + j * g + i) * nf + f;
				bytes += s->flow_bytes[at];
				if (sh >= 0)
					sh = shr[at];   /* inactive in any sample: inactive */
			}
			grate[(size_t)j * nf + f] = (double)bytes * 8.0 / ((double)g * (double)s->dt);
			gshr[(size_t)j * nf + f] = sh;
		}
	}
	int64_t j0 = srn_sim_converge_sample(grate, gshr, ng, nf, 0);
	if (j0 >= 0) {
		m->converged = true;
		/* the end of the first group of the run */
		m->converge_time = (srn_ts)(first + ((uint32_t)j0 + 1) * g) * s->dt - m->converge_ref;
	}
out:
	free(act);
	free(prev);
	free(share);
	free(shr);
	free(grate);
	free(gshr);
}

void srn_sim_flow_result(const struct srn_sim *sim, uint32_t i, struct srn_sim_flow_result *r)
{
	const struct srn_sim_flow *fl = &sim->flow[i];
	const struct srn_sim_series *s = &sim->ser;
	memset(r, 0, sizeof(*r));
	r->src = fl->cfg->src;
	r->dst = fl->cfg->dst;
	r->start = fl->cfg->start;
	r->size = fl->cfg->size;
	r->rx_bytes = fl->rx_bytes;
	r->acked_bytes = fl->acked_bytes;
	r->wrs_posted = fl->wrs_posted;
	r->wrs_done = fl->wrs_done;
	r->done = fl->done;
	r->fct = fl->done ? fl->end - fl->cfg->start : 0;
	r->failed = fl->failed;
	r->fail_status = fl->fail_status;
	srn_ts t0, t1;
	srn_sim_scen_window(sim->sc, &t0, &t1);
	uint64_t bytes = 0, n = 0;
	for (uint32_t k = 0; k < s->n; k++) {
		srn_ts a = (srn_ts)k * s->dt, b = a + s->dt;
		if (a >= t0 && b <= t1) {
			bytes += s->flow_bytes[(size_t)k * s->nflows + i];
			n++;
		}
	}
	r->win_gbps = n ? (double)bytes * 8.0 / (double)(n * s->dt) : 0;
}

void srn_sim_metrics(const struct srn_sim *sim, struct srn_sim_metrics *m)
{
	const struct srn_sim_series *s = &sim->ser;
	memset(m, 0, sizeof(*m));
	srn_sim_scen_window(sim->sc, &m->t0, &m->t1);
	m->nflows = sim->nflows;
	m->events = sim->events;

	/* fairness over the flows active during the whole window */
	double *x = calloc(sim->nflows ? sim->nflows : 1, sizeof(double));
	uint64_t *fct = calloc(sim->nflows ? sim->nflows : 1, sizeof(uint64_t));
	uint64_t *q = calloc(s->n ? s->n : 1, sizeof(uint64_t));
	m->jain = -1;
	if (x && fct && q) {
		for (uint32_t f = 0; f < sim->nflows; f++) {
			struct srn_sim_flow_result r;
			srn_sim_flow_result(sim, f, &r);
			if (active_in(&sim->flow[f], m->t0, m->t1) && sim->flow[f].started)
				x[m->jain_n++] = r.win_gbps;
			if (r.done)
				fct[m->flows_done++] = r.fct;
			if (r.failed)
				m->flows_failed++;
		}
		if (m->jain_n)
			m->jain = srn_sim_jain(x, m->jain_n);
		if (m->flows_done) {
			uint64_t sum = 0;
			for (uint32_t i = 0; i < m->flows_done; i++)
				sum += fct[i];
			m->fct_mean = sum / m->flows_done;
			m->fct_p99 = srn_sim_quantile(fct, m->flows_done, 0.99);
			m->fct_max = fct[m->flows_done - 1];   /* sorted by quantile */
		}
	}
	convergence(sim, m);

	/* the bottleneck: the output port with the most flows */
	uint32_t best = 0;
	for (uint32_t j = 0; j < sim->nq; j++)
		if (sim->host[sim->qport[j]].nflows_in > sim->host[sim->qport[best]].nflows_in)
			best = j;
	if (sim->nq && q) {
		uint32_t h = sim->qport[best];
		m->bottleneck = h;
		size_t nq = 0;
		uint64_t out = 0, good = 0;
		for (uint32_t k = 0; k < s->n; k++) {
			srn_ts a = (srn_ts)k * s->dt, b = a + s->dt;
			if (a < m->t0 || b > m->t1)
				continue;
			q[nq++] = s->q_bytes[(size_t)k * s->nq + best];
			out += s->q_out[(size_t)k * s->nq + best];
			for (uint32_t f = 0; f < sim->nflows; f++)
				if (sim->sc->flow[f].dst == h)
					good += s->flow_bytes[(size_t)k * s->nflows + f];
		}
		struct srn_sim_link_cfg l;
		srn_sim_scen_link(sim->sc, h, SRN_SIM_OUT, &l);
		double cap_bits = (double)l.rate_bps * (double)(nq * s->dt) / 1e9;
		if (nq) {
			m->util = (double)out * 8.0 / cap_bits;
			m->goodput_util = (double)good * 8.0 / cap_bits;
			m->q_p50 = srn_sim_quantile(q, nq, 0.50);
			m->q_p99 = srn_sim_quantile(q, nq, 0.99);
			m->q_max = q[nq - 1];
		}
	}
	for (uint32_t h = 0; h < sim->nhosts; h++) {
		for (int d = 0; d < 2; d++) {
			const uint64_t *c = srn_fabric_counters(sim->fab, h, (enum srn_fabric_dir)d);
			m->ecn_marks += c[SRN_FABRIC_CTR_ECN_MARKS];
			m->drops += c[SRN_FABRIC_CTR_DROP_DOWN] + c[SRN_FABRIC_CTR_DROP_LOSS] +
				    c[SRN_FABRIC_CTR_DROP_BURST] + c[SRN_FABRIC_CTR_DROP_TAIL] +
				    c[SRN_FABRIC_CTR_DROP_NOSLOT] + c[SRN_FABRIC_CTR_DROP_MALFORMED] +
				    c[SRN_FABRIC_CTR_DROP_OVERSIZE] + c[SRN_FABRIC_CTR_DROP_NOROUTE];
		}
		const uint64_t *dc = srn_dev_counters(sim->host[h].dev);
		m->cnps += dc[SRN_CTR_TX_CNPS];
		m->retransmits += dc[SRN_CTR_RETRANSMIT_PKTS];
		m->timeouts += dc[SRN_CTR_RETRY_TIMEOUTS];
		m->nak_seq += dc[SRN_CTR_RX_NAK_SEQ];
	}
	free(x);
	free(fct);
	free(q);
}
