/*
 * scen.c - the scenario language (docs/sim.md): one statement per line,
 * '#' starts a comment, tokens separated by blanks.
 *
 *   hosts N
 *   link default|H KNOB=VALUE ...     rate delay loss (both directions),
 *                                     buffer kmin kmax pmax (switch output);
 *                                     in.KNOB / out.KNOB: one direction
 *   flow S -> D [start=T] [size=BYTES|inf] [msg=BYTES] [depth=N]
 *   cc none
 *   mtu 256|512|1024|2048|4096
 *   duration T    sample T    seed N    window T0 T1
 *   qp [timeout=N] [retry=N] [inflight=N] [ack=N]
 *
 * A host takes each knob from its own "link H" lines if set there, else
 * from "link default", whatever the order of the lines. Errors name the
 * line and the token.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

const char *const srn_sim_cc_names[SRN_SIM_CC_N] = { "none", "dcqcn", "dcqcn-paper", "dcqcn-sw",
							      "timely", "timely-seg" };

static const char *const knob_names[SRN_SIM_K_MAX] = {
	"rate", "delay", "buffer", "kmin", "kmax", "pmax", "loss",
};

void srn_sim_scen_init(struct srn_sim_scen *sc)
{
	memset(sc, 0, sizeof(*sc));
	for (int d = 0; d < 2; d++) {
		struct srn_sim_link_cfg *l = &sc->dflt.link[d];
		l->rate_bps = 40000000000ull;
		l->delay = 1000;
	}
	sc->dflt.link[SRN_SIM_OUT].buffer = 1u << 20;
	sc->cc = SRN_SIM_CC_NONE;
	sc->mtu = 4096;
	sc->duration = 10000000;   /* 10 ms */
	sc->sample = 10000;        /* 10 us */
	sc->seed = 1;
	sc->qp_timeout = 10;       /* 4.096 us * 2^10 = 4.2 ms */
	sc->qp_retry = 7;
}

void srn_sim_scen_free(struct srn_sim_scen *sc)
{
	free(sc->host);
	free(sc->flow);
	sc->host = NULL;
	sc->flow = NULL;
	sc->nflows = sc->flow_cap = 0;
}

/* ---- messages ------------------------------------------------------------ */
static int fail(char *err, size_t errlen, uint32_t line, const char *tok, size_t toklen,
		const char *fmt, ...)
{
	if (errlen == 0)
		return SRN_EINVAL;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (tok)
		snprintf(err, errlen, "line %u: '%.*s': %s", line, (int)(toklen > 60 ? 60 : toklen),
			 tok, msg);
	else
		snprintf(err, errlen, "line %u: %s", line, msg);
	return SRN_EINVAL;
}

/* ---- tokens ---------------------------------------------------------------- */
#define MAX_TOK 64
struct tok { const char *s; size_t n; };

static int split(const char *s, size_t len, struct tok *t, int max)
{
	int n = 0;
	size_t i = 0;
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i >= len || s[i] == '#')
			break;
		size_t st = i;
		while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '#')
			i++;
		if (n == max)
			return -1;
		t[n].s = s + st;
		t[n].n = i - st;
		n++;
	}
	return n;
}

static bool teq(const struct tok *t, const char *w)
{
	return strlen(w) == t->n && memcmp(t->s, w, t->n) == 0;
}

/* KEY=VALUE: returns false if there is no '=' */
static bool kv(const struct tok *t, struct tok *k, struct tok *v)
{
	const char *eq = memchr(t->s, '=', t->n);
	if (!eq)
		return false;
	k->s = t->s;
	k->n = (size_t)(eq - t->s);
	v->s = eq + 1;
	v->n = t->n - k->n - 1;
	return true;
}

