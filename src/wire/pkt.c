/*
 * pkt.c - bounds-checked RoCEv2 packet parser and header writer.
 *
 * Every field is read with the big-endian helpers of srn_wire.h at an
 * offset taken from srn_opcode_table; no byte is read before the length
 * check that covers it. Lengths from the wire (PadCnt) are never trusted.
 *
 * Parse checks, in this order (first failing one is returned):
 *   len < BTH + ICRC                         -> SRN_WIRE_ETRUNC
 *   len > SRN_PKT_MAX_LEN                    -> SRN_WIRE_ELEN
 *   opcode not in the table                  -> SRN_WIRE_EOPCODE
 *   BTH.TVer != 0                            -> SRN_WIRE_EVERSION
 *   len < hdr_len + ICRC                     -> SRN_WIRE_ETRUNC
 *   opcode without payload (incl. CNP):
 *     PadCnt != 0                            -> SRN_WIRE_EPAD
 *     len != hdr_len + ICRC                  -> SRN_WIRE_ELEN
 *   opcode with payload:
 *     PadCnt > bytes between headers and ICRC-> SRN_WIRE_EPAD
 *     payload + pad not a multiple of 4      -> SRN_WIRE_EPAD
 * Reserved bits are ignored on receive (IBA: "ignored by the receiver") and
 * written as 0.
 */
#include "srn_wire.h"

#include <string.h>

const char *srn_wire_strerror(int err)
{
	switch (err) {
	case SRN_WIRE_OK:       return "ok";
	case SRN_WIRE_ETRUNC:   return "packet truncated";
	case SRN_WIRE_EOPCODE:  return "unknown opcode";
	case SRN_WIRE_EVERSION: return "unsupported BTH transport version";
	case SRN_WIRE_EPAD:     return "bad pad count";
	case SRN_WIRE_ELEN:     return "bad length for opcode";
	case SRN_WIRE_EICRC:    return "ICRC mismatch";
	default:                return "unknown wire error";
	}
}

static void parse_bth(struct srn_pkt *p, const uint8_t *b)
{
	p->opcode = b[0];
	p->se = (b[1] & 0x80) != 0;
	p->mig = (b[1] & 0x40) != 0;
	p->pad = (uint8_t)((b[1] >> 4) & 0x3);
	p->tver = b[1] & 0x0f;
	p->pkey = srn_get16(b + 2);
	p->fecn = (b[4] & 0x80) != 0;
	p->becn = (b[4] & 0x40) != 0;
	p->dqpn = srn_get24(b + 5);
	p->ackreq = (b[8] & 0x80) != 0;
	p->psn = srn_get24(b + 9);
}

/* extension headers; caller has checked len >= info->hdr_len */
static void parse_ext(struct srn_pkt *p, const uint8_t *b, const struct srn_opinfo *o)
{
	if (o->mask & SRN_M_DETH) {
		p->deth_qkey = srn_get32(b + o->off_deth);
		p->deth_sqpn = srn_get24(b + o->off_deth + 5);
	}
	if (o->mask & SRN_M_RETH) {
		p->reth_va = srn_get64(b + o->off_reth);
		p->reth_rkey = srn_get32(b + o->off_reth + 8);
		p->reth_len = srn_get32(b + o->off_reth + 12);
	}
	if (o->mask & SRN_M_ATMETH) {
		p->atm_va = srn_get64(b + o->off_atmeth);
		p->atm_rkey = srn_get32(b + o->off_atmeth + 8);
		p->atm_swap_add = srn_get64(b + o->off_atmeth + 12);
		p->atm_cmp = srn_get64(b + o->off_atmeth + 20);
	}
	if (o->mask & SRN_M_AETH) {
		p->aeth_syn = b[o->off_aeth];
		p->aeth_msn = srn_get24(b + o->off_aeth + 1);
	}
	if (o->mask & SRN_M_ATMACK)
		p->atmack_orig = srn_get64(b + o->off_atmack);
	if (o->mask & SRN_M_IMMDT)
		memcpy(&p->imm_be, b + o->off_immdt, SRN_IMMDT_LEN);
	if (o->mask & SRN_M_IETH)
		p->ieth_rkey = srn_get32(b + o->off_ieth);
}

