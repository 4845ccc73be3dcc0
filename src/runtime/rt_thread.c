/*
 * rt_thread.c - a device's progress thread. It sleeps in ppoll() on the
 * port's socket and an eventfd with the timeout of the next deadline (core
 * timer, deferred doorbell, pending stats publish); SRN_TS_NEVER means an
 * infinite sleep, so an idle device costs nothing. While the application
 * busy-polls, the thread leaves the socket to it and runs only what its
 * polls do not (timers); a passive device's thread spins briefly between
 * small arrivals (SOFTRNIC_RX_SPIN_US).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_dev.h"

void srn_rt_kick(struct srn_rt_dev *rd)
{
	uint64_t one = 1;
	ssize_t r;
	do
		r = write(rd->evfd, &one, sizeof one);
	while (r < 0 && errno == EINTR);
}

/* Until when the thread sleeps (the lock is held); *spin: look again at once */
static srn_ts plan_sleep(struct srn_rt_dev *rd, bool *busy, bool *spin)
{
	srn_ts now = srn_rt_now();
	if (rd->stats_dirty && now >= rd->stats_last + STATS_PERIOD_NS)
		srn_rt_publish(rd, now);
	srn_ts d = srn_rt_thread_deadline(rd);
	*busy = srn_rt_app_busy(rd, now);
	if (*busy) {
		srn_ts lp = atomic_load_explicit(&rd->last_poll, memory_order_relaxed);
		if (lp + APP_POLL_NS < d)
			d = lp + APP_POLL_NS;
	}
	rd->sleep_target = d;
	/* A passive device (no verbs call for APP_IDLE_NS: a READ or atomic
	 * responder, the target of WRITEs) that received within spin_ns looks
	 * at its socket again at once instead of sleeping: the next request,
	 * typically tens of microseconds away, finds the thread awake, and the
	 * sender does not pay for waking it. Never while the application
	 * drives the device (its polls receive) or has been calling it lately
	 * (two spinning perftest processes already own both cores). */
	srn_ts lapp = atomic_load_explicit(&rd->last_app, memory_order_relaxed);
	*spin = !*busy && rd->spin_ns && now < rd->last_rx + rd->spin_ns && now >= lapp + APP_IDLE_NS;
	if (*spin) {
		rd->rt_ctr[SRN_RT_CTR_RX_SPINS]++;
		d = now;
	}
	return d;
}

/* sleep until d, a packet (unless busy) or a kick; true if the socket is readable */
static bool sleep_until(struct srn_rt_dev *rd, struct pollfd pfd[2], srn_ts d, bool busy, bool spin)
{
	struct timespec ts, *tp = NULL;
	if (d != SRN_TS_NEVER) {
		srn_ts now = srn_rt_now();
		uint64_t dt = d > now ? d - now : 0;
		ts.tv_sec = (time_t)(dt / 1000000000ull);
		ts.tv_nsec = (long)(dt % 1000000000ull);
		tp = &ts;
	}
	pfd[1].revents = 0;
	if (spin)
		sched_yield();        /* a spinner leaves the CPU to anyone runnable */
	int r = ppoll(pfd, busy ? 1 : 2, tp, NULL);
	if (r > 0 && (pfd[0].revents & POLLIN)) {
		uint64_t v;
		ssize_t rr = read(rd->evfd, &v, sizeof v);
		(void)rr;
	}
	return r > 0 && (pfd[1].revents & (POLLIN | POLLERR));
}

/* never make a polling application wait for the lock: while it holds it,
 * it is busy - sleep another window */
static void relock(struct srn_rt_dev *rd, struct pollfd *pfd)
{
	while (srn_rt_app_busy(rd, srn_rt_now())) {
		if (pthread_mutex_trylock(&rd->lock) == 0)
			return;
		struct timespec w = { 0, (long)APP_POLL_NS };
		(void)ppoll(pfd, 1, &w, NULL);
	}
	pthread_mutex_lock(&rd->lock);
}

static void *progress_thread(void *arg)
{
	struct srn_rt_dev *rd = arg;
	/* the eventfd first: while the application busy-polls, only it is watched */
	struct pollfd pfd[2] = {
		{ .fd = rd->evfd, .events = POLLIN },
		{ .fd = rd->port.fd, .events = POLLIN },
	};
	bool rx = true, sock = false;

	pthread_mutex_lock(&rd->lock);
	while (!rd->stop) {
		srn_ts now = srn_rt_now();
		/* Back off while the application drives the device itself: its
		 * polls receive, run the timers and send the doorbell; the thread
		 * only looks again when that polling may have stopped. Woken (kick
		 * or timer) while the application is still posting a doorbell
		 * batch, with nothing received and no timer due: leave the batch
		 * until APP_POLL_NS after the last post. */
		srn_ts la = atomic_load_explicit(&rd->last_act, memory_order_relaxed);
		bool hold = !sock && rd->port.tx.n && now < la + APP_POLL_NS &&
			    now < srn_dev_expiry(rd->core) && !srn_dev_has_output(rd->core);
		if (!srn_rt_app_busy(rd, now) && !hold)
			srn_rt_service(rd, rx, false);
		bool busy, spin;
		srn_ts d = plan_sleep(rd, &busy, &spin);
		pthread_mutex_unlock(&rd->lock);
		sock = sleep_until(rd, pfd, d, busy, spin);
		/* after a busy period the socket may hold what nobody read */
		rx = busy || sock;
		relock(rd, pfd);
		rd->rt_ctr[SRN_RT_CTR_WAKEUPS]++;
	}
	pthread_mutex_unlock(&rd->lock);
	return NULL;
}

int srn_rt_thread_start(struct srn_rt_dev *rd)
{
	/* the thread takes no signals: they stay with the application's threads */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pr = pthread_create(&rd->thread, NULL, progress_thread, rd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pr)
		return -pr;
	rd->thread_started = true;
	char tname[16] = "srn-";           /* thread names are at most 15 chars */
	memcpy(tname + 4, rd->cfg.name, strnlen(rd->cfg.name, sizeof tname - 5));
	pthread_setname_np(rd->thread, tname);
	return 0;
}

void srn_rt_thread_stop(struct srn_rt_dev *rd)
{
	if (!rd->thread_started)
		return;
	pthread_mutex_lock(&rd->lock);
	rd->stop = true;
	pthread_mutex_unlock(&rd->lock);
	srn_rt_kick(rd);
	pthread_join(rd->thread, NULL);
	rd->thread_started = false;
}
