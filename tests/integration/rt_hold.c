/*
 * rt_hold.c - opens the first verbs device, allocates a PD and keeps the
 * device open for SECS seconds (default 30) or until SIGTERM/SIGINT, then
 * closes it cleanly. Prints "ready NAME" once open. Used by test_cli.sh to
 * have a running device for `softrnic stats` / `softrnic devices` and to
 * measure the idle CPU of a process with an open device.
 *
 *   usage: rt_hold [SECS]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <infiniband/verbs.h>

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 30;
	struct sigaction sa = { .sa_handler = on_sig };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	int num = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	if (!list || num < 1) {
		fprintf(stderr, "rt_hold: no verbs device\n");
		return 1;
	}
	struct ibv_context *ctx = ibv_open_device(list[0]);
	if (!ctx) {
		fprintf(stderr, "rt_hold: cannot open %s\n", ibv_get_device_name(list[0]));
		return 1;
	}
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "rt_hold: cannot allocate a PD\n");
		return 1;
	}
	printf("ready %s\n", ibv_get_device_name(list[0]));
	fflush(stdout);
	for (int i = 0; i < secs * 10 && !stop; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("closed\n");
	return 0;
}