int srn_pkt_parse(struct srn_pkt *p, const uint8_t *buf, size_t len)
{
	memset(p, 0, sizeof(*p));
	if (len < SRN_BTH_LEN + SRN_ICRC_LEN)
		return SRN_WIRE_ETRUNC;
	if (len > SRN_PKT_MAX_LEN)
		return SRN_WIRE_ELEN;
	const struct srn_opinfo *o = srn_opinfo(buf[0]);
	if (!(o->mask & SRN_M_VALID))
		return SRN_WIRE_EOPCODE;
	if (buf[1] & 0x0f)
		return SRN_WIRE_EVERSION;
	if (len < (size_t)o->hdr_len + SRN_ICRC_LEN)
		return SRN_WIRE_ETRUNC;

	size_t body = len - o->hdr_len - SRN_ICRC_LEN; /* payload + pad */
	unsigned pad = (buf[1] >> 4) & 0x3;
	if (!(o->mask & SRN_M_PAYLOAD)) {
		if (pad)
			return SRN_WIRE_EPAD;
		if (body)
			return SRN_WIRE_ELEN;
	} else {
		if (body < pad || (body & 3u))
			return SRN_WIRE_EPAD;
	}

	parse_bth(p, buf);
	parse_ext(p, buf, o);
	p->payload = buf + o->payload_off;
	p->paylen = (uint32_t)(body - pad);
	p->info = o;
	return SRN_WIRE_OK;
}

int srn_pkt_write_hdrs(uint8_t *buf, size_t cap, const struct srn_pkt *p)
{
	const struct srn_opinfo *o = srn_opinfo(p->opcode);
	if (!(o->mask & SRN_M_VALID))
		return SRN_WIRE_EOPCODE;
	if (cap < o->hdr_len)
		return SRN_WIRE_ETRUNC;

	memset(buf, 0, o->hdr_len); /* reserved fields and CNP's 16 bytes */
	/* BTH; TVer is always written as 0 */
	buf[0] = p->opcode;
	buf[1] = (uint8_t)((p->se ? 0x80 : 0) | (p->mig ? 0x40 : 0) | ((p->pad & 0x3) << 4));
	srn_put16(buf + 2, p->pkey);
	buf[4] = (uint8_t)((p->fecn ? 0x80 : 0) | (p->becn ? 0x40 : 0));
	srn_put24(buf + 5, p->dqpn & SRN_QPN_MASK);
	buf[8] = p->ackreq ? 0x80 : 0;
	srn_put24(buf + 9, p->psn & SRN_PSN_MASK);

	if (o->mask & SRN_M_DETH) {
		srn_put32(buf + o->off_deth, p->deth_qkey);
		srn_put24(buf + o->off_deth + 5, p->deth_sqpn & SRN_QPN_MASK);
	}
	if (o->mask & SRN_M_RETH) {
		srn_put64(buf + o->off_reth, p->reth_va);
		srn_put32(buf + o->off_reth + 8, p->reth_rkey);
		srn_put32(buf + o->off_reth + 12, p->reth_len);
	}
	if (o->mask & SRN_M_ATMETH) {
		srn_put64(buf + o->off_atmeth, p->atm_va);
		srn_put32(buf + o->off_atmeth + 8, p->atm_rkey);
		srn_put64(buf + o->off_atmeth + 12, p->atm_swap_add);
		srn_put64(buf + o->off_atmeth + 20, p->atm_cmp);
	}
	if (o->mask & SRN_M_AETH) {
		buf[o->off_aeth] = p->aeth_syn;
		srn_put24(buf + o->off_aeth + 1, p->aeth_msn & SRN_MSN_MASK);
	}
	if (o->mask & SRN_M_ATMACK)
		srn_put64(buf + o->off_atmack, p->atmack_orig);
	if (o->mask & SRN_M_IMMDT)
		memcpy(buf + o->off_immdt, &p->imm_be, SRN_IMMDT_LEN);
	if (o->mask & SRN_M_IETH)
		srn_put32(buf + o->off_ieth, p->ieth_rkey);
	return o->hdr_len;
}

int srn_pkt_finish(uint8_t *buf, size_t cap, size_t hdr_len, uint32_t paylen,
		   const struct srn_ip_info *ip)
{
	if (cap < SRN_BTH_LEN)
		return SRN_WIRE_ETRUNC;
	const struct srn_opinfo *o = srn_opinfo(buf[0]);
	if (!(o->mask & SRN_M_VALID))
		return SRN_WIRE_EOPCODE;
	if (hdr_len != o->hdr_len || (paylen && !(o->mask & SRN_M_PAYLOAD)))
		return SRN_WIRE_ELEN;
	uint8_t pad = srn_pad_for(paylen);
	uint64_t total = (uint64_t)hdr_len + paylen + pad + SRN_ICRC_LEN;
	if (total > SRN_PKT_MAX_LEN)
		return SRN_WIRE_ELEN;
	if (total > cap)
		return SRN_WIRE_ETRUNC;

	buf[1] = (uint8_t)((buf[1] & ~0x30u) | (unsigned)(pad << 4));
	memset(buf + hdr_len + paylen, 0, pad + SRN_ICRC_LEN);
	if (ip)
		srn_icrc_store(ip, buf, (size_t)total);
	return (int)total;
}
