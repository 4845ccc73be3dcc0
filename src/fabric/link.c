/*
 * link.c - one direction of one port: the impairment pipeline and the
 * output queue. Call order for a packet entering the link at time t
 * (srn_fabric_link_admit):
 *
 *   down window? -> random loss -> Gilbert-Elliott -> duplication
 *   then for the packet and its duplicate (link_enqueue):
 *   drop-tail -> ECN mark -> corruption -> serialisation -> delay, jitter,
 *   path, reorder hold-back -> scheduled in the switch's event heap.
 *
 * Random numbers are drawn only for features that are configured, from the
 * link's own generator, in this fixed order.
 */
#include <math.h>
#include <string.h>

#include "fabric_int.h"

/* Gilbert-Elliott over silence: n = (t - last) / idle_step steps of the
 * chain at once, drawn from its n-step transition probability. With
 * lambda = 1 - P_GB - P_BG and pi = P_GB / (P_GB + P_BG) (the long-run
 * share of bad), P(bad after n | bad) = pi + (1 - pi) lambda^n and
 * P(bad after n | good) = pi (1 - lambda^n). A long quiet period leaves the
 * chain in its stationary state; a retransmission after a 67 ms timeout is
 * not still inside the burst that lost the original. */
static void ge_idle(struct srn_fabric_link *l, srn_ts t)
{
	srn_ts step = l->cfg.ge.idle_step, last = l->ge_last;
	l->ge_last = t;
	if (!step || t <= last || t - last < step)
		return;
	double pgb = l->cfg.ge.p_gb, pbg = l->cfg.ge.p_bg;
	if (pgb + pbg <= 0)
		return;
	double n = (double)((t - last) / step);
	double lam = pow(1.0 - pgb - pbg, n), pi = pgb / (pgb + pbg);
	double pbad = l->ge_bad ? pi + (1.0 - pi) * lam : pi * (1.0 - lam);
	bool bad = srn_fabric_rng_chance(&l->rng, srn_fabric_prob_fixed(pbad));
	if (bad && !l->ge_bad)
		l->ctr[SRN_FABRIC_CTR_GE_BURSTS]++;
	l->ge_bad = bad;
}

void srn_fabric_link_init(struct srn_fabric_link *l, const struct srn_fabric_link_cfg *cfg,
			  uint64_t seed)
{
	l->cfg = *cfg;
	l->p_loss = srn_fabric_prob_fixed(cfg->loss);
	l->p_dup = srn_fabric_prob_fixed(cfg->dup);
	l->p_corrupt = srn_fabric_prob_fixed(cfg->corrupt);
	l->p_reorder = srn_fabric_prob_fixed(cfg->reorder.p);
	l->p_gb = srn_fabric_prob_fixed(cfg->ge.p_gb);
	l->p_bg = srn_fabric_prob_fixed(cfg->ge.p_bg);
	l->p_lg = srn_fabric_prob_fixed(cfg->ge.loss_good);
	l->p_lb = srn_fabric_prob_fixed(cfg->ge.loss_bad);
	l->p_pmax = srn_fabric_prob_fixed(cfg->pmax);
	l->ge_bad = false;
	l->ge_last = 0;
	srn_fabric_rng_seed(&l->rng, seed);
	l->busy_until = 0;
	l->q_bytes = 0;
	l->q_head = l->q_cnt = 0;
	memset(l->ctr, 0, sizeof(l->ctr));
}

bool srn_fabric_link_is_down(const struct srn_fabric_link *l, srn_ts epoch, srn_ts t)
{
	const struct srn_fabric_down *d = &l->cfg.down;
	if (d->len == 0 || t < epoch || t - epoch < d->start)
		return false;
	srn_ts x = t - epoch - d->start;
	if (d->period)
		x %= d->period;
	return x < d->len;
}

