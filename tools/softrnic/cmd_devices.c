/*
 * cmd_devices.c - `softrnic devices`: configured devices (the rules every
 * softrnic process applies to its environment) and the device instances
 * running now (their live-counter files in /dev/shm).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softrnic.h"
#include "runtime/srn_rt.h"
#include "runtime/srn_rt_stats.h"

int cmd_devices(int argc, char **argv)
{
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (tool_is_help(argv[i])) {
			fputs(help_devices, stdout);
			return 0;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else {
			fprintf(stderr, "softrnic devices: unknown argument %s (see softrnic devices --help)\n",
				argv[i]);
			return 2;
		}
	}

	struct srn_rt_devcfg cfg[SRN_RT_MAX_DEVS];
	int n = srn_rt_config_load(cfg, SRN_RT_MAX_DEVS);
	int status = 0;
	if (n < 0) {
		status = 1;
		n = 0;
	}
	struct srn_rt_stats_snap *run = NULL;
	int nr = srn_rt_stats_scan(NULL, &run);
	if (nr < 0)
		nr = 0;     /* no stats directory: nothing is running */

	char ipb[INET_ADDRSTRLEN], gid[40], guid[20];
	uint8_t g[16];
	uint64_t now = srn_rt_realtime_ns();
	if (json) {
		printf("{\"configured\": [");
		for (int i = 0; i < n; i++) {
			inet_ntop(AF_INET, &cfg[i].ip, ipb, sizeof ipb);
			srn_rt_gid_from_ip(g, cfg[i].ip);
			tool_fmt_gid(gid, g);
			tool_fmt_guid(guid, cfg[i].guid);
			printf("%s{\"name\": ", i ? ", " : "");
			tool_json_str(cfg[i].name);
			printf(", \"ip\": \"%s\", \"port\": %u, \"gid\": \"%s\", \"guid\": \"%s\", \"pcap\": ",
			       ipb, cfg[i].port, gid, guid);
			tool_json_str(cfg[i].pcap_path);
			printf("}");
		}
		printf("], \"running\": [");
		for (int i = 0; i < nr; i++) {
			inet_ntop(AF_INET, &run[i].ip, ipb, sizeof ipb);
			tool_fmt_gid(gid, run[i].gid);
			tool_fmt_guid(guid, run[i].guid);
			printf("%s{\"name\": ", i ? ", " : "");
			tool_json_str(run[i].name);
			printf(", \"ip\": \"%s\", \"port\": %u, \"gid\": \"%s\", \"guid\": \"%s\", "
			       "\"pid\": %d, \"uptime_s\": %.1f}", ipb, run[i].port, gid, guid, run[i].pid,
			       now > run[i].start_ns ? (double)(now - run[i].start_ns) / 1e9 : 0.0);
		}
		printf("]}\n");
	} else {
		printf("Configured devices:\n");
		if (n)
			printf("  %-16s %-15s %-39s %-19s %s\n", "NAME", "IP", "GID", "NODE GUID", "CAPTURE");
		for (int i = 0; i < n; i++) {
			inet_ntop(AF_INET, &cfg[i].ip, ipb, sizeof ipb);
			srn_rt_gid_from_ip(g, cfg[i].ip);
			tool_fmt_gid(gid, g);
			tool_fmt_guid(guid, cfg[i].guid);
			printf("  %-16s %-15s %-39s %-19s %s\n", cfg[i].name, ipb, gid, guid,
			       cfg[i].pcap_path[0] ? cfg[i].pcap_path : "-");
		}
		if (!n)
			printf("  (none: configuration error)\n");
		printf("\nRunning devices:\n");
		if (nr)
			printf("  %-16s %-15s %-39s %-19s %8s %10s\n", "NAME", "IP", "GID", "NODE GUID",
			       "PID", "UPTIME");
		for (int i = 0; i < nr; i++) {
			inet_ntop(AF_INET, &run[i].ip, ipb, sizeof ipb);
			tool_fmt_gid(gid, run[i].gid);
			tool_fmt_guid(guid, run[i].guid);
			double up = now > run[i].start_ns ? (double)(now - run[i].start_ns) / 1e9 : 0;
			printf("  %-16s %-15s %-39s %-19s %8d %9.1fs\n", run[i].name, ipb, gid, guid,
			       run[i].pid, up);
		}
		if (!nr)
			printf("  (none)\n");
	}
	free(run);
	return status;
}
