/*
 * srn_tenc.c - TEST-ONLY RoCEv2 encoder/decoder (see srn_tenc.h).
 *
 * Deliberately shares no code with src/wire: header set per opcode is a
 * switch written from the IBA opcode table (vol 1, 9.2 table 38 + 9.3),
 * fields are written byte by byte, and the CRC is a plain bitwise loop.
 */
#include "srn_tenc.h"

#include <string.h>

/* header flags of this file's own table */
enum {
	T_DETH = 1, T_RETH = 2, T_ATM = 4, T_AETH = 8, T_ATMACK = 16,
	T_IMM = 32, T_IETH = 64, T_CNP = 128, T_KNOWN = 256,
};

static unsigned tenc_hdrs(uint8_t op)
{
	switch (op) {
	/* RC (0x00..) and UC (0x20..) share the low 5 bits */
	case 0x00: case 0x01: case 0x02: case 0x04:
	case 0x20: case 0x21: case 0x22: case 0x24:
		return T_KNOWN;                         /* SEND FIRST/MIDDLE/LAST/ONLY */
	case 0x03: case 0x05: case 0x23: case 0x25:
		return T_KNOWN | T_IMM;                 /* SEND LAST/ONLY with imm */
	case 0x06: case 0x0a: case 0x26: case 0x2a:
		return T_KNOWN | T_RETH;                /* WRITE FIRST/ONLY */
	case 0x07: case 0x08: case 0x27: case 0x28:
		return T_KNOWN;                         /* WRITE MIDDLE/LAST */
	case 0x09: case 0x29:
		return T_KNOWN | T_IMM;                 /* WRITE LAST with imm */
	case 0x0b: case 0x2b:
		return T_KNOWN | T_RETH | T_IMM;        /* WRITE ONLY with imm */
	case 0x0c:
		return T_KNOWN | T_RETH;                /* READ REQUEST */
	case 0x0d: case 0x0f: case 0x10:
		return T_KNOWN | T_AETH;                /* READ RESP FIRST/LAST/ONLY */
	case 0x0e:
		return T_KNOWN;                         /* READ RESP MIDDLE */
	case 0x11:
		return T_KNOWN | T_AETH;                /* ACK */
	case 0x12:
		return T_KNOWN | T_AETH | T_ATMACK;     /* ATOMIC ACK */
	case 0x13: case 0x14:
		return T_KNOWN | T_ATM;                 /* CMP_SWAP, FETCH_ADD */
	case 0x16: case 0x17:
		return T_KNOWN | T_IETH;                /* SEND LAST/ONLY with invalidate */
	case 0x64:
		return T_KNOWN | T_DETH;                /* UD SEND ONLY */
	case 0x65:
		return T_KNOWN | T_DETH | T_IMM;        /* UD SEND ONLY with imm */
	case 0x81:
		return T_KNOWN | T_CNP;                 /* CNP: 16 reserved bytes */
	default:
		return 0;
	}
}

bool srn_tenc_known(uint8_t opcode)
{
	return (tenc_hdrs(opcode) & T_KNOWN) != 0;
}

size_t srn_tenc_hdr_len(uint8_t opcode)
{
	unsigned h = tenc_hdrs(opcode);
	size_t n = 12;
	if (h & T_DETH) n += 8;
	if (h & T_RETH) n += 16;
	if (h & T_ATM) n += 28;
	if (h & T_AETH) n += 4;
	if (h & T_ATMACK) n += 8;
	if (h & T_IMM) n += 4;
	if (h & T_IETH) n += 4;
	if (h & T_CNP) n += 16;
	return n;
}

void srn_tenc_init(struct srn_tenc_pkt *p, uint8_t opcode)
{
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->pkey = 0xFFFF;
	p->pad = SRN_TENC_PAD_AUTO;
}

/* ---- byte writers/readers (big endian, n bytes) ---- */
static uint8_t *wr(uint8_t *b, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		b[i] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
	return b + n;
}

static uint64_t rd(const uint8_t *b, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = (v << 8) | b[i];
	return v;
}

