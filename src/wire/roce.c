/*
 * roce.c - RoCEv2 encapsulation and framing: the only code that turns a
 * packet's addressing (struct srn_pkt_meta) into the ICRC pseudo-header,
 * and the finishers every packet builder of softrnic calls.
 *
 *   request / response packets: srn_pkt_write_hdrs + payload + srn_roce_finish
 *   CNP:                        srn_roce_cnp
 *   RTT probes (0xC0/0xC1):     body + srn_roce_vendor
 *   receive:                    srn_roce_icrc_verify
 *
 * The ICRC is computed for the addressing in the meta: IPv4 ID from the L4
 * token (0 for a datagram sent alone; the runtime rewrites a GSO segment's
 * ICRC for its ID, icrc_id.c), DF set, the UDP ports of the L4 token.
 */
#include "srn_wire.h"

#include <string.h>

void srn_roce_ip_info(struct srn_ip_info *ip, const struct srn_pkt_meta *m)
{
	memset(ip, 0, sizeof(*ip));
	memcpy(ip->src, m->src_gid, 16);
	memcpy(ip->dst, m->dst_gid, 16);
	ip->ip_id = m->l4.ip_id;
	ip->df = true;
	ip->sport = m->l4.src;
	ip->dport = m->l4.dst;
	ip->ttl = m->ttl ? m->ttl : 64;
	ip->tos = (uint8_t)(((m->dscp & 0x3f) << 2) | (m->ecn & 3));
}

void srn_roce_meta_from_ip(struct srn_pkt_meta *m, const struct srn_ip_info *ip, bool id_exact)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->src_gid, ip->src, 16);
	memcpy(m->dst_gid, ip->dst, 16);
	m->ecn = ip->tos & 3;
	m->dscp = (uint8_t)(ip->tos >> 2);
	m->ttl = ip->ttl;
	m->l4.src = ip->sport;
	m->l4.dst = ip->dport;
	m->l4.ip_id = ip->ip_id;
	m->l4.ip_id_exact = id_exact;
}

void srn_roce_l4_default(struct srn_l4 *l4, uint32_t flow_hash)
{
	memset(l4, 0, sizeof(*l4));
	l4->src = (uint16_t)(0xC000u | (flow_hash & 0x3fffu));
	l4->dst = SRN_ROCEV2_UDP_PORT;
}

int srn_roce_finish(uint8_t *buf, size_t cap, size_t hdr_len, uint32_t paylen,
		    const struct srn_pkt_meta *m)
{
	struct srn_ip_info ip;
	srn_roce_ip_info(&ip, m);
	return srn_pkt_finish(buf, cap, hdr_len, paylen, &ip);
}

int srn_roce_cnp(uint8_t *buf, size_t cap, uint32_t dqpn, const struct srn_pkt_meta *m)
{
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	p.opcode = SRN_OP_CNP;
	p.pkey = SRN_DEFAULT_PKEY;
	p.becn = true;
	p.dqpn = dqpn;
	int h = srn_pkt_write_hdrs(buf, cap, &p);   /* BTH + the 16 reserved bytes */
	if (h < 0)
		return h;
	return srn_roce_finish(buf, cap, (size_t)h, 0, m);
}

int srn_roce_vendor(uint8_t *buf, size_t cap, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		    size_t body_len, const struct srn_pkt_meta *m)
{
	size_t len = SRN_BTH_LEN + body_len + SRN_ICRC_LEN;
	if (opcode < 0xC0 || (body_len & 3u))
		return SRN_WIRE_EOPCODE;
	if (len > cap)
		return SRN_WIRE_ETRUNC;
	if (len > SRN_PKT_MAX_LEN)
		return SRN_WIRE_ELEN;
	memset(buf, 0, SRN_BTH_LEN);
	buf[0] = opcode;
	srn_put16(buf + 2, SRN_DEFAULT_PKEY);
	srn_put24(buf + 5, dqpn & SRN_QPN_MASK);
	srn_put24(buf + 9, psn & SRN_PSN_MASK);
	struct srn_ip_info ip;
	srn_roce_ip_info(&ip, m);
	srn_icrc_store(&ip, buf, len);
	return (int)len;
}

int srn_roce_icrc_verify(const struct srn_pkt_meta *m, const uint8_t *pkt, size_t len,
			 uint16_t *id_out)
{
	struct srn_ip_info ip;
	srn_roce_ip_info(&ip, m);
	return srn_icrc_check_ids(&ip, pkt, len, m->l4.ip_id_exact ? 1 : SRN_GSO_ID_SPAN, id_out);
}
