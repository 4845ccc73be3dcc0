/* clock.c - the runtime's clocks: CLOCK_MONOTONIC for the core (srn_ts),
 * CLOCK_REALTIME for capture timestamps and the stats file. */
#include <time.h>

#include "rt_internal.h"

srn_ts srn_rt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (srn_ts)ts.tv_sec * 1000000000ull + (srn_ts)ts.tv_nsec;
}

uint64_t srn_rt_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
