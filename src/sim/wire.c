/*
 * wire.c - a FIFO delay line: packets that left the switch's output port
 * travel for a fixed propagation delay before they reach the host. The
 * fabric model's OUT link is configured with no delay, so its counters tell
 * the exact queue depth (bytes admitted - dropped - serialised); the delay
 * is applied here instead. A byte ring of records [arrival time, length,
 * bytes padded to 8], sized at creation for what can be in flight.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

#define REC_HDR 16u

static size_t rec_size(size_t len) { return REC_HDR + ((len + 7) & ~(size_t)7); }

int srn_sim_wire_init(struct srn_sim_wire *w, uint64_t rate_bps, srn_ts delay, size_t max_pkt)
{
	memset(w, 0, sizeof(*w));
	w->delay = delay;
	if (delay == 0)
		return 0;           /* packets are delivered at once */
	/* bytes in flight <= rate * delay + one packet; records add at most
	 * REC_HDR + 7 per packet of at least SRN_SIM_HDR + 16 bytes (x2). */
	long double bytes = (long double)rate_bps * (long double)delay / 8e9L;
	if (bytes > 1e9L)
		return SRN_ERANGE;
	size_t cap = ((size_t)bytes + 2 * max_pkt) * 2 + 4 * rec_size(max_pkt);
	cap = (cap + 7) & ~(size_t)7;
	w->buf = malloc(cap);
	if (!w->buf)
		return SRN_ENOMEM;
	w->cap = cap;
	return 0;
}

void srn_sim_wire_free(struct srn_sim_wire *w)
{
	free(w->buf);
	w->buf = NULL;
}

/* records never wrap: a record that does not fit before the end of the
 * ring is placed at offset 0 and the tail gap is marked by a zero header */
bool srn_sim_wire_push(struct srn_sim_wire *w, srn_ts now, const uint8_t *pkt, size_t len)
{
	size_t need = rec_size(len);
	size_t tail = (w->head + w->used) % w->cap;
	size_t gap = 0;
	if (w->used && tail <= w->head) {
		/* free space is [tail, head) */
		if (tail + need > w->head) {
			w->overflows++;
			return false;
		}
	} else {
		/* free space is [tail, cap) + [0, head) */
		if (tail + need > w->cap) {
			gap = w->cap - tail;
			if (need > w->head) {
				w->overflows++;
				return false;
			}
		}
	}
	if (w->used + gap + need > w->cap) {
		w->overflows++;
		return false;
	}
	if (gap) {
		if (gap >= 8)
			memset(w->buf + tail, 0xff, 8); /* "skip to 0" marker */
		w->used += gap;
		tail = 0;
	}
	uint8_t *r = w->buf + tail;
	uint64_t t = now + w->delay;
	uint64_t l = len;
	memcpy(r, &t, 8);
	memcpy(r + 8, &l, 8);
	memcpy(r + REC_HDR, pkt, len);
	w->used += need;
	return true;
}

/* skip a tail gap at the head */
static void normalize(struct srn_sim_wire *w)
{
	if (!w->used)
		return;
	size_t left = w->cap - w->head;
	uint64_t t;
	if (left < REC_HDR) {
		w->used -= left;
		w->head = 0;
		return;
	}
	memcpy(&t, w->buf + w->head, 8);
	if (t == UINT64_MAX) {
		w->used -= left;
		w->head = 0;
	}
}

srn_ts srn_sim_wire_head(const struct srn_sim_wire *w)
{
	if (!w->used)
		return SRN_TS_NEVER;
	uint64_t t;
	memcpy(&t, w->buf + w->head, 8);
	return t;
}

const uint8_t *srn_sim_wire_peek(const struct srn_sim_wire *w, size_t *len)
{
	uint64_t l;
	memcpy(&l, w->buf + w->head + 8, 8);
	*len = (size_t)l;
	return w->buf + w->head + REC_HDR;
}

void srn_sim_wire_pop(struct srn_sim_wire *w)
{
	uint64_t l;
	memcpy(&l, w->buf + w->head + 8, 8);
	size_t sz = rec_size((size_t)l);
	w->head = (w->head + sz) % w->cap;
	w->used -= sz;
	if (!w->used)
		w->head = 0;
	else
		normalize(w);
}
