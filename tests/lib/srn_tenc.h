/*
 * srn_tenc.h - TEST-ONLY RoCEv2 packet encoder/decoder.
 *
 * Written independently of src/wire on purpose (its own header table, its
 * own byte code, its own bitwise CRC-32; it includes nothing from src/), so
 * that tests never check the wire codec only against itself.
 *
 * A "packet" is the UDP payload of a RoCEv2 datagram:
 *   BTH | extension headers | payload | pad | ICRC
 * exactly as srn_wire.h defines it.
 *
 * Typical use in a packet-level test:
 *
 *   struct srn_tenc_pkt p;
 *   srn_tenc_init(&p, 0x04);            // RC SEND_ONLY; pkey 0xFFFF, pad auto
 *   p.dqpn = 0x11; p.psn = 0xFFFFFF; p.ackreq = true;
 *   p.payload = "hello"; p.paylen = 5;
 *   uint8_t buf[256];
 *   size_t n = srn_tenc_build(buf, sizeof buf, &p, src, dst, 49152, 4791, 0);
 *
 * Extension headers are written in IBA order (DETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt, IETH); which ones an opcode has comes from this file's
 * own table. Unknown opcodes are built with a bare BTH (useful for negative
 * tests). CNP (0x81) is built as BTH + 16 zero bytes; its payload is ignored.
 */
#ifndef SRN_TENC_H
#define SRN_TENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SRN_TENC_PAD_AUTO 0xffu  /* .pad value: pad to a multiple of 4 */

struct srn_tenc_pkt {
	uint8_t opcode;
	bool se, ackreq, fecn, becn;
	uint8_t pad;        /* BTH PadCnt and number of zero pad bytes; SRN_TENC_PAD_AUTO = auto */
	uint16_t pkey;
	uint32_t dqpn, psn; /* 24 bits each (higher bits ignored) */
	uint32_t qkey, sqpn;           /* DETH */
	uint64_t va;                   /* RETH or AtomicETH */
	uint32_t rkey, dmalen;         /* RETH (rkey also AtomicETH) */
	uint64_t swap_add, cmp;        /* AtomicETH */
	uint8_t syndrome;              /* AETH */
	uint32_t msn;                  /* AETH, 24 bits */
	uint64_t orig;                 /* AtomicAckETH */
	uint32_t imm_be;               /* ImmDt: raw 4 bytes, network order (memcpy'd) */
	uint32_t ieth_rkey;            /* IETH */
	const void *payload;
	uint32_t paylen;
	/* additions beyond the agreed struct (zero = the usual values) */
	bool mig;                      /* BTH MigReq bit */
	uint8_t tver;                  /* BTH TVer (only for negative tests; 0 on the wire) */
};

/* zero *p, set opcode, pkey = 0xFFFF and pad = SRN_TENC_PAD_AUTO */
void srn_tenc_init(struct srn_tenc_pkt *p, uint8_t opcode);

/* length of BTH + extension headers for opcode by this file's table (12 for unknown) */
size_t srn_tenc_hdr_len(uint8_t opcode);

/* true if the opcode is one the encoder knows (RC/UC/UD/CNP of srn_wire.h) */
bool srn_tenc_known(uint8_t opcode);

/*
 * Build the UDP payload into buf[0..cap): headers, payload, pad, ICRC.
 * The ICRC is computed for an IPv4 datagram src_ip -> dst_ip (network order
 * bytes), UDP sport -> dport (host order), IP identification ip_id, DF set.
 * Returns the UDP payload length incl. ICRC, or 0 if cap is too small,
 * pad (when not auto) > 3, or payload is NULL with paylen > 0.
 * Payload is written for any opcode (even ones that carry none, for
 * negative tests), except CNP.
 */
size_t srn_tenc_build(uint8_t *buf, size_t cap, const struct srn_tenc_pkt *p,
		      const uint8_t src_ip[4], const uint8_t dst_ip[4],
		      uint16_t sport, uint16_t dport, uint16_t ip_id);

/*
 * Decode buf[0..len) (UDP payload incl. ICRC; the ICRC is not checked).
 * out->payload points into buf; out->pad is the BTH PadCnt.
 * Returns the header length (>= 12) on success, -1 if the opcode is unknown
 * or the packet is shorter than headers + pad + ICRC.
 */
int srn_tenc_parse(const uint8_t *buf, size_t len, struct srn_tenc_pkt *out);

/* ICRC value for buf[0..len) (last 4 bytes not covered), as CRC-32 register
 * value; it is stored least significant byte first. 0 if len < 16. */
uint32_t srn_tenc_icrc(const uint8_t *buf, size_t len,
		       const uint8_t src_ip[4], const uint8_t dst_ip[4],
		       uint16_t sport, uint16_t dport, uint16_t ip_id);

/* true if the stored ICRC (last 4 bytes) matches (IPv4, DF set) */
bool srn_tenc_icrc_ok(const uint8_t *buf, size_t len,
		      const uint8_t src_ip[4], const uint8_t dst_ip[4],
		      uint16_t sport, uint16_t dport, uint16_t ip_id);

#endif /* SRN_TENC_H */
