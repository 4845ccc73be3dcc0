/*
 * conf.c - statements of the fabric configuration language (the same for a
 * file and for the command line; docs/fabric.md is the reference):
 *
 *   seed N | seed=N
 *   switch [ports=N] [slots=N] [slotsize=BYTES]
 *   default [DIR.]KNOB=VALUE ...
 *   port A.B.C.D [DIR.]KNOB=VALUE ...
 *
 * DIR is in, out or both; without it a knob sets the OUT link, except
 * "down" which sets both. Each knob is one member of struct
 * srn_fabric_link_cfg, so a port resolves as the default with the members of
 * the knobs the port set copied over it (srn_fabric_conf_port_cfg).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "conf_int.h"

typedef int (*knob_fn)(const char *v, size_t n, struct srn_fabric_link_cfg *c,
		       char *why, size_t whylen);

struct knob {
	const char *name;
	size_t off, size;          /* the member of srn_fabric_link_cfg it sets */
	knob_fn parse;
	const char *expect;        /* what a good value looks like */
};

#define MEMBER(m) offsetof(struct srn_fabric_link_cfg, m), sizeof(((struct srn_fabric_link_cfg *)0)->m)

static int k_rate(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_rate(v, n, &c->rate_bps);
}
static int k_buffer(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_bytes(v, n, &c->buffer);
}
static int k_kmin(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_bytes(v, n, &c->kmin);
}
static int k_kmax(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_bytes(v, n, &c->kmax);
}
static int k_pmax(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_prob(v, n, &c->pmax);
}
static int k_loss(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_prob(v, n, &c->loss);
}
static int k_dup(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_prob(v, n, &c->dup);
}
static int k_corrupt(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_prob(v, n, &c->corrupt);
}
static int k_delay(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_time(v, n, &c->delay);
}
static int k_jitter(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	(void)w; (void)wl;
	return srn_fabric_val_time(v, n, &c->jitter);
}

/* split s[0..n) at the first sep: head [0..*hn), tail after it */
static bool split(const char *s, size_t n, char sep, size_t *hn, const char **tail, size_t *tn)
{
	const char *p = memchr(s, sep, n);
	if (!p)
		return false;
	*hn = (size_t)(p - s);
	*tail = p + 1;
	*tn = n - *hn - 1;
	return true;
}

static int k_ge(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	double p[4] = { 0, 0, 0, 1 };
	srn_ts step = SRN_FABRIC_GE_IDLE_STEP;
	int k = 0;
	for (;;) {
		size_t hn = 0, tn = 0;
		const char *t = NULL;
		bool more = split(v, n, ',', &hn, &t, &tn);
		if (k == 5) {
			snprintf(w, wl, "more than 5 values");
			return SRN_EINVAL;
		}
		int rc = k < 4 ? srn_fabric_val_prob(v, more ? hn : n, &p[k])
			       : srn_fabric_val_time(v, more ? hn : n, &step);
		if (rc < 0)
			return rc;
		k++;
		if (!more)
			break;
		v = t;
		n = tn;
	}
	if (k != 2 && k != 4 && k != 5) {
		snprintf(w, wl, "%d values, expected 2, 4 or 5", k);
		return SRN_EINVAL;
	}
	c->ge = (struct srn_fabric_ge){ p[0], p[1], p[2], p[3], step };
	return 0;
}

static int k_reorder(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	size_t hn, tn;
	const char *t;
	if (!split(v, n, ',', &hn, &t, &tn)) {
		snprintf(w, wl, "missing the hold-back delay");
		return SRN_EINVAL;
	}
	int rc = srn_fabric_val_prob(v, hn, &c->reorder.p);
	return rc < 0 ? rc : srn_fabric_val_time(t, tn, &c->reorder.delay);
}

static int k_paths(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	size_t hn, tn;
	const char *t;
	uint64_t k;
	if (!split(v, n, ':', &hn, &t, &tn)) {
		snprintf(w, wl, "missing ':' after the number of paths");
		return SRN_EINVAL;
	}
	int rc = srn_fabric_val_u64(v, hn, &k);
	if (rc < 0)
		return rc;
	if (k < 1 || k > SRN_FABRIC_MAX_PATHS) {
		snprintf(w, wl, "number of paths must be 1..%u", SRN_FABRIC_MAX_PATHS);
		return SRN_ERANGE;
	}
	struct srn_fabric_paths ps = { .n = (uint32_t)k };
	uint32_t i = 0;
	for (;;) {
		size_t hn2, tn2;
		const char *t2;
		bool more = split(t, tn, ',', &hn2, &t2, &tn2);
		if (i == k) {
			snprintf(w, wl, "more delays than the %u paths", (unsigned)k);
			return SRN_EINVAL;
		}
		rc = srn_fabric_val_time(t, more ? hn2 : tn, &ps.delay[i++]);
		if (rc < 0)
			return rc;
		if (!more)
			break;
		t = t2;
		tn = tn2;
	}
	if (i != k) {
		snprintf(w, wl, "%u delays for %u paths", i, (unsigned)k);
		return SRN_EINVAL;
	}
	c->paths = ps;
	return 0;
}

