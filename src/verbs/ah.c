/*
 * ah.c - address handles (UD destinations) and the helpers that build one
 * from a received completion. RoCE addresses are always global (GRH).
 *
 * The GRH area of a UD receive (first 40 bytes of the buffer) holds, for
 * RoCEv2 over IPv4, 20 unused bytes followed by the IPv4 header (bytes
 * 20..39); for IPv6 it is the IPv6 header itself (same layout as the IB GRH).
 */
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "srn_verbs.h"

SRN_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct srn_vah *a;
	struct srn_ah_attr conv;
	int rc = srn_verbs_ah_convert(pd->context, attr, &conv);

	if (!rc && to_sctx(pd->context)->remote)
		rc = EOPNOTSUPP;          /* an imported context of another process: no UD */
	if (rc) {
		errno = rc;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->attr = conv;
	a->pd = to_spd(pd);
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->ah.handle = 0;
	__atomic_add_fetch(&a->pd->users, 1, __ATOMIC_ACQ_REL);
	return &a->ah;
}

SRN_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct srn_vah *a = to_sah(ah);

	__atomic_sub_fetch(&a->pd->users, 1, __ATOMIC_ACQ_REL);
	free(a);
	return 0;
}

SRN_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				   struct ibv_wc *wc, struct ibv_grh *grh,
				   struct ibv_ah_attr *ah_attr)
{
	uint8_t ours[16], want_sgid[16];
	const uint8_t *g = (const uint8_t *)grh;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;

	ah_attr->is_global = 1;
	ah_attr->grh.hop_limit = 0xff;
	if ((g[20] >> 4) == 4) {
		/* RoCEv2 over IPv4: the IPv4 header sits at bytes 20..39 */
		const uint8_t *ip = g + 20;

		memset(ah_attr->grh.dgid.raw, 0, 16);
		ah_attr->grh.dgid.raw[10] = 0xff;
		ah_attr->grh.dgid.raw[11] = 0xff;
		memcpy(&ah_attr->grh.dgid.raw[12], ip + 12, 4);    /* source address */
		memset(want_sgid, 0, 16);
		want_sgid[10] = 0xff;
		want_sgid[11] = 0xff;
		memcpy(&want_sgid[12], ip + 16, 4);                /* destination address */
		ah_attr->grh.traffic_class = ip[1];
		ah_attr->grh.flow_label = 0;
	} else {
		uint32_t fc = be32toh(grh->version_tclass_flow);

		ah_attr->grh.dgid = grh->sgid;
		memcpy(want_sgid, grh->dgid.raw, 16);
		ah_attr->grh.flow_label = fc & 0xfffff;
		ah_attr->grh.traffic_class = (fc >> 20) & 0xff;
	}
	srn_verbs_gid(to_sctx(context)->vdev, ours);
	if (port_num != SRN_VERBS_PORT || memcmp(ours, want_sgid, 16)) {
		errno = ENOENT;    /* the destination GID is not in our GID table */
		return -1;
	}
	ah_attr->grh.sgid_index = 0;
	return 0;
}

SRN_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					       struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
