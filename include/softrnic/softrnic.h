/*
 * softrnic.h - softrnic's extensions to the verbs API (V-05).
 *
 * In the way <infiniband/mlx5dv.h> extends verbs for ConnectX devices, this
 * header reaches what softrnic offers beyond <infiniband/verbs.h>. The
 * functions live in softrnic's libibverbs.so.1 under the symbol version
 * SOFTRNIC_1.0; a program that uses them runs only on softrnic's library
 * (check softrnic_is_device() before calling the others).
 *
 *     #include <infiniband/verbs.h>
 *     #include <softrnic/softrnic.h>
 *
 *     if (softrnic_is_device(ctx->device)) {
 *             unsigned n = softrnic_num_counters();
 *             uint64_t v[n];
 *             if (!softrnic_query_counters(ctx, v, n))
 *                     for (unsigned i = 0; i < n; i++)
 *                             printf("%s %llu\n", softrnic_counter_name(i),
 *                                    (unsigned long long)v[i]);
 *     }
 *
 * Conventions are those of verbs: functions returning int return 0 or a
 * positive errno value.
 */
#ifndef SOFTRNIC_SOFTRNIC_H
#define SOFTRNIC_SOFTRNIC_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * softrnic_is_device - whether a device of ibv_get_device_list() is a
 * softrnic device.
 * @device: a device from ibv_get_device_list() (not NULL)
 *
 * Returns true for softrnic devices, false for any other device.
 */
bool softrnic_is_device(struct ibv_device *device);

/**
 * softrnic_num_counters - number of device counters.
 *
 * The counters are the NIC's statistics (packets and bytes sent and
 * received, retransmissions, NAKs sent and received by kind, duplicates,
 * drops by reason, completion errors, ...). The number and the order are
 * fixed for a given library build; use softrnic_counter_name() to find a
 * counter by name rather than relying on an index.
 */
unsigned softrnic_num_counters(void);

/**
 * softrnic_counter_name - name of counter @i.
 * @i: counter index, 0 <= i < softrnic_num_counters()
 *
 * Returns a lower-case name such as "tx_pkts" or "retransmit_pkts" (a
 * static string), or NULL if @i is out of range.
 */
const char *softrnic_counter_name(unsigned i);

/**
 * softrnic_query_counters - read the device's counters.
 * @context: an open softrnic device context
 * @values:  array receiving the counter values
 * @n:       number of entries of @values; the first min(n,
 *           softrnic_num_counters()) counters are written
 *
 * The counters are per device and count from the moment the device was
 * first opened in this process; all contexts of one device in a process
 * see the same counters. The snapshot is consistent (taken under the
 * device lock).
 *
 * Returns 0, EINVAL if @values is NULL while @n > 0, or ENODEV if @context
 * is not a softrnic context.
 */
int softrnic_query_counters(struct ibv_context *context, uint64_t *values, unsigned n);

/**
 * softrnic_device_ip - the IPv4 address of a device.
 * @context: an open softrnic device context
 * @ip:      receives the address (network byte order, as in struct in_addr)
 *
 * This is the address the device sends from and receives on (UDP port
 * 4791); GID 0 of port 1 is its IPv4-mapped form ::ffff:a.b.c.d.
 *
 * Returns 0, or ENODEV if @context is not a softrnic context.
 */
int softrnic_device_ip(struct ibv_context *context, struct in_addr *ip);

/*
 * Parent domains (ibv_alloc_parent_domain with
 * IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS): the resource_type values
 * softrnic passes to the alloc/free callbacks. The upper 32 bits (the
 * rdma_driver_id of a kernel provider) are 0: softrnic has no kernel
 * driver. The callbacks allocate the library's per-object memory of QPs and
 * CQs created with the parent domain; the queues' rings are the device's
 * (docs/verbs.md "Parent domains").
 */
enum {
	SOFTRNIC_RES_TYPE_QP     = 1,   /* a QP's object */
	SOFTRNIC_RES_TYPE_QP_BUF = 2,   /* a QP's ibv_wr_* work request buffers */
	SOFTRNIC_RES_TYPE_CQ     = 3,   /* a CQ's object (with its poll batch) */
};

#ifdef __cplusplus
}
#endif

#endif /* SOFTRNIC_SOFTRNIC_H */
