/*
 * cmd_sim.c - `softrnic sim SCENARIO [--out DIR] [--seed N] [--quiet]`:
 * run a scenario in the discrete-event simulator (src/sim), print the
 * summary and write the time series, summary and plots. The only place of
 * the simulator that reads a clock: the wall clock, for the progress line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim/srn_sim.h"
#include "softrnic.h"

int srn_cmd_sim(int argc, char **argv);

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (!b)
			break;
		n += fread(b + n, 1, cap - n, f);
		if (n < cap || ferror(f))
			break;
		char *nb = realloc(b, cap * 2);
		if (!nb) {
			free(b);
			b = NULL;
			break;
		}
		b = nb;
		cap *= 2;
	}
	if (b && ferror(f)) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = n;
	return b;
}

static int mkdir_p(const char *dir)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -1;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0777) && errno != EEXIST)
		return -1;
	return 0;
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t plen)
{
	snprintf(path, plen, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "softrnic sim: %s: %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "softrnic sim: writing %s failed\n", path);
		return -1;
	}
	return 0;
}

int srn_cmd_sim(int argc, char **argv)
{
	const char *scen_path = NULL, *out_dir = "sim-out", *seed_s = NULL;
	bool quiet = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(help_sim, stdout);
			return 0;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--out") || !strcmp(a, "--seed")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "softrnic sim: %s needs a value\n", a);
				return 2;
			}
			*(a[2] == 'o' ? &out_dir : &seed_s) = argv[++i];
		} else if (!strncmp(a, "--out=", 6)) {
			out_dir = a + 6;
		} else if (!strncmp(a, "--seed=", 7)) {
			seed_s = a + 7;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "softrnic sim: unknown option '%s' (try: softrnic sim --help)\n", a);
			return 2;
		} else if (!scen_path) {
			scen_path = a;
		} else {
			fprintf(stderr, "softrnic sim: more than one scenario ('%s')\n", a);
			return 2;
		}
	}
	if (!scen_path) {
		fprintf(stderr, "softrnic sim: no scenario file (try: softrnic sim --help)\n");
		return 2;
	}
	size_t len;
	char *text = read_file(scen_path, &len);
	if (!text) {
		fprintf(stderr, "softrnic sim: %s: %s\n", scen_path, strerror(errno ? errno : EIO));
		return 2;
	}
	struct srn_sim_scen sc;
	srn_sim_scen_init(&sc);
	char err[512];
	int rc = srn_sim_scen_parse(&sc, text, len, err, sizeof(err));
	free(text);
	if (!rc && seed_s && srn_sim_parse_u64(seed_s, strlen(seed_s), &sc.seed)) {
		snprintf(err, sizeof(err), "--seed '%s': not an unsigned integer", seed_s);
		rc = SRN_EINVAL;
	}
	if (rc) {
		fprintf(stderr, "softrnic sim: %s: %s\n", scen_path, err);
		srn_sim_scen_free(&sc);
		return 2;
	}
	struct srn_sim *sim;
	if (srn_sim_new(&sim, &sc, err, sizeof(err))) {
		fprintf(stderr, "softrnic sim: %s: %s\n", scen_path, err);
		srn_sim_scen_free(&sc);
		return 1;
	}
	int ret = 1;
	char p_csv[4200], p_sum[4200], p_rate[4200], p_queue[4200];
	FILE *csv = NULL, *sum = NULL, *rate = NULL, *queue = NULL;
	if (mkdir_p(out_dir)) {
		fprintf(stderr, "softrnic sim: cannot create %s: %s\n", out_dir, strerror(errno));
		goto out;
	}
	if (!(csv = open_out(out_dir, "timeseries.csv", p_csv, sizeof(p_csv))))
		goto out;
	srn_sim_set_csv(sim, csv);

	/* run in steps of 1/200 of the duration; a progress line at most once a second */
	double w0 = wall_s(), last = w0;
	srn_ts step = sc.duration / 200 ? sc.duration / 200 : 1;
	bool tty = isatty(2);
	while (srn_sim_now(sim) < sc.duration) {
		srn_ts t = srn_sim_now(sim) + step;
		srn_sim_run_until(sim, t < sc.duration ? t : sc.duration);
		double w = wall_s();
		if (!quiet && w - last >= 1.0) {
			last = w;
			double sim_ms = (double)srn_sim_now(sim) / 1e6;
			fprintf(stderr, "%s[sim] %.3f / %.3f ms simulated, %.1f s wall, %.3f ms/s, %" PRIu64
				" events%s", tty ? "\r" : "", sim_ms, (double)sc.duration / 1e6, w - w0,
				sim_ms / (w - w0), srn_sim_events(sim), tty ? "   " : "\n");
		}
	}
	double wall = wall_s() - w0;
	if (!quiet && tty && wall >= 1.0)
		fputc('\n', stderr);

	struct srn_sim_metrics m;
	srn_sim_metrics(sim, &m);
	if (!(sum = open_out(out_dir, "summary.txt", p_sum, sizeof(p_sum))))
		goto out;
	srn_sim_summary_write(sim, &m, sum);
	fprintf(sum, "speed:    %.3f s wall, %.4f simulated s per wall s\n", wall,
		(double)sc.duration / 1e9 / (wall > 0 ? wall : 1e-9));
	if (!quiet) {
		srn_sim_summary_write(sim, &m, stdout);
		printf("speed:    %.3f s wall, %.4f simulated s per wall s\n", wall,
		       (double)sc.duration / 1e9 / (wall > 0 ? wall : 1e-9));
	}
	if (!(rate = open_out(out_dir, "rate.svg", p_rate, sizeof(p_rate))) ||
	    srn_sim_plot_rate(sim, rate))
		goto out;
	if (!(queue = open_out(out_dir, "queue.svg", p_queue, sizeof(p_queue))) ||
	    srn_sim_plot_queue(sim, queue))
		goto out;
	ret = 0;
out:
	if (csv && close_out(csv, p_csv))
		ret = 1;
	if (sum && close_out(sum, p_sum))
		ret = 1;
	if (rate && close_out(rate, p_rate))
		ret = 1;
	if (queue && close_out(queue, p_queue))
		ret = 1;
	if (!ret && !quiet)
		printf("output:   %s/{timeseries.csv,summary.txt,rate.svg,queue.svg}\n", out_dir);
	srn_sim_del(sim);
	srn_sim_scen_free(&sc);
	return ret;
}