static int k_down(const char *v, size_t n, struct srn_fabric_link_cfg *c, char *w, size_t wl)
{
	size_t hn, tn, ln, pn;
	const char *t, *pp;
	struct srn_fabric_down d = { 0, 0, 0 };
	if (!split(v, n, '+', &hn, &t, &tn)) {
		snprintf(w, wl, "missing '+' between start and length");
		return SRN_EINVAL;
	}
	int rc = srn_fabric_val_time(v, hn, &d.start);
	if (rc < 0)
		return rc;
	if (split(t, tn, '/', &ln, &pp, &pn)) {
		rc = srn_fabric_val_time(t, ln, &d.len);
		if (rc == 0)
			rc = srn_fabric_val_time(pp, pn, &d.period);
	} else {
		rc = srn_fabric_val_time(t, tn, &d.len);
	}
	if (rc < 0)
		return rc;
	c->down = d;
	return 0;
}

#define PROB "a probability such as 0.01 or 1%"
#define TIME "a time such as 10us (ns, us, ms, s)"
#define BYTES "a size in bytes such as 256k (k, m, g = 1024^n)"
static const struct knob knobs[] = {
	{ "rate",    MEMBER(rate_bps), k_rate,    "a rate in bit/s such as 10g (k, m, g, t = 1000^n)" },
	{ "buffer",  MEMBER(buffer),   k_buffer,  BYTES },
	{ "kmin",    MEMBER(kmin),     k_kmin,    BYTES },
	{ "kmax",    MEMBER(kmax),     k_kmax,    BYTES },
	{ "pmax",    MEMBER(pmax),     k_pmax,    PROB },
	{ "loss",    MEMBER(loss),     k_loss,    PROB },
	{ "ge",      MEMBER(ge),       k_ge,      "P_GB,P_BG[,LOSS_GOOD,LOSS_BAD[,IDLE_STEP]] such as 0.01,0.3,0,0.5,10us" },
	{ "dup",     MEMBER(dup),      k_dup,     PROB },
	{ "corrupt", MEMBER(corrupt),  k_corrupt, PROB },
	{ "delay",   MEMBER(delay),    k_delay,   TIME },
	{ "jitter",  MEMBER(jitter),   k_jitter,  TIME },
	{ "reorder", MEMBER(reorder),  k_reorder, "P,DELAY such as 0.02,50us" },
	{ "paths",   MEMBER(paths),    k_paths,   "K:D1,...,DK such as 4:0us,20us,40us,80us" },
	{ "down",    MEMBER(down),     k_down,    "START+LENGTH[/PERIOD] such as 2s+500ms or 1s+100ms/5s" },
};
#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

static int err_tok(char *err, size_t errlen, const char *tok, size_t n, const char *fmt, ...)
{
	if (err && errlen) {
		int k = snprintf(err, errlen, "'%.*s': ", (int)(n > 200 ? 200 : n), tok);
		if (k >= 0 && (size_t)k < errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
			va_end(ap);
		}
	}
	return SRN_EINVAL;
}

void srn_fabric_conf_init(struct srn_fabric_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
}