/* ---- link -------------------------------------------------------------------- */
static int set_knob(struct srn_sim_host_cfg *hc, int dir, int knob, const struct tok *v)
{
	struct srn_sim_link_cfg *l = &hc->link[dir];
	uint64_t u;
	int rc = 0;
	switch (knob) {
	case SRN_SIM_K_RATE:  rc = srn_sim_parse_rate(v->s, v->n, &l->rate_bps); break;
	case SRN_SIM_K_DELAY: rc = srn_sim_parse_time(v->s, v->n, &l->delay); break;
	case SRN_SIM_K_PMAX:  rc = srn_sim_parse_prob(v->s, v->n, &l->pmax); break;
	case SRN_SIM_K_LOSS:  rc = srn_sim_parse_prob(v->s, v->n, &l->loss); break;
	default:
		rc = srn_sim_parse_bytes(v->s, v->n, &u);
		if (!rc && u > UINT32_MAX)
			rc = SRN_EINVAL;
		if (rc)
			break;
		if (knob == SRN_SIM_K_BUFFER)
			l->buffer = (uint32_t)u;
		else if (knob == SRN_SIM_K_KMIN)
			l->kmin = (uint32_t)u;
		else
			l->kmax = (uint32_t)u;
	}
	if (!rc)
		hc->set[dir] |= 1u << knob;
	return rc;
}

static int parse_link(struct srn_sim_scen *sc, struct tok *t, int n, uint32_t line,
		      char *err, size_t errlen)
{
	if (n < 2)
		return fail(err, errlen, line, t[0].s, t[0].n, "expected 'link default|HOST KNOB=VALUE ...'");
	struct srn_sim_host_cfg *hc;
	if (teq(&t[1], "default")) {
		hc = &sc->dflt;
	} else {
		uint64_t h;
		if (srn_sim_parse_u64(t[1].s, t[1].n, &h))
			return fail(err, errlen, line, t[1].s, t[1].n, "expected 'default' or a host number");
		if (!sc->nhosts)
			return fail(err, errlen, line, t[1].s, t[1].n, "'link HOST' before 'hosts N'");
		if (h >= sc->nhosts)
			return fail(err, errlen, line, t[1].s, t[1].n, "no such host (hosts are 0..%u)",
				    sc->nhosts - 1);
		hc = &sc->host[h];
	}
	for (int i = 2; i < n; i++) {
		struct tok k, v;
		if (!kv(&t[i], &k, &v))
			return fail(err, errlen, line, t[i].s, t[i].n, "expected KNOB=VALUE");
		int dirs = 0;    /* bit 0: in, bit 1: out */
		struct tok name = k;
		if (k.n > 3 && memcmp(k.s, "in.", 3) == 0) {
			dirs = 1;
			name.s += 3;
			name.n -= 3;
		} else if (k.n > 4 && memcmp(k.s, "out.", 4) == 0) {
			dirs = 2;
			name.s += 4;
			name.n -= 4;
		}
		int knob = -1;
		for (int j = 0; j < SRN_SIM_K_MAX; j++)
			if (teq(&name, knob_names[j]))
				knob = j;
		if (knob < 0)
			return fail(err, errlen, line, k.s, k.n,
				    "unknown knob (rate delay loss buffer kmin kmax pmax, "
				    "optionally in./out.)");
		if (!dirs)
			dirs = (knob == SRN_SIM_K_RATE || knob == SRN_SIM_K_DELAY ||
				knob == SRN_SIM_K_LOSS) ? 3 : 2;
		for (int d = 0; d < 2; d++)
			if ((dirs >> d) & 1)
				if (set_knob(hc, d, knob, &v))
					return fail(err, errlen, line, t[i].s, t[i].n,
						    "bad value for %s", knob_names[knob]);
	}
	return 0;
}

