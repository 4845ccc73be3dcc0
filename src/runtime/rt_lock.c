/*
 * rt_lock.c - the device lock and the progress policy of the verbs the
 * application calls:
 *
 *   srn_rt_unlock()           after every verb that touched the core (no receive);
 *   srn_rt_unlock_doorbell()  after a post: the doorbell rule may leave the
 *                             packets for the application's next poll;
 *   srn_rt_lock_poll() / srn_rt_unlock_poll()  the application's poll: a
 *                             receive pass first, the poll's time at its end;
 *   srn_rt_progress()         try-lock; non-blocking receive + service;
 *   srn_rt_app_sleeps()       the application blocks (ibv_get_cq_event).
 *
 * Whoever moves the progress thread's deadline earlier than the time it
 * sleeps to writes its eventfd (finish_unlock).
 */
#include <string.h>

#include "rt_dev.h"

struct srn_dev *srn_rt_core(struct srn_rt_dev *rd) { return rd->core; }
const struct srn_rt_devcfg *srn_rt_cfg(struct srn_rt_dev *rd) { return &rd->cfg; }

/* common tail of unlock/progress: re-arm the thread if needed, unlock */
static void finish_unlock(struct srn_rt_dev *rd)
{
	bool k = false;
	srn_ts d = srn_rt_thread_deadline(rd);
	if (d < rd->sleep_target) {
		rd->sleep_target = d;
		rd->rt_ctr[SRN_RT_CTR_KICKS]++;
		k = true;
	}
	pthread_mutex_unlock(&rd->lock);
	if (k)
		srn_rt_kick(rd);
}

void srn_rt_lock(struct srn_rt_dev *rd)
{
	pthread_mutex_lock(&rd->lock);
}

void srn_rt_unlock(struct srn_rt_dev *rd)
{
	srn_rt_service(rd, false, false);
	finish_unlock(rd);
}

static void note_poll(struct srn_rt_dev *rd)
{
	srn_ts now = srn_rt_now();
	atomic_store_explicit(&rd->last_poll, now, memory_order_relaxed);
	atomic_store_explicit(&rd->last_act, now, memory_order_relaxed);
	atomic_store_explicit(&rd->last_app, now, memory_order_relaxed);
}

bool srn_rt_doorbell_batches(uint64_t now, uint64_t last_poll, uint64_t last_act,
			     uint64_t last_batch)
{
	return now < last_act + APP_POLL_NS ||
	       (last_batch > last_poll && now < last_poll + APP_RUN_NS);
}

void srn_rt_unlock_doorbell(struct srn_rt_dev *rd)
{
	/* A post within APP_POLL_NS of the application's last poll starts a
	 * run of posts batched for its next poll; the run goes on until that
	 * poll (a post that comes later, say after the application was
	 * descheduled, still joins it, as long as the poll is younger than
	 * APP_RUN_NS). A post long after a poll (an application that waited
	 * on something else in between) goes out at once. */
	srn_ts now = srn_rt_now();
	atomic_store_explicit(&rd->last_app, now, memory_order_relaxed);
	bool batch = srn_rt_doorbell_batches(now,
			atomic_load_explicit(&rd->last_poll, memory_order_relaxed),
			atomic_load_explicit(&rd->last_act, memory_order_relaxed), rd->last_batch);
	if (batch) {
		atomic_store_explicit(&rd->last_act, now, memory_order_relaxed);
		rd->last_batch = now;
	}
	srn_rt_service(rd, false, batch);
	finish_unlock(rd);
}

void srn_rt_progress(struct srn_rt_dev *rd)
{
	note_poll(rd);
	if (pthread_mutex_trylock(&rd->lock) != 0)
		return;
	srn_rt_service(rd, true, false);
	note_poll(rd);
	finish_unlock(rd);
}

void srn_rt_unlock_poll(struct srn_rt_dev *rd)
{
	srn_rt_service(rd, false, false);
	note_poll(rd);
	finish_unlock(rd);
}

void srn_rt_lock_poll(struct srn_rt_dev *rd)
{
	note_poll(rd);
	pthread_mutex_lock(&rd->lock);
	srn_rt_tx_flush(rd);
	if (srn_rt_rx_pass(rd))
		rd->stats_dirty = true;
}

void srn_rt_app_sleeps(struct srn_rt_dev *rd)
{
	/* Its next poll will not come soon: no doorbell batch may wait for it,
	 * and the progress thread, backing off while the application polled,
	 * must watch the socket at once (not after its 15 us window and the
	 * timer slack: ~60 us per hop of an event-driven ping-pong). The
	 * application counts as passive from now on (last_app 0), so the
	 * thread spins between small arrivals while it waits: the answer it
	 * waits for then costs one wake-up (its own) instead of two. */
	bool was_busy = srn_rt_app_busy(rd, srn_rt_now());
	atomic_store_explicit(&rd->last_poll, 0, memory_order_relaxed);
	atomic_store_explicit(&rd->last_act, 0, memory_order_relaxed);
	atomic_store_explicit(&rd->last_app, 0, memory_order_relaxed);
	pthread_mutex_lock(&rd->lock);
	srn_rt_tx_flush(rd);
	if (was_busy) {
		rd->sleep_target = 0;
		rd->rt_ctr[SRN_RT_CTR_KICKS]++;
	}
	pthread_mutex_unlock(&rd->lock);
	if (was_busy)
		srn_rt_kick(rd);
}

int srn_rt_counter(struct srn_rt_dev *rd, const char *name, uint64_t *value)
{
	for (int i = 0; i < SRN_RT_CTR_MAX; i++)
		if (!strcmp(srn_rt_ctr_names[i], name)) {
			pthread_mutex_lock(&rd->lock);
			*value = rd->rt_ctr[i];
			pthread_mutex_unlock(&rd->lock);
			return 0;
		}
	return -1;
}
