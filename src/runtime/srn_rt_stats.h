/*
 * srn_rt_stats.h - live counters of running softrnic devices in shared
 * memory, and the reader used by `softrnic stats` / `softrnic devices`.
 *
 * Every open runtime device publishes a file
 *     /dev/shm/softrnic.<name>.<pid>      ($SOFTRNIC_STATS_DIR overrides /dev/shm)
 * laid out as (all integers host byte order, the file is machine-local):
 *
 *     struct srn_rt_shm_hdr                  (SRN_RT_SHM_HDR_SIZE bytes)
 *     char names[n_counters][SRN_RT_SHM_NAME_LEN]   at names_off, NUL-terminated
 *     uint64_t values[n_counters]                    at values_off (8-aligned)
 *
 * Values are the core's counter array (srn_dev_counters, named by
 * srn_ctr_names) followed by the runtime's own counters ("rt_*"). The
 * progress thread copies them under the device lock at most every
 * ~100 ms while they change, and once more on close. Consistency with
 * readers is a sequence lock: `seq` is odd while values are written.
 * The file is removed when the device closes; a reader ignores files
 * whose pid is no longer alive (a crashed process leaves its file behind).
 */
#ifndef SRN_RT_STATS_H
#define SRN_RT_STATS_H

#include <stdint.h>
#include <stdbool.h>
#include <netinet/in.h>

#define SRN_RT_SHM_MAGIC     0x534e5253u  /* "SRNS" little-endian */
#define SRN_RT_SHM_VERSION   1u
#define SRN_RT_SHM_NAME_LEN  32u
#define SRN_RT_SHM_HDR_SIZE  256u
#define SRN_RT_SHM_PREFIX    "softrnic."
#define SRN_RT_STATS_MAX_CTR 256

struct srn_rt_shm_hdr {
	uint32_t magic;             /* SRN_RT_SHM_MAGIC */
	uint32_t version;           /* SRN_RT_SHM_VERSION */
	uint32_t hdr_size;          /* SRN_RT_SHM_HDR_SIZE */
	uint32_t n_counters;
	int32_t  pid;
	uint32_t ip;                /* IPv4, network order */
	uint32_t names_off;         /* offset of the names table */
	uint32_t values_off;        /* offset of the values array */
	uint32_t name_len;          /* SRN_RT_SHM_NAME_LEN */
	uint16_t port;              /* UDP port (host order) */
	uint16_t reserved0;
	uint64_t guid;
	uint64_t start_ns;          /* CLOCK_REALTIME when the device opened */
	uint64_t update_ns;         /* CLOCK_REALTIME of the last publish */
	uint64_t seq;               /* sequence lock; odd while writing */
	uint8_t  gid[16];
	char     name[64];          /* device name, NUL-terminated */
	char     pcap[64];          /* capture file (truncated), "" if none */
};

/* A consistent copy of one device's counters. */
struct srn_rt_stats_snap {
	char path[256];
	char name[64];
	char pcap[64];
	int pid;
	struct in_addr ip;
	uint16_t port;
	uint8_t gid[16];
	uint64_t guid;
	uint64_t start_ns, update_ns;
	uint32_t n;
	char names[SRN_RT_STATS_MAX_CTR][SRN_RT_SHM_NAME_LEN];
	uint64_t values[SRN_RT_STATS_MAX_CTR];
};

/* Directory of the stats files ($SOFTRNIC_STATS_DIR or /dev/shm). */
const char *srn_rt_stats_dir(void);
/* Read one file. 0, or -errno (-EINVAL if not a valid stats file,
 * -ESRCH if its process is gone). */
int srn_rt_stats_read(const char *path, struct srn_rt_stats_snap *snap);
/* Scan the directory for live devices (all, or only those called `name`).
 * *out gets a heap array of snapshots (free() it; NULL if none), sorted by
 * name then pid. Returns their number, or -errno if the directory cannot be
 * read. */
int srn_rt_stats_scan(const char *name, struct srn_rt_stats_snap **out);
/* true if process pid exists */
bool srn_rt_pid_alive(int pid);

#endif /* SRN_RT_STATS_H */
