/*
 * conf_val.c - values of the configuration language: probabilities, rates,
 * byte sizes, times and plain integers. Strict and locale-free: digits with
 * an optional fraction and a unit; no signs, exponents, spaces, "inf" or
 * "nan". Results are exact (integer arithmetic) and rounded to nearest.
 */
#include "conf_int.h"

struct unit { const char *name; uint64_t mult; };

static const struct unit time_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { NULL, 0 }
};
static const struct unit rate_units[] = {
	{ "", 1 }, { "k", 1000 }, { "m", 1000000 }, { "g", 1000000000 },
	{ "t", 1000000000000ull }, { NULL, 0 }
};
static const struct unit byte_units[] = {
	{ "", 1 }, { "k", 1024 }, { "m", 1024 * 1024 }, { "g", 1024 * 1024 * 1024 }, { NULL, 0 }
};

/* "123.45" at s[0..n): mantissa and number of fraction digits; returns the
 * number of characters used (0 if no digits) */
static size_t decimal(const char *s, size_t n, uint64_t *mant, unsigned *frac)
{
	size_t i = 0, digits = 0;
	uint64_t m = 0;
	unsigned f = 0;
	bool dot = false;
	for (; i < n; i++) {
		if (s[i] == '.' && !dot) {
			dot = true;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			break;
		if (++digits > 18)
			return 0;
		m = m * 10 + (uint64_t)(s[i] - '0');
		f += dot;
	}
	if (digits == 0)
		return 0;
	*mant = m;
	*frac = f;
	return i;
}

static uint64_t pow10u(unsigned e)
{
	uint64_t p = 1;
	while (e--)
		p *= 10;
	return p;
}

static bool unit_eq(const char *s, size_t n, const char *u)
{
	size_t k = 0;
	for (; k < n && u[k]; k++) {
		char c = s[k];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != u[k])
			return false;
	}
	return k == n && u[k] == 0;
}

/* number with a unit from units (a bare 0 is always fine) -> round(x * mult) */
static int scaled(const char *s, size_t n, const struct unit *units, uint64_t max, uint64_t *out)
{
	uint64_t m;
	unsigned f;
	size_t used = decimal(s, n, &m, &f);
	if (used == 0)
		return SRN_EINVAL;
	const struct unit *u = units;
	for (; u->name; u++)
		if (unit_eq(s + used, n - used, u->name))
			break;
	if (!u->name) {
		if (m == 0 && used == n) {
			*out = 0;
			return 0;
		}
		return SRN_EINVAL;
	}
	unsigned __int128 v = (unsigned __int128)m * u->mult;
	uint64_t d = pow10u(f);
	v = (v + d / 2) / d;
	if (v > max)
		return SRN_ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int srn_fabric_val_time(const char *s, size_t n, srn_ts *out)
{
	return scaled(s, n, time_units, SRN_FABRIC_VAL_MAX_TIME, out);
}

int srn_fabric_val_rate(const char *s, size_t n, uint64_t *out)
{
	return scaled(s, n, rate_units, SRN_FABRIC_VAL_MAX_RATE, out);
}

int srn_fabric_val_bytes(const char *s, size_t n, uint32_t *out)
{
	uint64_t v;
	int rc = scaled(s, n, byte_units, UINT32_MAX, &v);
	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

int srn_fabric_val_prob(const char *s, size_t n, double *out)
{
	uint64_t m;
	unsigned f;
	size_t used = decimal(s, n, &m, &f);
	if (used == 0)
		return SRN_EINVAL;
	if (used + 1 == n && s[used] == '%')
		f += 2;
	else if (used != n)
		return SRN_EINVAL;
	if (f > 18)
		return SRN_EINVAL;
	double p = (double)m / (double)pow10u(f);
	if (p > 1.0)
		return SRN_ERANGE;
	*out = p;
	return 0;
}

int srn_fabric_val_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < n; i++) {
			char c = s[i];
			unsigned d;
			if (c >= '0' && c <= '9')
				d = (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				d = (unsigned)(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				d = (unsigned)(c - 'A' + 10);
			else
				return SRN_EINVAL;
			if (v >> 60)
				return SRN_ERANGE;
			v = v << 4 | d;
		}
	} else {
		if (n == 0)
			return SRN_EINVAL;
		for (; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return SRN_EINVAL;
			unsigned d = (unsigned)(s[i] - '0');
			if (v > (UINT64_MAX - d) / 10)
				return SRN_ERANGE;
			v = v * 10 + d;
		}
	}
	*out = v;
	return 0;
}
