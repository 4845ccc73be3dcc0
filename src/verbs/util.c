/*
 * util.c - the library's helpers: enum strings, rate conversions, fork
 * support, sysfs helpers, L2 resolution.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <arpa/inet.h>

#include "srn_verbs.h"

SRN_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};
	if (node_type < IBV_NODE_CA || node_type > IBV_NODE_UNSPECIFIED)
		return "unknown";
	return s[node_type];
}

SRN_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const s[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};
	if (port_state < IBV_PORT_NOP || port_state > IBV_PORT_ACTIVE_DEFER)
		return "unknown";
	return s[port_state];
}

SRN_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const s[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};
	if (event < IBV_EVENT_CQ_ERR || event > IBV_EVENT_WQ_FATAL)
		return "unknown";
	return s[event];
}

SRN_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};
	if (status < IBV_WC_SUCCESS || status > IBV_WC_TM_RNDV_INCOMPLETE)
		return "unknown";
	return s[status];
}

/* ------------------------------------------------------------------------ */
SRN_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	switch (rate) {
	case IBV_RATE_2_5_GBPS: return 1;
	case IBV_RATE_5_GBPS: return 2;
	case IBV_RATE_10_GBPS: return 4;
	case IBV_RATE_20_GBPS: return 8;
	case IBV_RATE_30_GBPS: return 12;
	case IBV_RATE_40_GBPS: return 16;
	case IBV_RATE_60_GBPS: return 24;
	case IBV_RATE_80_GBPS: return 32;
	case IBV_RATE_120_GBPS: return 48;
	case IBV_RATE_28_GBPS: return 11;
	case IBV_RATE_50_GBPS: return 20;
	case IBV_RATE_400_GBPS: return 160;
	case IBV_RATE_600_GBPS: return 240;
	case IBV_RATE_800_GBPS: return 320;
	case IBV_RATE_1200_GBPS: return 480;
	default: return -1;
	}
}

SRN_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	switch (mult) {
	case 1: return IBV_RATE_2_5_GBPS;
	case 2: return IBV_RATE_5_GBPS;
	case 4: return IBV_RATE_10_GBPS;
	case 8: return IBV_RATE_20_GBPS;
	case 12: return IBV_RATE_30_GBPS;
	case 16: return IBV_RATE_40_GBPS;
	case 24: return IBV_RATE_60_GBPS;
	case 32: return IBV_RATE_80_GBPS;
	case 48: return IBV_RATE_120_GBPS;
	case 11: return IBV_RATE_28_GBPS;
	case 20: return IBV_RATE_50_GBPS;
	case 160: return IBV_RATE_400_GBPS;
	case 240: return IBV_RATE_600_GBPS;
	case 320: return IBV_RATE_800_GBPS;
	case 480: return IBV_RATE_1200_GBPS;
	default: return IBV_RATE_MAX;
	}
}

static const struct { enum ibv_rate rate; int mbps; } rate_mbps[] = {
	{ IBV_RATE_2_5_GBPS, 2500 }, { IBV_RATE_5_GBPS, 5000 }, { IBV_RATE_10_GBPS, 10000 },
	{ IBV_RATE_20_GBPS, 20000 }, { IBV_RATE_30_GBPS, 30000 }, { IBV_RATE_40_GBPS, 40000 },
	{ IBV_RATE_60_GBPS, 60000 }, { IBV_RATE_80_GBPS, 80000 }, { IBV_RATE_120_GBPS, 120000 },
	{ IBV_RATE_14_GBPS, 14062 }, { IBV_RATE_56_GBPS, 56250 }, { IBV_RATE_112_GBPS, 112500 },
	{ IBV_RATE_168_GBPS, 168750 }, { IBV_RATE_25_GBPS, 25781 }, { IBV_RATE_100_GBPS, 103125 },
	{ IBV_RATE_200_GBPS, 206250 }, { IBV_RATE_300_GBPS, 309375 }, { IBV_RATE_28_GBPS, 28125 },
	{ IBV_RATE_50_GBPS, 53125 }, { IBV_RATE_400_GBPS, 425000 }, { IBV_RATE_600_GBPS, 637500 },
	{ IBV_RATE_800_GBPS, 850000 }, { IBV_RATE_1200_GBPS, 1275000 },
};