/* ---- flow -------------------------------------------------------------------- */
static int parse_flow(struct srn_sim_scen *sc, struct tok *t, int n, uint32_t line,
		      char *err, size_t errlen)
{
	if (!sc->nhosts)
		return fail(err, errlen, line, t[0].s, t[0].n, "'flow' before 'hosts N'");
	if (n < 4 || !teq(&t[2], "->"))
		return fail(err, errlen, line, t[0].s, t[0].n, "expected 'flow SRC -> DST [KEY=VALUE ...]'");
	struct srn_sim_flow_cfg f = { .msg = 65536, .depth = 4, .line = line };
	uint64_t v;
	for (int i = 1; i <= 3; i += 2) {
		if (srn_sim_parse_u64(t[i].s, t[i].n, &v))
			return fail(err, errlen, line, t[i].s, t[i].n, "expected a host number");
		if (v >= sc->nhosts)
			return fail(err, errlen, line, t[i].s, t[i].n, "no such host (hosts are 0..%u)",
				    sc->nhosts - 1);
		if (i == 1)
			f.src = (uint32_t)v;
		else
			f.dst = (uint32_t)v;
	}
	if (f.src == f.dst)
		return fail(err, errlen, line, t[3].s, t[3].n, "a flow needs two different hosts");
	for (int i = 4; i < n; i++) {
		struct tok k, val;
		if (!kv(&t[i], &k, &val))
			return fail(err, errlen, line, t[i].s, t[i].n, "expected KEY=VALUE");
		if (teq(&k, "start")) {
			if (srn_sim_parse_time(val.s, val.n, &f.start))
				return fail(err, errlen, line, t[i].s, t[i].n, "bad time (e.g. 0, 1.5us, 2ms)");
		} else if (teq(&k, "size")) {
			if (teq(&val, "inf"))
				f.size = SRN_SIM_SIZE_INF;
			else if (srn_sim_parse_bytes(val.s, val.n, &f.size) || f.size == 0)
				return fail(err, errlen, line, t[i].s, t[i].n, "bad size (bytes, e.g. 1m, or inf)");
		} else if (teq(&k, "msg")) {
			if (srn_sim_parse_bytes(val.s, val.n, &v) || v == 0 || v > (1u << 30))
				return fail(err, errlen, line, t[i].s, t[i].n, "bad message size (1..1g)");
			f.msg = (uint32_t)v;
		} else if (teq(&k, "depth")) {
			if (srn_sim_parse_u64(val.s, val.n, &v) || v == 0 || v > 1024)
				return fail(err, errlen, line, t[i].s, t[i].n, "bad depth (1..1024)");
			f.depth = (uint32_t)v;
		} else {
			return fail(err, errlen, line, k.s, k.n, "unknown flow key (start size msg depth)");
		}
	}
	if (sc->nflows == SRN_SIM_MAX_FLOWS)
		return fail(err, errlen, line, t[0].s, t[0].n, "too many flows (max %u)", SRN_SIM_MAX_FLOWS);
	if (sc->nflows == sc->flow_cap) {
		uint32_t cap = sc->flow_cap ? sc->flow_cap * 2 : 16;
		struct srn_sim_flow_cfg *nf = realloc(sc->flow, cap * sizeof(*nf));
		if (!nf)
			return SRN_ENOMEM;
		sc->flow = nf;
		sc->flow_cap = cap;
	}
	sc->flow[sc->nflows++] = f;
	return 0;
}

/* ---- the rest ------------------------------------------------------------------ */
static int one_time(struct tok *t, int n, srn_ts *out, uint32_t line, char *err, size_t errlen)
{
	if (n != 2)
		return fail(err, errlen, line, t[0].s, t[0].n, "expected one time value");
	if (srn_sim_parse_time(t[1].s, t[1].n, out))
		return fail(err, errlen, line, t[1].s, t[1].n, "bad time (e.g. 10us, 2ms, 1s)");
	return 0;
}

static int parse_qp(struct srn_sim_scen *sc, struct tok *t, int n, uint32_t line,
		    char *err, size_t errlen)
{
	for (int i = 1; i < n; i++) {
		struct tok k, v;
		uint64_t u;
		if (!kv(&t[i], &k, &v) || srn_sim_parse_u64(v.s, v.n, &u))
			return fail(err, errlen, line, t[i].s, t[i].n, "expected KEY=INTEGER");
		if (teq(&k, "timeout") && u <= 31)
			sc->qp_timeout = (uint8_t)u;
		else if (teq(&k, "retry") && u <= 7)
			sc->qp_retry = (uint8_t)u;
		else if (teq(&k, "inflight") && u >= 1 && u <= (1u << 23))
			sc->inflight = (uint32_t)u;
		else if (teq(&k, "ack") && u >= 1 && u <= 65536)
			sc->ack_coalesce = (uint32_t)u;
		else
			return fail(err, errlen, line, t[i].s, t[i].n,
				    "unknown key or value out of range (timeout=0..31 retry=0..7 "
				    "inflight=1..8388608 ack=1..65536)");
	}
	return 0;
}

