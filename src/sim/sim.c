/*
 * sim.c - building a simulation from a scenario and the event loop.
 *
 * Event sources (sched.c), in the order they run at equal times:
 *   FABRIC        srn_fabric_poll: packets leaving the switch's output
 *                 ports go onto their wire (or straight to the host)
 *   WIRE(h)       packets reaching host h: srn_sim_host_rx
 *   TIMER(h)      srn_dev_handle_expiry of host h's core
 *   TX(h)         host h's uplink is free: srn_sim_host_tx
 *   START(f)      flow f posts its first WRITEs
 *   SAMPLE        the time series (sample.c)
 */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* fabric tap: bytes dropped on each port's OUT link, for the queue depth */
static void tap(void *user, const struct srn_fabric_tap_info *ti, const uint8_t *pkt, size_t len)
{
	(void)pkt;
	struct srn_sim *sim = user;
	if (ti->dir == SRN_FABRIC_TAP_DROP && ti->link == SRN_FABRIC_OUT)
		sim->out_drop_bytes[ti->port] += len;
}

static void to_fabric_link(const struct srn_sim_link_cfg *l, struct srn_fabric_link_cfg *f, bool out)
{
	memset(f, 0, sizeof(*f));
	f->rate_bps = l->rate_bps;
	f->buffer = l->buffer;
	f->kmin = l->kmin;
	f->kmax = l->kmax;
	f->pmax = l->pmax;
	f->loss = l->loss;
	f->delay = out ? 0 : l->delay;   /* OUT: the delay is the wire's (wire.c) */
}

/* packet slots the switch needs: small queues on every link, the buffer of
 * the ports that receive data, and what is in flight on the uplinks */
static uint32_t slots_needed(const struct srn_sim_scen *sc, size_t slot)
{
	uint64_t n = 1024;
	for (uint32_t h = 0; h < sc->nhosts; h++) {
		struct srn_sim_link_cfg in, out;
		srn_sim_scen_link(sc, h, SRN_SIM_IN, &in);
		srn_sim_scen_link(sc, h, SRN_SIM_OUT, &out);
		bool dst = false;
		for (uint32_t i = 0; i < sc->nflows; i++)
			dst |= sc->flow[i].dst == h;
		n += 64 + (uint64_t)((double)in.rate_bps * (double)in.delay / 8e9 / 64.0);
		if (dst)
			n += (out.buffer ? out.buffer : (8u << 20)) / (slot / 2) + 64;
	}
	return n > (1u << 22) ? (1u << 22) : (uint32_t)n;
}

