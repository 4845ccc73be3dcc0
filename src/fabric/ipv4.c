/*
 * ipv4.c - the few IPv4 operations a switch needs on whole packets:
 * validation, ECN CE marking (the checksum is src/wire/ipv4.c's, the
 * project's one), and where the UDP payload is (for corruption). Fields are read with the big-endian helpers
 * of src/wire, never with struct overlays.
 */
#include <stdio.h>

#include "fabric_int.h"

bool srn_fabric_ipv4_valid(const uint8_t *pkt, size_t len)
{
	if (len < 20 || (pkt[0] >> 4) != 4)
		return false;
	uint32_t ihl = srn_fabric_ipv4_ihl(pkt);
	if (ihl < 20 || ihl > len || srn_get16(pkt + 2) != len)
		return false;
	return srn_ipv4_csum(pkt, ihl) == 0;
}

void srn_fabric_ipv4_mark_ce(uint8_t *pkt)
{
	uint32_t ihl = srn_fabric_ipv4_ihl(pkt);
	pkt[1] |= 3u;
	srn_put16(pkt + 10, 0);
	srn_put16(pkt + 10, srn_ipv4_csum(pkt, ihl));
}

bool srn_fabric_ipv4_udp_payload(const uint8_t *pkt, size_t len, uint32_t *off,
				 uint32_t *n, uint32_t *skip)
{
	uint32_t ihl = srn_fabric_ipv4_ihl(pkt);
	if (pkt[9] != 17 || len < (size_t)ihl + 8 + 1)
		return false;
	*off = ihl + 8;
	*n = (uint32_t)len - *off;
	*skip = (srn_get16(pkt + ihl + 2) == SRN_ROCEV2_UDP_PORT && *n > 4) ? 4 : UINT32_MAX;
	return true;
}

int srn_fabric_parse_ipv4(const char *s, size_t len, uint32_t *out)
{
	uint32_t v = 0;
	size_t i = 0;
	for (int part = 0; part < 4; part++) {
		if (part > 0) {
			if (i >= len || s[i] != '.')
				return SRN_EINVAL;
			i++;
		}
		uint32_t x = 0;
		size_t start = i;
		while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 3)
			x = x * 10 + (uint32_t)(s[i++] - '0');
		if (i == start || x > 255 || (i - start > 1 && s[start] == '0'))
			return SRN_EINVAL;
		v = (v << 8) | x;
	}
	if (i != len)
		return SRN_EINVAL;
	*out = v;
	return 0;
}

void srn_fabric_fmt_ipv4(char out[16], uint32_t ip)
{
	snprintf(out, 16, "%u.%u.%u.%u", (unsigned)(ip >> 24), (unsigned)(ip >> 16) & 255,
		 (unsigned)(ip >> 8) & 255, (unsigned)ip & 255);
}