static bool word_eq(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* [DIR.]KNOB=VALUE into cfg/set */
static int parse_knob(const char *tok, size_t n, struct srn_fabric_port_cfg *cfg,
		      uint32_t set[2], char *err, size_t errlen)
{
	size_t kn, vn;
	const char *v;
	if (!split(tok, n, '=', &kn, &v, &vn) || kn == 0)
		return err_tok(err, errlen, tok, n, "expected KNOB=VALUE");
	const char *k = tok;
	int dirs = -1; /* bit mask; -1: the knob's default */
	size_t dn, rn;
	const char *rest;
	if (split(k, kn, '.', &dn, &rest, &rn)) {
		if (word_eq(k, dn, "in"))
			dirs = 1 << SRN_FABRIC_IN;
		else if (word_eq(k, dn, "out"))
			dirs = 1 << SRN_FABRIC_OUT;
		else if (word_eq(k, dn, "both"))
			dirs = 3;
		else
			return err_tok(err, errlen, tok, n, "unknown direction '%.*s' (in, out or both)",
				       (int)dn, k);
		k = rest;
		kn = rn;
	}
	size_t i = 0;
	while (i < NKNOBS && !word_eq(k, kn, knobs[i].name))
		i++;
	if (i == NKNOBS)
		return err_tok(err, errlen, tok, n,
			       "unknown knob '%.*s' (rate buffer kmin kmax pmax loss ge dup corrupt "
			       "delay jitter reorder paths down)", (int)kn, k);
	if (dirs < 0)
		dirs = word_eq(k, kn, "down") ? 3 : 1 << SRN_FABRIC_OUT;
	if (vn == 0)
		return err_tok(err, errlen, tok, n, "empty value, expected %s", knobs[i].expect);
	struct srn_fabric_link_cfg tmp;
	memset(&tmp, 0, sizeof(tmp));
	char why[96] = "";
	int rc = knobs[i].parse(v, vn, &tmp, why, sizeof(why));
	if (rc < 0)
		return err_tok(err, errlen, tok, n, "%s%s%s, expected %s",
			       rc == SRN_ERANGE ? "value out of range" : "bad value",
			       why[0] ? ": " : "", why, knobs[i].expect);
	for (int d = 0; d < 2; d++) {
		if (!(dirs & (1 << d)))
			continue;
		memcpy((char *)&cfg->link[d] + knobs[i].off, (char *)&tmp + knobs[i].off, knobs[i].size);
		set[d] |= 1u << i;
	}
	return 0;
}

static int parse_switch(struct srn_fabric_conf *conf, const char *tok, size_t n,
			char *err, size_t errlen)
{
	size_t kn, vn;
	const char *v;
	uint64_t x;
	if (!split(tok, n, '=', &kn, &v, &vn))
		return err_tok(err, errlen, tok, n, "expected ports=N, slots=N or slotsize=BYTES");
	if (word_eq(tok, kn, "slotsize")) {
		uint32_t b;
		if (srn_fabric_val_bytes(v, vn, &b) < 0 || b < 64 || b > 65535)
			return err_tok(err, errlen, tok, n, "slot size must be 64..65535 bytes");
		conf->slot_size = b;
		return 0;
	}
	bool ports = word_eq(tok, kn, "ports");
	if (!ports && !word_eq(tok, kn, "slots"))
		return err_tok(err, errlen, tok, n, "unknown switch setting (ports, slots, slotsize)");
	uint64_t lim = ports ? 65535 : 1u << 24;
	if (srn_fabric_val_u64(v, vn, &x) < 0 || x == 0 || x > lim)
		return err_tok(err, errlen, tok, n, "must be an integer 1..%llu", (unsigned long long)lim);
	if (ports)
		conf->max_ports = (uint32_t)x;
	else
		conf->nslots = (uint32_t)x;
	return 0;
}

static struct srn_fabric_conf_port *conf_port(struct srn_fabric_conf *conf, uint32_t ip, bool add)
{
	for (uint32_t i = 0; i < conf->nports; i++)
		if (conf->port[i].ipv4 == ip)
			return &conf->port[i];
	if (!add || conf->nports == SRN_FABRIC_CONF_MAX_PORTS)
		return NULL;
	struct srn_fabric_conf_port *p = &conf->port[conf->nports++];
	memset(p, 0, sizeof(*p));
	p->ipv4 = ip;
	return p;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

/* next whitespace-separated token of s[*i..n) */
static bool next_tok(const char *s, size_t n, size_t *i, const char **tok, size_t *tn)
{
	while (*i < n && is_space(s[*i]))
		(*i)++;
	if (*i >= n)
		return false;
	size_t b = *i;
	while (*i < n && !is_space(s[*i]))
		(*i)++;
	*tok = s + b;
	*tn = *i - b;
	return true;
}

int srn_fabric_conf_parse_line(struct srn_fabric_conf *conf, const char *line, size_t len,
			       char *err, size_t errlen)
{
	const char *hash = memchr(line, '#', len);
	if (hash)
		len = (size_t)(hash - line);
	if (memchr(line, 0, len))
		return err_tok(err, errlen, "", 0, "NUL byte in the line");
	size_t i = 0, n;
	const char *w;
	if (!next_tok(line, len, &i, &w, &n))
		return 0;
	if (n > 5 && memcmp(w, "seed=", 5) == 0) {
		if (srn_fabric_val_u64(w + 5, n - 5, &conf->seed) < 0)
			return err_tok(err, errlen, w, n, "seed must be an integer 0..2^64-1");
		conf->seed_set = true;
		const char *x;
		size_t xn;
		if (next_tok(line, len, &i, &x, &xn))
			return err_tok(err, errlen, x, xn, "unexpected after the seed");
		return 0;
	}
	if (word_eq(w, n, "seed")) {
		const char *x;
		size_t xn;
		if (!next_tok(line, len, &i, &x, &xn))
			return err_tok(err, errlen, w, n, "missing the seed value");
		if (srn_fabric_val_u64(x, xn, &conf->seed) < 0)
			return err_tok(err, errlen, x, xn, "seed must be an integer 0..2^64-1");
		conf->seed_set = true;
		if (next_tok(line, len, &i, &x, &xn))
			return err_tok(err, errlen, x, xn, "unexpected after the seed");
		return 0;
	}
	if (word_eq(w, n, "switch")) {
		const char *x;
		size_t xn;
		while (next_tok(line, len, &i, &x, &xn))
			if (parse_switch(conf, x, xn, err, errlen) < 0)
				return SRN_EINVAL;
		return 0;
	}
	struct srn_fabric_port_cfg *cfg;
	uint32_t *set;
	if (word_eq(w, n, "default")) {
		cfg = &conf->dflt;
		set = conf->dflt_set;
	} else if (word_eq(w, n, "port")) {
		const char *a;
		size_t an;
		uint32_t ip;
		if (!next_tok(line, len, &i, &a, &an))
			return err_tok(err, errlen, w, n, "missing the port's IPv4 address");
		if (srn_fabric_parse_ipv4(a, an, &ip) < 0)
			return err_tok(err, errlen, a, an, "not an IPv4 address (A.B.C.D)");
		struct srn_fabric_conf_port *p = conf_port(conf, ip, true);
		if (!p)
			return err_tok(err, errlen, a, an, "more than %u ports", SRN_FABRIC_CONF_MAX_PORTS);
		cfg = &p->cfg;
		set = p->set;
	} else {
		return err_tok(err, errlen, w, n, "unknown statement (seed, switch, default, port)");
	}
	const char *k;
	size_t kn;
	while (next_tok(line, len, &i, &k, &kn))
		if (parse_knob(k, kn, cfg, set, err, errlen) < 0)
			return SRN_EINVAL;
	return 0;
}

void srn_fabric_conf_port_cfg(const struct srn_fabric_conf *conf, uint32_t ipv4,
			      struct srn_fabric_port_cfg *out)
{
	*out = conf->dflt;
	const struct srn_fabric_conf_port *p = NULL;
	for (uint32_t i = 0; i < conf->nports; i++)
		if (conf->port[i].ipv4 == ipv4)
			p = &conf->port[i];
	if (!p)
		return;
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < NKNOBS; i++)
			if (p->set[d] & (1u << i))
				memcpy((char *)&out->link[d] + knobs[i].off,
				       (const char *)&p->cfg.link[d] + knobs[i].off, knobs[i].size);
}

int srn_fabric_conf_check(const struct srn_fabric_conf *conf, char *err, size_t errlen)
{
	char why[200];
	if (srn_fabric_port_cfg_check(&conf->dflt, why, sizeof(why)) < 0) {
		if (err && errlen)
			snprintf(err, errlen, "default: %s", why);
		return SRN_EINVAL;
	}
	for (uint32_t i = 0; i < conf->nports; i++) {
		struct srn_fabric_port_cfg c;
		srn_fabric_conf_port_cfg(conf, conf->port[i].ipv4, &c);
		if (srn_fabric_port_cfg_check(&c, why, sizeof(why)) < 0) {
			char a[16];
			srn_fabric_fmt_ipv4(a, conf->port[i].ipv4);
			if (err && errlen)
				snprintf(err, errlen, "port %s: %s", a, why);
			return SRN_EINVAL;
		}
	}
	return 0;
}

int srn_fabric_conf_parse(struct srn_fabric_conf *conf, const char *text, size_t len,
			  char *err, size_t errlen)
{
	size_t pos = 0;
	unsigned lineno = 0;
	char why[320];
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		lineno++;
		if (srn_fabric_conf_parse_line(conf, text + pos, end - pos, why, sizeof(why)) < 0) {
			if (err && errlen)
				snprintf(err, errlen, "line %u: %s", lineno, why);
			return SRN_EINVAL;
		}
		pos = end + 1;
	}
	return srn_fabric_conf_check(conf, err, errlen);
}

void srn_fabric_conf_switch_cfg(const struct srn_fabric_conf *conf, struct srn_fabric_cfg *cfg)
{
	if (conf->seed_set)
		cfg->seed = conf->seed;
	if (conf->max_ports)
		cfg->max_ports = conf->max_ports;
	if (conf->nslots)
		cfg->nslots = conf->nslots;
	if (conf->slot_size)
		cfg->slot_size = conf->slot_size;
}