static int parse_cc(struct srn_sim_scen *sc, struct tok *t, int n, uint32_t line,
		    char *err, size_t errlen)
{
	if (n != 2)
		return fail(err, errlen, line, t[0].s, t[0].n, "expected 'cc ALGORITHM'");
	for (unsigned i = 0; i < SRN_SIM_CC_N; i++) {
		if (teq(&t[1], srn_sim_cc_names[i])) {
			sc->cc = (enum srn_sim_cc)i;
			return 0;
		}
	}
	return fail(err, errlen, line, t[1].s, t[1].n,
		    "unknown algorithm (none, dcqcn, dcqcn-paper, dcqcn-sw, timely, timely-seg)");
}

int srn_sim_scen_parse_line(struct srn_sim_scen *sc, const char *s, size_t len, uint32_t line,
			    char *err, size_t errlen)
{
	struct tok t[MAX_TOK];
	int n = split(s, len, t, MAX_TOK);
	if (n < 0)
		return fail(err, errlen, line, NULL, 0, "too many tokens (max %d)", MAX_TOK);
	if (n == 0)
		return 0;
	uint64_t v;
	if (teq(&t[0], "hosts")) {
		if (n != 2 || srn_sim_parse_u64(t[1].s, t[1].n, &v) || v < 2 || v > SRN_SIM_MAX_HOSTS)
			return fail(err, errlen, line, n > 1 ? t[1].s : t[0].s, n > 1 ? t[1].n : t[0].n,
				    "expected 'hosts N' with N in 2..%u", SRN_SIM_MAX_HOSTS);
		if (sc->nhosts)
			return fail(err, errlen, line, t[0].s, t[0].n, "'hosts' given twice");
		sc->host = calloc(v, sizeof(*sc->host));
		if (!sc->host)
			return SRN_ENOMEM;
		sc->nhosts = (uint32_t)v;
		return 0;
	}
	if (teq(&t[0], "link"))
		return parse_link(sc, t, n, line, err, errlen);
	if (teq(&t[0], "flow"))
		return parse_flow(sc, t, n, line, err, errlen);
	if (teq(&t[0], "cc"))
		return parse_cc(sc, t, n, line, err, errlen);
	if (teq(&t[0], "qp"))
		return parse_qp(sc, t, n, line, err, errlen);
	if (teq(&t[0], "mtu")) {
		if (n != 2 || srn_sim_parse_u64(t[1].s, t[1].n, &v) || v < 256 || v > 4096 ||
		    (v & (v - 1)))
			return fail(err, errlen, line, n > 1 ? t[1].s : t[0].s, n > 1 ? t[1].n : t[0].n,
				    "expected 'mtu 256|512|1024|2048|4096'");
		sc->mtu = (uint32_t)v;
		return 0;
	}
	if (teq(&t[0], "duration"))
		return one_time(t, n, &sc->duration, line, err, errlen);
	if (teq(&t[0], "sample"))
		return one_time(t, n, &sc->sample, line, err, errlen);
	if (teq(&t[0], "seed")) {
		if (n != 2 || srn_sim_parse_u64(t[1].s, t[1].n, &v))
			return fail(err, errlen, line, n > 1 ? t[1].s : t[0].s, n > 1 ? t[1].n : t[0].n,
				    "expected 'seed N' (an unsigned integer)");
		sc->seed = v;
		return 0;
	}
	if (teq(&t[0], "window")) {
		if (n != 3)
			return fail(err, errlen, line, t[0].s, t[0].n, "expected 'window T0 T1'");
		for (int i = 1; i < 3; i++)
			if (srn_sim_parse_time(t[i].s, t[i].n, i == 1 ? &sc->win_start : &sc->win_end))
				return fail(err, errlen, line, t[i].s, t[i].n, "bad time");
		if (sc->win_end <= sc->win_start)
			return fail(err, errlen, line, t[2].s, t[2].n, "window end must be after its start");
		return 0;
	}
	return fail(err, errlen, line, t[0].s, t[0].n,
		    "unknown statement (hosts link flow cc mtu duration sample seed window qp)");
}