int srn_sim_new(struct srn_sim **out, const struct srn_sim_scen *sc, char *err, size_t errlen)
{
	*out = NULL;
	int rc = srn_sim_scen_check(sc, err, errlen);
	if (rc)
		return rc;
	struct srn_sim *sim = calloc(1, sizeof(*sim));
	if (!sim)
		goto nomem;
	sim->sc = sc;
	sim->nhosts = sc->nhosts;
	sim->nflows = sc->nflows;
	srn_fabric_rng_seed(&sim->rng, sc->seed);
	sim->host = calloc(sc->nhosts, sizeof(*sim->host));
	sim->flow = calloc(sc->nflows, sizeof(*sim->flow));
	sim->wire = calloc(sc->nhosts, sizeof(*sim->wire));
	sim->out_drop_bytes = calloc(sc->nhosts, sizeof(uint64_t));
	sim->txbuf = malloc(SRN_SIM_HDR + SRN_MAX_PKT);
	sim->rxcap = (SRN_SIM_HDR + SRN_MAX_PKT + 7) & ~(size_t)7;
	sim->rxbuf = malloc(sim->rxcap);
	if (!sim->host || !sim->flow || !sim->wire || !sim->out_drop_bytes || !sim->txbuf || !sim->rxbuf)
		goto nomem;

	/* scheduler sources */
	sim->id_wire0 = 1;
	sim->id_timer0 = sim->id_wire0 + sc->nhosts;
	sim->id_tx0 = sim->id_timer0 + sc->nhosts;
	sim->id_start0 = sim->id_tx0 + sc->nhosts;
	sim->id_sample = sim->id_start0 + sc->nflows;
	if (srn_sim_sched_init(&sim->sched, sim->id_sample + 1))
		goto nomem;
	srn_sim_sched_key(&sim->sched, 0, SRN_SIM_EV_FABRIC, 0);
	for (uint32_t h = 0; h < sc->nhosts; h++) {
		srn_sim_sched_key(&sim->sched, sim->id_wire0 + h, SRN_SIM_EV_WIRE, h);
		srn_sim_sched_key(&sim->sched, sim->id_timer0 + h, SRN_SIM_EV_TIMER, h);
		srn_sim_sched_key(&sim->sched, sim->id_tx0 + h, SRN_SIM_EV_TX, h);
	}
	for (uint32_t f = 0; f < sc->nflows; f++)
		srn_sim_sched_key(&sim->sched, sim->id_start0 + f, SRN_SIM_EV_START, f);
	srn_sim_sched_key(&sim->sched, sim->id_sample, SRN_SIM_EV_SAMPLE, 0);

	/* the switch: one port per host */
	struct srn_fabric_cfg fc;
	srn_fabric_cfg_default(&fc);
	fc.seed = sc->seed;
	fc.max_ports = sc->nhosts;
	fc.slot_size = (uint32_t)sim->rxcap;
	fc.nslots = slots_needed(sc, fc.slot_size);
	fc.tap = tap;
	fc.tap_user = sim;
	fc.tap_drops = true;
	rc = srn_fabric_new(&sim->fab, &fc, NULL);
	if (rc) {
		snprintf(err, errlen, "switch: %s", srn_strerror(rc));
		goto fail;
	}
	for (uint32_t h = 0; h < sc->nhosts; h++) {
		struct srn_sim_link_cfg in, outl;
		struct srn_fabric_port_cfg pc;
		srn_sim_scen_link(sc, h, SRN_SIM_IN, &in);
		srn_sim_scen_link(sc, h, SRN_SIM_OUT, &outl);
		to_fabric_link(&in, &pc.link[SRN_FABRIC_IN], false);
		to_fabric_link(&outl, &pc.link[SRN_FABRIC_OUT], true);
		char ferr[160];
		if (srn_fabric_port_cfg_check(&pc, ferr, sizeof(ferr)) < 0) {
			snprintf(err, errlen, "host %u link: %s", h, ferr);
			rc = SRN_EINVAL;
			goto fail;
		}
		rc = srn_fabric_add_port(sim->fab, srn_sim_host_ipv4(h), &pc);
		if (rc != (int)h) {
			snprintf(err, errlen, "host %u: switch port: %s", h, srn_strerror(rc < 0 ? rc : SRN_EINVAL));
			rc = SRN_EINVAL;
			goto fail;
		}
		rc = srn_sim_wire_init(&sim->wire[h], outl.rate_bps, outl.delay, sim->rxcap);
		if (rc) {
			snprintf(err, errlen, "host %u: wire: %s", h, srn_strerror(rc));
			goto fail;
		}
	}
	for (uint32_t h = 0; h < sc->nhosts; h++)
		if ((rc = srn_sim_host_init(sim, h, err, errlen)))
			goto fail;
	for (uint32_t f = 0; f < sc->nflows; f++) {
		if ((rc = srn_sim_flow_connect(sim, f, err, errlen)))
			goto fail;
		srn_sim_sched_set(&sim->sched, sim->id_start0 + f, sc->flow[f].start);
	}

	/* sampling: the output ports of hosts that receive flows */
	sim->qport = calloc(sc->nhosts, sizeof(uint32_t));
	sim->prev_flow_bytes = calloc(sc->nflows, sizeof(uint64_t));
	sim->prev_q = calloc((size_t)sc->nhosts * 3, sizeof(uint64_t));
	if (!sim->qport || !sim->prev_flow_bytes || !sim->prev_q)
		goto nomem;
	for (uint32_t h = 0; h < sc->nhosts; h++)
		if (sim->host[h].nflows_in)
			sim->qport[sim->nq++] = h;
	uint32_t nsamples = (uint32_t)(sc->duration / sc->sample);
	if (srn_sim_series_init(&sim->ser, sc->nflows, sim->nq, nsamples, sc->sample))
		goto nomem;
	sim->next_sample = sc->sample;
	srn_sim_sched_set(&sim->sched, sim->id_sample, sim->next_sample);
	*out = sim;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	rc = SRN_ENOMEM;
fail:
	srn_sim_del(sim);
	return rc;
}

