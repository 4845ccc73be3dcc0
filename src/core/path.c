/*
 * path.c - the addressing of a packet from a QP to a peer: L3 addresses,
 * the flow's L4 token (W-02: one of the port's tokens chosen by a hash of
 * the two QPNs, so every packet of a flow takes one ECMP path), ECT(0)
 * (W-03), DSCP and hop limit from the address vector.
 */
#include "core_int.h"

static uint32_t flow_hash(uint32_t a, uint32_t b)
{
	uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u + (a << 6) + (a >> 2));
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

void srn_path_meta(const struct srn_qp *qp, const struct srn_ah_attr *ah, uint32_t dqpn,
		   struct srn_pkt_meta *meta)
{
	const struct srn_dev *dev = qp->dev;
	memset(meta, 0, sizeof(*meta));
	memcpy(meta->src_gid, dev->cfg.gid, 16);
	memcpy(meta->dst_gid, ah->dgid, 16);
	uint32_t h = flow_hash(qp->qpn, dqpn);
	if (dev->cfg.n_l4 && dev->cfg.l4)
		meta->l4 = dev->cfg.l4[h % dev->cfg.n_l4];
	else
		srn_roce_l4_default(&meta->l4, h);
	meta->l4.ip_id = 0;
	meta->l4.ip_id_exact = false;
	meta->ecn = 2;                                /* ECT(0) (W-03) */
	meta->dscp = (uint8_t)(ah->traffic_class >> 2);
	meta->ttl = ah->hop_limit ? ah->hop_limit : 64;
}
