/*
 * heap.c - binary min-heap of packet slots ordered by (departure time,
 * queueing sequence number): the one event queue of the switch. Storage
 * (one index per slot) is allocated with the switch.
 */
#include "fabric_int.h"

static bool before(const struct srn_fabric_heap *h, uint32_t a, uint32_t b)
{
	const struct srn_fabric_slot *x = &h->slots[a], *y = &h->slots[b];
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

void srn_fabric_heap_push(struct srn_fabric_heap *h, uint32_t slot)
{
	uint32_t i = h->n++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!before(h, slot, h->idx[parent]))
			break;
		h->idx[i] = h->idx[parent];
		i = parent;
	}
	h->idx[i] = slot;
}

uint32_t srn_fabric_heap_pop(struct srn_fabric_heap *h)
{
	uint32_t top = h->idx[0];
	uint32_t last = h->idx[--h->n];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h, h->idx[c + 1], h->idx[c]))
			c++;
		if (!before(h, h->idx[c], last))
			break;
		h->idx[i] = h->idx[c];
		i = c;
	}
	if (h->n > 0)
		h->idx[i] = last;
	return top;
}
