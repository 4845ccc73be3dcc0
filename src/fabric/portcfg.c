/*
 * portcfg.c - validation of a port configuration (both links), shared by
 * srn_fabric_add_port and the configuration parser. Messages name the
 * direction and the knob as the configuration language spells them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "fabric_int.h"

#define MAX_TIME    1000000000000000ull  /* 10^15 ns, about 11.6 days */
#define MIN_RATE    1000ull              /* bits/s */
#define MAX_RATE    1000000000000000ull

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return SRN_EINVAL;
}

static bool prob_ok(double p) { return p >= 0.0 && p <= 1.0; } /* false for NaN */

static int check_link(const struct srn_fabric_link_cfg *c, const char *d, char *err, size_t errlen)
{
	const struct { const char *name; double v; } probs[] = {
		{ "pmax", c->pmax }, { "loss", c->loss }, { "ge (p good->bad)", c->ge.p_gb },
		{ "ge (p bad->good)", c->ge.p_bg }, { "ge (loss in good)", c->ge.loss_good },
		{ "ge (loss in bad)", c->ge.loss_bad }, { "dup", c->dup }, { "corrupt", c->corrupt },
		{ "reorder", c->reorder.p },
	};
	for (size_t i = 0; i < sizeof(probs) / sizeof(probs[0]); i++)
		if (!prob_ok(probs[i].v))
			return fail(err, errlen, "%s.%s: probability %g not in [0, 1]", d,
				    probs[i].name, probs[i].v);
	if (c->rate_bps && (c->rate_bps < MIN_RATE || c->rate_bps > MAX_RATE))
		return fail(err, errlen, "%s.rate: %llu bit/s outside [1k, 1000t]", d,
			    (unsigned long long)c->rate_bps);
	if (c->buffer && !c->rate_bps)
		return fail(err, errlen, "%s.buffer: a queue needs a rate (rate=...)", d);
	if (c->kmax == 0 && (c->kmin || c->pmax > 0))
		return fail(err, errlen, "%s.kmin/pmax: ECN marking needs kmax", d);
	if (c->kmax && !c->rate_bps)
		return fail(err, errlen, "%s.kmax: ECN marking needs a queue (rate=...)", d);
	if (c->kmin > c->kmax)
		return fail(err, errlen, "%s.kmin: %u is above kmax %u", d, c->kmin, c->kmax);
	if (c->paths.n > SRN_FABRIC_MAX_PATHS)
		return fail(err, errlen, "%s.paths: %u paths, at most %u", d, c->paths.n,
			    SRN_FABRIC_MAX_PATHS);
	srn_ts times[] = { c->delay, c->jitter, c->reorder.delay, c->down.start, c->down.len,
			   c->down.period };
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if (times[i] > MAX_TIME)
			return fail(err, errlen, "%s: a time above 10^15 ns", d);
	for (uint32_t i = 0; i < c->paths.n; i++)
		if (c->paths.delay[i] > MAX_TIME)
			return fail(err, errlen, "%s.paths: a delay above 10^15 ns", d);
	if (c->down.period && c->down.period < c->down.len)
		return fail(err, errlen, "%s.down: period shorter than the down time", d);
	return 0;
}

int srn_fabric_port_cfg_check(const struct srn_fabric_port_cfg *cfg, char *err, size_t errlen)
{
	if (!cfg)
		return fail(err, errlen, "no configuration");
	for (int d = 0; d < 2; d++) {
		int rc = check_link(&cfg->link[d], srn_fabric_dir_names[d], err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}
