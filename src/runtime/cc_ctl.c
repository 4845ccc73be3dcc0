/*
 * cc_ctl.c - congestion control of a running device (CC-14).
 *
 * Configuration (read when a device opens, srn_rt_cc_config):
 *   SOFTRNIC_CC=none|dcqcn|dcqcn-paper|dcqcn-sw|timely|timely-seg   starting algorithm
 *   SOFTRNIC_CC_RATE=100g        line rate the engine clamps to (k/m/g bit/s)
 *   SOFTRNIC_CC_BURST=16k        depth of each QP's pacer bucket (bytes, k/m =
 *                                KiB/MiB; default: one full packet)
 *   SOFTRNIC_CC_KEY=FILE         the device key (hex, `softrnic cc keygen`)
 *
 * Control path: each device with CC binds a unix datagram socket
 * <stats dir>/softrnic-cc.NAME.PID.sock, served by a small thread of its own
 * (so the progress thread's loop is untouched and nothing is added to the
 * packet path). A request is one datagram "LOAD /abs/path/algo.so"; the
 * answer one datagram "OK ..." or "ERR reason". Loading:
 *   1. read the .so and its signature file (path + ".sig", hex HMAC-SHA256)
 *   2. check HMAC-SHA256(device key, .so bytes) with OpenSSL, constant-time
 *   3. copy the verified bytes into a memfd and dlopen that, so the code
 *      that runs is exactly the code that was verified (no race with a
 *      file changed after the check)
 *   4. dlsym("softrnic_cc_algo"), then under the device lock
 *      srn_dev_cc_set_algo: the engine checks ABI version, context size and
 *      on_event; refused -> the old algorithm keeps running
 * Any failure answers "ERR <why>" and leaves the device as it was.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "cc_ctl.h"
#include "srn_rt.h"
#include "srn_rt_stats.h"
#include "core/cc/srn_cc.h"

#define MAX_SO_BYTES (64u << 20)

struct rt_cc {
	struct srn_rt_dev *rd;
	struct srn_cc_cfg cfg;
	bool has_cc, has_key;
	uint8_t key[SRN_CC_KEY_LEN];
	int fd, stop_pipe[2];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	bool running;
};

static pthread_mutex_t cc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_cc *ccs[64];

static struct rt_cc *find(struct srn_rt_dev *rd)
{
	for (size_t i = 0; i < sizeof(ccs) / sizeof(ccs[0]); i++)
		if (ccs[i] && ccs[i]->rd == rd)
			return ccs[i];
	return NULL;
}

/* ---- helpers shared with `softrnic cc` ------------------------------------ */

void srn_cc_hex(const uint8_t *in, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = 0;
}

static int nib(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int srn_cc_unhex(const char *s, size_t slen, uint8_t *out, size_t n)
{
	while (slen && (s[slen - 1] == '\n' || s[slen - 1] == '\r' || s[slen - 1] == ' '))
		slen--;
	if (slen != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int a = nib(s[2 * i]), b = nib(s[2 * i + 1]);
		if (a < 0 || b < 0)
			return -1;
		out[i] = (uint8_t)(a << 4 | b);
	}
	return 0;
}

uint8_t *srn_cc_read_file(const char *path, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r <= 0) {
			free(buf);
			buf = NULL;
			errno = EIO;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[got] = 0;
		*len = got;
	}
	return buf;
}

int srn_cc_key_read(const char *path, uint8_t key[SRN_CC_KEY_LEN], char *err, size_t errlen)
{
	size_t n;
	char *s = (char *)srn_cc_read_file(path, &n, 4096);
	if (!s) {
		snprintf(err, errlen, "cannot read key file %s: %s", path, strerror(errno));
		return -1;
	}
	int rc = srn_cc_unhex(s, n, key, SRN_CC_KEY_LEN);
	OPENSSL_cleanse(s, n);
	free(s);
	if (rc)
		snprintf(err, errlen, "key file %s: not %u hex-encoded bytes", path, SRN_CC_KEY_LEN);
	return rc;
}

int srn_cc_mac(const uint8_t key[SRN_CC_KEY_LEN], const uint8_t *data, size_t len,
	       uint8_t mac[SRN_CC_MAC_LEN])
{
	unsigned int ml = 0;
	if (!HMAC(EVP_sha256(), key, (int)SRN_CC_KEY_LEN, data, len, mac, &ml) || ml != SRN_CC_MAC_LEN)
		return -1;
	return 0;
}

/* ---- configuration ---------------------------------------------------------- */

static const struct {
	const char *name;
	const struct softrnic_cc_algo *algo;
} builtin[] = {
	{ "dcqcn", &srn_cc_algo_dcqcn },
	{ "dcqcn-paper", &srn_cc_algo_dcqcn_paper },
	{ "dcqcn-sw", &srn_cc_algo_dcqcn_sw },
	{ "timely", &srn_cc_algo_timely },
	{ "timely-seg", &srn_cc_algo_timely_seg },
};

