/*
 * series.c - storage of the sampled time series (allocated once, at
 * creation, for the whole run).
 */
#include <stdlib.h>

#include "sim_int.h"

int srn_sim_series_init(struct srn_sim_series *s, uint32_t nflows, uint32_t nq, uint32_t cap,
			srn_ts dt)
{
	s->nflows = nflows;
	s->nq = nq;
	s->n = 0;
	s->cap = cap;
	s->dt = dt;
	size_t c = cap ? cap : 1;
	s->flow_bytes = calloc(c * (nflows ? nflows : 1), sizeof(uint64_t));
	s->q_bytes = calloc(c * (nq ? nq : 1), sizeof(uint64_t));
	s->q_out = calloc(c * (nq ? nq : 1), sizeof(uint64_t));
	s->q_marks = calloc(c * (nq ? nq : 1), sizeof(uint64_t));
	s->q_drops = calloc(c * (nq ? nq : 1), sizeof(uint64_t));
	if (!s->flow_bytes || !s->q_bytes || !s->q_out || !s->q_marks || !s->q_drops) {
		srn_sim_series_free(s);
		return SRN_ENOMEM;
	}
	return 0;
}

void srn_sim_series_free(struct srn_sim_series *s)
{
	free(s->flow_bytes);
	free(s->q_bytes);
	free(s->q_out);
	free(s->q_marks);
	free(s->q_drops);
	s->flow_bytes = s->q_bytes = s->q_out = s->q_marks = s->q_drops = NULL;
	s->n = s->cap = 0;
}
