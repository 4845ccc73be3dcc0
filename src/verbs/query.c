/*
 * query.c - device, port, GID and P_Key queries.
 *
 * One port (1), link layer Ethernet, active/max MTU 4096, one GID (index 0:
 * the IPv4-mapped RoCEv2 GID ::ffff:a.b.c.d of the device's IP), one P_Key
 * (0xffff, index 0).
 */
#include <stdio.h>
#include <string.h>
#include <endian.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <arpa/inet.h>

#include "srn_verbs.h"

void srn_verbs_gid(const struct srn_vdev *vdev, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(&gid[12], &vdev->cfg.ip.s_addr, 4);   /* already network order */
}

void srn_verbs_fill_device_attr(struct srn_context *sctx, struct ibv_device_attr *a)
{
	const struct srn_dev_cfg *l = &sctx->limits;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "softrnic 0.1");
	a->node_guid = htobe64(sctx->vdev->cfg.guid);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xfffff000;     /* 4 KiB and up */
	/* IBTA A3.3.1: 0xFFFFFF is "no IEEE OUI assigned", what Soft-RoCE
	 * reports; programs that identify a device want non-zero values */
	a->vendor_id = SRN_VERBS_VENDOR_ID;
	a->vendor_part_id = SRN_VERBS_VENDOR_PART_ID;
	a->hw_ver = SRN_VERBS_HW_VER;
	a->max_qp = (int)l->max_qp;
	a->max_qp_wr = (int)l->max_qp_wr;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_N_NOTIFY_CQ |
			      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = (int)l->max_sge;
	a->max_sge_rd = (int)l->max_sge;
	a->max_cq = (int)l->max_qp * 2;
	a->max_cqe = (int)l->max_cqe;
	a->max_mr = (int)l->max_mr;
	a->max_pd = 0x10000;
	a->max_qp_rd_atom = (int)l->max_rd_atomic;
	a->max_ee_rd_atom = 0;
	a->max_res_rd_atom = (int)(l->max_rd_atomic * l->max_qp);
	a->max_qp_init_rd_atom = (int)l->max_rd_atomic;
	a->max_ee_init_rd_atom = 0;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ee = 0;
	a->max_rdd = 0;
	a->max_mw = (int)l->max_mw;
	a->max_raw_ipv6_qp = 0;
	a->max_raw_ethy_qp = 0;
	a->max_mcast_grp = 0;
	a->max_mcast_qp_attach = 0;
	a->max_total_mcast_qp_attach = 0;
	a->max_ah = 0x10000;
	a->max_fmr = 0;
	a->max_map_per_fmr = 0;
	a->max_srq = (int)l->max_qp;
	a->max_srq_wr = (int)l->max_qp_wr;
	a->max_srq_sge = (int)l->max_sge;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

SRN_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	srn_verbs_fill_device_attr(to_sctx(context), device_attr);
	if (to_sctx(context)->remote)
		srn_remote_device_attr(to_sctx(context), device_attr);
	return 0;
}

int srn_verbs_query_device_compat(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	return ibv_query_device(ctx, a);
}

