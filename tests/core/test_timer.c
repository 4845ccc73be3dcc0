/*
 * test_timer.c - unit tests of the core's timer heap (src/core/timer.c):
 * due timers fire in deadline order with their owner, a callback may re-arm
 * its timer, moving and cancelling keep the heap valid, a full heap refuses.
 */
#include "srn_test.h"
#include "core/core_int.h"

#include <stdlib.h>

#define N 64

static struct srn_theap heap;
static struct srn_timer *slots[N];
static struct srn_timer t[N];
static int fired[N * 4];
static int nfired;
static int rearm_id = -1;

static void on_fire(struct srn_timer *tm, srn_ts now)
{
	int id = (int)(intptr_t)tm->owner;
	CHECK(!srn_timer_armed(tm));            /* disarmed before the callback */
	fired[nfired] = id;
	nfired++;
	if (id == rearm_id) {
		rearm_id = -1;
		CHECK(srn_timer_set(&heap, tm, now + 5));
	}
}

static void setup(uint32_t cap)
{
	memset(&heap, 0, sizeof(heap));
	heap.h = slots;
	heap.cap = cap;
	nfired = 0;
	rearm_id = -1;
	for (int i = 0; i < N; i++)
		srn_timer_init(&t[i], on_fire, (void *)(intptr_t)i);
}

SRN_TEST(test_timer_fires_due_timers_in_deadline_order)
{
	setup(N);
	srand(7);
	srn_ts dl[N];
	for (int i = 0; i < N; i++) {
		dl[i] = 1000 + (srn_ts)(rand() % 5000) * 2 + (srn_ts)(i & 1);
		CHECK(srn_timer_set(&heap, &t[i], dl[i]));
	}
	CHECK_EQ(heap.n, N);
	srn_ts min = SRN_TS_NEVER;
	for (int i = 0; i < N; i++)
		if (dl[i] < min)
			min = dl[i];
	CHECK_EQ(srn_timer_next(&heap), min);
	srn_timer_run(&heap, 6000);
	for (int k = 1; k < nfired; k++)
		CHECK(dl[fired[k - 1]] <= dl[fired[k]]);
	int due = 0;
	for (int i = 0; i < N; i++) {
		due += dl[i] <= 6000;
		CHECK_EQ(srn_timer_armed(&t[i]), dl[i] > 6000);
	}
	CHECK_EQ(nfired, due);
	srn_timer_run(&heap, SRN_TS_NEVER - 1);
	CHECK_EQ(nfired, N);
	CHECK_EQ(heap.n, 0);
	CHECK_EQ(srn_timer_next(&heap), SRN_TS_NEVER);
}

SRN_TEST(test_timer_move_cancel_and_rearm_in_callback)
{
	setup(N);
	for (int i = 0; i < 8; i++)
		srn_timer_set(&heap, &t[i], 100 + (srn_ts)i * 10);
	srn_timer_set(&heap, &t[7], 50);         /* earlier: now the first */
	CHECK_EQ(srn_timer_next(&heap), 50);
	srn_timer_set(&heap, &t[7], 500);        /* later: last */
	srn_timer_cancel(&heap, &t[3]);
	srn_timer_cancel(&heap, &t[3]);          /* twice: no effect */
	CHECK(!srn_timer_armed(&t[3]));
	CHECK(srn_timer_set(&heap, &t[5], SRN_TS_NEVER));   /* NEVER cancels */
	CHECK(!srn_timer_armed(&t[5]));
	CHECK_EQ(heap.n, 6);
	rearm_id = 0;                /* fires at 100 and re-arms itself for now + 5 = 130 */
	srn_timer_run(&heap, 125);
	CHECK_EQ(nfired, 3);
	CHECK_EQ(fired[0], 0);
	CHECK_EQ(fired[1], 1);
	CHECK_EQ(fired[2], 2);
	CHECK(srn_timer_armed(&t[0]));
	CHECK_EQ(t[0].deadline, 130);
	srn_timer_run(&heap, 1000);
	CHECK_EQ(nfired, 7);
	CHECK_EQ(fired[3], 0);
	CHECK_EQ(fired[4], 4);
	CHECK_EQ(fired[5], 6);
	CHECK_EQ(fired[6], 7);
	CHECK_EQ(heap.n, 0);
}

SRN_TEST(test_timer_full_heap_refuses)
{
	setup(2);
	CHECK(srn_timer_set(&heap, &t[0], 10));
	CHECK(srn_timer_set(&heap, &t[1], 20));
	CHECK(!srn_timer_set(&heap, &t[2], 30));
	CHECK(!srn_timer_armed(&t[2]));
	CHECK(srn_timer_set(&heap, &t[1], 5));   /* moving an armed one still works */
	CHECK_EQ(srn_timer_next(&heap), 5);
}

int main(void) { return srn_test_main(); }
