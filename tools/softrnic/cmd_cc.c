/*
 * cmd_cc.c - `softrnic cc`: congestion-control algorithms as loadable,
 * signed code (CC-14).
 *
 *   softrnic cc keygen KEYFILE
 *   softrnic cc build ALGO.c --key KEYFILE [-o OUT.so] [-I DIR]
 *   softrnic cc load --name DEV ALGO.so [--timeout SECS]
 *
 * build compiles with the system compiler (cc, or $CC) as a freestanding
 * shared object - no libc at all, every symbol resolved at link time - and
 * writes OUT.so.sig = hex HMAC-SHA256(key, OUT.so) (OpenSSL libcrypto).
 * load asks the running device through its control socket
 * (src/runtime/cc_ctl.c), which checks the signature with its own key.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "softrnic.h"
#include "runtime/cc_ctl.h"
#include "runtime/srn_rt_stats.h"

extern char **environ;

static int keygen(const char *path)
{
	uint8_t key[SRN_CC_KEY_LEN];
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		fprintf(stderr, "softrnic cc keygen: getrandom: %s\n", strerror(errno));
		return 1;
	}
	char hex[2 * SRN_CC_KEY_LEN + 2];
	srn_cc_hex(key, sizeof(key), hex);
	strcat(hex, "\n");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex) || close(fd)) {
		fprintf(stderr, "softrnic cc keygen: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("key written to %s\n", path);
	return 0;
}

static int sign(const char *so, const uint8_t key[SRN_CC_KEY_LEN])
{
	size_t len;
	uint8_t *buf = srn_cc_read_file(so, &len, 64u << 20);
	if (!buf) {
		fprintf(stderr, "softrnic cc build: cannot read %s: %s\n", so, strerror(errno));
		return 1;
	}
	uint8_t mac[SRN_CC_MAC_LEN];
	int rc = srn_cc_mac(key, buf, len, mac);
	free(buf);
	if (rc) {
		fprintf(stderr, "softrnic cc build: HMAC-SHA256 failed\n");
		return 1;
	}
	char hex[2 * SRN_CC_MAC_LEN + 1], sig[PATH_MAX + 8];
	srn_cc_hex(mac, sizeof(mac), hex);
	snprintf(sig, sizeof(sig), "%s.sig", so);
	FILE *f = fopen(sig, "w");
	if (!f || fprintf(f, "%s\n", hex) < 0 || fclose(f)) {
		fprintf(stderr, "softrnic cc build: %s: %s\n", sig, strerror(errno));
		return 1;
	}
	printf("built %s, signed: %s\n", so, sig);
	return 0;
}

static int build(int argc, char **argv)
{
	const char *src = NULL, *keyf = NULL, *out = NULL, *inc = getenv("SOFTRNIC_INCLUDE");
	for (int i = 0; i < argc; i++) {
		const char *v;
		int r;
		if ((r = tool_opt_val(argc, argv, &i, "--key", "-k", &v)) != 0) {
			if (r < 0)
				return 2;
			keyf = v;
		} else if ((r = tool_opt_val(argc, argv, &i, "--out", "-o", &v)) != 0) {
			if (r < 0)
				return 2;
			out = v;
		} else if ((r = tool_opt_val(argc, argv, &i, "--include", "-I", &v)) != 0) {
			if (r < 0)
				return 2;
			inc = v;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "softrnic cc build: unknown option %s\n", argv[i]);
			return 2;
		} else if (!src) {
			src = argv[i];
		} else {
			fprintf(stderr, "softrnic cc build: one source file only\n");
			return 2;
		}
	}
	if (!src || !keyf) {
		fprintf(stderr, "usage: softrnic cc build ALGO.c --key KEYFILE [-o OUT.so]\n");
		return 2;
	}
	uint8_t key[SRN_CC_KEY_LEN];
	char err[512];
	if (srn_cc_key_read(keyf, key, err, sizeof(err))) {
		fprintf(stderr, "softrnic cc build: %s\n", err);
		return 1;
	}
	char outbuf[PATH_MAX];
	if (!out) {
		snprintf(outbuf, sizeof(outbuf), "%s", src);
		char *dot = strrchr(outbuf, '.');
		if (dot && strcmp(dot, ".c") == 0)
			*dot = 0;
		strncat(outbuf, ".so", sizeof(outbuf) - strlen(outbuf) - 1);
		out = outbuf;
	}
	const char *cc = getenv("CC");
	char incflag[PATH_MAX + 3];
	char incdir[PATH_MAX];
	if (!inc || !*inc) {
		if (tool_include_dir(incdir, sizeof incdir)) {
			fprintf(stderr, "softrnic cc build: cannot find softrnic's include directory "
				"(give -I DIR or SOFTRNIC_INCLUDE)\n");
			return 1;
		}
		inc = incdir;
	}
	snprintf(incflag, sizeof(incflag), "-I%s", inc);
	char *args[] = { (char *)(cc && *cc ? cc : "cc"), (char *)"-std=c11", (char *)"-O2",
			 (char *)"-fPIC", (char *)"-shared", (char *)"-nostdlib",
			 (char *)"-ffreestanding", (char *)"-Wall", (char *)"-Wextra",
			 (char *)"-Werror=implicit-function-declaration",
			 (char *)"-Wl,--no-undefined", incflag, (char *)"-o", (char *)out,
			 (char *)src, NULL };
	pid_t pid;
	int st;
	if (posix_spawnp(&pid, args[0], NULL, NULL, args, environ)) {
		fprintf(stderr, "softrnic cc build: cannot run %s\n", args[0]);
		return 1;
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "softrnic cc build: %s failed on %s (a libc call, or code not "
			"written against <softrnic/cc_algo.h> only?)\n", args[0], src);
		return 1;
	}
	return sign(out, key);
}

/* the control socket of device NAME (a live process) */
static int find_socket(const char *name, char *path, size_t cap)
{
	const char *dir = srn_rt_stats_dir();
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	char pre[128];
	snprintf(pre, sizeof(pre), SRN_CC_CTL_PREFIX "%s.", name);
	struct dirent *e;
	int found = -1;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, pre, strlen(pre)) != 0)
			continue;
		int pid = atoi(e->d_name + strlen(pre));
		if (!srn_rt_pid_alive(pid))
			continue;
		int n = snprintf(path, cap, "%s/%.*s", dir, 100, e->d_name);
		if (n < 0 || (size_t)n >= cap)
			continue;
		found = 0;
		break;
	}
	closedir(d);
	return found;
}