/* ---- CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320), bitwise ---- */
static uint32_t crc_bits(uint32_t crc, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= b[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return crc;
}

uint32_t srn_tenc_icrc(const uint8_t *buf, size_t len,
		       const uint8_t src_ip[4], const uint8_t dst_ip[4],
		       uint16_t sport, uint16_t dport, uint16_t ip_id)
{
	if (len < 16 || len > 65535 - 28)
		return 0;
	uint8_t ph[8 + 20 + 8 + 12];
	memset(ph, 0xff, 8);                      /* masked LRH stand-in */
	uint8_t *ip = ph + 8;
	ip[0] = 0x45;
	ip[1] = 0xff;                             /* TOS masked */
	wr(ip + 2, 20 + 8 + len, 2);              /* total length */
	wr(ip + 4, ip_id, 2);
	ip[6] = 0x40; ip[7] = 0x00;               /* DF */
	ip[8] = 0xff;                             /* TTL masked */
	ip[9] = 17;                               /* UDP */
	ip[10] = 0xff; ip[11] = 0xff;             /* checksum masked */
	memcpy(ip + 12, src_ip, 4);
	memcpy(ip + 16, dst_ip, 4);
	uint8_t *udp = ip + 20;
	wr(udp, sport, 2);
	wr(udp + 2, dport, 2);
	wr(udp + 4, 8 + len, 2);
	udp[6] = 0xff; udp[7] = 0xff;             /* UDP checksum masked */
	uint8_t *bth = udp + 8;
	memcpy(bth, buf, 12);
	bth[4] = 0xff;                            /* FECN/BECN/resv6 masked */
	uint32_t c = crc_bits(0xFFFFFFFFu, ph, sizeof(ph));
	c = crc_bits(c, buf + 12, len - 12 - 4);
	return ~c;
}

bool srn_tenc_icrc_ok(const uint8_t *buf, size_t len,
		      const uint8_t src_ip[4], const uint8_t dst_ip[4],
		      uint16_t sport, uint16_t dport, uint16_t ip_id)
{
	if (len < 16)
		return false;
	uint32_t c = srn_tenc_icrc(buf, len, src_ip, dst_ip, sport, dport, ip_id);
	const uint8_t *s = buf + len - 4;
	uint32_t stored = (uint32_t)s[0] | ((uint32_t)s[1] << 8) |
			  ((uint32_t)s[2] << 16) | ((uint32_t)s[3] << 24);
	return c == stored;
}

size_t srn_tenc_build(uint8_t *buf, size_t cap, const struct srn_tenc_pkt *p,
		      const uint8_t src_ip[4], const uint8_t dst_ip[4],
		      uint16_t sport, uint16_t dport, uint16_t ip_id)
{
	unsigned h = tenc_hdrs(p->opcode);
	uint32_t paylen = (h & T_CNP) ? 0 : p->paylen;
	unsigned pad;
	if (p->pad == SRN_TENC_PAD_AUTO)
		pad = (4u - (paylen % 4u)) % 4u;
	else if (p->pad <= 3)
		pad = p->pad;
	else
		return 0;
	size_t total = srn_tenc_hdr_len(p->opcode) + (size_t)paylen + pad + 4;
	if (total > cap || total > 65535 - 28 || (paylen && !p->payload))
		return 0;

	uint8_t *b = buf;
	*b++ = p->opcode;
	*b++ = (uint8_t)((p->se ? 0x80 : 0) | (p->mig ? 0x40 : 0) | (pad << 4) | (p->tver & 0x0f));
	b = wr(b, p->pkey, 2);
	*b++ = (uint8_t)((p->fecn ? 0x80 : 0) | (p->becn ? 0x40 : 0));
	b = wr(b, p->dqpn & 0xFFFFFF, 3);
	*b++ = p->ackreq ? 0x80 : 0;
	b = wr(b, p->psn & 0xFFFFFF, 3);
	if (h & T_DETH) {
		b = wr(b, p->qkey, 4);
		*b++ = 0;
		b = wr(b, p->sqpn & 0xFFFFFF, 3);
	}
	if (h & T_RETH) {
		b = wr(b, p->va, 8);
		b = wr(b, p->rkey, 4);
		b = wr(b, p->dmalen, 4);
	}
	if (h & T_ATM) {
		b = wr(b, p->va, 8);
		b = wr(b, p->rkey, 4);
		b = wr(b, p->swap_add, 8);
		b = wr(b, p->cmp, 8);
	}
	if (h & T_AETH) {
		*b++ = p->syndrome;
		b = wr(b, p->msn & 0xFFFFFF, 3);
	}
	if (h & T_ATMACK)
		b = wr(b, p->orig, 8);
	if (h & T_IMM) {
		memcpy(b, &p->imm_be, 4);
		b += 4;
	}
	if (h & T_IETH)
		b = wr(b, p->ieth_rkey, 4);
	if (h & T_CNP) {
		memset(b, 0, 16);
		b += 16;
	}
	if (paylen) {
		memcpy(b, p->payload, paylen);
		b += paylen;
	}
	memset(b, 0, pad);
	b += pad;
	size_t len = (size_t)(b - buf) + 4;
	uint32_t c = srn_tenc_icrc(buf, len, src_ip, dst_ip, sport, dport, ip_id);
	b[0] = (uint8_t)c;
	b[1] = (uint8_t)(c >> 8);
	b[2] = (uint8_t)(c >> 16);
	b[3] = (uint8_t)(c >> 24);
	return len;
}

int srn_tenc_parse(const uint8_t *buf, size_t len, struct srn_tenc_pkt *out)
{
	memset(out, 0, sizeof(*out));
	if (len < 16)
		return -1;
	unsigned h = tenc_hdrs(buf[0]);
	if (!(h & T_KNOWN))
		return -1;
	size_t hl = srn_tenc_hdr_len(buf[0]);
	unsigned pad = (buf[1] >> 4) & 3;
	if (len < hl + pad + 4)
		return -1;

	const uint8_t *b = buf;
	out->opcode = b[0];
	out->se = (b[1] & 0x80) != 0;
	out->mig = (b[1] & 0x40) != 0;
	out->pad = (uint8_t)pad;
	out->tver = b[1] & 0x0f;
	out->pkey = (uint16_t)rd(b + 2, 2);
	out->fecn = (b[4] & 0x80) != 0;
	out->becn = (b[4] & 0x40) != 0;
	out->dqpn = (uint32_t)rd(b + 5, 3);
	out->ackreq = (b[8] & 0x80) != 0;
	out->psn = (uint32_t)rd(b + 9, 3);
	b += 12;
	if (h & T_DETH) {
		out->qkey = (uint32_t)rd(b, 4);
		out->sqpn = (uint32_t)rd(b + 5, 3);
		b += 8;
	}
	if (h & T_RETH) {
		out->va = rd(b, 8);
		out->rkey = (uint32_t)rd(b + 8, 4);
		out->dmalen = (uint32_t)rd(b + 12, 4);
		b += 16;
	}
	if (h & T_ATM) {
		out->va = rd(b, 8);
		out->rkey = (uint32_t)rd(b + 8, 4);
		out->swap_add = rd(b + 12, 8);
		out->cmp = rd(b + 20, 8);
		b += 28;
	}
	if (h & T_AETH) {
		out->syndrome = b[0];
		out->msn = (uint32_t)rd(b + 1, 3);
		b += 4;
	}
	if (h & T_ATMACK) {
		out->orig = rd(b, 8);
		b += 8;
	}
	if (h & T_IMM) {
		memcpy(&out->imm_be, b, 4);
		b += 4;
	}
	if (h & T_IETH) {
		out->ieth_rkey = (uint32_t)rd(b, 4);
		b += 4;
	}
	if (h & T_CNP)
		b += 16;
	out->payload = b;
	out->paylen = (uint32_t)(len - hl - pad - 4);
	return (int)hl;
}
