/*
 * ipv4.c - the fabric attachment's IPv4 framing (docs/fabric.md): the HELLO
 * a device sends to `softrnic fabric`, and the parser of the whole IPv4
 * packets the fabric sends back (a HELLO echo, or an IPv4/UDP/RoCEv2
 * packet). The IPv4 + UDP header itself is src/wire/ipv4.c's, written once
 * for the runtime, the fabric, the simulator and the core.
 */
#include <string.h>

#include "rt_internal.h"

void srn_rt_hello_write(uint8_t out[SRN_RT_HELLO_LEN], struct in_addr self)
{
	memset(out, 0, SRN_RT_HELLO_LEN);
	out[0] = 0x45;
	srn_put16(out + 2, SRN_RT_HELLO_LEN);
	srn_put16(out + 6, 0x4000);                  /* DF */
	out[8] = 64;
	out[9] = SRN_RT_HELLO_PROTO;
	memcpy(out + 12, &self.s_addr, 4);           /* destination 0.0.0.0 */
	srn_put16(out + 10, srn_ipv4_csum(out, 20));
}

int srn_rt_ipv4_udp_parse(const uint8_t *d, size_t len, struct srn_pkt_meta *m, size_t *off)
{
	struct srn_ip_info ip;
	size_t ihl = 0;
	int proto = srn_ipv4_parse(d, len, &ip, &ihl);
	if (proto == SRN_RT_HELLO_PROTO && len == SRN_RT_HELLO_LEN && srn_get32(d + 16) == 0)
		return SRN_RT_IP_HELLO;
	int plen = srn_ipv4_udp_parse(d, len, &ip, off);
	if (plen < 0)
		return plen;
	srn_roce_meta_from_ip(m, &ip, true);   /* the real header: its ID is exact */
	return plen;
}
