/*
 * timer.c - per-QP deadlines in one binary min-heap per device.
 *
 * Each QP embeds its timers (struct srn_timer); arming, re-arming and
 * cancelling are O(log n) and never allocate (the heap array is sized at
 * device creation: max_qp * SRN_TIMER_KINDS).
 */
#include "core_int.h"

void srn_timer_init(struct srn_timer *t, struct srn_qp *qp, uint8_t kind)
{
	t->deadline = SRN_TS_NEVER;
	t->idx = UINT32_MAX;
	t->kind = kind;
	t->qp = qp;
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

void srn_timer_set(struct srn_dev *dev, struct srn_timer *t, srn_ts deadline)
{
	struct srn_theap *hp = &dev->timers;
	if (deadline == SRN_TS_NEVER) {
		srn_timer_cancel(dev, t);
		return;
	}
	if (t->idx == UINT32_MAX) {
		if (hp->n == hp->cap)
			return; /* cannot happen: cap = max_qp * kinds */
		t->idx = hp->n++;
		hp->h[t->idx] = t;
		t->deadline = deadline;
		sift_up(hp, t->idx);
		return;
	}
	srn_ts old = t->deadline;
	t->deadline = deadline;
	if (deadline < old)
		sift_up(hp, t->idx);
	else
		sift_down(hp, t->idx);
}

void srn_timer_cancel(struct srn_dev *dev, struct srn_timer *t)
{
	struct srn_theap *hp = &dev->timers;
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
