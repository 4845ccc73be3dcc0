/*
 * cmd_run.c - `softrnic run`: start a program on a softrnic device.
 *
 * Puts the libibverbs.so.1 that sits next to the tool (EXE_DIR/../lib, found
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

const char *const help_run =
"NAME\n"
"    softrnic run - run a program on a softrnic software RNIC\n"
"\n"
"SYNOPSIS\n"
"    softrnic run [--name NAME] [--ip ADDR] [--pcap FILE] [--fabric ADDR:PORT]\n"
"                 [--] PROGRAM [ARGS...]\n"
"\n"
"DESCRIPTION\n"
"    Starts PROGRAM (searched in PATH) with softrnic's libibverbs.so.1 loaded\n"
"    instead of the system's, and one device NAME on the IPv4 address ADDR.\n"
"    The program is exec'ed: it keeps the process id, its output and its exit\n"
"    status. Unmodified verbs programs (ibv_devinfo, ibv_rc_pingpong, ...)\n"
"    and your own work as they are.\n"
"\n"
"    The device sends and receives RoCEv2 on UDP port 4791 of ADDR; it needs\n"
"    no root. Two programs on one host each take their own address, e.g.\n"
"    127.0.0.1 and 127.0.0.2 (all of 127.0.0.0/8 is loopback on Linux).\n"
"    GID index 0 is the IPv4-mapped address ::ffff:ADDR (use -g 0 with the\n"
"    ibv_*_pingpong programs).\n"
"\n"
"OPTIONS\n"
"    --name NAME   device name the program sees (default softrnic0);\n"
"                  1..63 characters of A-Z a-z 0-9 _ . -\n"
"    --ip ADDR     IPv4 address of the device (default 127.0.0.1); it must be\n"
"                  configured on this host (any 127.x.y.z address is)\n"
"    --pcap FILE   capture every packet the device sends and receives into\n"
"                  FILE (pcap, Ethernet/IPv4/UDP/RoCEv2; Wireshark and tshark\n"
"                  decode it as InfiniBand)\n"
"    --fabric ADDR:PORT\n"
"                  put the device behind the fabric emulator listening on\n"
"                  UDP ADDR:PORT (softrnic fabric, default 127.0.0.1:4790):\n"
"                  every packet goes to the fabric as a whole IPv4/UDP/RoCEv2\n"
"                  packet, and the fabric delivers, drops, delays, reorders,\n"
"                  duplicates, corrupts or ECN-marks it on its way to the\n"
"                  peer. The device attaches with a HELLO when it opens and\n"
"                  fails to open (ETIMEDOUT/ECONNREFUSED) if the fabric does\n"
"                  not answer within 3 s. Both peers must use the fabric.\n"
"                  The device then does not bind UDP port 4791.\n"
"    --            end of options; everything after it is the program\n"
"    -h, --help    show this help\n"
"\n"
"ENVIRONMENT\n"
"    Sets for PROGRAM:\n"
"      LD_LIBRARY_PATH   the tool's ../lib directory first (softrnic's\n"
"                        libibverbs.so.1), then the previous value\n"
"      SOFTRNIC_DEVICES  NAME=ADDR\n"
"      SOFTRNIC_PCAP     the absolute path of FILE (only with --pcap; an\n"
"                        inherited SOFTRNIC_PCAP is kept otherwise)\n"
"      SOFTRNIC_FABRIC   ADDR:PORT (only with --fabric; an inherited\n"
"                        SOFTRNIC_FABRIC is kept otherwise)\n"
"\n"
"EXAMPLES\n"
"    Show the device as the verbs library reports it:\n"
"        softrnic run -- ibv_devinfo -v\n"
"    RC ping-pong between two processes over loopback:\n"
"        softrnic run --name softrnic0 --ip 127.0.0.1 -- ibv_rc_pingpong -d softrnic0 -g 0\n"
"        softrnic run --name softrnic1 --ip 127.0.0.2 -- ibv_rc_pingpong -d softrnic1 -g 0 127.0.0.1\n"
"    Capture and decode:\n"
"        softrnic run --pcap /tmp/s.pcap -- ./my_verbs_program\n"
"        tshark -r /tmp/s.pcap -Y infiniband\n"
"    Two programs behind a fabric that loses 1% of the packets:\n"
"        softrnic fabric --seed 7 default loss=1% &\n"
"        softrnic run --ip 127.0.0.1 --fabric 127.0.0.1:4790 -- ibv_rc_pingpong -g 0\n"
"        softrnic run --name softrnic1 --ip 127.0.0.2 --fabric 127.0.0.1:4790 -- \\\n"
"            ibv_rc_pingpong -d softrnic1 -g 0 127.0.0.1\n"
"    See what the program gets:\n"
"        softrnic run --name dev7 --ip 127.0.0.7 -- env\n"
"\n"
"EXIT STATUS\n"
"    The exit status of PROGRAM; 127 if PROGRAM cannot be found or started\n"
"    (126 if it is not executable); 2 on a usage error.\n";

/* EXE_DIR/../lib, canonical; "" if it cannot be determined */
static void lib_dir(char *out, size_t cap)
{
	char exe[PATH_MAX], tmp[PATH_MAX + 8];
	out[0] = 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = 0;
	snprintf(tmp, sizeof tmp, "%s/../lib", exe);
	char *rp = realpath(tmp, NULL);
	if (rp) {
		snprintf(out, cap, "%s", rp);
		free(rp);
	}
}

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
	lib_dir(lib, sizeof lib);
	if (lib[0]) {
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
		fprintf(stderr, "softrnic run: warning: cannot locate the tool's ../lib directory; "
			"the program will use the system's libibverbs\n");
	}

	execvp(argv[i], argv + i);
	int e = errno;
	fprintf(stderr, "softrnic run: cannot run %s: %s\n", argv[i], strerror(e));
	return e == ENOENT ? 127 : 126;
oom:
	fprintf(stderr, "softrnic run: out of memory\n");
	return 2;
}
