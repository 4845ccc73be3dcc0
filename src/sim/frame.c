/*
 * frame.c - wrap the core's RoCEv2 UDP payload and its srn_pkt_meta into a
 * whole IPv4+UDP packet for the switch, and back. The header is the one
 * the kernel sends for the real runtime, written by the project's one IPv4
 * implementation (src/wire/ipv4.c): IHL 5, TOS = DSCP|ECN, DF set,
 * Identification from the meta (0), TTL, protocol UDP, header checksum;
 * UDP checksum 0 (RoCEv2 allows it). The payload is written by the core in
 * place after SRN_SIM_HDR bytes of headroom, so wrapping copies nothing.
 */
#include <string.h>

#include "sim_int.h"

size_t srn_sim_frame_wrap(uint8_t *pkt, size_t len, const struct srn_pkt_meta *m)
{
	struct srn_ip_info ip;
	srn_roce_ip_info(&ip, m);
	if (!srn_ipv4_udp_write(pkt, SRN_SIM_HDR, &ip, len))
		return 0;
	return SRN_SIM_HDR + len;
}

bool srn_sim_frame_unwrap(const uint8_t *pkt, size_t len, struct srn_pkt_meta *m,
			  const uint8_t **payload, size_t *plen)
{
	struct srn_ip_info ip;
	size_t off = 0;
	int n = srn_ipv4_udp_parse(pkt, len, &ip, &off);
	if (n < 0)
		return false;
	srn_roce_meta_from_ip(m, &ip, true);
	*payload = pkt + off;
	*plen = (size_t)n;
	return true;
}
