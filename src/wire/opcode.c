/*
 * opcode.c - the one BTH opcode table (rxe style): per opcode its name, the
 * mask of headers present and of meaning, each header's offset from the
 * start of the BTH and the total header length.
 *
 * Sources: IBA vol 1 rel 1.4, 9.2 table 38 (opcodes) and 9.3 (which
 * extension headers each opcode carries); RoCEv2 annex A17.9.2 for CNP.
 *
 * Offsets and lengths are derived from the header mask by the macros below,
 * in the fixed IBA header order
 *   BTH | DETH | RETH | AtomicETH | AETH | AtomicAckETH | ImmDt | IETH
 * so an entry cannot disagree with its own mask.
 *
 * SRN_M_COMP ("consumes a receive WQE / completes at the responder") is set
 * on exactly these opcodes:
 *   RC and UC  SEND_LAST, SEND_LAST_IMM, SEND_ONLY, SEND_ONLY_IMM,
 *   RC         SEND_LAST_INV, SEND_ONLY_INV,
 *   RC and UC  WRITE_LAST_IMM, WRITE_ONLY_IMM,
 *   UD         SEND_ONLY, SEND_ONLY_IMM.
 * It is NOT set on SEND_FIRST/MIDDLE (the WQE is consumed by the message's
 * last packet), on WRITE without immediate (no receive WQE at all), on read
 * requests/responses, atomics, ACKs or CNP.
 *
 * CNP carries no extension header but 16 reserved bytes after the BTH; they
 * are counted in its hdr_len (12 + 16 = 28), so "no payload, length exactly
 * hdr_len + ICRC" is the same rule as for every other payload-less opcode.
 */
#include "srn_wire.h"

/* length of each optional header given a mask */
#define L_DETH(m)   (((m) & SRN_M_DETH)   ? SRN_DETH_LEN   : 0u)
#define L_RETH(m)   (((m) & SRN_M_RETH)   ? SRN_RETH_LEN   : 0u)
#define L_ATMETH(m) (((m) & SRN_M_ATMETH) ? SRN_ATMETH_LEN : 0u)
#define L_AETH(m)   (((m) & SRN_M_AETH)   ? SRN_AETH_LEN   : 0u)
#define L_ATMACK(m) (((m) & SRN_M_ATMACK) ? SRN_ATMACK_LEN : 0u)
#define L_IMMDT(m)  (((m) & SRN_M_IMMDT)  ? SRN_IMMDT_LEN  : 0u)
#define L_IETH(m)   (((m) & SRN_M_IETH)   ? SRN_IETH_LEN   : 0u)
#define L_CNP(m)    (((m) & SRN_M_CNP)    ? SRN_CNP_PAYLOAD_LEN : 0u)

/* start of each header = BTH + all headers that precede it */
#define S_DETH(m)   (SRN_BTH_LEN)
#define S_RETH(m)   (S_DETH(m) + L_DETH(m))
#define S_ATMETH(m) (S_RETH(m) + L_RETH(m))
#define S_AETH(m)   (S_ATMETH(m) + L_ATMETH(m))
#define S_ATMACK(m) (S_AETH(m) + L_AETH(m))
#define S_IMMDT(m)  (S_ATMACK(m) + L_ATMACK(m))
#define S_IETH(m)   (S_IMMDT(m) + L_IMMDT(m))
#define S_END(m)    (S_IETH(m) + L_IETH(m) + L_CNP(m))

#define OFF(m, bit, start) ((uint8_t)(((m) & (bit)) ? (start) : 0u))

#define OP(code, nm, m) [code] = { \
	.name = (nm), \
	.mask = (uint32_t)(m) | SRN_M_VALID, \
	.hdr_len = (uint8_t)S_END(m), \
	.off_deth = OFF(m, SRN_M_DETH, S_DETH(m)), \
	.off_reth = OFF(m, SRN_M_RETH, S_RETH(m)), \
	.off_atmeth = OFF(m, SRN_M_ATMETH, S_ATMETH(m)), \
	.off_aeth = OFF(m, SRN_M_AETH, S_AETH(m)), \
	.off_atmack = OFF(m, SRN_M_ATMACK, S_ATMACK(m)), \
	.off_immdt = OFF(m, SRN_M_IMMDT, S_IMMDT(m)), \
	.off_ieth = OFF(m, SRN_M_IETH, S_IETH(m)), \
	.payload_off = (uint8_t)S_END(m), \
}

/* building blocks */
#define SEND_REQ  (SRN_M_PAYLOAD | SRN_M_REQ | SRN_M_SEND)
#define WRITE_REQ (SRN_M_PAYLOAD | SRN_M_REQ | SRN_M_WRITE)
#define READ_RSP  (SRN_M_PAYLOAD | SRN_M_RESP | SRN_M_READ)

