/*
 * frame.c - wrap the core's RoCEv2 UDP payload and its srn_pkt_meta into a
 * whole IPv4+UDP packet for the switch, and back. The header is the one the
 * kernel sends for the real runtime (src/runtime/udp.c, pcap.c): IHL 5,
 * TOS = DSCP|ECN, DF set, Identification from the meta (0), TTL, protocol
 * UDP, header checksum (srn_fabric_ipv4_csum); UDP checksum 0 (RoCEv2
 * allows it). The payload is written by the core in place after
 * SRN_SIM_HDR bytes of headroom, so wrapping copies nothing.
 */
#include <string.h>

#include "sim_int.h"

size_t srn_sim_frame_wrap(uint8_t *pkt, size_t len, const struct srn_pkt_meta *m)
{
	uint8_t *ip = pkt, *udp = pkt + 20;
	size_t total = SRN_SIM_HDR + len;
	ip[0] = 0x45;
	ip[1] = (uint8_t)(((m->dscp & 0x3f) << 2) | (m->ecn & 3));
	srn_put16(ip + 2, (uint16_t)total);
	srn_put16(ip + 4, m->ip_id);
	srn_put16(ip + 6, 0x4000);                 /* DF */
	ip[8] = m->ttl ? m->ttl : 64;
	ip[9] = 17;
	srn_put16(ip + 10, 0);
	memcpy(ip + 12, m->src_gid + 12, 4);
	memcpy(ip + 16, m->dst_gid + 12, 4);
	srn_put16(ip + 10, srn_fabric_ipv4_csum(ip, 20));
	srn_put16(udp, m->sport);
	srn_put16(udp + 2, m->dport);
	srn_put16(udp + 4, (uint16_t)(8 + len));
	srn_put16(udp + 6, 0);
	return total;
}

static void gid_of(uint8_t gid[16], const uint8_t *v4)
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, v4, 4);
}

bool srn_sim_frame_unwrap(const uint8_t *pkt, size_t len, struct srn_pkt_meta *m,
			  const uint8_t **payload, size_t *plen)
{
	if (len < SRN_SIM_HDR || (pkt[0] >> 4) != 4 || pkt[9] != 17)
		return false;
	size_t ihl = (size_t)(pkt[0] & 0x0f) * 4;
	if (ihl < 20 || ihl + 8 > len || srn_get16(pkt + 2) != len)
		return false;
	const uint8_t *udp = pkt + ihl;
	size_t ulen = srn_get16(udp + 4);
	if (ulen < 8 || ihl + ulen != len)
		return false;
	gid_of(m->src_gid, pkt + 12);
	gid_of(m->dst_gid, pkt + 16);
	m->sport = srn_get16(udp);
	m->dport = srn_get16(udp + 2);
	m->ecn = pkt[1] & 3;
	m->dscp = pkt[1] >> 2;
	m->ttl = pkt[8];
	m->ip_id = srn_get16(pkt + 4);
	m->ip_id_exact = true;
	*payload = udp + 8;
	*plen = ulen - 8;
	return true;
}
