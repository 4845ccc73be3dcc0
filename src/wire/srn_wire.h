/*
 * srn_wire.h - RoCEv2 wire format: one opcode table, bounds-checked parser,
 * header writer and ICRC.
 *
 * Layering: nothing in src/wire depends on any other softrnic module.
 * Every multi-byte field is read/written with the big-endian helpers below
 * (never struct overlays), so the code is safe under UBSan and fuzzing.
 *
 * A "packet" here is the UDP payload of a RoCEv2 datagram:
 *   BTH | [RDETH] [DETH] [RETH] [AtomicETH] [AETH] [AtomicAckETH] [ImmDt] [IETH]
 *       | payload | pad (0..3, BTH.PadCnt) | ICRC (4 bytes)
 * The IP and UDP headers are put on by the kernel; their ICRC-covered fields
 * are passed in as struct srn_ip_info.
 */
#ifndef SRN_WIRE_H
#define SRN_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define SRN_ROCEV2_UDP_PORT 4791u

/* header lengths in bytes */
#define SRN_BTH_LEN     12u
#define SRN_DETH_LEN     8u
#define SRN_RETH_LEN    16u
#define SRN_ATMETH_LEN  28u
#define SRN_AETH_LEN     4u
#define SRN_ATMACK_LEN   8u
#define SRN_IMMDT_LEN    4u
#define SRN_IETH_LEN     4u
#define SRN_ICRC_LEN     4u
#define SRN_CNP_PAYLOAD_LEN 16u /* CNP: BTH + 16 reserved bytes + ICRC */

#define SRN_PSN_MASK   0xFFFFFFu
#define SRN_QPN_MASK   0xFFFFFFu
#define SRN_MSN_MASK   0xFFFFFFu
#define SRN_DEFAULT_PKEY 0xFFFFu

/* ---- BTH opcodes (IBA 9.2, table 38; RoCEv2 annex A17 for CNP) ---- */
enum srn_opcode {
	/* RC: transport 000 */
	SRN_OP_RC_SEND_FIRST                  = 0x00,
	SRN_OP_RC_SEND_MIDDLE                 = 0x01,
	SRN_OP_RC_SEND_LAST                   = 0x02,
	SRN_OP_RC_SEND_LAST_IMM               = 0x03,
	SRN_OP_RC_SEND_ONLY                   = 0x04,
	SRN_OP_RC_SEND_ONLY_IMM               = 0x05,
	SRN_OP_RC_WRITE_FIRST                 = 0x06,
	SRN_OP_RC_WRITE_MIDDLE                = 0x07,
	SRN_OP_RC_WRITE_LAST                  = 0x08,
	SRN_OP_RC_WRITE_LAST_IMM              = 0x09,
	SRN_OP_RC_WRITE_ONLY                  = 0x0a,
	SRN_OP_RC_WRITE_ONLY_IMM              = 0x0b,
	SRN_OP_RC_READ_REQUEST                = 0x0c,
	SRN_OP_RC_READ_RESPONSE_FIRST         = 0x0d,
	SRN_OP_RC_READ_RESPONSE_MIDDLE        = 0x0e,
	SRN_OP_RC_READ_RESPONSE_LAST          = 0x0f,
	SRN_OP_RC_READ_RESPONSE_ONLY          = 0x10,
	SRN_OP_RC_ACKNOWLEDGE                 = 0x11,
	SRN_OP_RC_ATOMIC_ACKNOWLEDGE          = 0x12,
	SRN_OP_RC_COMPARE_SWAP                = 0x13,
	SRN_OP_RC_FETCH_ADD                   = 0x14,
	SRN_OP_RC_SEND_LAST_INV               = 0x16,
	SRN_OP_RC_SEND_ONLY_INV               = 0x17,
	/* UC: transport 001 */
	SRN_OP_UC_SEND_FIRST                  = 0x20,
	SRN_OP_UC_SEND_MIDDLE                 = 0x21,
	SRN_OP_UC_SEND_LAST                   = 0x22,
	SRN_OP_UC_SEND_LAST_IMM               = 0x23,
	SRN_OP_UC_SEND_ONLY                   = 0x24,
	SRN_OP_UC_SEND_ONLY_IMM               = 0x25,
	SRN_OP_UC_WRITE_FIRST                 = 0x26,
	SRN_OP_UC_WRITE_MIDDLE                = 0x27,
	SRN_OP_UC_WRITE_LAST                  = 0x28,
	SRN_OP_UC_WRITE_LAST_IMM              = 0x29,
	SRN_OP_UC_WRITE_ONLY                  = 0x2a,
	SRN_OP_UC_WRITE_ONLY_IMM              = 0x2b,
	/* UD: transport 011 */
	SRN_OP_UD_SEND_ONLY                   = 0x64,
	SRN_OP_UD_SEND_ONLY_IMM               = 0x65,
	/* RoCEv2 congestion notification packet */
	SRN_OP_CNP                            = 0x81,
};