SRN_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rate_mbps) / sizeof(rate_mbps[0]); i++)
		if (rate_mbps[i].rate == rate)
			return rate_mbps[i].mbps;
	return -1;
}

SRN_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < sizeof(rate_mbps) / sizeof(rate_mbps[0]); i++)
		if (rate_mbps[i].mbps == mbps)
			return rate_mbps[i].rate;
	return IBV_RATE_MAX;
}

/* ------------------------------------------------------------------------ */
/*
 * Fork: softrnic reaches application memory through the process's own
 * virtual addresses, never through pinned physical pages, so after fork()
 * the parent keeps seeing its own (copy-on-write resolved) pages. That is
 * what rdma-core calls IBV_FORK_UNNEEDED; like rdma-core in that case,
 * ibv_fork_init succeeds and the range calls do nothing.
 */
SRN_EXPORT int ibv_fork_init(void) { return 0; }
SRN_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }
SRN_EXPORT int ibv_dontfork_range(void *base, size_t size) { (void)base; (void)size; return 0; }
SRN_EXPORT int ibv_dofork_range(void *base, size_t size) { (void)base; (void)size; return 0; }

/* ------------------------------------------------------------------------ */
static char sysfs_path[256];

static void sysfs_path_init(void)
{
	const char *env = getenv("SYSFS_PATH");
	size_t n;

	snprintf(sysfs_path, sizeof(sysfs_path), "%s", env ? env : "/sys");
	n = strlen(sysfs_path);
	while (n > 1 && sysfs_path[n - 1] == '/')
		sysfs_path[--n] = '\0';
}

SRN_EXPORT const char *ibv_get_sysfs_path(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sysfs_path_init);
	return sysfs_path;
}

SRN_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char *path;
	int fd;
	ssize_t len;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0) {
		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		else if ((size_t)len < size)
			buf[len] = '\0';
		else
			buf[size - 1] = '\0';   /* truncated, as rdma-core */
	}
	return (int)len;
}

/* ------------------------------------------------------------------------ */
/* MAC address of the interface holding ip, if it is local */
static bool local_mac(struct in_addr ip, uint8_t mac[6])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		char p[300], buf[32];
		unsigned m[6];

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != ip.s_addr)
			continue;
		snprintf(p, sizeof(p), "/sys/class/net/%s", i->ifa_name);
		memset(mac, 0, 6);
		if (ibv_read_sysfs_file(p, "address", buf, sizeof(buf)) > 0 &&
		    sscanf(buf, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6)
			for (int k = 0; k < 6; k++)
				mac[k] = (uint8_t)m[k];
		found = true;
	}
	freeifaddrs(ifa);
	return found;
}

/* neighbour table entry of ip (/proc/net/arp) */
static bool arp_mac(struct in_addr ip, uint8_t mac[6])
{
	FILE *f = fopen("/proc/net/arp", "re");
	char line[256], ipstr[64];
	bool found = false;

	if (!f)
		return false;
	inet_ntop(AF_INET, &ip, ipstr, sizeof(ipstr));
	while (!found && fgets(line, sizeof(line), f)) {
		char a[64], hw[64];
		unsigned m[6], flags;

		if (sscanf(line, "%63s %*s %x %63s", a, &flags, hw) == 3 && !strcmp(a, ipstr) &&
		    (flags & 0x2) &&
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6) {
			for (int k = 0; k < 6; k++)
				mac[k] = (uint8_t)m[k];
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * The Ethernet address of a RoCE destination. softrnic's frames are built by
 * the host's IP stack, so this is what that stack would use: the MAC of a
 * local interface for a local address, else the neighbour table's entry.
 * vid 0xffff = no VLAN. Returns 0, or -1 with errno (EINVAL: not a global
 * IPv4-mapped address; EHOSTUNREACH: no neighbour entry).
 */
SRN_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
					   uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	static const uint8_t v4pfx[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };
	struct in_addr ip;

	(void)context;
	if (!attr->is_global || attr->grh.sgid_index >= 1 ||
	    memcmp(attr->grh.dgid.raw, v4pfx, 12)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&ip.s_addr, &attr->grh.dgid.raw[12], 4);
	if (!local_mac(ip, eth_mac) && !arp_mac(ip, eth_mac)) {
		errno = EHOSTUNREACH;
		return -1;
	}
	if (vid)
		*vid = 0xffff;
	return 0;
}
