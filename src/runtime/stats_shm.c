/*
 * stats_shm.c - live counters in shared memory (layout in srn_rt_stats.h).
 *
 * Writer: one file per open runtime device, mmap'ed; srn_rt_shm_publish()
 * copies the values under a sequence lock (seq odd while writing).
 * Reader: maps nothing; it pread()s the file and retries until it sees the
 * same even seq before and after copying the values.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "rt_internal.h"

_Static_assert(sizeof(struct srn_rt_shm_hdr) <= SRN_RT_SHM_HDR_SIZE, "shm header too large");
_Static_assert(offsetof(struct srn_rt_shm_hdr, seq) % 8 == 0, "seq must be 8-aligned");

struct srn_rt_shm_writer {
	char path[512];
	void *map;
	size_t size;
	struct srn_rt_shm_hdr *hdr;
	uint64_t *values;
	uint32_t n;
};

const char *srn_rt_stats_dir(void)
{
	const char *d = getenv("SOFTRNIC_STATS_DIR");
	return d && *d ? d : "/dev/shm";
}

bool srn_rt_pid_alive(int pid)
{
	if (pid <= 0)
		return false;
	return kill(pid, 0) == 0 || errno == EPERM;
}

struct srn_rt_shm_writer *srn_rt_shm_create(const struct srn_rt_devcfg *cfg,
					    const char *const *names, uint32_t n)
{
	struct srn_rt_shm_writer *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	if (n > SRN_RT_STATS_MAX_CTR)
		n = SRN_RT_STATS_MAX_CTR;
	w->n = n;
	int len = snprintf(w->path, sizeof w->path, "%s/" SRN_RT_SHM_PREFIX "%s.%d",
			   srn_rt_stats_dir(), cfg->name, (int)getpid());
	if (len < 0 || (size_t)len >= sizeof w->path) {
		free(w);
		return NULL;
	}
	uint32_t names_off = SRN_RT_SHM_HDR_SIZE;
	uint32_t values_off = names_off + n * SRN_RT_SHM_NAME_LEN;
	values_off = (values_off + 7u) & ~7u;
	w->size = values_off + (size_t)n * sizeof(uint64_t);

	/* O_TRUNC: a file left by an earlier process with our pid is stale */
	int fd = open(w->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		fprintf(stderr, "softrnic: stats %s: %s (counters not published)\n", w->path,
			strerror(errno));
		free(w);
		return NULL;
	}
	if (ftruncate(fd, (off_t)w->size) < 0) {
		fprintf(stderr, "softrnic: stats %s: %s\n", w->path, strerror(errno));
		goto fail;
	}
	w->map = mmap(NULL, w->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w->map == MAP_FAILED) {
		fprintf(stderr, "softrnic: stats %s: mmap: %s\n", w->path, strerror(errno));
		goto fail;
	}
	close(fd);
	w->hdr = w->map;
	w->values = (uint64_t *)((uint8_t *)w->map + values_off);

	char *nt = (char *)w->map + names_off;
	for (uint32_t i = 0; i < n; i++)
		snprintf(nt + (size_t)i * SRN_RT_SHM_NAME_LEN, SRN_RT_SHM_NAME_LEN, "%s",
			 names[i] ? names[i] : "");
	struct srn_rt_shm_hdr *h = w->hdr;
	h->version = SRN_RT_SHM_VERSION;
	h->hdr_size = SRN_RT_SHM_HDR_SIZE;
	h->n_counters = n;
	h->pid = (int32_t)getpid();
	h->ip = cfg->ip.s_addr;
	h->port = cfg->port;
	h->names_off = names_off;
	h->values_off = values_off;
	h->name_len = SRN_RT_SHM_NAME_LEN;
	h->guid = cfg->guid;
	h->start_ns = srn_rt_realtime_ns();
	h->update_ns = h->start_ns;
	srn_rt_gid_from_ip(h->gid, cfg->ip);
	snprintf(h->name, sizeof h->name, "%s", cfg->name);
	/* keep the tail of a long path: it names the file */
	size_t pl = strlen(cfg->pcap_path);
	const char *pp = cfg->pcap_path + (pl >= sizeof h->pcap ? pl - (sizeof h->pcap - 1) : 0);
	memcpy(h->pcap, pp, strlen(pp) + 1);
	/* magic last: a reader never sees a half-initialised header as valid */
	__atomic_store_n(&h->magic, SRN_RT_SHM_MAGIC, __ATOMIC_RELEASE);
	return w;
fail:
	close(fd);
	unlink(w->path);
	free(w);
	return NULL;
}

const char *srn_rt_shm_path(const struct srn_rt_shm_writer *w)
{
	return w ? w->path : NULL;
}

