/*
 * cc_ctxstore.c - the CCP context store (source 004 fig. 2, 204; CC-09).
 *
 * A fast, fully associative cache of n_cache lines (LRU replacement; the
 * source only says "a cache memory, updated from main memory on a miss")
 * in front of a larger, slower backing store (an open-addressing hash
 * table). The store is inclusive: a reloaded flow keeps its slot, an
 * evicted line is written back in place (or inserted). A line is pinned
 * while a processor runs its flow, so it cannot be evicted under it.
 */
#include "cc_int.h"

static uint32_t home(const struct srn_cc_ctxstore *s, uint32_t flow_id)
{
	return srn_cc_flow_hash(flow_id) & s->store_mask;
}

static struct srn_cc_bslot *store_find(const struct srn_cc_ctxstore *s, uint32_t flow_id)
{
	for (uint32_t i = home(s, flow_id);; i = (i + 1) & s->store_mask) {
		struct srn_cc_bslot *b = &s->store[i];
		if (!b->used)
			return NULL;
		if (b->rec.flow_id == flow_id)
			return b;
	}
}

/* write back; false if the store is full and the flow has no slot yet */
static bool store_put(struct srn_cc_ctxstore *s, const struct srn_cc_flow_rec *rec)
{
	uint32_t i = home(s, rec->flow_id);
	for (;; i = (i + 1) & s->store_mask) {
		struct srn_cc_bslot *b = &s->store[i];
		if (b->used && b->rec.flow_id == rec->flow_id) {
			b->rec = *rec;
			return true;
		}
		if (!b->used)
			break;
	}
	if (s->store_count >= s->store_max)
		return false;
	s->store[i].rec = *rec;
	s->store[i].used = 1;
	s->store_count++;
	return true;
}

static void store_del(struct srn_cc_ctxstore *s, struct srn_cc_bslot *b)
{
	uint32_t i = (uint32_t)(b - s->store), j = i;
	s->store[i].used = 0;
	s->store_count--;
	for (;;) {                       /* backward-shift deletion */
		j = (j + 1) & s->store_mask;
		if (!s->store[j].used)
			return;
		uint32_t k = home(s, s->store[j].rec.flow_id);
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (stays)
			continue;
		s->store[i] = s->store[j];
		s->store[j].used = 0;
		i = j;
	}
}

static int cache_find(const struct srn_cc_ctxstore *s, uint32_t flow_id)
{
	for (uint32_t i = 0; i < s->n_cache; i++)
		if (s->cache[i].valid && s->cache[i].rec.flow_id == flow_id)
			return (int)i;
	return -1;
}

int srn_cc_ctx_acquire(struct srn_cc_ctxstore *s, uint32_t flow_id, enum srn_cc_ctx_src *src,
		       uint64_t *ctr)
{
	int hit = cache_find(s, flow_id);
	if (hit >= 0) {
		struct srn_cc_cline *l = &s->cache[hit];
		l->lru = ++s->stamp;
		l->pinned = 1;
		*src = SRN_CC_CTX_HIT;
		ctr[SRN_CC_CTR_CTX_HITS]++;
		return hit;
	}
	ctr[SRN_CC_CTR_CTX_MISSES]++;
	int victim = -1;
	for (uint32_t i = 0; i < s->n_cache; i++) {
		const struct srn_cc_cline *l = &s->cache[i];
		if (!l->valid) {
			victim = (int)i;
			break;
		}
		if (!l->pinned && (victim < 0 || l->lru < s->cache[victim].lru))
			victim = (int)i;
	}
	if (victim < 0)
		return SRN_EBUSY;
	struct srn_cc_cline *l = &s->cache[victim];
	if (l->valid) {
		ctr[SRN_CC_CTR_CTX_EVICTIONS]++;
		if (!store_put(s, &l->rec))
			ctr[SRN_CC_CTR_CTX_STORE_FULL]++;   /* context lost: restarts as new */
	}
	const struct srn_cc_bslot *b = store_find(s, flow_id);
	if (b) {
		l->rec = b->rec;
		*src = SRN_CC_CTX_RELOAD;
		ctr[SRN_CC_CTR_CTX_RELOADS]++;
	} else {
		l->rec = (struct srn_cc_flow_rec){ .flow_id = flow_id };
		*src = SRN_CC_CTX_NEW;
		ctr[SRN_CC_CTR_NEW_FLOWS]++;
	}
	l->valid = 1;
	l->pinned = 1;
	l->lru = ++s->stamp;
	return victim;
}

void srn_cc_ctx_release(struct srn_cc_ctxstore *s, uint32_t line)
{
	if (line < s->n_cache)
		s->cache[line].pinned = 0;
}

struct srn_cc_flow_rec *srn_cc_ctx_find(struct srn_cc_ctxstore *s, uint32_t flow_id,
					bool *in_cache)
{
	int i = cache_find(s, flow_id);
	if (i >= 0) {
		*in_cache = true;
		return &s->cache[i].rec;
	}
	*in_cache = false;
	struct srn_cc_bslot *b = store_find(s, flow_id);
	return b ? &b->rec : NULL;
}

int srn_cc_ctx_remove(struct srn_cc_ctxstore *s, uint32_t flow_id)
{
	int i = cache_find(s, flow_id);
	struct srn_cc_bslot *b = store_find(s, flow_id);
	if (i < 0 && !b)
		return SRN_ENOENT;
	if (i >= 0) {
		if (s->cache[i].pinned)
			return SRN_EBUSY;
		s->cache[i].valid = 0;
	}
	if (b)
		store_del(s, b);
	return 0;
}
