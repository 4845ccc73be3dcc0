/*
 * ipv4.c - the runtime's IPv4 + UDP header code, written once and used by
 * both places that need the header the kernel would put on a RoCEv2 packet:
 *
 *   pcap.c   the capture synthesises it in front of every packet;
 *   udp.c    the fabric backend (SOFTRNIC_FABRIC) sends it inside a UDP
 *            datagram to the fabric daemon and parses it on what comes back.
 *
 * Written exactly as Linux sends a softrnic datagram: version 4, IHL 5,
 * TOS = DSCP|ECN of the packet, total length, identification and DF from
 * the srn_ip_info (the core computes every ICRC for ID 0 + DF), TTL (64
 * unless the core asked for another), protocol 17, a correct header
 * checksum; UDP ports and length with checksum 0 (RoCEv2 allows it, the
 * ICRC protects the packet). Fields are read and written with the
 * big-endian helpers of src/wire, never with struct overlays.
 *
 * The parser trusts nothing from the wire: every length is bound-checked
 * against the datagram, and it reports why it rejects a packet.
 */
#include <string.h>

#include "rt_internal.h"

uint16_t srn_rt_ip_csum(const uint8_t *hdr, size_t len)
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

size_t srn_rt_ipv4_udp_write(uint8_t *out, size_t cap, const struct srn_ip_info *ip,
			     size_t paylen)
{
	if (cap < SRN_RT_IPUDP_HDR || SRN_RT_IPUDP_HDR + paylen > 0xffff)
		return 0;
	uint8_t *iph = out, *udp = out + 20;

	iph[0] = 0x45;
	iph[1] = ip->tos;
	srn_put16(iph + 2, (uint16_t)(SRN_RT_IPUDP_HDR + paylen));
	srn_put16(iph + 4, ip->ip_id);
	srn_put16(iph + 6, ip->df ? 0x4000 : 0);
	iph[8] = ip->ttl ? ip->ttl : 64;
	iph[9] = 17;
	srn_put16(iph + 10, 0);
	memcpy(iph + 12, ip->src + 12, 4);
	memcpy(iph + 16, ip->dst + 12, 4);
	srn_put16(iph + 10, srn_rt_ip_csum(iph, 20));
	srn_put16(udp, ip->sport);
	srn_put16(udp + 2, ip->dport);
	srn_put16(udp + 4, (uint16_t)(8 + paylen));
	srn_put16(udp + 6, 0);
	return SRN_RT_IPUDP_HDR;
}

void srn_rt_hello_write(uint8_t out[SRN_RT_HELLO_LEN], struct in_addr self)
{
	memset(out, 0, SRN_RT_HELLO_LEN);
	out[0] = 0x45;
	srn_put16(out + 2, SRN_RT_HELLO_LEN);
	srn_put16(out + 6, 0x4000);                  /* DF */
	out[8] = 64;
	out[9] = SRN_RT_HELLO_PROTO;
	memcpy(out + 12, &self.s_addr, 4);           /* destination 0.0.0.0 */
	srn_put16(out + 10, srn_rt_ip_csum(out, 20));
}

int srn_rt_ipv4_udp_parse(const uint8_t *d, size_t len, struct srn_pkt_meta *m, size_t *off)
{
	if (len < 20)
		return SRN_RT_IP_ETRUNC;
	if ((d[0] >> 4) != 4)
		return SRN_RT_IP_EVERSION;
	size_t ihl = (size_t)(d[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > len)
		return SRN_RT_IP_EIHL;
	if (srn_get16(d + 2) != len)               /* exactly one packet per datagram */
		return SRN_RT_IP_ELEN;
	if (srn_rt_ip_csum(d, ihl) != 0)
		return SRN_RT_IP_ECSUM;
	if (len == SRN_RT_HELLO_LEN && d[9] == SRN_RT_HELLO_PROTO && srn_get32(d + 16) == 0)
		return SRN_RT_IP_HELLO;
	if (d[9] != 17)
		return SRN_RT_IP_EPROTO;
	if (srn_get16(d + 6) & 0x3fff)             /* MF or a fragment offset */
		return SRN_RT_IP_EFRAG;
	if (len < ihl + 8)
		return SRN_RT_IP_ETRUNC;
	const uint8_t *udp = d + ihl;
	if (srn_get16(udp + 4) != len - ihl)
		return SRN_RT_IP_EUDPLEN;

	memset(m, 0, sizeof *m);
	m->src_gid[10] = m->src_gid[11] = 0xff;
	memcpy(m->src_gid + 12, d + 12, 4);
	m->dst_gid[10] = m->dst_gid[11] = 0xff;
	memcpy(m->dst_gid + 12, d + 16, 4);
	m->sport = srn_get16(udp);
	m->dport = srn_get16(udp + 2);
	m->ecn = d[1] & 3;
	m->dscp = (uint8_t)(d[1] >> 2);
	m->ttl = d[8];
	m->ip_id = srn_get16(d + 4);
	m->ip_id_exact = true;         /* the real header */
	*off = ihl + 8;
	return (int)(len - ihl - 8);
}