/* ---- per-opcode mask bits (rxe style: test bits, not opcode lists) ---- */
enum srn_op_mask {
	SRN_M_DETH      = 1u << 0,
	SRN_M_RETH      = 1u << 1,
	SRN_M_ATMETH    = 1u << 2,
	SRN_M_AETH      = 1u << 3,
	SRN_M_ATMACK    = 1u << 4,
	SRN_M_IMMDT     = 1u << 5,
	SRN_M_IETH      = 1u << 6,
	SRN_M_PAYLOAD   = 1u << 7,  /* may carry payload */
	SRN_M_REQ       = 1u << 8,  /* request (requester -> responder) */
	SRN_M_RESP      = 1u << 9,  /* response (ACK, atomic ACK, read response) */
	SRN_M_SEND      = 1u << 10,
	SRN_M_WRITE     = 1u << 11,
	SRN_M_READ      = 1u << 12, /* read request or read response */
	SRN_M_ATOMIC    = 1u << 13, /* atomic request or atomic ack */
	SRN_M_FIRST     = 1u << 14,
	SRN_M_MIDDLE    = 1u << 15,
	SRN_M_LAST      = 1u << 16,
	SRN_M_ONLY      = SRN_M_FIRST | SRN_M_LAST,
	SRN_M_COMP      = 1u << 17, /* consumes an RQ WQE / completes at responder */
	SRN_M_RC        = 1u << 18,
	SRN_M_UC        = 1u << 19,
	SRN_M_UD        = 1u << 20,
	SRN_M_CNP       = 1u << 21,
	SRN_M_VALID     = 1u << 31, /* opcode is known */
};

struct srn_opinfo {
	const char *name;   /* e.g. "RC_SEND_FIRST"; NULL if unknown */
	uint32_t mask;      /* enum srn_op_mask */
	uint8_t hdr_len;    /* BTH + all extension headers */
	/* offsets from start of BTH of each extension header present (0 = absent) */
	uint8_t off_deth, off_reth, off_atmeth, off_aeth, off_atmack, off_immdt, off_ieth;
	uint8_t payload_off; /* == hdr_len */
};

/* The one table. Index by BTH opcode. Unknown opcodes have mask 0. */
extern const struct srn_opinfo srn_opcode_table[256];

static inline const struct srn_opinfo *srn_opinfo(uint8_t opcode)
{
	return &srn_opcode_table[opcode];
}

/* ---- AETH syndromes (IBA 9.7.5.1.4) ---- */
enum srn_aeth_type {
	SRN_AETH_ACK     = 0x0,  /* syndrome bits 7..5 = 000: ACK, low 5 bits = credit count */
	SRN_AETH_RNR_NAK = 0x1,  /* 001: RNR NAK, low 5 bits = RNR timer code */
	SRN_AETH_NAK     = 0x3,  /* 011: NAK, low 5 bits = NAK code */
};
enum srn_nak_code {
	SRN_NAK_PSN_SEQ_ERR      = 0,
	SRN_NAK_INVALID_REQUEST  = 1,
	SRN_NAK_REMOTE_ACCESS    = 2,
	SRN_NAK_REMOTE_OP_ERR    = 3,
	SRN_NAK_INVALID_RD_REQ   = 4,
};
#define SRN_AETH_SYN(type, val) ((uint8_t)(((type) << 5) | ((val) & 0x1f)))
#define SRN_AETH_CREDITS_INVALID 0x1f /* "credit count invalid" code */

/* ---- parsed packet view ---- */
struct srn_pkt {
	/* BTH */
	uint8_t  opcode;
	bool     se;          /* solicited event */
	bool     mig;
	uint8_t  pad;         /* pad count 0..3 */
	uint8_t  tver;
	uint16_t pkey;
	bool     fecn, becn;  /* BTH byte 4 bits 7 and 6 */
	uint32_t dqpn;        /* 24 bits */
	bool     ackreq;
	uint32_t psn;         /* 24 bits */
	/* DETH */
	uint32_t deth_qkey;
	uint32_t deth_sqpn;
	/* RETH */
	uint64_t reth_va;
	uint32_t reth_rkey;
	uint32_t reth_len;
	/* AtomicETH */
	uint64_t atm_va;
	uint32_t atm_rkey;
	uint64_t atm_swap_add;
	uint64_t atm_cmp;
	/* AETH */
	uint8_t  aeth_syn;
	uint32_t aeth_msn;    /* 24 bits */
	/* AtomicAckETH */
	uint64_t atmack_orig;
	/* ImmDt: raw 4 bytes as on the wire, kept in network byte order */
	uint32_t imm_be;
	/* IETH */
	uint32_t ieth_rkey;
	/* payload (excludes pad and ICRC) */
	const uint8_t *payload;
	uint32_t paylen;
	/* derived */
	const struct srn_opinfo *info;
};

