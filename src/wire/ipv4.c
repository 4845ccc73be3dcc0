/*
 * ipv4.c - the IPv4 + UDP header of a RoCEv2 datagram, written once for the
 * whole project: the runtime's capture and fabric backend, the fabric
 * switch, the simulator and the core's UD GRH area all use it.
 *
 * Written exactly as Linux sends a softrnic datagram: version 4, IHL 5,
 * TOS = DSCP|ECN, total length, identification and DF from the srn_ip_info
 * (every ICRC is computed for ID 0 + DF, icrc.c), TTL (64 unless another is
 * asked for), protocol 17, a correct header checksum; UDP ports and length
 * with checksum 0 (RoCEv2 allows it: the ICRC protects the packet).
 *
 * The parser trusts nothing from the wire: every length is bound-checked
 * against the datagram, and it says why it rejects a packet.
 */
#include "srn_wire.h"

#include <string.h>

uint16_t srn_ipv4_csum(const uint8_t *hdr, size_t len)
{
	uint32_t sum = 0;
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)srn_get16(hdr + i);
	if (len & 1)
		sum += (uint32_t)hdr[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void srn_ipv4_write(uint8_t out[SRN_IPV4_HDR_LEN], const struct srn_ip_info *ip, uint16_t total_len)
{
	out[0] = 0x45;
	out[1] = ip->tos;
	srn_put16(out + 2, total_len);
	srn_put16(out + 4, ip->ip_id);
	srn_put16(out + 6, ip->df ? 0x4000 : 0);
	out[8] = ip->ttl ? ip->ttl : 64;
	out[9] = 17;
	srn_put16(out + 10, 0);
	memcpy(out + 12, ip->src + 12, 4);
	memcpy(out + 16, ip->dst + 12, 4);
	srn_put16(out + 10, srn_ipv4_csum(out, SRN_IPV4_HDR_LEN));
}

size_t srn_ipv4_udp_write(uint8_t *out, size_t cap, const struct srn_ip_info *ip, size_t paylen)
{
	if (cap < SRN_IPV4_UDP_HDR_LEN || SRN_IPV4_UDP_HDR_LEN + paylen > 0xffff)
		return 0;
	srn_ipv4_write(out, ip, (uint16_t)(SRN_IPV4_UDP_HDR_LEN + paylen));
	uint8_t *udp = out + SRN_IPV4_HDR_LEN;
	srn_put16(udp, ip->sport);
	srn_put16(udp + 2, ip->dport);
	srn_put16(udp + 4, (uint16_t)(8 + paylen));
	srn_put16(udp + 6, 0);
	return SRN_IPV4_UDP_HDR_LEN;
}

int srn_ipv4_parse(const uint8_t *d, size_t len, struct srn_ip_info *ip, size_t *ihl_out)
{
	if (len < SRN_IPV4_HDR_LEN)
		return SRN_IPV4_ETRUNC;
	if ((d[0] >> 4) != 4)
		return SRN_IPV4_EVERSION;
	size_t ihl = (size_t)(d[0] & 0x0f) * 4;
	if (ihl < SRN_IPV4_HDR_LEN || ihl > len)
		return SRN_IPV4_EIHL;
	if (srn_get16(d + 2) != len)               /* exactly one packet per datagram */
		return SRN_IPV4_ELEN;
	if (srn_ipv4_csum(d, ihl) != 0)
		return SRN_IPV4_ECSUM;
	memset(ip, 0, sizeof(*ip));
	ip->src[10] = ip->src[11] = 0xff;
	memcpy(ip->src + 12, d + 12, 4);
	ip->dst[10] = ip->dst[11] = 0xff;
	memcpy(ip->dst + 12, d + 16, 4);
	ip->tos = d[1];
	ip->ttl = d[8];
	ip->ip_id = srn_get16(d + 4);
	ip->df = (srn_get16(d + 6) & 0x4000) != 0;
	*ihl_out = ihl;
	return d[9];
}

int srn_ipv4_udp_parse(const uint8_t *d, size_t len, struct srn_ip_info *ip, size_t *off)
{
	size_t ihl = 0;
	int proto = srn_ipv4_parse(d, len, ip, &ihl);
	if (proto < 0)
		return proto;
	if (proto != 17)
		return SRN_IPV4_EPROTO;
	if (srn_get16(d + 6) & 0x3fff)             /* MF or a fragment offset */
		return SRN_IPV4_EFRAG;
	if (len < ihl + 8)
		return SRN_IPV4_ETRUNC;
	const uint8_t *udp = d + ihl;
	if (srn_get16(udp + 4) != len - ihl)
		return SRN_IPV4_EUDPLEN;
	ip->sport = srn_get16(udp);
	ip->dport = srn_get16(udp + 2);
	*off = ihl + 8;
	return (int)(len - ihl - 8);
}