static int parse_rate_kbps(const char *s, uint32_t *out)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1e-3;
	if (*end == 'k' || *end == 'K')
		mul = 1, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1e3, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1e6, end++;
	/* written so that NaN ("nan") fails every comparison and is rejected */
	if (*end || !(v > 0) || !(v * mul >= 1 && v * mul <= 4e9))
		return -1;
	*out = (uint32_t)(v * mul);
	return 0;
}

/* a byte count: digits, optionally k or m (KiB, MiB); 0 .. 64 MiB */
static int parse_bytes(const char *s, uint32_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v > (64ull << 20))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int srn_rt_cc_config(struct srn_rt_dev *rd, const struct srn_rt_devcfg *cfg, struct srn_dev_cfg *dc)
{
	const char *algo = getenv("SOFTRNIC_CC"), *rate = getenv("SOFTRNIC_CC_RATE");
	const char *keyf = getenv("SOFTRNIC_CC_KEY"), *burst = getenv("SOFTRNIC_CC_BURST");
	const struct softrnic_cc_algo *a = NULL;
	if (algo && *algo && strcmp(algo, "none") != 0) {
		for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
			if (strcmp(algo, builtin[i].name) == 0)
				a = builtin[i].algo;
		if (!a) {
			fprintf(stderr, "softrnic: %s: SOFTRNIC_CC=%s: unknown algorithm "
				"(none, dcqcn, dcqcn-paper, dcqcn-sw, timely, timely-seg)\n", cfg->name, algo);
			return -EINVAL;
		}
	}
	uint32_t kbps = 100u * SOFTRNIC_CC_KBPS_PER_GBPS;
	if (rate && *rate && parse_rate_kbps(rate, &kbps)) {
		fprintf(stderr, "softrnic: %s: SOFTRNIC_CC_RATE=%s: expected a rate like 40g\n",
			cfg->name, rate);
		return -EINVAL;
	}
	/* The pacer lets a packet go when its bucket holds a whole packet; with
	 * the default one-packet bucket every late wake-up of the progress
	 * thread (tens of us) is rate lost for good - at 1 Gbit/s and 4 KiB
	 * packets a flow paced at line rate sent at a third of it. A deeper
	 * bucket lets the pacer catch up after a late wake-up (docs/cc.md). */
	uint32_t burst_bytes = 0;
	if (burst && *burst && parse_bytes(burst, &burst_bytes)) {
		fprintf(stderr, "softrnic: %s: SOFTRNIC_CC_BURST=%s: expected a size like 16k\n",
			cfg->name, burst);
		return -EINVAL;
	}
	if (!a && !(keyf && *keyf))
		return 0;                   /* no CC, nothing to load into: no socket */
	struct rt_cc *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->rd = rd;
	c->fd = -1;
	c->stop_pipe[0] = c->stop_pipe[1] = -1;
	if (keyf && *keyf) {
		char err[256];
		if (srn_cc_key_read(keyf, c->key, err, sizeof(err))) {
			fprintf(stderr, "softrnic: %s: SOFTRNIC_CC_KEY: %s\n", cfg->name, err);
			free(c);
			return -EINVAL;
		}
		c->has_key = true;
	}
	if (a) {
		srn_dev_cc_cfg_default(&c->cfg, a, dc->max_qp, kbps);
		dc->cc = &c->cfg;           /* copied by srn_dev_new */
		dc->cc_burst_bytes = burst_bytes;
		c->has_cc = true;
	}
	pthread_mutex_lock(&cc_lock);
	size_t i = 0;
	while (i < sizeof(ccs) / sizeof(ccs[0]) && ccs[i])
		i++;
	if (i == sizeof(ccs) / sizeof(ccs[0])) {
		pthread_mutex_unlock(&cc_lock);
		free(c);
		return -EMFILE;
	}
	ccs[i] = c;
	pthread_mutex_unlock(&cc_lock);
	return 0;
}

/* ---- loading ------------------------------------------------------------- */

