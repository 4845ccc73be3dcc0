/*
 * svg.c - a small SVG line-plot writer: a frame with x and y axes, "nice"
 * ticks (1, 2, 5 x 10^k) with grid lines and labels, axis titles, a plot
 * title, one polyline per series, dashed horizontal reference lines and a
 * legend to the right. Text is XML-escaped; the output is plain SVG 1.1
 * that browsers and rsvg render.
 */
#include <math.h>
#include <string.h>

#include "sim_int.h"

#define W   960.0
#define H   520.0
#define ML  80.0   /* margins */
#define MR  200.0
#define MT  44.0
#define MB  64.0
#define LEGEND_MAX 24

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define NPAL (sizeof(palette) / sizeof(palette[0]))

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

double srn_sim_svg_tick_step(double range, int n)
{
	if (!(range > 0) || n < 1)
		return 1;
	double raw = range / n;
	double mag = pow(10, floor(log10(raw)));
	double r = raw / mag;
	double step = r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10;
	return step * mag;
}

/* tick label without float noise: as many decimals as the step needs */
static void tick_label(char *buf, size_t len, double v, double step)
{
	int dec = 0;
	while (dec < 6 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-9)
		dec++;
	if (fabs(v) < step * 1e-9)
		v = 0;
	snprintf(buf, len, "%.*f", dec, v);
}

int srn_sim_svg_write(FILE *f, const struct srn_sim_svg_plot *p)
{
	double xmin = INFINITY, xmax = -INFINITY, ymin = p->ymin_hint, ymax = -INFINITY;
	for (size_t i = 0; i < p->ns; i++)
		for (size_t j = 0; j < p->s[i].n; j++) {
			double x = p->s[i].x[j], y = p->s[i].y[j];
			if (!isfinite(x) || !isfinite(y))
				continue;
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			ymin = fmin(ymin, y);
			ymax = fmax(ymax, y);
		}
	for (size_t i = 0; i < p->nhl; i++)
		ymax = fmax(ymax, p->hl[i].y);
	if (!isfinite(xmin)) {
		xmin = 0;
		xmax = 1;
	}
	if (!isfinite(ymax) || ymax <= ymin)
		ymax = ymin + 1;
	if (xmax <= xmin)
		xmax = xmin + 1;
	double xs = srn_sim_svg_tick_step(xmax - xmin, 8);
	double ys = srn_sim_svg_tick_step(ymax - ymin, 6);
	xmin = floor(xmin / xs) * xs;
	xmax = ceil(xmax / xs) * xs;
	ymin = floor(ymin / ys) * ys;
	ymax = ceil(ymax * 1.05 / ys) * ys;
	double pw = W - ML - MR, ph = H - MT - MB;
#define PX(x) (ML + ((x) - xmin) / (xmax - xmin) * pw)
#define PY(y) (MT + ph - ((y) - ymin) / (ymax - ymin) * ph)

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
		"font-size=\"13\">\n", W, H, W, H);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%.1f\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">",
		ML + pw / 2);
	esc(f, p->title);
	fputs("</text>\n", f);
	/* grid and ticks */
	char lab[48];
	fputs("<g stroke=\"#dddddd\" stroke-width=\"1\">\n", f);
	for (double x = xmin; x <= xmax + xs * 1e-6; x += xs)
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", PX(x), MT, PX(x), MT + ph);
	for (double y = ymin; y <= ymax + ys * 1e-6; y += ys)
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", ML, PY(y), ML + pw, PY(y));
	fputs("</g>\n<g text-anchor=\"middle\">\n", f);
	for (double x = xmin; x <= xmax + xs * 1e-6; x += xs) {
		tick_label(lab, sizeof(lab), x, xs);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>"
			"<text x=\"%.2f\" y=\"%.2f\">%s</text>\n", PX(x), MT + ph, PX(x), MT + ph + 5,
			PX(x), MT + ph + 20, lab);
	}
	fputs("</g>\n<g text-anchor=\"end\">\n", f);
	for (double y = ymin; y <= ymax + ys * 1e-6; y += ys) {
		tick_label(lab, sizeof(lab), y, ys);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>"
			"<text x=\"%.2f\" y=\"%.2f\">%s</text>\n", ML - 5, PY(y), ML, PY(y), ML - 8,
			PY(y) + 4, lab);
	}
	fputs("</g>\n", f);
	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
		"stroke=\"black\"/>\n", ML, MT, pw, ph);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", ML + pw / 2, H - 18);
	esc(f, p->xlabel);
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"20\" y=\"%.2f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.2f)\">",
		MT + ph / 2, MT + ph / 2);
	esc(f, p->ylabel);
	fputs("</text>\n", f);
	/* data */
	for (size_t i = 0; i < p->ns; i++) {
		const struct srn_sim_svg_series *s = &p->s[i];
		if (!s->n)
			continue;
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
			"stroke-linejoin=\"round\" points=\"", palette[i % NPAL]);
		for (size_t j = 0; j < s->n; j++)
			if (isfinite(s->x[j]) && isfinite(s->y[j]))
				fprintf(f, "%s%.2f,%.2f", j ? " " : "", PX(s->x[j]), PY(s->y[j]));
		fputs("\"/>\n", f);
	}
	for (size_t i = 0; i < p->nhl; i++) {
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555555\" "
			"stroke-dasharray=\"6 4\"/>\n<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" "
			"fill=\"#555555\">", ML, PY(p->hl[i].y), ML + pw, PY(p->hl[i].y), ML + 4,
			PY(p->hl[i].y) - 3);
		esc(f, p->hl[i].name);
		fputs("</text>\n", f);
	}
	/* legend */
	double lx = ML + pw + 16, ly = MT + 8;
	size_t shown = p->ns < LEGEND_MAX ? p->ns : LEGEND_MAX - 1;
	for (size_t i = 0; i < shown; i++, ly += 18) {
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
			"stroke-width=\"3\"/><text x=\"%.2f\" y=\"%.2f\">", lx, ly, lx + 22, ly,
			palette[i % NPAL], lx + 28, ly + 4);
		esc(f, p->s[i].name);
		fputs("</text>\n", f);
	}
	if (shown < p->ns)
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">(+%zu more)</text>\n", lx, ly + 4, p->ns - shown);
	fputs("</svg>\n", f);
#undef PX
#undef PY
	return ferror(f) ? SRN_EINVAL : 0;
}
