/*
 * config.c - device configuration of the runtime.
 *
 * Sources, first match wins:
 *   SOFTRNIC_DEVICES="name=ip[,name=ip...]"      (what `softrnic run` sets)
 *   SOFTRNIC_CONFIG=path                          file with lines "device NAME IP"
 *                                                 ('#' starts a comment)
 *   default: softrnic0 on 127.0.0.1
 * SOFTRNIC_PCAP=path captures every device of the process; with several
 * devices ".NAME" is appended to the path.
 * SOFTRNIC_FABRIC=ADDR:PORT puts every device of the process behind the
 * fabric emulator (`softrnic fabric`) listening on that UDP address.
 *
 * Names: 1..63 characters of [A-Za-z0-9_.-]; names and addresses must be
 * unique. Errors are reported on stderr as "softrnic: <source>: <problem>"
 * and make srn_rt_config_load return -1.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "rt_internal.h"

#define DEFAULT_NAME "softrnic0"
#define DEFAULT_IP   "127.0.0.1"

/* FNV-1a over name and address; the result is shaped like an EUI-64 based
 * GUID with the locally-administered bit set and never 0. */
uint64_t srn_rt_guid_derive(const char *name, struct in_addr ip)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *p = name; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ull;
	}
	const uint8_t *b = (const uint8_t *)&ip.s_addr;
	for (int i = 0; i < 4; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	/* first byte 0x02: locally administered, unicast */
	h = (h & 0x00ffffffffffffffull) | 0x0200000000000000ull;
	return h;
}

void srn_rt_gid_from_ip(uint8_t gid[16], struct in_addr ip)
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &ip.s_addr, 4);
}

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n >= SRN_RT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '_' && c != '-' && c != '.')
			return false;
	}
	return true;
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* Validate and append one device; count is the number already in out. */
static int add_dev(struct srn_rt_devcfg *out, int count, int max, const char *what,
		   const char *name, size_t nlen, const char *ip, size_t iplen)
{
	char ipbuf[64];

	if (!name_ok(name, nlen)) {
		fprintf(stderr, "softrnic: %s: invalid device name \"%.*s\" "
			"(1..%d characters of A-Z a-z 0-9 _ . -)\n",
			what, (int)nlen, name, SRN_RT_NAME_MAX - 1);
		return -1;
	}
	if (iplen == 0 || iplen >= sizeof ipbuf) {
		fprintf(stderr, "softrnic: %s: device %.*s: missing or invalid IPv4 address \"%.*s\"\n",
			what, (int)nlen, name, (int)iplen, ip);
		return -1;
	}
	memcpy(ipbuf, ip, iplen);
	ipbuf[iplen] = 0;
	struct in_addr a;
	if (inet_pton(AF_INET, ipbuf, &a) != 1) {
		fprintf(stderr, "softrnic: %s: device %.*s: \"%s\" is not an IPv4 address "
			"(dotted quad, e.g. 127.0.0.1)\n", what, (int)nlen, name, ipbuf);
		return -1;
	}
	if (a.s_addr == htonl(INADDR_ANY) || IN_MULTICAST(ntohl(a.s_addr)) ||
	    a.s_addr == htonl(INADDR_BROADCAST)) {
		fprintf(stderr, "softrnic: %s: device %.*s: %s is not a unicast host address\n",
			what, (int)nlen, name, ipbuf);
		return -1;
	}
	for (int i = 0; i < count; i++) {
		if (strlen(out[i].name) == nlen && memcmp(out[i].name, name, nlen) == 0) {
			fprintf(stderr, "softrnic: %s: device name %.*s given twice\n",
				what, (int)nlen, name);
			return -1;
		}
		if (out[i].ip.s_addr == a.s_addr) {
			fprintf(stderr, "softrnic: %s: devices %s and %.*s both use %s\n",
				what, out[i].name, (int)nlen, name, ipbuf);
			return -1;
		}
	}
	if (count >= max) {
		fprintf(stderr, "softrnic: %s: too many devices (at most %d)\n", what, max);
		return -1;
	}
	struct srn_rt_devcfg *d = &out[count];
	memset(d, 0, sizeof *d);
	memcpy(d->name, name, nlen);
	d->name[nlen] = 0;
	d->ip = a;
	d->port = SRN_ROCEV2_UDP_PORT;
	d->guid = srn_rt_guid_derive(d->name, a);
	return 0;
}