int srn_verbs_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (in && in->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	srn_verbs_fill_device_attr(to_sctx(ctx), &a.orig_attr);
	a.device_cap_flags_ex = (uint64_t)a.orig_attr.device_cap_flags;
	a.phys_port_cnt_ex = 1;
	/* completion timestamps in the device clock: ns, all 64 bits */
	a.completion_timestamp_mask = UINT64_MAX;
	a.hca_core_clock = SRN_VERBS_CORE_CLOCK_KHZ;
	/* no ODP, TSO, RSS, WQs, packet pacing, tag matching, CQ moderation,
	 * device memory: all-zero capabilities */
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

static void fill_port_attr(struct srn_context *sctx, struct ibv_port_attr *p)
{
	(void)sctx;
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = IBV_MTU_4096;
	p->gid_tbl_len = 1;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	p->max_msg_sz = 1u << 31;
	p->bad_pkey_cntr = 0;
	p->qkey_viol_cntr = 0;
	p->pkey_tbl_len = 1;
	p->lid = 0;                       /* RoCE: no LIDs */
	p->sm_lid = 0;
	p->lmc = 0;
	p->max_vl_num = 1;
	p->sm_sl = 0;
	p->subnet_timeout = 0;
	p->init_type_reply = 0;
	p->active_width = 1;              /* 1X */
	p->active_speed = 32;             /* EDR: 1X EDR = 25 Gb/s */
	p->phys_state = 5;                /* LinkUp */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
	p->flags = 0;
	p->port_cap_flags2 = 0;
}

int srn_verbs_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa, size_t len)
{
	struct ibv_port_attr p;

	if (port != SRN_VERBS_PORT)
		return EINVAL;
	fill_port_attr(to_sctx(ctx), &p);
	memcpy(pa, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

/* The pre-2017 binary entry point: its struct ends after link_layer and one
 * reserved byte (the fields before port_cap_flags2). */
SRN_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			      struct _compat_ibv_port_attr *port_attr)
{
	return srn_verbs_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
				    offsetof(struct ibv_port_attr, port_cap_flags2));
}

int srn_verbs_query_port_compat(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *pa)
{
	return ibv_query_port(ctx, port, pa);
}

/* ifindex of the netdev carrying the device's IP (0 if none) */
static uint32_t ip_ifindex(struct in_addr ip)
{
	struct ifaddrs *ifa, *i;
	uint32_t idx = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next) {
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == ip.s_addr) {
			idx = if_nametoindex(i->ifa_name);
			break;
		}
	}
	freeifaddrs(ifa);
	return idx;
}

static void fill_gid_entry(struct srn_context *sctx, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	srn_verbs_gid(sctx->vdev, e->gid.raw);
	e->gid_index = 0;
	e->port_num = SRN_VERBS_PORT;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = ip_ifindex(sctx->vdev->cfg.ip);
}

SRN_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				 uint32_t gid_index, struct ibv_gid_entry *entry,
				 uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;

	if (flags || port_num != SRN_VERBS_PORT || entry_size < sizeof(e))
		return EINVAL;
	if (gid_index != 0)
		return ENODATA;   /* rdma-core: no such entry (table holds 1 GID) */
	fill_gid_entry(to_sctx(context), &e);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

SRN_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					struct ibv_gid_entry *entries, size_t max_entries,
					uint32_t flags, size_t entry_size)
{
	if (flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	if (max_entries < 1)
		return -EINVAL;
	fill_gid_entry(to_sctx(context), &entries[0]);
	return 1;
}

SRN_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			     int index, union ibv_gid *gid)
{
	if (port_num != SRN_VERBS_PORT || index < 0) {
		errno = EINVAL;
		return -1;
	}
	if (index > 0) {
		/* rdma-core: an empty GID table entry reads as all zero */
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	srn_verbs_gid(to_sctx(context)->vdev, gid->raw);
	return 0;
}

/*
 * rdma-core's provider-ABI helper (IBVERBS_PRIVATE_34), used by ibv_devinfo.
 * Its type is rdma-core's enum ibv_gid_type_sysfs (driver.h, not installed):
 * 0 = IB/RoCE v1, 1 = RoCE v2. Returns 0, or -1 with errno for no such GID.
 */
enum { SRN_GID_TYPE_SYSFS_IB_ROCE_V1 = 0, SRN_GID_TYPE_SYSFS_ROCE_V2 = 1 };
SRN_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				  unsigned int index, int *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type)
{
	(void)context;
	if (port_num != SRN_VERBS_PORT || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*type = SRN_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

SRN_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			      int index, __be16 *pkey)
{
	(void)context;
	if (port_num != SRN_VERBS_PORT || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff);
	return 0;
}

SRN_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;

	if (ibv_query_pkey(context, port_num, 0, &p))
		return -1;
	if (p == pkey)   /* exact match, as rdma-core compares */
		return 0;
	return -1;
}