/* Error codes of the wire module (negative). */
enum srn_wire_err {
	SRN_WIRE_OK          = 0,
	SRN_WIRE_ETRUNC      = -1, /* shorter than headers + ICRC */
	SRN_WIRE_EOPCODE     = -2, /* unknown/unsupported opcode */
	SRN_WIRE_EVERSION    = -3, /* BTH TVer != 0 */
	SRN_WIRE_EPAD        = -4, /* pad count inconsistent with payload / opcode */
	SRN_WIRE_ELEN        = -5, /* payload on an opcode that carries none, etc. */
	SRN_WIRE_EICRC       = -6, /* ICRC mismatch */
};
const char *srn_wire_strerror(int err);

/*
 * Parse buf[0..len) (UDP payload incl. ICRC). Never reads outside it.
 * Does NOT check the ICRC (see srn_icrc_check). On success fills *p,
 * p->payload points into buf.
 */
int srn_pkt_parse(struct srn_pkt *p, const uint8_t *buf, size_t len);

/*
 * Write BTH and the extension headers that p->opcode's table entry names,
 * taking values from *p, into buf. Returns header length, or a negative
 * error if cap is too small or the opcode unknown. Payload, pad bytes and
 * ICRC are written by the caller (srn_pkt_finish).
 */
int srn_pkt_write_hdrs(uint8_t *buf, size_t cap, const struct srn_pkt *p);

/* Largest UDP payload srn_pkt_parse accepts (IPv4: 65535 - 20 - 8). */
#define SRN_PKT_MAX_LEN 65507u

struct srn_ip_info;
/*
 * Finish a packet whose headers srn_pkt_write_hdrs wrote (hdr_len bytes) and
 * whose paylen payload bytes the caller has placed at buf + hdr_len: sets
 * BTH.PadCnt to srn_pad_for(paylen), writes the zero pad bytes and the ICRC
 * (for ip; if ip is NULL the ICRC slot is zeroed, to be filled later with
 * srn_icrc_store). Returns the total UDP payload length, SRN_WIRE_ETRUNC if
 * cap is too small, SRN_WIRE_EOPCODE for an unknown opcode in buf[0],
 * SRN_WIRE_ELEN for payload on an opcode without SRN_M_PAYLOAD, a hdr_len
 * that is not the opcode's, or a total above SRN_PKT_MAX_LEN.
 */
int srn_pkt_finish(uint8_t *buf, size_t cap, size_t hdr_len, uint32_t paylen,
		   const struct srn_ip_info *ip);

/* ---- ICRC (RoCEv2, IBA annex A17.3.3) ---- */
struct srn_ip_info {
	bool     v6;              /* only IPv4 is implemented for now */
	uint8_t  src[16], dst[16];/* v4 addresses in [12..15] (IPv4-mapped), network order */
	uint16_t ip_id;           /* IPv4 identification as the kernel sends it */
	bool     df;              /* IPv4 don't-fragment bit */
	uint16_t sport, dport;    /* UDP ports, host order */
	uint8_t  ttl;             /* masked in the ICRC; used by capture only */
	uint8_t  tos;             /* DSCP|ECN; masked in the ICRC; used by capture only */
};

/* ICRC of a UDP payload of length len (the last 4 bytes are the ICRC slot and
 * are not covered). Returns the value in the byte order to be stored with
 * srn_icrc_store (see icrc.c for the convention). */
uint32_t srn_icrc_compute(const struct srn_ip_info *ip, const uint8_t *pkt, size_t len);
/* Write ICRC into pkt[len-4..len). */
void srn_icrc_store(const struct srn_ip_info *ip, uint8_t *pkt, size_t len);
/* 0 if ok, SRN_WIRE_EICRC if not. */
int srn_icrc_check(const struct srn_ip_info *ip, const uint8_t *pkt, size_t len);