/* the send/write opcodes shared by RC (t = SRN_M_RC) and UC (t = SRN_M_UC) */
#define SEND_WRITE_OPS(base, pfx, t) \
	OP((base) + 0x00, pfx "SEND_FIRST",      (t) | SEND_REQ | SRN_M_FIRST), \
	OP((base) + 0x01, pfx "SEND_MIDDLE",     (t) | SEND_REQ | SRN_M_MIDDLE), \
	OP((base) + 0x02, pfx "SEND_LAST",       (t) | SEND_REQ | SRN_M_LAST | SRN_M_COMP), \
	OP((base) + 0x03, pfx "SEND_LAST_IMM",   (t) | SEND_REQ | SRN_M_LAST | SRN_M_COMP | SRN_M_IMMDT), \
	OP((base) + 0x04, pfx "SEND_ONLY",       (t) | SEND_REQ | SRN_M_ONLY | SRN_M_COMP), \
	OP((base) + 0x05, pfx "SEND_ONLY_IMM",   (t) | SEND_REQ | SRN_M_ONLY | SRN_M_COMP | SRN_M_IMMDT), \
	OP((base) + 0x06, pfx "WRITE_FIRST",     (t) | WRITE_REQ | SRN_M_FIRST | SRN_M_RETH), \
	OP((base) + 0x07, pfx "WRITE_MIDDLE",    (t) | WRITE_REQ | SRN_M_MIDDLE), \
	OP((base) + 0x08, pfx "WRITE_LAST",      (t) | WRITE_REQ | SRN_M_LAST), \
	OP((base) + 0x09, pfx "WRITE_LAST_IMM",  (t) | WRITE_REQ | SRN_M_LAST | SRN_M_COMP | SRN_M_IMMDT), \
	OP((base) + 0x0a, pfx "WRITE_ONLY",      (t) | WRITE_REQ | SRN_M_ONLY | SRN_M_RETH), \
	OP((base) + 0x0b, pfx "WRITE_ONLY_IMM",  (t) | WRITE_REQ | SRN_M_ONLY | SRN_M_COMP | SRN_M_RETH | SRN_M_IMMDT)

const struct srn_opinfo srn_opcode_table[256] = {
	/* RC */
	SEND_WRITE_OPS(0x00, "RC_", SRN_M_RC),
	OP(SRN_OP_RC_READ_REQUEST, "RC_READ_REQUEST",
	   SRN_M_RC | SRN_M_REQ | SRN_M_READ | SRN_M_ONLY | SRN_M_RETH),
	OP(SRN_OP_RC_READ_RESPONSE_FIRST, "RC_READ_RESPONSE_FIRST",
	   SRN_M_RC | READ_RSP | SRN_M_FIRST | SRN_M_AETH),
	OP(SRN_OP_RC_READ_RESPONSE_MIDDLE, "RC_READ_RESPONSE_MIDDLE",
	   SRN_M_RC | READ_RSP | SRN_M_MIDDLE),
	OP(SRN_OP_RC_READ_RESPONSE_LAST, "RC_READ_RESPONSE_LAST",
	   SRN_M_RC | READ_RSP | SRN_M_LAST | SRN_M_AETH),
	OP(SRN_OP_RC_READ_RESPONSE_ONLY, "RC_READ_RESPONSE_ONLY",
	   SRN_M_RC | READ_RSP | SRN_M_ONLY | SRN_M_AETH),
	OP(SRN_OP_RC_ACKNOWLEDGE, "RC_ACKNOWLEDGE",
	   SRN_M_RC | SRN_M_RESP | SRN_M_ONLY | SRN_M_AETH),
	OP(SRN_OP_RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE",
	   SRN_M_RC | SRN_M_RESP | SRN_M_ATOMIC | SRN_M_ONLY | SRN_M_AETH | SRN_M_ATMACK),
	OP(SRN_OP_RC_COMPARE_SWAP, "RC_COMPARE_SWAP",
	   SRN_M_RC | SRN_M_REQ | SRN_M_ATOMIC | SRN_M_ONLY | SRN_M_ATMETH),
	OP(SRN_OP_RC_FETCH_ADD, "RC_FETCH_ADD",
	   SRN_M_RC | SRN_M_REQ | SRN_M_ATOMIC | SRN_M_ONLY | SRN_M_ATMETH),
	OP(SRN_OP_RC_SEND_LAST_INV, "RC_SEND_LAST_INV",
	   SRN_M_RC | SEND_REQ | SRN_M_LAST | SRN_M_COMP | SRN_M_IETH),
	OP(SRN_OP_RC_SEND_ONLY_INV, "RC_SEND_ONLY_INV",
	   SRN_M_RC | SEND_REQ | SRN_M_ONLY | SRN_M_COMP | SRN_M_IETH),
	/* UC */
	SEND_WRITE_OPS(0x20, "UC_", SRN_M_UC),
	/* UD */
	OP(SRN_OP_UD_SEND_ONLY, "UD_SEND_ONLY",
	   SRN_M_UD | SEND_REQ | SRN_M_ONLY | SRN_M_COMP | SRN_M_DETH),
	OP(SRN_OP_UD_SEND_ONLY_IMM, "UD_SEND_ONLY_IMM",
	   SRN_M_UD | SEND_REQ | SRN_M_ONLY | SRN_M_COMP | SRN_M_DETH | SRN_M_IMMDT),
	/* RoCEv2 CNP: BTH + 16 reserved bytes, no payload */
	OP(SRN_OP_CNP, "CNP", SRN_M_CNP),
};
