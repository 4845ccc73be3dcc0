/*
 * sched.c - the event scheduler: an indexed binary min-heap of event
 * sources keyed by (time, kind << 32 | index). Each source has at most one
 * pending time, so rescheduling is a sift in place (O(log n)) and the heap
 * never grows after init: no allocation per event.
 */
#include <stdlib.h>

#include "sim_int.h"

int srn_sim_sched_init(struct srn_sim_sched *s, uint32_t nsrc)
{
	s->n = 0;
	s->nsrc = nsrc;
	s->time = calloc(nsrc, sizeof(*s->time));
	s->key = calloc(nsrc, sizeof(*s->key));
	s->heap = calloc(nsrc, sizeof(*s->heap));
	s->pos = calloc(nsrc, sizeof(*s->pos));
	if (!s->time || !s->key || !s->heap || !s->pos) {
		srn_sim_sched_free(s);
		return SRN_ENOMEM;
	}
	for (uint32_t i = 0; i < nsrc; i++) {
		s->time[i] = SRN_TS_NEVER;
		s->pos[i] = UINT32_MAX;
		s->key[i] = i;
	}
	return 0;
}

void srn_sim_sched_free(struct srn_sim_sched *s)
{
	free(s->time);
	free(s->key);
	free(s->heap);
	free(s->pos);
	s->time = NULL;
	s->key = NULL;
	s->heap = NULL;
	s->pos = NULL;
	s->n = s->nsrc = 0;
}

void srn_sim_sched_key(struct srn_sim_sched *s, uint32_t id, enum srn_sim_ev kind, uint32_t index)
{
	s->key[id] = ((uint64_t)kind << 32) | index;
}

static inline bool less(const struct srn_sim_sched *s, uint32_t a, uint32_t b)
{
	if (s->time[a] != s->time[b])
		return s->time[a] < s->time[b];
	return s->key[a] < s->key[b];
}

static inline void place(struct srn_sim_sched *s, uint32_t i, uint32_t id)
{
	s->heap[i] = id;
	s->pos[id] = i;
}

static void sift_up(struct srn_sim_sched *s, uint32_t i)
{
	uint32_t id = s->heap[i];
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!less(s, id, s->heap[p]))
			break;
		place(s, i, s->heap[p]);
		i = p;
	}
	place(s, i, id);
}

static void sift_down(struct srn_sim_sched *s, uint32_t i)
{
	uint32_t id = s->heap[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= s->n)
			break;
		if (c + 1 < s->n && less(s, s->heap[c + 1], s->heap[c]))
			c++;
		if (!less(s, s->heap[c], id))
			break;
		place(s, i, s->heap[c]);
		i = c;
	}
	place(s, i, id);
}

void srn_sim_sched_set(struct srn_sim_sched *s, uint32_t id, srn_ts t)
{
	uint32_t i = s->pos[id];
	if (t == SRN_TS_NEVER) {
		if (i == UINT32_MAX)
			return;
		s->time[id] = SRN_TS_NEVER;
		s->pos[id] = UINT32_MAX;
		uint32_t last = s->heap[--s->n];
		if (i < s->n) {
			place(s, i, last);
			sift_down(s, i);
			sift_up(s, s->pos[last]);
		}
		return;
	}
	if (i == UINT32_MAX) {
		s->time[id] = t;
		place(s, s->n, id);
		s->n++;
		sift_up(s, s->n - 1);
		return;
	}
	srn_ts old = s->time[id];
	s->time[id] = t;
	if (t < old)
		sift_up(s, i);
	else if (t > old)
		sift_down(s, i);
}
