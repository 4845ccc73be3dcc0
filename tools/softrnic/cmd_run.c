/*
 * cmd_run.c - `softrnic run`: start a program on a softrnic device.
 *
 * Puts the directory of softrnic's libibverbs.so.1 (tool_lib_dir(): the
 * installation's private PREFIX/lib/softrnic, or a build tree's lib/, found
 * through /proc/self/exe) first on LD_LIBRARY_PATH, describes the device in
 * SOFTRNIC_DEVICES (and the capture in SOFTRNIC_PCAP), then execvp()s the
 * program, so its exit status is the program's own.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "softrnic.h"
#include "runtime/srn_rt.h"
#include "runtime/srn_rt_stats.h"

int cmd_run(int argc, char **argv)
{
	const char *name = "softrnic0", *ip = "127.0.0.1", *pcap = NULL, *fabric = NULL;
	int i = 1;

	for (; i < argc; i++) {
		const char *a = argv[i], *v;
		int r;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (tool_is_help(a)) {
			fputs(help_run, stdout);
			return 0;
		}
		if ((r = tool_opt_val(argc, argv, &i, "--name", NULL, &v)) != 0) {
			if (r < 0)
				return 2;
			name = v;
		} else if ((r = tool_opt_val(argc, argv, &i, "--ip", NULL, &v)) != 0) {
			if (r < 0)
				return 2;
			ip = v;
		} else if ((r = tool_opt_val(argc, argv, &i, "--pcap", NULL, &v)) != 0) {
			if (r < 0)
				return 2;
			pcap = v;
		} else if ((r = tool_opt_val(argc, argv, &i, "--fabric", NULL, &v)) != 0) {
			if (r < 0)
				return 2;
			fabric = v;
		} else if (a[0] == '-') {
			fprintf(stderr, "softrnic run: unknown option %s (see softrnic run --help)\n", a);
			return 2;
		} else {
			break;          /* first word of the program */
		}
	}
	if (i >= argc) {
		fprintf(stderr, "softrnic run: no program given\n"
			"usage: softrnic run [--name NAME] [--ip ADDR] [--pcap FILE] [--fabric ADDR:PORT] "
			"-- PROGRAM [ARGS...]\n");
		return 2;
	}

	/* validate with the runtime's own parser (same messages as the library) */
	char devs[256];
	if (snprintf(devs, sizeof devs, "%s=%s", name, ip) >= (int)sizeof devs) {
		fprintf(stderr, "softrnic run: --name/--ip too long\n");
		return 2;
	}
	struct srn_rt_devcfg cfg[1];
	if (srn_rt_config_parse_list(devs, "softrnic run", cfg, 1) != 1)
		return 2;
	if (setenv("SOFTRNIC_DEVICES", devs, 1) < 0)
		goto oom;

	if (fabric) {
		struct sockaddr_in sa;
		if (srn_rt_config_parse_fabric(fabric, "run --fabric", &sa) < 0)
			return 2;
		if (setenv("SOFTRNIC_FABRIC", fabric, 1) < 0)
			goto oom;
	}

	if (pcap) {
		char abs[PATH_MAX + 2];
		if (!*pcap) {
			fprintf(stderr, "softrnic run: --pcap needs a file name\n");
			return 2;
		}
		if (pcap[0] != '/') {
			char cwd[PATH_MAX];
			if (!getcwd(cwd, sizeof cwd)) {
				fprintf(stderr, "softrnic run: getcwd: %s\n", strerror(errno));
				return 2;
			}
			if (snprintf(abs, sizeof abs, "%s/%s", cwd, pcap) >= (int)sizeof abs) {
				fprintf(stderr, "softrnic run: --pcap path too long\n");
				return 2;
			}
			pcap = abs;
		}
		if (strlen(pcap) >= sizeof cfg[0].pcap_path) {
			fprintf(stderr, "softrnic run: --pcap path too long (max %zu)\n",
				sizeof cfg[0].pcap_path - 1);
			return 2;
		}
		if (setenv("SOFTRNIC_PCAP", pcap, 1) < 0)
			goto oom;
	}

	char lib[PATH_MAX];
	if (tool_lib_dir(lib, sizeof lib) == 0) {
		char so[PATH_MAX + 32];
		snprintf(so, sizeof so, "%s/libibverbs.so.1", lib);
		if (access(so, R_OK) != 0)
			fprintf(stderr, "softrnic run: warning: %s not found; the program will "
				"use the system's libibverbs\n", so);
		const char *old = getenv("LD_LIBRARY_PATH");
		size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
		char *v = malloc(len);
		if (!v)
			goto oom;
		if (old && *old)
			snprintf(v, len, "%s:%s", lib, old);
		else
			snprintf(v, len, "%s", lib);
		int r = setenv("LD_LIBRARY_PATH", v, 1);
		free(v);
		if (r < 0)
			goto oom;
	} else {
		fprintf(stderr, "softrnic run: warning: softrnic's library directory (the "
			"installation's lib/softrnic, or a build tree's lib) does not exist; the "
			"program will use the system's libibverbs\n");
	}

	execvp(argv[i], argv + i);
	int e = errno;
	fprintf(stderr, "softrnic run: cannot run %s: %s\n", argv[i], strerror(e));
	return e == ENOENT ? 127 : 126;
oom:
	fprintf(stderr, "softrnic run: out of memory\n");
	return 2;
}