static int load(int argc, char **argv)
{
	const char *name = NULL, *so = NULL;
	int timeout_s = 10;
	for (int i = 0; i < argc; i++) {
		const char *v;
		int r;
		if ((r = tool_opt_val(argc, argv, &i, "--name", "-n", &v)) != 0) {
			if (r < 0)
				return 2;
			name = v;
		} else if ((r = tool_opt_val(argc, argv, &i, "--timeout", NULL, &v)) != 0) {
			if (r < 0)
				return 2;
			timeout_s = atoi(v);
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "softrnic cc load: unknown option %s\n", argv[i]);
			return 2;
		} else {
			so = argv[i];
		}
	}
	if (!name || !so) {
		fprintf(stderr, "usage: softrnic cc load --name DEV ALGO.so\n");
		return 2;
	}
	char abs[PATH_MAX];
	if (!realpath(so, abs)) {
		fprintf(stderr, "softrnic cc load: %s: %s\n", so, strerror(errno));
		return 1;
	}
	struct sockaddr_un dst = { .sun_family = AF_UNIX };
	if (find_socket(name, dst.sun_path, sizeof(dst.sun_path))) {
		fprintf(stderr, "softrnic cc load: no running device '%s' with congestion control "
			"(start it with SOFTRNIC_CC=... and SOFTRNIC_CC_KEY=...)\n", name);
		return 1;
	}
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	/* autobind: the device answers to an abstract address of our own */
	struct sockaddr_un me = { .sun_family = AF_UNIX };
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(sa_family_t))) {
		fprintf(stderr, "softrnic cc load: socket: %s\n", strerror(errno));
		return 1;
	}
	char req[PATH_MAX + 8];
	snprintf(req, sizeof(req), "LOAD %s", abs);
	if (sendto(fd, req, strlen(req), 0, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		fprintf(stderr, "softrnic cc load: %s: %s\n", dst.sun_path, strerror(errno));
		close(fd);
		return 1;
	}
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, timeout_s * 1000) != 1) {
		fprintf(stderr, "softrnic cc load: no answer from '%s' in %d s\n", name, timeout_s);
		close(fd);
		return 1;
	}
	char ans[4700];
	ssize_t n = recv(fd, ans, sizeof(ans) - 1, 0);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "softrnic cc load: %s\n", strerror(errno));
		return 1;
	}
	ans[n] = 0;
	if (strncmp(ans, "OK", 2) == 0) {
		printf("%s: %s\n", name, ans + 3);
		return 0;
	}
	fprintf(stderr, "softrnic cc load: %s refused %s: %s\n", name, abs,
		strncmp(ans, "ERR ", 4) == 0 ? ans + 4 : ans);
	return 1;
}

int srn_cmd_cc(int argc, char **argv)
{
	if (argc < 2 || tool_is_help(argv[1])) {
		fputs(help_cc, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1];
	for (int i = 2; i < argc; i++)
		if (tool_is_help(argv[i]))
			return fputs(help_cc, stdout), 0;
	if (strcmp(sub, "keygen") == 0) {
		if (argc != 3) {
			fprintf(stderr, "usage: softrnic cc keygen KEYFILE\n");
			return 2;
		}
		return keygen(argv[2]);
	}
	if (strcmp(sub, "build") == 0)
		return build(argc - 2, argv + 2);
	if (strcmp(sub, "load") == 0)
		return load(argc - 2, argv + 2);
	fprintf(stderr, "softrnic cc: unknown subcommand \"%s\" (keygen, build, load)\n", sub);
	return 2;
}