static void do_load(struct rt_cc *c, const char *path, char *ans, size_t cap)
{
	if (!c->has_key) {
		snprintf(ans, cap, "ERR device has no key (start it with SOFTRNIC_CC_KEY=FILE): "
			 "refusing unsigned code");
		return;
	}
	if (!c->has_cc) {
		snprintf(ans, cap, "ERR device has no congestion control (SOFTRNIC_CC=none)");
		return;
	}
	size_t len, slen;
	uint8_t *so = srn_cc_read_file(path, &len, MAX_SO_BYTES);
	if (!so) {
		snprintf(ans, cap, "ERR cannot read %s: %s", path, strerror(errno));
		return;
	}
	char sigpath[4200];
	snprintf(sigpath, sizeof(sigpath), "%s.sig", path);
	char *sig = (char *)srn_cc_read_file(sigpath, &slen, 4096);
	uint8_t want[SRN_CC_MAC_LEN], got[SRN_CC_MAC_LEN];
	if (!sig) {
		snprintf(ans, cap, "ERR unsigned: no signature file %s", sigpath);
		goto out;
	}
	if (srn_cc_unhex(sig, slen, want, sizeof(want))) {
		snprintf(ans, cap, "ERR bad signature file %s (expected 64 hex digits)", sigpath);
		goto out;
	}
	if (srn_cc_mac(c->key, so, len, got)) {
		snprintf(ans, cap, "ERR HMAC-SHA256 failed (libcrypto)");
		goto out;
	}
	if (CRYPTO_memcmp(want, got, sizeof(got)) != 0) {
		snprintf(ans, cap, "ERR signature mismatch: %s was not signed with this device's key",
			 path);
		goto out;
	}
	/* load exactly the verified bytes */
	int mfd = memfd_create("softrnic-cc-algo", MFD_CLOEXEC);
	if (mfd < 0 || write(mfd, so, len) != (ssize_t)len) {
		snprintf(ans, cap, "ERR memfd: %s", strerror(errno));
		if (mfd >= 0)
			close(mfd);
		goto out;
	}
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", mfd);
	void *h = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
	close(mfd);
	if (!h) {
		snprintf(ans, cap, "ERR dlopen: %s", dlerror());
		goto out;
	}
	const struct softrnic_cc_algo *a = dlsym(h, SRN_CC_SYMBOL);
	if (!a) {
		snprintf(ans, cap, "ERR %s exports no '" SRN_CC_SYMBOL "'", path);
		dlclose(h);
		goto out;
	}
	srn_rt_lock(c->rd);
	int rc = srn_dev_cc_set_algo(srn_rt_core(c->rd), a, srn_rt_now());
	srn_rt_unlock(c->rd);
	if (rc) {
		snprintf(ans, cap, "ERR the engine refused the algorithm (ABI version %u, context "
			 "size <= %u, on_event required): %s", SOFTRNIC_CC_ABI_VERSION,
			 SOFTRNIC_CC_CTX_SIZE, srn_strerror(rc));
		dlclose(h);
		goto out;
	}
	/* the handle stays open: the engine calls into it from now on */
	snprintf(ans, cap, "OK loaded '%s' from %s", a->name ? a->name : "?", path);
out:
	free(so);
	free(sig);
}

static void *ctl_thread(void *arg)
{
	struct rt_cc *c = arg;
	struct pollfd pfd[2] = { { .fd = c->fd, .events = POLLIN },
				 { .fd = c->stop_pipe[0], .events = POLLIN } };
	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		char req[4200], ans[4600];
		struct sockaddr_un from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(c->fd, req, sizeof(req) - 1, 0, (struct sockaddr *)&from, &fl);
		if (n <= 0)
			continue;
		req[n] = 0;
		while (n && (req[n - 1] == '\n' || req[n - 1] == 0))
			req[--n] = 0;
		if (strncmp(req, "LOAD ", 5) == 0 && req[5] == '/')
			do_load(c, req + 5, ans, sizeof(ans));
		else
			snprintf(ans, sizeof(ans), "ERR unknown request (expected 'LOAD /abs/path.so')");
		if (fl > sizeof(sa_family_t))
			sendto(c->fd, ans, strlen(ans), 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

void srn_rt_cc_start(struct srn_rt_dev *rd)
{
	pthread_mutex_lock(&cc_lock);
	struct rt_cc *c = find(rd);
	pthread_mutex_unlock(&cc_lock);
	if (!c)
		return;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int n = snprintf(a.sun_path, sizeof(a.sun_path), "%s/" SRN_CC_CTL_PREFIX "%s.%d.sock",
			 srn_rt_stats_dir(), srn_rt_cfg(rd)->name, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(a.sun_path))
		goto fail;
	c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || pipe2(c->stop_pipe, O_CLOEXEC))
		goto fail;
	unlink(a.sun_path);
	if (bind(c->fd, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	chmod(a.sun_path, 0600);            /* only the owner may load code */
	memcpy(c->path, a.sun_path, sizeof(c->path));
	/* the thread takes no signals */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pr = pthread_create(&c->thread, NULL, ctl_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pr)
		goto fail;
	c->running = true;
	return;
fail:
	fprintf(stderr, "softrnic: %s: congestion-control socket %s: %s (cc load unavailable)\n",
		srn_rt_cfg(rd)->name, a.sun_path, strerror(errno));
	if (c->path[0])
		unlink(c->path);
	c->path[0] = 0;
}

void srn_rt_cc_stop(struct srn_rt_dev *rd)
{
	pthread_mutex_lock(&cc_lock);
	struct rt_cc *c = NULL;
	for (size_t i = 0; i < sizeof(ccs) / sizeof(ccs[0]); i++)
		if (ccs[i] && ccs[i]->rd == rd) {
			c = ccs[i];
			ccs[i] = NULL;
		}
	pthread_mutex_unlock(&cc_lock);
	if (!c)
		return;
	if (c->running) {
		ssize_t w = write(c->stop_pipe[1], "x", 1);
		(void)w;
		pthread_join(c->thread, NULL);
	}
	if (c->path[0])
		unlink(c->path);
	if (c->fd >= 0)
		close(c->fd);
	for (int i = 0; i < 2; i++)
		if (c->stop_pipe[i] >= 0)
			close(c->stop_pipe[i]);
	OPENSSL_cleanse(c->key, sizeof(c->key));
	free(c);
}
