/*
 * main.c - `softrnic`, the command-line tool of the softrnic software RNIC:
 * subcommand dispatch, --help, --version and small shared helpers.
 */
#include <stdio.h>
#include <string.h>

#include "softrnic.h"

static const char *const help_main =
"NAME\n"
"    softrnic - run programs on a software RDMA NIC and inspect its devices\n"
"\n"
"SYNOPSIS\n"
"    softrnic run [--name NAME] [--ip ADDR] [--pcap FILE] -- PROGRAM [ARGS...]\n"
"    softrnic devices\n"
"    softrnic stats [--name NAME] [--watch SECS] [--all] [--json]\n"
"    softrnic fabric [--listen ADDR:PORT] [--config FILE] [PORT-SPEC...]\n"
"    softrnic sim SCENARIO [--out DIR] [--seed N] [--quiet]\n"
"    softrnic cc keygen KEYFILE | build ALGO.c --key KEYFILE [-o OUT] | load --name DEV ALGO.so\n"
"    softrnic --help | --version\n"
"    softrnic COMMAND --help\n"
"\n"
"DESCRIPTION\n"
"    softrnic is an RDMA NIC in user space: a drop-in libibverbs.so.1 that\n"
"    speaks RoCEv2 over ordinary UDP sockets (port 4791). Unmodified verbs\n"
"    programs run on it; no kernel module and no root are needed.\n"
"\n"
"COMMANDS\n"
"    run       start PROGRAM with softrnic's libibverbs and one device\n"
"    devices   list configured devices and the devices running now\n"
"    stats     print the live counters of running devices\n"
"    fabric    a user-space switch (loss, reordering, ECN marking...) that\n"
"              devices attach to instead of sending straight to each other\n"
"    sim       discrete-event simulator running the real transport core\n"
"              over simulated links and switches (rates, queues, fairness)\n"
"    cc        build, sign and load congestion-control algorithms into a\n"
"              running device\n"
"\n"
"OPTIONS\n"
"    -h, --help     show this help (COMMAND --help: help of that command)\n"
"    -V, --version  print the version and exit\n"
"\n"
"ENVIRONMENT\n"
"    SOFTRNIC_DEVICES   name=ip[,name=ip...]: devices of a process\n"
"    SOFTRNIC_CONFIG    file with lines \"device NAME IP\" (if SOFTRNIC_DEVICES is unset)\n"
"    SOFTRNIC_PCAP      capture file (\".NAME\" appended with several devices)\n"
"    SOFTRNIC_STATS_DIR directory of the live-counter files (default /dev/shm)\n"
"    Without SOFTRNIC_DEVICES and SOFTRNIC_CONFIG a process has one device,\n"
"    softrnic0 on 127.0.0.1.\n"
"\n"
"EXAMPLES\n"
"    softrnic run --name softrnic0 --ip 127.0.0.1 -- ibv_rc_pingpong -d softrnic0 -g 0\n"
"    softrnic run --name softrnic1 --ip 127.0.0.2 -- ibv_rc_pingpong -d softrnic1 -g 0 127.0.0.1\n"
"    softrnic stats --watch 1\n"
"    softrnic run --pcap /tmp/s.pcap -- ibv_devinfo\n"
"\n"
"EXIT STATUS\n"
"    run: the program's exit status (127 if it cannot be started);\n"
"    others: 0 on success, 1 on error, 2 on a usage error.\n";

void tool_fmt_gid(char out[40], const uint8_t gid[16])
{
	char *p = out;
	for (int i = 0; i < 16; i += 2)
		p += sprintf(p, "%s%02x%02x", i ? ":" : "", gid[i], gid[i + 1]);
}

void tool_fmt_guid(char out[20], uint64_t guid)
{
	snprintf(out, 20, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		 (unsigned)guid & 0xffff);
}

bool tool_is_help(const char *a)
{
	return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

int tool_opt_val(int argc, char **argv, int *i, const char *lopt, const char *sopt,
		 const char **val)
{
	const char *a = argv[*i];
	size_t l = strlen(lopt);
	if (strncmp(a, lopt, l) == 0 && a[l] == '=') {
		*val = a + l + 1;
		return 1;
	}
	if (strcmp(a, lopt) != 0 && !(sopt && strcmp(a, sopt) == 0))
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "softrnic: option %s needs a value\n", a);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

void tool_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(help_main, stderr);
		return 2;
	}
	const char *c = argv[1];
	if (tool_is_help(c) || strcmp(c, "help") == 0) {
		if (argc > 2 && strcmp(c, "help") == 0) {
			if (!strcmp(argv[2], "run"))
				return fputs(help_run, stdout), 0;
			if (!strcmp(argv[2], "devices"))
				return fputs(help_devices, stdout), 0;
			if (!strcmp(argv[2], "stats"))
				return fputs(help_stats, stdout), 0;
			if (!strcmp(argv[2], "cc")) {
				char *h[] = { argv[2], (char *)"--help", NULL };
				return srn_cmd_cc(2, h);
			}
			if (!strcmp(argv[2], "fabric") || !strcmp(argv[2], "sim")) {
				char *h[] = { argv[2], (char *)"--help", NULL };
				return !strcmp(argv[2], "sim") ? srn_cmd_sim(2, h) : srn_cmd_fabric(2, h);
			}
		}
		fputs(help_main, stdout);
		return 0;
	}
	if (strcmp(c, "--version") == 0 || strcmp(c, "-V") == 0) {
		printf("softrnic %s\n", SOFTRNIC_VERSION);
		return 0;
	}
	if (strcmp(c, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(c, "devices") == 0)
		return cmd_devices(argc - 1, argv + 1);
	if (strcmp(c, "stats") == 0)
		return cmd_stats(argc - 1, argv + 1);
	if (strcmp(c, "fabric") == 0)
		return srn_cmd_fabric(argc - 1, argv + 1);
	if (strcmp(c, "sim") == 0)
		return srn_cmd_sim(argc - 1, argv + 1);
	if (strcmp(c, "cc") == 0)
		return srn_cmd_cc(argc - 1, argv + 1);
	fprintf(stderr, "softrnic: unknown command \"%s\" (try: softrnic --help)\n", c);
	return 2;
}
