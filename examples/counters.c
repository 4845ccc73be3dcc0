/*
 * counters.c - an example of softrnic's extension API (softrnic(7)): list
 * the verbs devices, and for each softrnic device print its IPv4 address
 * and the counters that are not zero.
 *
 * Build against an installed softrnic and run:
 *
 *     cc $(pkg-config --cflags softrnic) -o counters counters.c \
 *        $(pkg-config --libs softrnic)
 *     softrnic run --name dev0 --ip 127.0.0.5 -- ./counters
 *
 * (pkg-config's rpath makes ./counters load softrnic's libibverbs.so.1 also
 * without softrnic run; it then sees the default device softrnic0.)
 *
 * Exit status: 0 if at least one softrnic device was found and read, 1 if
 * not.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>
#include <softrnic/softrnic.h>

static int show(struct ibv_device *dev)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	if (!ctx) {
		perror("ibv_open_device");
		return -1;
	}
	int rc = -1;
	struct in_addr ip;
	unsigned n = softrnic_num_counters();
	uint64_t *v = calloc(n ? n : 1, sizeof(*v));
	if (v && softrnic_device_ip(ctx, &ip) == 0 && softrnic_query_counters(ctx, v, n) == 0) {
		char a[INET_ADDRSTRLEN];
		printf("%s: softrnic device, address %s, %u counters\n", ibv_get_device_name(dev),
		       inet_ntop(AF_INET, &ip, a, sizeof a), n);
		for (unsigned i = 0; i < n; i++)
			if (v[i])
				printf("  %-24s %llu\n", softrnic_counter_name(i),
				       (unsigned long long)v[i]);
		rc = 0;
	}
	free(v);
	ibv_close_device(ctx);
	return rc;
}

int main(void)
{
	int num, found = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	if (!list) {
		perror("ibv_get_device_list");
		return 1;
	}
	for (int i = 0; i < num; i++) {
		if (!softrnic_is_device(list[i])) {
			printf("%s: not a softrnic device\n", ibv_get_device_name(list[i]));
			continue;
		}
		if (show(list[i]) == 0)
			found++;
	}
	ibv_free_device_list(list);
	return found ? 0 : 1;
}
