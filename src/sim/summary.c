/*
 * summary.c - the human-readable summary of a run (printed, and written to
 * summary.txt by `softrnic sim`).
 */
#include <inttypes.h>

#include "sim_int.h"

static double us(srn_ts t) { return (double)t / 1e3; }

void srn_sim_summary_write(const struct srn_sim *sim, const struct srn_sim_metrics *m, FILE *f)
{
	const struct srn_sim_scen *sc = sim->sc;
	struct srn_sim_link_cfg bl;
	srn_sim_scen_link(sc, m->bottleneck, SRN_SIM_OUT, &bl);
	fprintf(f, "scenario: %u hosts, %u flows, cc %s, mtu %u, seed %" PRIu64 ", %.3f ms simulated\n",
		sc->nhosts, sc->nflows, srn_sim_cc_names[sc->cc], sc->mtu, sc->seed,
		(double)sim->now / 1e6);
	fprintf(f, "window:   %.1f us .. %.1f us (metrics below are over it unless noted)\n",
		us(m->t0), us(m->t1));
	if (m->jain >= 0)
		fprintf(f, "fairness: Jain index %.4f over %u flows active in the whole window\n",
			m->jain, m->jain_n);
	else
		fprintf(f, "fairness: n/a (no flow active in the whole window)\n");
	if (m->converged)
		fprintf(f, "converge: %.1f us after the last flow start (%.1f us) to within 10%% of "
			"the max-min fair share for 5 samples of %.1f us, and not 5 outside it after\n",
			us(m->converge_time), us(m->converge_ref), us(m->converge_group));
	else
		fprintf(f, "converge: never (after the last flow start, %.1f us, no 5 consecutive "
			"samples of %.1f us with every active flow within 10%% of its max-min fair share "
			"that were not followed by 5 outside it)\n", us(m->converge_ref),
			us(m->converge_group));
	fprintf(f, "queue:    host %u output port (%u flows in): p50 %" PRIu64 " B, p99 %" PRIu64
		" B, max %" PRIu64 " B (buffer %u B, kmin %u B, kmax %u B)\n",
		m->bottleneck, sim->host[m->bottleneck].nflows_in, m->q_p50, m->q_p99, m->q_max,
		bl.buffer, bl.kmin, bl.kmax);
	fprintf(f, "link:     utilisation %.2f%% of %.1f Gbit/s (wire bytes), goodput %.2f%%\n",
		m->util * 100, (double)bl.rate_bps / 1e9, m->goodput_util * 100);
	fprintf(f, "events:   ecn marks %" PRIu64 ", drops %" PRIu64 ", cnps %" PRIu64
		", nak-seq %" PRIu64 ", retransmitted pkts %" PRIu64 ", timeouts %" PRIu64
		" (whole run)\n", m->ecn_marks, m->drops, m->cnps, m->nak_seq, m->retransmits,
		m->timeouts);
	if (m->flows_done)
		fprintf(f, "fct:      %u flows done: mean %.1f us, p99 %.1f us, max %.1f us\n",
			m->flows_done, us(m->fct_mean), us(m->fct_p99), us(m->fct_max));
	uint64_t wire_over = 0, noslot = 0;
	for (uint32_t h = 0; h < sim->nhosts; h++) {
		wire_over += sim->wire[h].overflows;
		for (int d = 0; d < 2; d++)
			noslot += srn_fabric_counters(sim->fab, h, (enum srn_fabric_dir)d)
					  [SRN_FABRIC_CTR_DROP_NOSLOT];
	}
	if (noslot)
		fprintf(f, "WARNING:  the switch ran out of packet slots %" PRIu64 " times (counted "
			"in drops): the simulator sized them too small for this scenario\n", noslot);
	if (wire_over)
		fprintf(f, "WARNING:  %" PRIu64 " packets lost by full wire delay lines (a simulator "
			"bug)\n", wire_over);
	if (m->flows_failed)
		fprintf(f, "FAILED:   %u flows ended with an error completion\n", m->flows_failed);
	fprintf(f, "flows:\n");
	fprintf(f, "  %4s %5s %5s %10s %12s %14s %10s %s\n", "id", "src", "dst", "start_us",
		"size", "delivered_B", "win_gbps", "status");
	for (uint32_t i = 0; i < sim->nflows; i++) {
		struct srn_sim_flow_result r;
		srn_sim_flow_result(sim, i, &r);
		char size[24], status[64];
		if (r.size)
			snprintf(size, sizeof(size), "%" PRIu64, r.size);
		else
			snprintf(size, sizeof(size), "inf");
		if (r.failed)
			snprintf(status, sizeof(status), "failed (wc status %u)", r.fail_status);
		else if (r.done)
			snprintf(status, sizeof(status), "done, fct %.1f us", us(r.fct));
		else
			snprintf(status, sizeof(status), "running");
		fprintf(f, "  %4u %5u %5u %10.1f %12s %14" PRIu64 " %10.3f %s\n", i, r.src, r.dst,
			us(r.start), size, r.rx_bytes, r.win_gbps, status);
	}
	fprintf(f, "sim:      %" PRIu64 " events\n", m->events);
}
