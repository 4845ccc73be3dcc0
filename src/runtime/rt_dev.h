/*
 * rt_dev.h - a runtime device, shared by the files that drive it:
 *
 *   rt_service.c  service pass: receive batches (port -> core), timers,
 *                 transmit pump (core -> port), events, counters
 *   rt_lock.c     the device lock, the doorbell rule and the
 *                 application's progress calls
 *   rt_thread.c   the background progress thread
 *   rt_dev.c      creation, destruction and the per-process registry
 */
#ifndef SRN_RT_DEV_H
#define SRN_RT_DEV_H

#include <pthread.h>
#include <stdatomic.h>

#include "rt_internal.h"

#define RX_ROUNDS        16                /* recvmmsg batches per service pass */
#define TX_BUDGET        2048              /* packets per srn_dev_send pump */
#define SERVICE_ITERS    4
#define STATS_PERIOD_NS  (100ull * 1000 * 1000)
/* The application counts as busy-polling while its last poll_cq (or other
 * progress call) is younger than this: the progress thread then leaves the
 * receive socket to the application. A post_send within this long of the
 * last poll, or of the last post batched so, leaves its packets in the
 * transmit batch for the application's next poll (the doorbell): a run of
 * posts between two polls (perftest posts up to its tx depth) goes out in
 * full GSO batches. The progress thread sends the batch when no poll or
 * post came for this long. */
#define APP_POLL_NS      SRN_RT_APP_POLL_NS
/* how long a run of batched posts may last after the poll that started it */
#define APP_RUN_NS       SRN_RT_APP_RUN_NS
/* an application that made no verbs call for this long is passive: its
 * device's progress thread may spin on the socket (SOFTRNIC_RX_SPIN_US) */
#define APP_IDLE_NS      (1000ull * 1000)
/* a receive pass of this many bytes or more does not make the thread spin */
#define RX_SPIN_MAX_BYTES (16u * 1024)
/* how long a device behind a fabric waits for the HELLO echo when it opens */
#define FABRIC_HELLO_MS  3000

struct srn_rt_dev {
	struct srn_rt_devcfg cfg;
	struct srn_rt_hooks hooks;
	int refcnt;                       /* under the registry lock */

	pthread_mutex_t lock;             /* serialises everything below */
	struct srn_dev *core;
	struct srn_rt_port port;
	struct srn_rt_pcap *pcap;
	struct srn_rt_shm_writer *shm;
	bool stop;
	srn_ts sleep_target;              /* the thread sleeps until then (or a kick) */
	_Atomic srn_ts last_act;          /* last poll, or batched post (no lock) */
	srn_ts last_batch;                /* last batched post */
	srn_ts last_rx;                   /* last receive pass that found packets */
	srn_ts rx_now;                    /* time of the current receive batch (0: not read yet) */
	srn_ts spin_ns;                   /* SOFTRNIC_RX_SPIN_US, in ns */
	_Atomic srn_ts last_poll;         /* last application progress call (no lock) */
	_Atomic srn_ts last_app;          /* last post or poll of the application */
	bool stats_dirty;
	srn_ts stats_last;
	uint64_t rt_ctr[SRN_RT_CTR_MAX];
	uint64_t pub[SRN_CTR_MAX + SRN_RT_CTR_MAX];

	int evfd;
	pthread_t thread;
	bool thread_started;
};

/* the application polled within APP_POLL_NS */
static inline bool srn_rt_app_busy(struct srn_rt_dev *rd, srn_ts now)
{
	srn_ts lp = atomic_load_explicit(&rd->last_poll, memory_order_relaxed);
	return now < lp + APP_POLL_NS;
}

/* rt_service.c (lock held) */
void   srn_rt_tx_flush(struct srn_rt_dev *rd);
bool   srn_rt_rx_pass(struct srn_rt_dev *rd);
void   srn_rt_service(struct srn_rt_dev *rd, bool rx, bool defer);
void   srn_rt_publish(struct srn_rt_dev *rd, srn_ts now);
srn_ts srn_rt_thread_deadline(struct srn_rt_dev *rd);

/* rt_thread.c */
int  srn_rt_thread_start(struct srn_rt_dev *rd);
void srn_rt_thread_stop(struct srn_rt_dev *rd);
void srn_rt_kick(struct srn_rt_dev *rd);

#endif /* SRN_RT_DEV_H */