void srn_sim_scen_link(const struct srn_sim_scen *sc, uint32_t h, enum srn_sim_dir dir,
		       struct srn_sim_link_cfg *out)
{
	*out = sc->dflt.link[dir];
	if (!sc->host || h >= sc->nhosts)
		return;
	const struct srn_sim_host_cfg *hc = &sc->host[h];
	const struct srn_sim_link_cfg *o = &hc->link[dir];
	uint32_t set = hc->set[dir];
	if (set & (1u << SRN_SIM_K_RATE))   out->rate_bps = o->rate_bps;
	if (set & (1u << SRN_SIM_K_DELAY))  out->delay = o->delay;
	if (set & (1u << SRN_SIM_K_BUFFER)) out->buffer = o->buffer;
	if (set & (1u << SRN_SIM_K_KMIN))   out->kmin = o->kmin;
	if (set & (1u << SRN_SIM_K_KMAX))   out->kmax = o->kmax;
	if (set & (1u << SRN_SIM_K_PMAX))   out->pmax = o->pmax;
	if (set & (1u << SRN_SIM_K_LOSS))   out->loss = o->loss;
}

void srn_sim_scen_window(const struct srn_sim_scen *sc, srn_ts *t0, srn_ts *t1)
{
	if (sc->win_end) {
		*t0 = sc->win_start;
		*t1 = sc->win_end < sc->duration ? sc->win_end : sc->duration;
	} else {
		*t0 = sc->duration / 2;
		*t1 = sc->duration;
	}
}

int srn_sim_scen_check(const struct srn_sim_scen *sc, char *err, size_t errlen)
{
	if (!sc->nhosts) {
		snprintf(err, errlen, "no 'hosts N' statement");
		return SRN_EINVAL;
	}
	if (!sc->nflows) {
		snprintf(err, errlen, "no 'flow' statement");
		return SRN_EINVAL;
	}
	if (sc->sample == 0 || sc->duration == 0 || sc->sample > sc->duration) {
		snprintf(err, errlen, "need 0 < sample <= duration");
		return SRN_EINVAL;
	}
	if (sc->duration / sc->sample > 10000000u) {
		snprintf(err, errlen, "more than 10^7 samples: use a longer 'sample' interval");
		return SRN_EINVAL;
	}
	if (sc->win_end && sc->win_start >= sc->duration) {
		snprintf(err, errlen, "metrics window starts after the end of the run");
		return SRN_EINVAL;
	}
	for (uint32_t h = 0; h < sc->nhosts; h++) {
		for (int d = 0; d < 2; d++) {
			struct srn_sim_link_cfg l;
			srn_sim_scen_link(sc, h, (enum srn_sim_dir)d, &l);
			const char *dn = d ? "out" : "in";
			if (l.kmax && l.kmin > l.kmax) {
				snprintf(err, errlen, "host %u %s: kmin %u > kmax %u", h, dn, l.kmin, l.kmax);
				return SRN_EINVAL;
			}
			if (l.buffer && l.buffer < sc->mtu + 128) {
				snprintf(err, errlen, "host %u %s: buffer %u cannot hold one packet of mtu %u",
					 h, dn, l.buffer, sc->mtu);
				return SRN_EINVAL;
			}
			if (l.delay > 1000000000ull) {
				snprintf(err, errlen, "host %u %s: delay above 1 s", h, dn);
				return SRN_EINVAL;
			}
		}
	}
	for (uint32_t i = 0; i < sc->nflows; i++) {
		const struct srn_sim_flow_cfg *f = &sc->flow[i];
		if (f->start >= sc->duration) {
			snprintf(err, errlen, "line %u: flow starts at or after the end of the run", f->line);
			return SRN_EINVAL;
		}
	}
	return 0;
}

int srn_sim_scen_parse(struct srn_sim_scen *sc, const char *text, size_t len, char *err, size_t errlen)
{
	uint32_t line = 1;
	size_t i = 0;
	while (i < len) {
		size_t st = i;
		while (i < len && text[i] != '\n')
			i++;
		int rc = srn_sim_scen_parse_line(sc, text + st, i - st, line, err, errlen);
		if (rc)
			return rc;
		i++;
		line++;
	}
	return srn_sim_scen_check(sc, err, errlen);
}