/* forget packets that finished serialisation by t */
static void queue_prune(struct srn_fabric_link *l, srn_ts t)
{
	while (l->q_cnt > 0 && l->q[l->q_head].done <= t) {
		l->q_bytes -= l->q[l->q_head].len;
		l->q_head = (l->q_head + 1) % l->q_cap;
		l->q_cnt--;
	}
}

/* RED/DCQCN marking probability (fixed point) at queue depth q */
static uint64_t ecn_prob(const struct srn_fabric_link *l, uint64_t q)
{
	const struct srn_fabric_link_cfg *c = &l->cfg;
	if (q < c->kmin)
		return 0;
	if (q > c->kmax)
		return SRN_FABRIC_P_ONE;
	if (c->kmax == c->kmin)
		return l->p_pmax;
	double p = c->pmax * (double)(q - c->kmin) / (double)(c->kmax - c->kmin);
	return srn_fabric_prob_fixed(p);
}

/* flip 1..3 distinct bits of the UDP payload, never in the byte the ICRC
 * masks; returns false if the packet has no UDP payload */
static bool corrupt(struct srn_fabric_link *l, uint8_t *pkt, size_t len)
{
	uint32_t off, n, skip;
	if (!srn_fabric_ipv4_udp_payload(pkt, len, &off, &n, &skip))
		return false;
	uint64_t nbits = (uint64_t)(skip != UINT32_MAX ? n - 1 : n) * 8;
	uint32_t k = 1 + (uint32_t)srn_fabric_rng_below(&l->rng, 3);
	if (k > nbits)
		k = (uint32_t)nbits;
	uint64_t chosen[3];
	for (uint32_t i = 0; i < k; i++) {
		uint64_t pos;
		bool again;
		do {
			pos = srn_fabric_rng_below(&l->rng, nbits);
			again = false;
			for (uint32_t j = 0; j < i; j++)
				again |= chosen[j] == pos;
		} while (again);
		chosen[i] = pos;
		uint64_t byte = pos / 8;
		if (skip != UINT32_MAX && byte >= skip)
			byte++;
		pkt[off + byte] ^= (uint8_t)(1u << (pos % 8));
	}
	return true;
}

/* serialisation time of len bytes at rate bits/s, rounded up to whole ns */
static srn_ts ser_time(uint64_t rate, uint32_t len)
{
	uint64_t bits_ns = (uint64_t)len * 8u * 1000000000ull;
	return (bits_ns + rate - 1) / rate;
}

static void link_enqueue(struct srn_fabric *fab, uint32_t port, enum srn_fabric_dir dir,
			 uint32_t s, srn_ts t)
{
	struct srn_fabric_link *l = &fab->ports[port].link[dir];
	const struct srn_fabric_link_cfg *c = &l->cfg;
	struct srn_fabric_slot *sl = &fab->slots[s];
	srn_ts done = t;

	queue_prune(l, t);
	if (c->rate_bps) {
		if (c->buffer && l->q_bytes + sl->len > c->buffer) {
			srn_fabric_drop(fab, port, dir, s, SRN_FABRIC_CTR_DROP_TAIL, t);
			return;
		}
		if (l->q_cnt == l->q_cap) { /* cannot happen: one entry per slot */
			srn_fabric_drop(fab, port, dir, s, SRN_FABRIC_CTR_DROP_NOSLOT, t);
			return;
		}
	}
	if (c->kmax > 0) {
		uint8_t ecn = srn_fabric_ipv4_ecn(sl->data);
		if (ecn == 3) {
			l->ctr[SRN_FABRIC_CTR_ECN_CE_IN]++;
		} else if (ecn != 0 &&
			   srn_fabric_rng_chance(&l->rng, ecn_prob(l, l->q_bytes))) {
			srn_fabric_ipv4_mark_ce(sl->data);
			l->ctr[SRN_FABRIC_CTR_ECN_MARKS]++;
		}
	}
	if (srn_fabric_rng_chance(&l->rng, l->p_corrupt) && corrupt(l, sl->data, sl->len))
		l->ctr[SRN_FABRIC_CTR_CORRUPTS]++;
	if (c->rate_bps) {
		srn_ts start = l->busy_until > t ? l->busy_until : t;
		done = start + ser_time(c->rate_bps, sl->len);
		l->busy_until = done;
		l->q[(l->q_head + l->q_cnt) % l->q_cap] = (struct srn_fabric_qent){ done, sl->len };
		l->q_cnt++;
		l->q_bytes += sl->len;
		if (l->q_bytes > l->ctr[SRN_FABRIC_CTR_QUEUE_PEAK_BYTES])
			l->ctr[SRN_FABRIC_CTR_QUEUE_PEAK_BYTES] = l->q_bytes;
	}
	srn_ts dep = done + c->delay;
	if (c->jitter)
		dep += srn_fabric_rng_below(&l->rng, c->jitter + 1);
	if (c->paths.n == 1)
		dep += c->paths.delay[0];
	else if (c->paths.n > 1)
		dep += c->paths.delay[srn_fabric_rng_below(&l->rng, c->paths.n)];
	if (srn_fabric_rng_chance(&l->rng, l->p_reorder)) {
		dep += c->reorder.delay;
		l->ctr[SRN_FABRIC_CTR_REORDERS]++;
	}
	sl->time = dep;
	sl->port = (uint16_t)port;
	sl->stage = (uint8_t)(dir == SRN_FABRIC_IN ? SRN_FABRIC_STAGE_IN : SRN_FABRIC_STAGE_OUT);
	srn_fabric_schedule(fab, s);
}

