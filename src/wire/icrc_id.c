/*
 * icrc_id.c - changing the IPv4 identification under a stored ICRC without
 * recomputing the CRC over the packet.
 *
 * Why: the ICRC covers the IPv4 ID (icrc.c). A datagram sent alone from an
 * unconnected DF socket carries ID 0, but when the runtime hands the kernel
 * several packets as one UDP GSO send, the kernel numbers the segments'
 * IDs 0, 1, 2, ... (checked by capture after software segmentation,
 * tests/integration/test_capture.sh). The core computes every ICRC with ID
 * 0; the runtime fixes segment i's ICRC here. A receiver behind a UDP
 * socket never sees the ID: it checks the likely ID first and then every
 * other ID a GSO send can produce (srn_icrc_check_ids).
 *
 * The math: CRC-32 is linear over GF(2). Two packets that differ only in
 * the ID field have ICRCs that differ by U(x) * x^(8R) mod P, where x is the
 * XOR of the two IDs, U(x) the CRC register (initial value 0, no final XOR)
 * after the two ID bytes, and R the number of CRC input bytes after the ID
 * field. Polynomials are kept in the reflected form of zlib's crc32() (bit
 * 31 is the coefficient of x^0), the form the ICRC is computed in.
 */
#include "srn_wire.h"

#define POLY_REFL 0xEDB88320u
#define X0 0x80000000u                    /* the polynomial 1 */
#define ID_OFF 12u                        /* ID: bytes 12..13 of the CRC input (8 x 0xFF, IPv4 hdr) */
#define PSH_LEN (8u + 20u + 8u + SRN_BTH_LEN)

/* a * b mod P */
static uint32_t gf2_mul(uint32_t a, uint32_t b)
{
	uint32_t p = 0;
	for (int i = 0; i < 32 && a; i++) {
		if (a & X0)
			p ^= b;
		a <<= 1;
		b = (b & 1u) ? (b >> 1) ^ POLY_REFL : b >> 1;
	}
	return p;
}

uint32_t srn_icrc_id_shift(size_t len)
{
	/* bytes of CRC input after the ID: the rest of the pseudo header and
	 * the payload up to the ICRC */
	uint64_t r = (PSH_LEN - ID_OFF - 2u) + (len - SRN_BTH_LEN - SRN_ICRC_LEN);
	uint64_t bits = 8u * r;
	uint32_t res = X0, pw = X0 >> 1;      /* pw = x */
	while (bits) {
		if (bits & 1u)
			res = gf2_mul(res, pw);
		pw = gf2_mul(pw, pw);
		bits >>= 1;
	}
	return res;
}

uint32_t srn_icrc_id_delta(uint32_t shift, uint16_t id_xor)
{
	/* U(x): the register, from 0, after the ID's two bytes (big-endian) */
	uint32_t u = 0;
	const uint8_t b[2] = { (uint8_t)(id_xor >> 8), (uint8_t)id_xor };
	for (int k = 0; k < 2; k++) {
		u ^= b[k];
		for (int j = 0; j < 8; j++)
			u = (u & 1u) ? (u >> 1) ^ POLY_REFL : u >> 1;
	}
	return gf2_mul(u, shift);
}

static uint32_t load_icrc(const uint8_t *s)
{
	return (uint32_t)s[0] | ((uint32_t)s[1] << 8) | ((uint32_t)s[2] << 16) | ((uint32_t)s[3] << 24);
}

void srn_icrc_set_id(uint8_t *pkt, size_t len, uint32_t shift, uint16_t from, uint16_t to)
{
	if (len < SRN_BTH_LEN + SRN_ICRC_LEN || from == to)
		return;
	uint8_t *s = pkt + len - SRN_ICRC_LEN;
	uint32_t c = load_icrc(s) ^ srn_icrc_id_delta(shift, (uint16_t)(from ^ to));
	s[0] = (uint8_t)c;
	s[1] = (uint8_t)(c >> 8);
	s[2] = (uint8_t)(c >> 16);
	s[3] = (uint8_t)(c >> 24);
}

int srn_icrc_check_ids(const struct srn_ip_info *ip, const uint8_t *pkt, size_t len,
		       uint16_t span, uint16_t *id_out)
{
	if (ip->v6 || len < SRN_BTH_LEN + SRN_ICRC_LEN || len > SRN_PKT_MAX_LEN)
		return SRN_WIRE_EICRC;
	uint32_t diff = srn_icrc_compute(ip, pkt, len) ^ load_icrc(pkt + len - SRN_ICRC_LEN);
	if (diff == 0) {
		if (id_out)
			*id_out = ip->ip_id;
		return SRN_WIRE_OK;
	}
	if (span < 2 || ip->ip_id >= span)
		return SRN_WIRE_EICRC;
	/* IDs 0..span-1 (span a power of two): ID = hint ^ x, x < span. The
	 * delta is linear in x: combine the deltas of its bits. */
	uint32_t shift = srn_icrc_id_shift(len), dbit[16];
	int nb = 0;
	while ((1u << nb) < span && nb < 16) {
		dbit[nb] = srn_icrc_id_delta(shift, (uint16_t)(1u << nb));
		nb++;
	}
	for (uint32_t x = 1; x < (1u << nb); x++) {
		uint32_t d = 0;
		for (int b = 0; b < nb; b++)
			if (x & (1u << b))
				d ^= dbit[b];
		if (d == diff) {
			if (id_out)
				*id_out = (uint16_t)(ip->ip_id ^ x);
			return SRN_WIRE_OK;
		}
	}
	return SRN_WIRE_EICRC;
}