/* The IPv4 ID under the ICRC (icrc_id.c). srn_icrc_id_shift: a factor that
 * depends only on the packet length (UDP payload len, ICRC included);
 * srn_icrc_id_delta: what the ICRC changes by when the ID changes by
 * id_xor; srn_icrc_set_id: rewrite a stored ICRC computed with ID `from` to
 * the one of ID `to`. */
uint32_t srn_icrc_id_shift(size_t len);
uint32_t srn_icrc_id_delta(uint32_t shift, uint16_t id_xor);
void srn_icrc_set_id(uint8_t *pkt, size_t len, uint32_t shift, uint16_t from, uint16_t to);
/* Check the ICRC with ip->ip_id, then (if ip->ip_id < span, span a power of
 * two <= 32768) with every other ID in 0..span-1: a receiver behind a UDP
 * socket does not see the ID a GSO segment carried. 0 and the ID that
 * matched in *id_out (may be NULL), or SRN_WIRE_EICRC. */
int srn_icrc_check_ids(const struct srn_ip_info *ip, const uint8_t *pkt, size_t len,
		       uint16_t span, uint16_t *id_out);

/* ---- IPv4 + UDP headers (ipv4.c): the one implementation -------------- */
#define SRN_IPV4_HDR_LEN      20u
#define SRN_IPV4_UDP_HDR_LEN  28u   /* IPv4 (IHL 5) + UDP */
/* IPv4 header checksum of hdr[0..len) (0 over a valid header) */
uint16_t srn_ipv4_csum(const uint8_t *hdr, size_t len);
/* Write a 20-byte IPv4 header (IHL 5, UDP) of a datagram of total_len bytes:
 * TOS, ID, DF, TTL (0 -> 64) and addresses from ip, a correct checksum. */
void srn_ipv4_write(uint8_t out[SRN_IPV4_HDR_LEN], const struct srn_ip_info *ip, uint16_t total_len);
/* Write the IPv4 + UDP headers (28 bytes) of a UDP payload of paylen bytes as
 * Linux sends a softrnic datagram (UDP checksum 0); returns 28, or 0 if
 * cap < 28 or the packet would exceed 65535 bytes. */
size_t srn_ipv4_udp_write(uint8_t *out, size_t cap, const struct srn_ip_info *ip, size_t paylen);
/* Parse errors (negative) */
enum {
	SRN_IPV4_ETRUNC = -1,   /* shorter than its headers */
	SRN_IPV4_EVERSION = -2, /* not IPv4 */
	SRN_IPV4_EIHL = -3,     /* IHL < 5 or beyond the datagram */
	SRN_IPV4_ELEN = -4,     /* total length != datagram length */
	SRN_IPV4_ECSUM = -5,    /* bad header checksum */
	SRN_IPV4_EPROTO = -6,   /* not UDP */
	SRN_IPV4_EFRAG = -7,    /* a fragment (MF or offset) */
	SRN_IPV4_EUDPLEN = -8,  /* UDP length != what the IPv4 header leaves */
};
/* Parse the IPv4 header of d[0..len) (one whole packet): version, IHL,
 * total length == len, checksum. Fills addresses (IPv4-mapped), TOS, TTL,
 * ID, DF and *ihl; returns the protocol number (>= 0) or an SRN_IPV4_E*. */
int srn_ipv4_parse(const uint8_t *d, size_t len, struct srn_ip_info *ip, size_t *ihl);
/* Parse a whole IPv4/UDP packet (no fragment): fills ip (ports too) and *off
 * (offset of the UDP payload); returns the UDP payload length or SRN_IPV4_E*. */
int srn_ipv4_udp_parse(const uint8_t *d, size_t len, struct srn_ip_info *ip, size_t *off);

/* ---- RoCEv2 encapsulation and framing (roce.c) ---------------------------
 * Every packet softrnic sends is framed here: srn_pkt_write_hdrs writes the
 * IB transport headers, the builder places the payload, and one of the
 * finishers below writes pad and ICRC for the packet's addressing. */

/* What the encapsulation below the IB transport headers needs beyond the L3
 * addresses: for RoCEv2 the UDP ports and the IPv4 Identification that the
 * ICRC covers. The core never interprets it: it copies tokens the port gave
 * it (srn_dev_cfg.l4) and hands received ones back to the functions here. */
struct srn_l4 {
	uint16_t src;           /* UDP source port: flow entropy (W-02) */
	uint16_t dst;           /* UDP destination port (4791) */
	uint16_t ip_id;         /* IPv4 identification (0 for DF datagrams) */
	/* received: ip_id is the real header's (the fabric backend). Else it
	 * is a hint (a GSO segment's index) and the ICRC check also accepts
	 * the other IDs a GSO send gives (0..SRN_GSO_ID_SPAN-1). */
	bool     ip_id_exact;
};
#define SRN_GSO_ID_SPAN 64      /* the kernel's UDP_MAX_SEGMENTS */

