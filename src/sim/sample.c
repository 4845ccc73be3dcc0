/*
 * sample.c - the sampler: every `sample` interval it records, per flow, the
 * payload delivered in order at the receiver during the interval, and per
 * output port that receives flows its queue depth at the sample time, the
 * bytes it sent, the ECN marks and the drops of the interval; and writes
 * them as one CSV row. Rows are printed from integers (and one division),
 * so the same run gives the same bytes.
 *
 * Queue depth: the switch's OUT links have no delay (the wire adds it), so
 * bytes admitted - dropped - departed is exactly what the fabric's queue
 * holds, the packet being serialised included.
 */
#include <inttypes.h>

#include "sim_int.h"

uint64_t srn_sim_queue_bytes(const struct srn_sim *sim, uint32_t h)
{
	const uint64_t *c = srn_fabric_counters(sim->fab, h, SRN_FABRIC_OUT);
	return c[SRN_FABRIC_CTR_BYTES_IN] - sim->out_drop_bytes[h] - c[SRN_FABRIC_CTR_BYTES_OUT];
}

static uint64_t link_drops(const uint64_t *c)
{
	return c[SRN_FABRIC_CTR_DROP_DOWN] + c[SRN_FABRIC_CTR_DROP_LOSS] + c[SRN_FABRIC_CTR_DROP_BURST] +
	       c[SRN_FABRIC_CTR_DROP_TAIL] + c[SRN_FABRIC_CTR_DROP_NOSLOT] +
	       c[SRN_FABRIC_CTR_DROP_MALFORMED] + c[SRN_FABRIC_CTR_DROP_OVERSIZE] +
	       c[SRN_FABRIC_CTR_DROP_NOROUTE];
}

void srn_sim_csv_header(struct srn_sim *sim)
{
	FILE *f = sim->csv;
	fprintf(f, "time_us");
	for (uint32_t i = 0; i < sim->nflows; i++)
		fprintf(f, ",flow%u_gbps", i);
	for (uint32_t k = 0; k < sim->nq; k++) {
		uint32_t h = sim->qport[k];
		fprintf(f, ",host%u_queue_bytes,host%u_ecn_marks,host%u_drops,host%u_out_gbps", h, h, h, h);
	}
	fputc('\n', f);
}

static void put_gbps(FILE *f, uint64_t bytes, srn_ts dt)
{
	/* bytes * 8 / dt_ns Gbit/s with 4 decimals, in integer arithmetic */
	uint64_t milli4 = (bytes * 80000u + dt / 2) / dt;   /* 1e-4 Gbit/s units */
	fprintf(f, ",%" PRIu64 ".%04" PRIu64, milli4 / 10000, milli4 % 10000);
}

void srn_sim_sample(struct srn_sim *sim)
{
	struct srn_sim_series *s = &sim->ser;
	if (s->n >= s->cap)
		return;
	uint32_t k = s->n++;
	for (uint32_t i = 0; i < sim->nflows; i++) {
		uint64_t b = sim->flow[i].rx_bytes;
		s->flow_bytes[(size_t)k * sim->nflows + i] = b - sim->prev_flow_bytes[i];
		sim->prev_flow_bytes[i] = b;
	}
	for (uint32_t j = 0; j < sim->nq; j++) {
		uint32_t h = sim->qport[j];
		const uint64_t *c = srn_fabric_counters(sim->fab, h, SRN_FABRIC_OUT);
		uint64_t *prev = &sim->prev_q[(size_t)j * 3];
		uint64_t out = c[SRN_FABRIC_CTR_BYTES_OUT], marks = c[SRN_FABRIC_CTR_ECN_MARKS];
		uint64_t drops = link_drops(c);
		size_t at = (size_t)k * sim->nq + j;
		s->q_bytes[at] = srn_sim_queue_bytes(sim, h);
		s->q_out[at] = out - prev[0];
		s->q_marks[at] = marks - prev[1];
		s->q_drops[at] = drops - prev[2];
		prev[0] = out;
		prev[1] = marks;
		prev[2] = drops;
	}
	FILE *f = sim->csv;
	if (!f)
		return;
	srn_ts t = (srn_ts)(k + 1) * s->dt;
	fprintf(f, "%" PRIu64 ".%03" PRIu64, t / 1000, t % 1000);
	for (uint32_t i = 0; i < sim->nflows; i++)
		put_gbps(f, s->flow_bytes[(size_t)k * sim->nflows + i], s->dt);
	for (uint32_t j = 0; j < sim->nq; j++) {
		size_t at = (size_t)k * sim->nq + j;
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, s->q_bytes[at], s->q_marks[at],
			s->q_drops[at]);
		put_gbps(f, s->q_out[at], s->dt);
	}
	fputc('\n', f);
}