void srn_sim_del(struct srn_sim *sim)
{
	if (!sim)
		return;
	if (sim->host)
		for (uint32_t h = 0; h < sim->nhosts; h++)
			srn_sim_host_free(&sim->host[h]);
	if (sim->wire)
		for (uint32_t h = 0; h < sim->nhosts; h++)
			srn_sim_wire_free(&sim->wire[h]);
	srn_fabric_del(sim->fab);
	srn_sim_sched_free(&sim->sched);
	srn_sim_series_free(&sim->ser);
	free(sim->host);
	free(sim->flow);
	free(sim->wire);
	free(sim->out_drop_bytes);
	free(sim->txbuf);
	free(sim->rxbuf);
	free(sim->qport);
	free(sim->prev_flow_bytes);
	free(sim->prev_q);
	free(sim);
}

void srn_sim_set_csv(struct srn_sim *sim, FILE *f)
{
	sim->csv = f;
	if (f)
		srn_sim_csv_header(sim);
}

srn_ts srn_sim_now(const struct srn_sim *sim) { return sim->now; }
uint64_t srn_sim_events(const struct srn_sim *sim) { return sim->events; }

static void on_fabric(struct srn_sim *sim)
{
	uint32_t port;
	int n;
	while ((n = srn_fabric_poll(sim->fab, sim->now, &port, sim->rxbuf, sim->rxcap)) > 0) {
		struct srn_sim_wire *w = &sim->wire[port];
		if (w->delay == 0) {
			srn_sim_host_rx(sim, port, sim->rxbuf, (size_t)n);
			continue;
		}
		bool was_empty = w->used == 0;
		srn_sim_wire_push(w, sim->now, sim->rxbuf, (size_t)n);
		if (was_empty)
			srn_sim_sched_set(&sim->sched, sim->id_wire0 + port, srn_sim_wire_head(w));
	}
	srn_sim_sched_set(&sim->sched, 0, srn_fabric_expiry(sim->fab));
}

static void on_wire(struct srn_sim *sim, uint32_t h)
{
	struct srn_sim_wire *w = &sim->wire[h];
	while (srn_sim_wire_head(w) <= sim->now) {
		size_t len;
		const uint8_t *p = srn_sim_wire_peek(w, &len);
		/* the core reads the packet before anything can push to this wire */
		srn_sim_host_rx(sim, h, p, len);
		srn_sim_wire_pop(w);
	}
	srn_sim_sched_set(&sim->sched, sim->id_wire0 + h, srn_sim_wire_head(w));
}

void srn_sim_run_until(struct srn_sim *sim, srn_ts t)
{
	uint32_t id = 0;
	srn_ts et;
	while ((et = srn_sim_sched_top(&sim->sched, &id)) <= t) {
		if (et > sim->now)
			sim->now = et;
		sim->events++;
		uint64_t key = sim->sched.key[id];
		uint32_t idx = (uint32_t)key;
		switch ((enum srn_sim_ev)(key >> 32)) {
		case SRN_SIM_EV_FABRIC:
			on_fabric(sim);
			break;
		case SRN_SIM_EV_WIRE:
			on_wire(sim, idx);
			break;
		case SRN_SIM_EV_TIMER:
			srn_sim_sched_set(&sim->sched, id, SRN_TS_NEVER);
			srn_dev_handle_expiry(sim->host[idx].dev, sim->now);
			srn_sim_host_after(sim, idx);
			break;
		case SRN_SIM_EV_TX:
			srn_sim_host_tx(sim, idx);
			break;
		case SRN_SIM_EV_START:
			srn_sim_sched_set(&sim->sched, id, SRN_TS_NEVER);
			srn_sim_flow_start(sim, idx);
			break;
		case SRN_SIM_EV_SAMPLE:
			srn_sim_sample(sim);
			sim->next_sample += sim->sc->sample;
			srn_sim_sched_set(&sim->sched, id, sim->next_sample <= sim->sc->duration ?
					  sim->next_sample : SRN_TS_NEVER);
			break;
		}
	}
	if (t > sim->now)
		sim->now = t;
}