void srn_rt_shm_publish(struct srn_rt_shm_writer *w, const uint64_t *values, uint32_t n)
{
	if (!w)
		return;
	if (n > w->n)
		n = w->n;
	struct srn_rt_shm_hdr *h = w->hdr;
	uint64_t s = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&h->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (uint32_t i = 0; i < n; i++)
		__atomic_store_n(&w->values[i], values[i], __ATOMIC_RELAXED);
	__atomic_store_n(&h->update_ns, srn_rt_realtime_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&h->seq, s + 2, __ATOMIC_RELEASE);
}

void srn_rt_shm_destroy(struct srn_rt_shm_writer *w)
{
	if (!w)
		return;
	unlink(w->path);
	munmap(w->map, w->size);
	free(w);
}

/* ---- reader ---------------------------------------------------------- */

int srn_rt_stats_read(const char *path, struct srn_rt_stats_snap *snap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct stat st;
	int ret = -EINVAL;
	void *map = MAP_FAILED;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)SRN_RT_SHM_HDR_SIZE)
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	const struct srn_rt_shm_hdr *h = map;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SRN_RT_SHM_MAGIC ||
	    h->version != SRN_RT_SHM_VERSION || h->hdr_size != SRN_RT_SHM_HDR_SIZE ||
	    h->name_len != SRN_RT_SHM_NAME_LEN)
		goto out;
	uint32_t n = h->n_counters;
	if (n > SRN_RT_STATS_MAX_CTR || h->names_off < SRN_RT_SHM_HDR_SIZE ||
	    (uint64_t)h->names_off + (uint64_t)n * SRN_RT_SHM_NAME_LEN > (uint64_t)st.st_size ||
	    h->values_off % 8 ||
	    (uint64_t)h->values_off + (uint64_t)n * 8 > (uint64_t)st.st_size)
		goto out;
	if (!srn_rt_pid_alive(h->pid)) {
		ret = -ESRCH;
		goto out;
	}
	memset(snap, 0, sizeof *snap);
	snprintf(snap->path, sizeof snap->path, "%s", path);
	memcpy(snap->name, h->name, sizeof snap->name - 1);
	memcpy(snap->pcap, h->pcap, sizeof snap->pcap - 1);
	snap->pid = h->pid;
	snap->ip.s_addr = h->ip;
	snap->port = h->port;
	memcpy(snap->gid, h->gid, 16);
	snap->guid = h->guid;
	snap->start_ns = h->start_ns;
	snap->n = n;
	const char *nt = (const char *)map + h->names_off;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(snap->names[i], nt + (size_t)i * SRN_RT_SHM_NAME_LEN, SRN_RT_SHM_NAME_LEN);
		snap->names[i][SRN_RT_SHM_NAME_LEN - 1] = 0;
	}
	const uint64_t *vals = (const uint64_t *)((const uint8_t *)map + h->values_off);
	for (int tries = 0;; tries++) {
		uint64_t s1 = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (!(s1 & 1)) {
			for (uint32_t i = 0; i < n; i++)
				snap->values[i] = __atomic_load_n(&vals[i], __ATOMIC_RELAXED);
			snap->update_ns = __atomic_load_n(&h->update_ns, __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) == s1)
				break;
		}
		if (tries > 1000) {      /* writer died mid-update: take what is there */
			break;
		}
		usleep(tries < 10 ? 0 : 100);
	}
	ret = 0;
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	close(fd);
	return ret;
}

static int snap_cmp(const void *a, const void *b)
{
	const struct srn_rt_stats_snap *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

int srn_rt_stats_scan(const char *name, struct srn_rt_stats_snap **out)
{
	const char *dir = srn_rt_stats_dir();
	*out = NULL;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct srn_rt_stats_snap *arr = NULL, *tmp = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	char path[1024];
	size_t plen = strlen(SRN_RT_SHM_PREFIX);

	tmp = malloc(sizeof *tmp);
	if (!tmp) {
		closedir(d);
		return -ENOMEM;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, SRN_RT_SHM_PREFIX, plen) != 0)
			continue;
		if (name) {
			size_t nl = strlen(name);
			if (strncmp(e->d_name + plen, name, nl) != 0 || e->d_name[plen + nl] != '.')
				continue;
		}
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (srn_rt_stats_read(path, tmp) < 0)
			continue;          /* not ours, malformed, or its process is gone */
		if (name && strcmp(tmp->name, name) != 0)
			continue;
		if (n == cap) {
			int ncap = cap ? cap * 2 : 4;
			struct srn_rt_stats_snap *na = realloc(arr, (size_t)ncap * sizeof *arr);
			if (!na) {
				free(arr);
				free(tmp);
				closedir(d);
				return -ENOMEM;
			}
			arr = na;
			cap = ncap;
		}
		arr[n++] = *tmp;
	}
	free(tmp);
	closedir(d);
	if (n > 1)
		qsort(arr, (size_t)n, sizeof *arr, snap_cmp);
	*out = arr;
	return n;
}
