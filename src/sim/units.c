/*
 * units.c - value parsers of the scenario language: times, rates, byte
 * counts, probabilities and integers. Inputs need not be NUL-terminated.
 * Decimals go through strtod on a bounded copy (correctly rounded, so the
 * result is the same on every platform).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* split "1.5us" into a decimal number and its suffix */
static int number(const char *s, size_t len, double *v, const char **suf, size_t *suflen)
{
	char tmp[64];
	size_t i = 0;
	while (i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
		i++;
	if (i == 0 || i >= sizeof(tmp))
		return SRN_EINVAL;
	memcpy(tmp, s, i);
	tmp[i] = 0;
	char *end;
	*v = strtod(tmp, &end);
	if (*end || !isfinite(*v) || *v < 0)
		return SRN_EINVAL;
	*suf = s + i;
	*suflen = len - i;
	return 0;
}

static bool is(const char *s, size_t len, const char *w)
{
	return strlen(w) == len && memcmp(s, w, len) == 0;
}

int srn_sim_parse_time(const char *s, size_t len, srn_ts *out)
{
	double v;
	const char *u;
	size_t ul;
	if (number(s, len, &v, &u, &ul))
		return SRN_EINVAL;
	double mul;
	if (is(u, ul, "ns"))
		mul = 1;
	else if (is(u, ul, "us"))
		mul = 1e3;
	else if (is(u, ul, "ms"))
		mul = 1e6;
	else if (is(u, ul, "s"))
		mul = 1e9;
	else if (ul == 0 && v == 0)
		mul = 0;
	else
		return SRN_EINVAL;
	double ns = v * mul;
	if (ns > 1e18)
		return SRN_EINVAL;
	*out = (srn_ts)llround(ns);
	return 0;
}

int srn_sim_parse_rate(const char *s, size_t len, uint64_t *out)
{
	double v;
	const char *u;
	size_t ul;
	if (number(s, len, &v, &u, &ul))
		return SRN_EINVAL;
	if (ul >= 3 && memcmp(u + ul - 3, "bps", 3) == 0)
		ul -= 3;
	double mul;
	if (ul == 0)
		mul = 1;
	else if (is(u, ul, "k"))
		mul = 1e3;
	else if (is(u, ul, "m"))
		mul = 1e6;
	else if (is(u, ul, "g"))
		mul = 1e9;
	else if (is(u, ul, "t"))
		mul = 1e12;
	else
		return SRN_EINVAL;
	double r = v * mul;
	if (r < 1e3 || r > 1e13)   /* 1 kbit/s .. 10 Tbit/s */
		return SRN_EINVAL;
	*out = (uint64_t)llround(r);
	return 0;
}

int srn_sim_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 19)
		return SRN_EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return SRN_EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int srn_sim_parse_bytes(const char *s, size_t len, uint64_t *out)
{
	uint64_t mul = 1;
	if (len > 0) {
		switch (s[len - 1]) {
		case 'k': mul = 1ull << 10; len--; break;
		case 'm': mul = 1ull << 20; len--; break;
		case 'g': mul = 1ull << 30; len--; break;
		default: break;
		}
	}
	uint64_t v;
	if (srn_sim_parse_u64(s, len, &v) || v > (UINT64_MAX >> 1) / mul)
		return SRN_EINVAL;
	*out = v * mul;
	return 0;
}

int srn_sim_parse_prob(const char *s, size_t len, double *out)
{
	double v;
	const char *u;
	size_t ul;
	if (number(s, len, &v, &u, &ul) || ul != 0 || v > 1)
		return SRN_EINVAL;
	*out = v;
	return 0;
}