int srn_rt_config_parse_list(const char *s, const char *what,
			     struct srn_rt_devcfg *out, int max)
{
	int count = 0;
	const char *p = s;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *item = p;
		trim(&item, &n);
		if (n == 0) {
			fprintf(stderr, "softrnic: %s: empty device entry in \"%s\" "
				"(expected name=ip[,name=ip...])\n", what, s);
			return -1;
		}
		const char *eq = memchr(item, '=', n);
		if (!eq) {
			fprintf(stderr, "softrnic: %s: \"%.*s\" has no '=' "
				"(expected name=ip, e.g. softrnic0=127.0.0.1)\n", what, (int)n, item);
			return -1;
		}
		const char *name = item, *ip = eq + 1;
		size_t nlen = (size_t)(eq - item), iplen = n - nlen - 1;
		trim(&name, &nlen);
		trim(&ip, &iplen);
		if (add_dev(out, count, max, what, name, nlen, ip, iplen) < 0)
			return -1;
		count++;
		if (!end)
			break;
		p = end + 1;
	}
	return count;
}

int srn_rt_config_parse_text(const char *text, const char *what,
			     struct srn_rt_devcfg *out, int max)
{
	int count = 0, lineno = 0;
	const char *p = text;
	char where[320];

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *line = p;
		lineno++;
		p = nl ? nl + 1 : p + n;

		const char *hash = memchr(line, '#', n);
		if (hash)
			n = (size_t)(hash - line);
		trim(&line, &n);
		if (n == 0)
			continue;

		/* split into at most 4 whitespace-separated words */
		const char *w[4];
		size_t wl[4];
		int nw = 0;
		size_t i = 0;
		while (i < n) {
			while (i < n && isspace((unsigned char)line[i]))
				i++;
			if (i >= n)
				break;
			size_t start = i;
			while (i < n && !isspace((unsigned char)line[i]))
				i++;
			if (nw < 4) {
				w[nw] = line + start;
				wl[nw] = i - start;
			}
			nw++;
		}
		snprintf(where, sizeof where, "%s:%d", what, lineno);
		if (wl[0] != 6 || memcmp(w[0], "device", 6) != 0) {
			fprintf(stderr, "softrnic: %s: unknown keyword \"%.*s\" "
				"(expected \"device NAME IP\")\n", where, (int)wl[0], w[0]);
			return -1;
		}
		if (nw != 3) {
			fprintf(stderr, "softrnic: %s: expected \"device NAME IP\", got %d word%s\n",
				where, nw, nw == 1 ? "" : "s");
			return -1;
		}
		if (add_dev(out, count, max, where, w[1], wl[1], w[2], wl[2]) < 0)
			return -1;
		count++;
	}
	if (count == 0) {
		fprintf(stderr, "softrnic: %s: no \"device NAME IP\" line\n", what);
		return -1;
	}
	return count;
}

static int load_file(const char *path, struct srn_rt_devcfg *out, int max)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "softrnic: SOFTRNIC_CONFIG=%s: %s\n", path, strerror(errno));
		return -1;
	}
	char *text = NULL;
	size_t cap = 0, len = 0;
	int ret = -1;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 8192;
			if (ncap > (1u << 20)) {
				fprintf(stderr, "softrnic: SOFTRNIC_CONFIG=%s: file too large\n", path);
				goto out;
			}
			char *t = realloc(text, ncap);
			if (!t) {
				fprintf(stderr, "softrnic: SOFTRNIC_CONFIG=%s: out of memory\n", path);
				goto out;
			}
			text = t;
			cap = ncap;
		}
		size_t r = fread(text + len, 1, 4096, f);
		len += r;
		if (r < 4096)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "softrnic: SOFTRNIC_CONFIG=%s: read error\n", path);
		goto out;
	}
	text[len] = 0;
	if (strlen(text) != len) {
		fprintf(stderr, "softrnic: SOFTRNIC_CONFIG=%s: not a text file\n", path);
		goto out;
	}
	ret = srn_rt_config_parse_text(text, path, out, max);
