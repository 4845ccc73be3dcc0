/*
 * plot.c - the plots of a run from its recorded series: per-flow goodput
 * vs time and the queue of each output port that receives flows vs time.
 * Series are averaged into at most MAX_POINTS buckets so files stay small.
 * With more than MANY flows the rate plot shows min/mean/max across the
 * flows and their sum instead of one line each.
 */
#include <stdlib.h>

#include "sim_int.h"

#define MAX_POINTS 400u
#define MANY       12u

struct buf { double *x, *y; };

/* samples per plotted point */
static uint32_t per_point(const struct srn_sim_series *s)
{
	uint32_t per = (s->n + MAX_POINTS - 1) / MAX_POINTS;
	return per ? per : 1;
}

/* bucket-average the k-th column of a [n][stride] matrix; scale -> y */
static size_t bucket(const struct srn_sim_series *s, const uint64_t *m, uint32_t stride,
		     uint32_t col, double scale, double *x, double *y)
{
	uint32_t per = per_point(s);
	size_t np = 0;
	for (uint32_t k = 0; k < s->n; k += per) {
		double sum = 0;
		uint32_t c = 0;
		for (uint32_t j = k; j < s->n && j < k + per; j++, c++)
			sum += (double)m[(size_t)j * stride + col];
		x[np] = (double)((srn_ts)(k + c) * s->dt) / 1e6;   /* ms, end of bucket */
		y[np] = sum / c * scale;
		np++;
	}
	return np;
}

int srn_sim_plot_rate(const struct srn_sim *sim, FILE *f)
{
	const struct srn_sim_series *s = &sim->ser;
	bool many = sim->nflows > MANY;
	size_t ns = many ? 4 : sim->nflows;
	size_t pts = MAX_POINTS + 1;
	double *mem = calloc(ns * pts * 2 + 1, sizeof(double));
	struct srn_sim_svg_series *ser = calloc(ns, sizeof(*ser));
	char (*names)[48] = calloc(ns, sizeof(*names));
	int rc = SRN_ENOMEM;
	if (!mem || !ser || !names)
		goto out;
	double scale = 8.0 / (double)s->dt;   /* bytes per interval -> Gbit/s */
	if (!many) {
		for (size_t i = 0; i < ns; i++) {
			double *x = mem + i * pts * 2, *y = x + pts;
			ser[i].n = bucket(s, s->flow_bytes, s->nflows, (uint32_t)i, scale, x, y);
			ser[i].x = x;
			ser[i].y = y;
			snprintf(names[i], sizeof(names[i]), "flow %zu (%u->%u)", i,
				 sim->sc->flow[i].src, sim->sc->flow[i].dst);
			ser[i].name = names[i];
		}
	} else {
		/* min, mean, max across flows and the total, per bucket */
		uint32_t per = per_point(s);
		double *xs[4], *ys[4];
		for (int i = 0; i < 4; i++) {
			xs[i] = mem + (size_t)i * pts * 2;
			ys[i] = xs[i] + pts;
		}
		size_t np = 0;
		for (uint32_t k = 0; k < s->n; k += per, np++) {
			double mn = 1e300, mx = 0, tot = 0;
			uint32_t c = 0;
			for (uint32_t j = k; j < s->n && j < k + per; j++)
				c++;
			for (uint32_t fl = 0; fl < sim->nflows; fl++) {
				double sum = 0;
				for (uint32_t j = k; j < k + c; j++)
					sum += (double)s->flow_bytes[(size_t)j * s->nflows + fl];
				double r = sum / c * scale;
				mn = r < mn ? r : mn;
				mx = r > mx ? r : mx;
				tot += r;
			}
			double x = (double)((srn_ts)(k + c) * s->dt) / 1e6;
			double v[4] = { tot, mx, tot / sim->nflows, mn };
			for (int i = 0; i < 4; i++) {
				xs[i][np] = x;
				ys[i][np] = v[i];
			}
		}
		static const char *const nm[4] = { "sum of flows", "max flow", "mean flow", "min flow" };
		for (int i = 0; i < 4; i++) {
			ser[i] = (struct srn_sim_svg_series){ nm[i], xs[i], ys[i], np };
		}
	}
	char title[160];
	snprintf(title, sizeof(title), "Goodput per flow (%u flows, cc %s, mean over %.0f us)",
		 sim->nflows, srn_sim_cc_names[sim->sc->cc], (double)(per_point(s) * s->dt) / 1e3);
	struct srn_sim_svg_plot p = {
		.title = title, .xlabel = "time (ms)", .ylabel = "goodput (Gbit/s)",
		.s = ser, .ns = ns, .ymin_hint = 0,
	};
	rc = srn_sim_svg_write(f, &p);
out:
	free(mem);
	free(ser);
	free(names);
	return rc;
}

int srn_sim_plot_queue(const struct srn_sim *sim, FILE *f)
{
	const struct srn_sim_series *s = &sim->ser;
	size_t ns = sim->nq;
	size_t pts = MAX_POINTS + 1;
	double *mem = calloc(ns * pts * 2 + 1, sizeof(double));
	struct srn_sim_svg_series *ser = calloc(ns + 1, sizeof(*ser));
	char (*names)[48] = calloc(ns + 1, sizeof(*names));
	struct srn_sim_svg_hline hl[3];
	char hn[3][48];
	size_t nhl = 0;
	int rc = SRN_ENOMEM;
	if (!mem || !ser || !names)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		double *x = mem + i * pts * 2, *y = x + pts;
		ser[i].n = bucket(s, s->q_bytes, s->nq, (uint32_t)i, 1.0 / 1024, x, y);
		ser[i].x = x;
		ser[i].y = y;
		snprintf(names[i], sizeof(names[i]), "port of host %u", sim->qport[i]);
		ser[i].name = names[i];
	}
	if (ns) {
		struct srn_sim_link_cfg l;
		uint32_t h = sim->qport[0];
		for (size_t j = 0; j < ns; j++)
			if (sim->host[sim->qport[j]].nflows_in > sim->host[h].nflows_in)
				h = sim->qport[j];
		srn_sim_scen_link(sim->sc, h, SRN_SIM_OUT, &l);
		if (l.kmax) {
			snprintf(hn[nhl], sizeof(hn[0]), "kmin %.0f KiB", l.kmin / 1024.0);
			hl[nhl] = (struct srn_sim_svg_hline){ hn[nhl], l.kmin / 1024.0 };
			nhl++;
			snprintf(hn[nhl], sizeof(hn[0]), "kmax %.0f KiB", l.kmax / 1024.0);
			hl[nhl] = (struct srn_sim_svg_hline){ hn[nhl], l.kmax / 1024.0 };
			nhl++;
		}
		if (l.buffer) {
			snprintf(hn[nhl], sizeof(hn[0]), "buffer %.0f KiB", l.buffer / 1024.0);
			hl[nhl] = (struct srn_sim_svg_hline){ hn[nhl], l.buffer / 1024.0 };
			nhl++;
		}
	}
	char title[160];
	snprintf(title, sizeof(title), "Switch output queue (cc %s, mean over %.0f us)",
		 srn_sim_cc_names[sim->sc->cc], (double)(per_point(s) * s->dt) / 1e3);
	struct srn_sim_svg_plot p = {
		.title = title, .xlabel = "time (ms)", .ylabel = "queue (KiB)",
		.s = ser, .ns = ns, .hl = hl, .nhl = nhl, .ymin_hint = 0,
	};
	rc = srn_sim_svg_write(f, &p);
out:
	free(mem);
	free(ser);
	free(names);
	return rc;
}
