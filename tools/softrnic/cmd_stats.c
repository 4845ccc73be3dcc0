/*
 * cmd_stats.c - `softrnic stats`: live counters of running devices, read
 * from their shared-memory files (see src/runtime/srn_rt_stats.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "softrnic.h"
#include "runtime/srn_rt.h"
#include "runtime/srn_rt_stats.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

static const struct srn_rt_stats_snap *find_prev(const struct srn_rt_stats_snap *prev, int np,
						 const struct srn_rt_stats_snap *s)
{
	for (int i = 0; i < np; i++)
		if (prev[i].pid == s->pid && strcmp(prev[i].name, s->name) == 0)
			return &prev[i];
	return NULL;
}

static void print_text(const struct srn_rt_stats_snap *s, int n, const struct srn_rt_stats_snap *prev,
		       int np, bool all, bool watch)
{
	char ipb[INET_ADDRSTRLEN];
	uint64_t now = srn_rt_realtime_ns();
	for (int d = 0; d < n; d++) {
		const struct srn_rt_stats_snap *x = &s[d];
		const struct srn_rt_stats_snap *p = watch ? find_prev(prev, np, x) : NULL;
		inet_ntop(AF_INET, &x->ip, ipb, sizeof ipb);
		printf("%s  %s  pid %d  up %.1fs\n", x->name, ipb, x->pid,
		       now > x->start_ns ? (double)(now - x->start_ns) / 1e9 : 0.0);
		double dt = p && x->update_ns > p->update_ns ? (double)(x->update_ns - p->update_ns) / 1e9 : 0;
		int shown = 0;
		for (uint32_t i = 0; i < x->n; i++) {
			if (!all && !x->values[i])
				continue;
			shown++;
			printf("  %-24s %20llu", x->names[i], (unsigned long long)x->values[i]);
			if (p && i < p->n && strcmp(p->names[i], x->names[i]) == 0) {
				uint64_t dv = x->values[i] - p->values[i];
				if (dt > 0)
					printf("  %14.1f/s", (double)dv / dt);
				else
					printf("  %14.1f/s", 0.0);
			}
			putchar('\n');
		}
		if (!shown)
			printf("  (all counters are zero)\n");
	}
}

static void print_json(const struct srn_rt_stats_snap *s, int n, bool all)
{
	char ipb[INET_ADDRSTRLEN], gid[40];
	printf("{\"time\": %.3f, \"devices\": [", (double)srn_rt_realtime_ns() / 1e9);
	for (int d = 0; d < n; d++) {
		const struct srn_rt_stats_snap *x = &s[d];
		inet_ntop(AF_INET, &x->ip, ipb, sizeof ipb);
		tool_fmt_gid(gid, x->gid);
		printf("%s{\"name\": ", d ? ", " : "");
		tool_json_str(x->name);
		printf(", \"ip\": \"%s\", \"pid\": %d, \"gid\": \"%s\", \"counters\": {", ipb, x->pid, gid);
		int k = 0;
		for (uint32_t i = 0; i < x->n; i++) {
			if (!all && !x->values[i])
				continue;
			printf("%s", k++ ? ", " : "");
			tool_json_str(x->names[i]);
			printf(": %llu", (unsigned long long)x->values[i]);
		}
		printf("}}");
	}
	printf("]}\n");
}

int cmd_stats(int argc, char **argv)
{
	const char *name = NULL;
	double watch = 0;
	bool all = false, json = false;

	for (int i = 1; i < argc; i++) {
		const char *v;
		int r;
		if (tool_is_help(argv[i])) {
			fputs(help_stats, stdout);
			return 0;
		} else if (strcmp(argv[i], "--all") == 0 || strcmp(argv[i], "-a") == 0) {
			all = true;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if ((r = tool_opt_val(argc, argv, &i, "--name", "-n", &v)) != 0) {
			if (r < 0)
				return 2;
			name = v;
		} else if ((r = tool_opt_val(argc, argv, &i, "--watch", "-w", &v)) != 0) {
			if (r < 0)
				return 2;
			char *end;
			errno = 0;
			watch = strtod(v, &end);
			if (errno || *end || !(watch > 0) || !isfinite(watch) || watch > 86400) {
				fprintf(stderr, "softrnic stats: --watch needs seconds > 0 (e.g. 1 or 0.5), "
					"not \"%s\"\n", v);
				return 2;
			}
		} else {
			fprintf(stderr, "softrnic stats: unknown argument %s (see softrnic stats --help)\n",
				argv[i]);
			return 2;
		}
	}

	if (watch > 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sig;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		setvbuf(stdout, NULL, _IOLBF, 0);
	}

	struct srn_rt_stats_snap *prev = NULL;
	int np = 0, status = 0;
	for (int round = 0; !stop; round++) {
		struct srn_rt_stats_snap *s = NULL;
		int n = srn_rt_stats_scan(name, &s);
		if (n < 0) {
			if (!watch) {
				fprintf(stderr, "softrnic stats: cannot read %s: %s\n", srn_rt_stats_dir(),
					strerror(-n));
				return 1;
			}
			n = 0;
		}
		if (json) {
			print_json(s, n, all);
		} else {
			if (watch > 0 && round > 0) {
				time_t t = time(NULL);
				char tb[32];
				strftime(tb, sizeof tb, "%H:%M:%S", localtime(&t));
				printf("--- %s\n", tb);
			}
			if (n == 0)
				fprintf(watch > 0 ? stdout : stderr, "no running softrnic device%s%s\n",
					name ? " named " : "", name ? name : "");
			print_text(s, n, prev, np, all, watch > 0);
		}
		fflush(stdout);
		free(prev);
		prev = s;
		np = n;
		if (!watch) {
			status = n > 0 ? 0 : 1;
			break;
		}
		struct timespec ts = { (time_t)watch, (long)((watch - (double)(time_t)watch) * 1e9) };
		while (!stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	free(prev);
	return status;
}