out:
	free(text);
	fclose(f);
	return ret;
}

int srn_rt_config_parse_fabric(const char *s, const char *what, struct sockaddr_in *sa)
{
	char host[INET_ADDRSTRLEN + 1];
	const char *colon = s ? strrchr(s, ':') : NULL;
	char *end;

	memset(sa, 0, sizeof *sa);
	if (!colon || (size_t)(colon - s) >= sizeof host || !colon[1])
		goto bad;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || errno || port == 0 || port > 65535 || !isdigit((unsigned char)colon[1]))
		goto bad;
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		goto bad;
	return 0;
bad:
	memset(sa, 0, sizeof *sa);
	fprintf(stderr, "softrnic: %s: \"%s\" is not an IPv4 ADDR:PORT (e.g. 127.0.0.1:4790)\n",
		what, s ? s : "");
	return -1;
}


/* A microsecond setting from the environment: 1 and *us if set, 0 if unset
 * or empty, -1 (and a message) if not a number in 0..1000000. */
static int env_us(const char *name, uint32_t *us)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || *end || v[0] == '-' || v[0] == '+' || x > 1000000) {
		fprintf(stderr, "softrnic: %s: '%s': expected 0..1000000\n", name, v);
		return -1;
	}
	*us = (uint32_t)x;
	return 1;
}

int srn_rt_config_load(struct srn_rt_devcfg *out, int max)
{
	const char *devs = getenv("SOFTRNIC_DEVICES");
	const char *file = getenv("SOFTRNIC_CONFIG");
	int n;

	if (!out || max <= 0)
		return -1;
	if (devs && *devs)
		n = srn_rt_config_parse_list(devs, "SOFTRNIC_DEVICES", out, max);
	else if (file && *file)
		n = load_file(file, out, max);
	else
		n = srn_rt_config_parse_list(DEFAULT_NAME "=" DEFAULT_IP, "default", out, max);
	if (n <= 0)
		return -1;

	const char *pcap = getenv("SOFTRNIC_PCAP");
	if (pcap && *pcap) {
		for (int i = 0; i < n; i++) {
			int w;
			if (n == 1)
				w = snprintf(out[i].pcap_path, sizeof out[i].pcap_path, "%s", pcap);
			else
				w = snprintf(out[i].pcap_path, sizeof out[i].pcap_path, "%s.%s",
					     pcap, out[i].name);
			if (w < 0 || (size_t)w >= sizeof out[i].pcap_path) {
				fprintf(stderr, "softrnic: SOFTRNIC_PCAP: path too long (max %zu)\n",
					sizeof out[i].pcap_path - 1);
				return -1;
			}
		}
	}
	const char *off = getenv("SOFTRNIC_OFFLOAD");
	if (off && *off) {
		if (strcmp(off, "0") && strcmp(off, "1")) {
			fprintf(stderr, "softrnic: SOFTRNIC_OFFLOAD: '%s': expected 0 or 1\n", off);
			return -1;
		}
		for (int i = 0; i < n; i++)
			out[i].no_offload = !strcmp(off, "0");
	}
	uint32_t us;
	int r = env_us("SOFTRNIC_ACK_DELAY_US", &us);
	if (r < 0)
		return -1;
	for (int i = 0; r > 0 && i < n; i++) {
		out[i].ack_delay_us = us;
		out[i].ack_delay_set = true;
	}
	r = env_us("SOFTRNIC_RX_SPIN_US", &us);
	if (r < 0)
		return -1;
	for (int i = 0; r > 0 && i < n; i++) {
		out[i].rx_spin_us = us;
		out[i].rx_spin_set = true;
	}
	const char *fab = getenv("SOFTRNIC_FABRIC");
	if (fab && *fab) {
		struct sockaddr_in sa;
		if (srn_rt_config_parse_fabric(fab, "SOFTRNIC_FABRIC", &sa) < 0)
			return -1;
		for (int i = 0; i < n; i++)
			out[i].fabric = sa;
	}
	return n;
}
