/*
 * icrc.c - RoCEv2 invariant CRC over IPv4 (IBA annex A17.3.3).
 *
 * ICRC = CRC-32 (IEEE 802.3, reflected, as zlib's crc32()) over
 *   8 x 0xFF                          masked LRH stand-in
 *   IPv4 header (20 bytes)            TOS = 0xFF, TTL = 0xFF, checksum = 0xFFFF;
 *                                     version/IHL 0x45, total length, ID,
 *                                     flags (0x4000 if DF), protocol 17, src, dst
 *                                     as they are on the wire
 *   UDP header (8 bytes)              checksum = 0xFFFF
 *   BTH (12 bytes)                    byte 4 (FECN/BECN/resv6) = 0xFF
 *   rest of the UDP payload up to, not including, the 4 ICRC bytes.
 *
 * Byte order of the stored ICRC: srn_icrc_compute returns the CRC register
 * value (what zlib's crc32() returns); it is stored least significant byte
 * first, like the Ethernet FCS. That matches Linux rxe (which stores the
 * CPU-order u32 of crc32_le on little-endian hosts) and scapy.contrib.roce
 * (struct.pack("!I", crc)[::-1]); tests/unit/test_wire.c pins it with a
 * scapy-made known-answer vector.
 *
 * The CRC itself is ISA-L's crc32_gzip_refl (init 0, chained), the project's
 * CRC library.
 *
 * IPv6 is not yet built: for ip->v6 srn_icrc_compute returns 0,
 * srn_icrc_store writes 0 and srn_icrc_check always fails, so no IPv6
 * packet can ever be accepted on an unverified ICRC.
 */
#include "srn_wire.h"

#include <isa-l/crc.h>
#include <string.h>

#define PSH_LEN (8u + 20u + 8u + SRN_BTH_LEN)

/* true if the ICRC is defined for this ip/len */
static bool icrc_applicable(const struct srn_ip_info *ip, size_t len)
{
	return !ip->v6 && len >= SRN_BTH_LEN + SRN_ICRC_LEN && len <= SRN_PKT_MAX_LEN;
}

uint32_t srn_icrc_compute(const struct srn_ip_info *ip, const uint8_t *pkt, size_t len)
{
	if (!icrc_applicable(ip, len))
		return 0;
	uint8_t psh[PSH_LEN];
	uint8_t *iph = psh + 8, *udph = iph + 20, *bth = udph + 8;

	memset(psh, 0xff, 8);
	iph[0] = 0x45;
	iph[1] = 0xff;                                   /* TOS masked */
	srn_put16(iph + 2, (uint16_t)(20u + 8u + len));  /* total length */
	srn_put16(iph + 4, ip->ip_id);
	srn_put16(iph + 6, ip->df ? 0x4000 : 0x0000);    /* flags, frag offset 0 */
	iph[8] = 0xff;                                   /* TTL masked */
	iph[9] = 17;                                     /* UDP */
	srn_put16(iph + 10, 0xffff);                     /* checksum masked */
	memcpy(iph + 12, ip->src + 12, 4);
	memcpy(iph + 16, ip->dst + 12, 4);
	srn_put16(udph, ip->sport);
	srn_put16(udph + 2, ip->dport);
	srn_put16(udph + 4, (uint16_t)(8u + len));
	srn_put16(udph + 6, 0xffff);                     /* UDP checksum masked */
	memcpy(bth, pkt, SRN_BTH_LEN);
	bth[4] = 0xff;                                   /* FECN/BECN/resv6 masked */

	uint32_t crc = crc32_gzip_refl(0, psh, sizeof(psh));
	return crc32_gzip_refl(crc, pkt + SRN_BTH_LEN,
			       len - SRN_BTH_LEN - SRN_ICRC_LEN);
}

void srn_icrc_store(const struct srn_ip_info *ip, uint8_t *pkt, size_t len)
{
	if (len < SRN_ICRC_LEN)
		return;
	uint32_t c = srn_icrc_compute(ip, pkt, len);
	uint8_t *s = pkt + len - SRN_ICRC_LEN;
	s[0] = (uint8_t)c;
	s[1] = (uint8_t)(c >> 8);
	s[2] = (uint8_t)(c >> 16);
	s[3] = (uint8_t)(c >> 24);
}

int srn_icrc_check(const struct srn_ip_info *ip, const uint8_t *pkt, size_t len)
{
	if (!icrc_applicable(ip, len))
		return SRN_WIRE_EICRC;
	const uint8_t *s = pkt + len - SRN_ICRC_LEN;
	uint32_t stored = (uint32_t)s[0] | ((uint32_t)s[1] << 8) |
			  ((uint32_t)s[2] << 16) | ((uint32_t)s[3] << 24);
	return srn_icrc_compute(ip, pkt, len) == stored ? SRN_WIRE_OK : SRN_WIRE_EICRC;
}