/* The addressing of one packet, as its network headers say (received) or
 * must say (sent): L3 addresses, ECN/DSCP/TTL, and the opaque L4 token. */
struct srn_pkt_meta {
	uint8_t  src_gid[16];   /* L3 source: IPv4-mapped (::ffff:a.b.c.d) */
	uint8_t  dst_gid[16];
	uint8_t  ecn;           /* IP ECN bits: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE */
	uint8_t  dscp;
	uint8_t  ttl;           /* hop limit */
	struct srn_l4 l4;       /* opaque to the core */
};

/* the ICRC pseudo-header fields of a packet's addressing (TTL 0 -> 64) */
void srn_roce_ip_info(struct srn_ip_info *ip, const struct srn_pkt_meta *m);
/* a packet's addressing from the headers a port parsed */
void srn_roce_meta_from_ip(struct srn_pkt_meta *m, const struct srn_ip_info *ip, bool id_exact);
/* a default L4 token for a flow hash when the port gave none: a source port
 * in 0xC000..0xFFFF, destination 4791 */
void srn_roce_l4_default(struct srn_l4 *l4, uint32_t flow_hash);
/* Finish a packet (srn_pkt_finish) with the ICRC of its addressing m.
 * Returns the UDP payload length or a negative SRN_WIRE_E*. */
int srn_roce_finish(uint8_t *buf, size_t cap, size_t hdr_len, uint32_t paylen,
		    const struct srn_pkt_meta *m);
/* A CNP (RoCEv2 annex A17.9.2): BTH opcode 0x81 with BECN, P_Key default,
 * the destination QPN, 16 reserved bytes, ICRC. Returns its length or < 0. */
int srn_roce_cnp(uint8_t *buf, size_t cap, uint32_t dqpn, const struct srn_pkt_meta *m);
/* A packet of a manufacturer-specific opcode (0xC0..0xFF, docs/wire.md):
 * BTH (opcode, default P_Key, dqpn, psn) in front of body_len bytes the
 * caller placed at buf + SRN_BTH_LEN (a multiple of 4), then the ICRC.
 * Returns its length or < 0. */
int srn_roce_vendor(uint8_t *buf, size_t cap, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		    size_t body_len, const struct srn_pkt_meta *m);
/* Check a received packet's ICRC for its addressing m (with m->l4.ip_id,
 * then the other GSO IDs unless ip_id_exact). 0 and the ID that matched in
 * *id_out (may be NULL), or SRN_WIRE_EICRC. */
int srn_roce_icrc_verify(const struct srn_pkt_meta *m, const uint8_t *pkt, size_t len,
			 uint16_t *id_out);

/* pad count for a payload of n bytes */
static inline uint8_t srn_pad_for(uint32_t n) { return (uint8_t)((4u - (n & 3u)) & 3u); }

/* ---- big-endian helpers ---- */
static inline uint16_t srn_get16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t srn_get24(const uint8_t *p) { return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2]; }
static inline uint32_t srn_get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t srn_get64(const uint8_t *p) { return ((uint64_t)srn_get32(p) << 32) | srn_get32(p + 4); }
static inline void srn_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void srn_put24(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 16); p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)v; }
static inline void srn_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void srn_put64(uint8_t *p, uint64_t v) { srn_put32(p, (uint32_t)(v >> 32)); srn_put32(p + 4, (uint32_t)v); }

/* ---- PSN arithmetic (24-bit, modular; PSN-01) ---- */
/* signed distance a - b in the 24-bit space, in [-2^23, 2^23) */
static inline int32_t srn_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}
static inline uint32_t srn_psn_add(uint32_t a, uint32_t n) { return (a + n) & SRN_PSN_MASK; }
#define SRN_PSN_LT(a, b) (srn_psn_diff((a), (b)) < 0)
#define SRN_PSN_LE(a, b) (srn_psn_diff((a), (b)) <= 0)
#define SRN_PSN_GT(a, b) (srn_psn_diff((a), (b)) > 0)
#define SRN_PSN_GE(a, b) (srn_psn_diff((a), (b)) >= 0)

/* path MTU enum (IBV_MTU_256=1 .. IBV_MTU_4096=5) to bytes */
static inline uint32_t srn_mtu_bytes(int mtu_enum)
{
	return (mtu_enum >= 1 && mtu_enum <= 5) ? (128u << mtu_enum) : 0;
}

#endif /* SRN_WIRE_H */