void srn_fabric_link_admit(struct srn_fabric *fab, uint32_t port, enum srn_fabric_dir dir,
			   uint32_t s, srn_ts t)
{
	struct srn_fabric_link *l = &fab->ports[port].link[dir];
	struct srn_fabric_slot *sl = &fab->slots[s];

	l->ctr[SRN_FABRIC_CTR_PKTS_IN]++;
	l->ctr[SRN_FABRIC_CTR_BYTES_IN] += sl->len;
	if (srn_fabric_link_is_down(l, fab->cfg.epoch, t)) {
		srn_fabric_drop(fab, port, dir, s, SRN_FABRIC_CTR_DROP_DOWN, t);
		return;
	}
	if (srn_fabric_rng_chance(&l->rng, l->p_loss)) {
		srn_fabric_drop(fab, port, dir, s, SRN_FABRIC_CTR_DROP_LOSS, t);
		return;
	}
	if (l->p_gb || l->p_lg) {
		ge_idle(l, t);
		if (!l->ge_bad) {
			if (srn_fabric_rng_chance(&l->rng, l->p_gb)) {
				l->ge_bad = true;
				l->ctr[SRN_FABRIC_CTR_GE_BURSTS]++;
			}
		} else if (srn_fabric_rng_chance(&l->rng, l->p_bg)) {
			l->ge_bad = false;
		}
		if (srn_fabric_rng_chance(&l->rng, l->ge_bad ? l->p_lb : l->p_lg)) {
			srn_fabric_drop(fab, port, dir, s, SRN_FABRIC_CTR_DROP_BURST, t);
			return;
		}
	}
	uint32_t s2 = UINT32_MAX;
	if (srn_fabric_rng_chance(&l->rng, l->p_dup)) {
		/* a duplicate without a free slot is made and dropped at once */
		l->ctr[SRN_FABRIC_CTR_DUPS]++;
		s2 = srn_fabric_slot_alloc(fab);
		if (s2 == UINT32_MAX) {
			l->ctr[SRN_FABRIC_CTR_DROP_NOSLOT]++;
		} else {
			struct srn_fabric_slot *d = &fab->slots[s2];
			memcpy(d->data, sl->data, sl->len);
			d->len = sl->len;
		}
	}
	link_enqueue(fab, port, dir, s, t);
	if (s2 != UINT32_MAX)
		link_enqueue(fab, port, dir, s2, t);
}
