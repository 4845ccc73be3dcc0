/*
 * rtrack.c - posted UD receive buffers (wr_id, address, length), so the GRH
 * area of a completed UD receive can be written by the verbs layer. A ring
 * allocated at QP/SRQ creation; own RQs complete in order (take the head),
 * SRQ buffers complete in any order (take the oldest entry with the wr_id).
 */
#include <stdlib.h>
#include <string.h>

#include "srn_verbs.h"

int srn_rtrack_init(struct srn_rtrack *t, uint32_t cap)
{
	memset(t, 0, sizeof(*t));
	if (!cap)
		return 0;
	t->ent = calloc(cap, sizeof(*t->ent));
	if (!t->ent)
		return ENOMEM;
	t->cap = cap;
	return 0;
}

void srn_rtrack_free(struct srn_rtrack *t)
{
	free(t->ent);
	memset(t, 0, sizeof(*t));
}

void srn_rtrack_reset(struct srn_rtrack *t)
{
	if (t->ent)
		memset(t->ent, 0, t->cap * sizeof(*t->ent));
	t->head = t->count = 0;
}

/* drops consumed entries at the head */
static void trim(struct srn_rtrack *t)
{
	while (t->count && !t->ent[t->head].used) {
		t->head = (t->head + 1) % t->cap;
		t->count--;
	}
}

bool srn_rtrack_push(struct srn_rtrack *t, uint64_t wr_id, uint64_t addr, uint32_t len)
{
	struct srn_rtrack_ent *e;

	if (!t->cap)
		return false;
	trim(t);
	if (t->count == t->cap)
		return false;
	e = &t->ent[(t->head + t->count) % t->cap];
	e->wr_id = wr_id;
	e->addr = addr;
	e->len = len;
	e->used = true;
	t->count++;
	return true;
}

bool srn_rtrack_take(struct srn_rtrack *t, uint64_t wr_id, bool in_order, struct srn_rtrack_ent *out)
{
	trim(t);
	for (uint32_t i = 0; i < t->count; i++) {
		struct srn_rtrack_ent *e = &t->ent[(t->head + i) % t->cap];

		if (!e->used || (!in_order && e->wr_id != wr_id))
			continue;
		*out = *e;
		e->used = false;
		trim(t);
		return true;
	}
	return false;
}
