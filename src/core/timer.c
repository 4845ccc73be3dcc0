/*
 * timer.c - deadlines in one binary min-heap per device.
 *
 * A timer is embedded in its owner (a QP's requester, responder, pacer) and
 * carries the owner's callback: the heap knows nothing of what a timer
 * means. Arming, re-arming and cancelling are O(log n) and never allocate
 * (the heap array is sized at device creation for SRN_QP_TIMERS per QP).
 * srn_timer_run disarms each due timer before calling its callback, so a
 * callback may re-arm it.
 */
#include "core_int.h"

void srn_timer_init(struct srn_timer *t, srn_timer_fn fn, void *owner)
{
	t->deadline = SRN_TS_NEVER;
	t->idx = UINT32_MAX;
	t->fn = fn;
	t->owner = owner;
}

static void heap_swap(struct srn_theap *hp, uint32_t a, uint32_t b)
{
	struct srn_timer *t = hp->h[a];
	hp->h[a] = hp->h[b];
	hp->h[b] = t;
	hp->h[a]->idx = a;
	hp->h[b]->idx = b;
}

static void sift_up(struct srn_theap *hp, uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (hp->h[p]->deadline <= hp->h[i]->deadline)
			break;
		heap_swap(hp, p, i);
		i = p;
	}
}

static void sift_down(struct srn_theap *hp, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < hp->n && hp->h[l]->deadline < hp->h[m]->deadline)
			m = l;
		if (r < hp->n && hp->h[r]->deadline < hp->h[m]->deadline)
			m = r;
		if (m == i)
			break;
		heap_swap(hp, i, m);
		i = m;
	}
}

bool srn_timer_set(struct srn_theap *hp, struct srn_timer *t, srn_ts deadline)
{
	if (deadline == SRN_TS_NEVER) {
		srn_timer_cancel(hp, t);
		return true;
	}
	if (t->idx == UINT32_MAX) {
		if (hp->n == hp->cap)
			return false;
		t->idx = hp->n++;
		hp->h[t->idx] = t;
		t->deadline = deadline;
		sift_up(hp, t->idx);
		return true;
	}
	srn_ts old = t->deadline;
	t->deadline = deadline;
	if (deadline < old)
		sift_up(hp, t->idx);
	else
		sift_down(hp, t->idx);
	return true;
}

void srn_timer_cancel(struct srn_theap *hp, struct srn_timer *t)
{
	if (t->idx == UINT32_MAX)
		return;
	uint32_t i = t->idx;
	hp->n--;
	if (i != hp->n) {
		hp->h[i] = hp->h[hp->n];
		hp->h[i]->idx = i;
		sift_up(hp, i);
		sift_down(hp, hp->h[i]->idx);
	}
	t->idx = UINT32_MAX;
	t->deadline = SRN_TS_NEVER;
}

srn_ts srn_timer_next(const struct srn_theap *hp)
{
	return hp->n ? hp->h[0]->deadline : SRN_TS_NEVER;
}

void srn_timer_run(struct srn_theap *hp, srn_ts now)
{
	while (hp->n && hp->h[0]->deadline <= now) {
		struct srn_timer *t = hp->h[0];
		srn_timer_cancel(hp, t);
		if (t->fn)
			t->fn(t, now);
	}
}
