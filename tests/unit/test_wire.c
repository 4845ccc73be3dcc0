/*
 * test_wire.c - unit tests of src/wire (W-01, W-03, W-05, PSN-01).
 *
 * The codec is checked against (a) a literal table written from IBA 9.2/9.3,
 * (b) the independent test encoder tests/lib/srn_tenc (own table, own byte
 * code, own bitwise CRC) in both directions, and (c) ICRC known-answer
 * vectors produced by scapy.contrib.roce.
 */
#include "srn_test.h"
#include "wire/srn_wire.h"
#include "lib/srn_tenc.h"

#include <stdbool.h>
#include <stdlib.h>

/* ---- literal expectations (IBA vol 1, 9.2 table 38 and 9.3) ---- */
#define P   SRN_M_PAYLOAD
#define RQ  SRN_M_REQ
#define RS  SRN_M_RESP
#define SND SRN_M_SEND
#define WR  SRN_M_WRITE
#define RD  SRN_M_READ
#define AT  SRN_M_ATOMIC
#define F   SRN_M_FIRST
#define MI  SRN_M_MIDDLE
#define LA  SRN_M_LAST
#define ON  SRN_M_ONLY
#define CO  SRN_M_COMP
#define RC  SRN_M_RC
#define UC  SRN_M_UC
#define UD  SRN_M_UD

struct exp_op {
	uint8_t op;
	const char *name;
	uint32_t mask;   /* everything except SRN_M_VALID */
	uint8_t hdr_len;
	/* offsets: deth, reth, atmeth, aeth, atmack, immdt, ieth */
	uint8_t off[7];
};

static const struct exp_op exp_ops[] = {
	{ 0x00, "RC_SEND_FIRST", RC | P | RQ | SND | F, 12, { 0 } },
	{ 0x01, "RC_SEND_MIDDLE", RC | P | RQ | SND | MI, 12, { 0 } },
	{ 0x02, "RC_SEND_LAST", RC | P | RQ | SND | LA | CO, 12, { 0 } },
	{ 0x03, "RC_SEND_LAST_IMM", RC | P | RQ | SND | LA | CO | SRN_M_IMMDT, 16, { 0, 0, 0, 0, 0, 12, 0 } },
	{ 0x04, "RC_SEND_ONLY", RC | P | RQ | SND | ON | CO, 12, { 0 } },
	{ 0x05, "RC_SEND_ONLY_IMM", RC | P | RQ | SND | ON | CO | SRN_M_IMMDT, 16, { 0, 0, 0, 0, 0, 12, 0 } },
	{ 0x06, "RC_WRITE_FIRST", RC | P | RQ | WR | F | SRN_M_RETH, 28, { 0, 12, 0, 0, 0, 0, 0 } },
	{ 0x07, "RC_WRITE_MIDDLE", RC | P | RQ | WR | MI, 12, { 0 } },
	{ 0x08, "RC_WRITE_LAST", RC | P | RQ | WR | LA, 12, { 0 } },
	{ 0x09, "RC_WRITE_LAST_IMM", RC | P | RQ | WR | LA | CO | SRN_M_IMMDT, 16, { 0, 0, 0, 0, 0, 12, 0 } },
	{ 0x0a, "RC_WRITE_ONLY", RC | P | RQ | WR | ON | SRN_M_RETH, 28, { 0, 12, 0, 0, 0, 0, 0 } },
	{ 0x0b, "RC_WRITE_ONLY_IMM", RC | P | RQ | WR | ON | CO | SRN_M_RETH | SRN_M_IMMDT, 32, { 0, 12, 0, 0, 0, 28, 0 } },
	{ 0x0c, "RC_READ_REQUEST", RC | RQ | RD | ON | SRN_M_RETH, 28, { 0, 12, 0, 0, 0, 0, 0 } },
	{ 0x0d, "RC_READ_RESPONSE_FIRST", RC | P | RS | RD | F | SRN_M_AETH, 16, { 0, 0, 0, 12, 0, 0, 0 } },
	{ 0x0e, "RC_READ_RESPONSE_MIDDLE", RC | P | RS | RD | MI, 12, { 0 } },
	{ 0x0f, "RC_READ_RESPONSE_LAST", RC | P | RS | RD | LA | SRN_M_AETH, 16, { 0, 0, 0, 12, 0, 0, 0 } },
	{ 0x10, "RC_READ_RESPONSE_ONLY", RC | P | RS | RD | ON | SRN_M_AETH, 16, { 0, 0, 0, 12, 0, 0, 0 } },
	{ 0x11, "RC_ACKNOWLEDGE", RC | RS | ON | SRN_M_AETH, 16, { 0, 0, 0, 12, 0, 0, 0 } },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", RC | RS | AT | ON | SRN_M_AETH | SRN_M_ATMACK, 24, { 0, 0, 0, 12, 16, 0, 0 } },
	{ 0x13, "RC_COMPARE_SWAP", RC | RQ | AT | ON | SRN_M_ATMETH, 40, { 0, 0, 12, 0, 0, 0, 0 } },
	{ 0x14, "RC_FETCH_ADD", RC | RQ | AT | ON | SRN_M_ATMETH, 40, { 0, 0, 12, 0, 0, 0, 0 } },
	{ 0x16, "RC_SEND_LAST_INV", RC | P | RQ | SND | LA | CO | SRN_M_IETH, 16, { 0, 0, 0, 0, 0, 0, 12 } },
	{ 0x17, "RC_SEND_ONLY_INV", RC | P | RQ | SND | ON | CO | SRN_M_IETH, 16, { 0, 0, 0, 0, 0, 0, 12 } },
	{ 0x20, "UC_SEND_FIRST", UC | P | RQ | SND | F, 12, { 0 } },
	{ 0x21, "UC_SEND_MIDDLE", UC | P | RQ | SND | MI, 12, { 0 } },
	{ 0x22, "UC_SEND_LAST", UC | P | RQ | SND | LA | CO, 12, { 0 } },
	{ 0x23, "UC_SEND_LAST_IMM", UC | P | RQ | SND | LA | CO | SRN_M_IMMDT, 16, { 0, 0, 0, 0, 0, 12, 0 } },
	{ 0x24, "UC_SEND_ONLY", UC | P | RQ | SND | ON | CO, 12, { 0 } },
	{ 0x25, "UC_SEND_ONLY_IMM", UC | P | RQ | SND | ON | CO | SRN_M_IMMDT, 16, { 0, 0, 0, 0, 0, 12, 0 } },
	{ 0x26, "UC_WRITE_FIRST", UC | P | RQ | WR | F | SRN_M_RETH, 28, { 0, 12, 0, 0, 0, 0, 0 } },
	{ 0x27, "UC_WRITE_MIDDLE", UC | P | RQ | WR | MI, 12, { 0 } },
	{ 0x28, "UC_WRITE_LAST", UC | P | RQ | WR | LA, 12, { 0 } },
	{ 0x29, "UC_WRITE_LAST_IMM", UC | P | RQ | WR | LA | CO | SRN_M_IMMDT, 16, { 0, 0, 0, 0, 0, 12, 0 } },
	{ 0x2a, "UC_WRITE_ONLY", UC | P | RQ | WR | ON | SRN_M_RETH, 28, { 0, 12, 0, 0, 0, 0, 0 } },
	{ 0x2b, "UC_WRITE_ONLY_IMM", UC | P | RQ | WR | ON | CO | SRN_M_RETH | SRN_M_IMMDT, 32, { 0, 12, 0, 0, 0, 28, 0 } },
	{ 0x64, "UD_SEND_ONLY", UD | P | RQ | SND | ON | CO | SRN_M_DETH, 20, { 12, 0, 0, 0, 0, 0, 0 } },
	{ 0x65, "UD_SEND_ONLY_IMM", UD | P | RQ | SND | ON | CO | SRN_M_DETH | SRN_M_IMMDT, 24, { 12, 0, 0, 0, 0, 20, 0 } },
	{ 0x81, "CNP", SRN_M_CNP, 28, { 0 } },
};
#define N_EXP (sizeof(exp_ops) / sizeof(exp_ops[0]))

static const struct exp_op *find_exp(unsigned op)
{
	for (size_t i = 0; i < N_EXP; i++)
		if (exp_ops[i].op == op)
			return &exp_ops[i];
	return NULL;
}

/* ---- shared fixtures ---- */
static const uint8_t SRC[4] = { 192, 168, 7, 1 };
static const uint8_t DST[4] = { 192, 168, 7, 2 };
#define SPORT 0xC123
#define IPID 0

static struct srn_ip_info ip4(const uint8_t s[4], const uint8_t d[4], uint16_t sport,
			      uint16_t dport, uint16_t id, bool df)
{
	struct srn_ip_info ip;
	memset(&ip, 0, sizeof(ip));
	ip.src[10] = ip.src[11] = ip.dst[10] = ip.dst[11] = 0xff; /* v4-mapped */
	memcpy(ip.src + 12, s, 4);
	memcpy(ip.dst + 12, d, 4);
	ip.sport = sport;
	ip.dport = dport;
	ip.ip_id = id;
	ip.df = df;
	ip.ttl = 64;
	return ip;
}

static struct srn_ip_info def_ip(void)
{
	return ip4(SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, IPID, true);
}

static uint8_t payload_bytes[8192]; /* payload = payload_bytes + seed, seed < 4096 */

static void init_payload(void)
{
	for (size_t i = 0; i < sizeof(payload_bytes); i++)
		payload_bytes[i] = (uint8_t)(i * 7 + 3);
}

/* a tenc packet with every field set to a distinct value derived from seed */
static struct srn_tenc_pkt make_tenc(uint8_t op, uint32_t seed, uint32_t paylen)
{
	struct srn_tenc_pkt t;
	srn_tenc_init(&t, op);
	t.se = seed & 1;
	t.ackreq = (seed >> 1) & 1;
	t.fecn = (seed >> 2) & 1;
	t.becn = (seed >> 3) & 1;
	t.mig = (seed >> 4) & 1;
	t.pkey = (uint16_t)(0x8000 | seed);
	t.dqpn = (0x123456 + seed * 0x10101) & 0xFFFFFF;
	t.psn = (0xFFFFF0 + seed) & 0xFFFFFF;
	t.qkey = 0x80010000u + seed;
	t.sqpn = (0xABCDE0 + seed) & 0xFFFFFF;
	t.va = 0x0123456789ABCDEFull ^ seed;
	t.rkey = 0xDEAD0000u | seed;
	t.dmalen = 0x10000u + seed;
	t.swap_add = 0xFEDCBA9876543210ull + seed;
	t.cmp = 0x1122334455667788ull - seed;
	t.syndrome = (uint8_t)(0x60 | (seed & 0x1f));
	t.msn = (0xFFFF00 + seed) & 0xFFFFFF;
	t.orig = 0xA5A5A5A55A5A5A5Aull ^ seed;
	uint8_t imm[4] = { 0xCA, 0xFE, (uint8_t)seed, 0x01 };
	memcpy(&t.imm_be, imm, 4);
	t.ieth_rkey = 0xBEEF0000u | seed;
	t.payload = payload_bytes + seed;
	t.paylen = paylen;
	return t;
}

/* what srn_pkt_parse must return for packet t of an opcode with mask m */
static struct srn_pkt srn_from_tenc(const struct srn_tenc_pkt *t, uint32_t m)
{
	struct srn_pkt e;
	memset(&e, 0, sizeof(e));
	e.opcode = t->opcode;
	e.se = t->se;
	e.mig = t->mig;
	e.pad = srn_pad_for(t->paylen);
	e.pkey = t->pkey;
	e.fecn = t->fecn;
	e.becn = t->becn;
	e.dqpn = t->dqpn;
	e.ackreq = t->ackreq;
	e.psn = t->psn;
	if (m & SRN_M_DETH) { e.deth_qkey = t->qkey; e.deth_sqpn = t->sqpn; }
	if (m & SRN_M_RETH) { e.reth_va = t->va; e.reth_rkey = t->rkey; e.reth_len = t->dmalen; }
	if (m & SRN_M_ATMETH) {
		e.atm_va = t->va; e.atm_rkey = t->rkey;
		e.atm_swap_add = t->swap_add; e.atm_cmp = t->cmp;
	}
	if (m & SRN_M_AETH) { e.aeth_syn = t->syndrome; e.aeth_msn = t->msn; }
	if (m & SRN_M_ATMACK) e.atmack_orig = t->orig;
	if (m & SRN_M_IMMDT) e.imm_be = t->imm_be;
	if (m & SRN_M_IETH) e.ieth_rkey = t->ieth_rkey;
	e.payload = t->payload;
	e.paylen = (m & SRN_M_PAYLOAD) ? t->paylen : 0;
	e.info = srn_opinfo(t->opcode);
	return e;
}

/* the tenc packet that must encode to the same bytes as srn packet p */
static struct srn_tenc_pkt tenc_from_srn(const struct srn_pkt *p)
{
	struct srn_tenc_pkt t;
	srn_tenc_init(&t, p->opcode);
	uint32_t m = srn_opinfo(p->opcode)->mask;
	t.se = p->se; t.mig = p->mig; t.ackreq = p->ackreq;
	t.fecn = p->fecn; t.becn = p->becn;
	t.pkey = p->pkey; t.dqpn = p->dqpn; t.psn = p->psn;
	t.qkey = p->deth_qkey; t.sqpn = p->deth_sqpn;
	t.va = (m & SRN_M_ATMETH) ? p->atm_va : p->reth_va;
	t.rkey = (m & SRN_M_ATMETH) ? p->atm_rkey : p->reth_rkey;
	t.dmalen = p->reth_len;
	t.swap_add = p->atm_swap_add; t.cmp = p->atm_cmp;
	t.syndrome = p->aeth_syn; t.msn = p->aeth_msn;
	t.orig = p->atmack_orig; t.imm_be = p->imm_be; t.ieth_rkey = p->ieth_rkey;
	t.payload = p->payload; t.paylen = p->paylen;
	return t;
}

/* exact field-by-field comparison; payload by content */
static bool pkt_equal(const struct srn_pkt *a, const struct srn_pkt *b)
{
	bool eq = a->opcode == b->opcode && a->se == b->se && a->mig == b->mig &&
		  a->pad == b->pad && a->tver == b->tver && a->pkey == b->pkey &&
		  a->fecn == b->fecn && a->becn == b->becn && a->dqpn == b->dqpn &&
		  a->ackreq == b->ackreq && a->psn == b->psn &&
		  a->deth_qkey == b->deth_qkey && a->deth_sqpn == b->deth_sqpn &&
		  a->reth_va == b->reth_va && a->reth_rkey == b->reth_rkey &&
		  a->reth_len == b->reth_len && a->atm_va == b->atm_va &&
		  a->atm_rkey == b->atm_rkey && a->atm_swap_add == b->atm_swap_add &&
		  a->atm_cmp == b->atm_cmp && a->aeth_syn == b->aeth_syn &&
		  a->aeth_msn == b->aeth_msn && a->atmack_orig == b->atmack_orig &&
		  a->imm_be == b->imm_be && a->ieth_rkey == b->ieth_rkey &&
		  a->paylen == b->paylen && a->info == b->info;
	if (eq && a->paylen)
		eq = memcmp(a->payload, b->payload, a->paylen) == 0;
	if (!eq)
		fprintf(stderr, "  packets differ (opcode 0x%02x)\n", a->opcode);
	return eq;
}

/* srn packet with every field of opcode op set, others zero */
static struct srn_pkt make_srn(uint8_t op, uint32_t seed, uint32_t paylen)
{
	struct srn_tenc_pkt t = make_tenc(op, seed, paylen);
	return srn_from_tenc(&t, srn_opinfo(op)->mask);
}

/* write_hdrs + payload + finish; returns total length or negative */
static int srn_build(uint8_t *buf, size_t cap, const struct srn_pkt *p, const struct srn_ip_info *ip)
{
	int h = srn_pkt_write_hdrs(buf, cap, p);
	if (h < 0)
		return h;
	if ((size_t)h + p->paylen > cap)
		return SRN_WIRE_ETRUNC;
	if (p->paylen)
		memcpy(buf + h, p->payload, p->paylen);
	return srn_pkt_finish(buf, cap, (size_t)h, p->paylen, ip);
}

static const uint32_t paylens[] = { 0, 1, 2, 3, 4, 5, 17, 256, 4096 };
#define N_PAYLENS (sizeof(paylens) / sizeof(paylens[0]))

/* ---- W-01: the opcode table ---- */

SRN_TEST(test_w01_opcode_table_matches_iba_header_set)
{
	unsigned valid = 0;
	for (unsigned op = 0; op < 256; op++) {
		const struct srn_opinfo *o = srn_opinfo((uint8_t)op);
		const struct exp_op *e = find_exp(op);
		CHECK(o == &srn_opcode_table[op]);
		if (!e) {
			CHECK_EQ(o->mask, 0);
			CHECK(o->name == NULL);
			CHECK_EQ(o->hdr_len, 0);
			continue;
		}
		valid++;
		CHECK(o->name != NULL && strcmp(o->name, e->name) == 0);
		if (o->mask != (e->mask | SRN_M_VALID))
			fprintf(stderr, "  opcode 0x%02x mask 0x%08x expected 0x%08x\n", op,
				(unsigned)o->mask, (unsigned)(e->mask | SRN_M_VALID));
		CHECK_EQ(o->mask, e->mask | SRN_M_VALID);
		CHECK_EQ(o->hdr_len, e->hdr_len);
		CHECK_EQ(o->payload_off, e->hdr_len);
		CHECK_EQ(o->off_deth, e->off[0]);
		CHECK_EQ(o->off_reth, e->off[1]);
		CHECK_EQ(o->off_atmeth, e->off[2]);
		CHECK_EQ(o->off_aeth, e->off[3]);
		CHECK_EQ(o->off_atmack, e->off[4]);
		CHECK_EQ(o->off_immdt, e->off[5]);
		CHECK_EQ(o->off_ieth, e->off[6]);
	}
	CHECK_EQ(valid, 38); /* RC 23, UC 12, UD 2, CNP 1 */
	CHECK_EQ(N_EXP, 38);
}

SRN_TEST(test_w01_opcode_table_agrees_with_independent_encoder)
{
	for (unsigned op = 0; op < 256; op++) {
		const struct srn_opinfo *o = srn_opinfo((uint8_t)op);
		bool valid = (o->mask & SRN_M_VALID) != 0;
		CHECK_EQ(valid, srn_tenc_known((uint8_t)op));
		if (valid)
			CHECK_EQ(o->hdr_len, srn_tenc_hdr_len((uint8_t)op));
	}
}

SRN_TEST(test_w01_opcode_transport_bits_follow_opcode_high_bits)
{
	for (size_t i = 0; i < N_EXP; i++) {
		const struct srn_opinfo *o = srn_opinfo(exp_ops[i].op);
		unsigned tr = exp_ops[i].op >> 5;
		CHECK_EQ((o->mask & SRN_M_RC) != 0, tr == 0);
		CHECK_EQ((o->mask & SRN_M_UC) != 0, tr == 1);
		CHECK_EQ((o->mask & SRN_M_UD) != 0, tr == 3);
		CHECK_EQ((o->mask & SRN_M_CNP) != 0, exp_ops[i].op == SRN_OP_CNP);
		/* every known data opcode is exactly one of request/response */
		if (exp_ops[i].op != SRN_OP_CNP)
			CHECK_EQ(!!(o->mask & SRN_M_REQ) + !!(o->mask & SRN_M_RESP), 1);
	}
}

/* ---- W-01: round trips ---- */

SRN_TEST(test_w01_write_parse_roundtrip_every_opcode)
{
	init_payload();
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[8192];
	for (size_t i = 0; i < N_EXP; i++) {
		uint8_t op = exp_ops[i].op;
		bool pay = srn_opinfo(op)->mask & SRN_M_PAYLOAD;
		for (size_t k = 0; k < (pay ? N_PAYLENS : 1); k++) {
			struct srn_pkt p = make_srn(op, (uint32_t)(i + k), paylens[k]);
			int n = srn_build(buf, sizeof(buf), &p, &ip);
			CHECK_EQ(n, exp_ops[i].hdr_len + paylens[k] + srn_pad_for(paylens[k]) + 4);
			REQUIRE(n > 0);
			struct srn_pkt q;
			CHECK_EQ(srn_pkt_parse(&q, buf, (size_t)n), SRN_WIRE_OK);
			CHECK(pkt_equal(&q, &p));
			CHECK(q.payload == buf + exp_ops[i].hdr_len);
			CHECK_EQ(srn_icrc_check(&ip, buf, (size_t)n), SRN_WIRE_OK);
		}
	}
}

SRN_TEST(test_w01_tenc_build_parsed_by_wire_every_opcode)
{
	init_payload();
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[8192], buf2[8192];
	for (size_t i = 0; i < N_EXP; i++) {
		uint8_t op = exp_ops[i].op;
		uint32_t m = srn_opinfo(op)->mask;
		for (size_t k = 0; k < ((m & SRN_M_PAYLOAD) ? N_PAYLENS : 1); k++) {
			uint32_t seed = (uint32_t)(3 * i + k);
			struct srn_tenc_pkt t = make_tenc(op, seed, paylens[k]);
			size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT,
						  SRN_ROCEV2_UDP_PORT, IPID);
			REQUIRE(n > 0);
			struct srn_pkt p;
			CHECK_EQ(srn_pkt_parse(&p, buf, n), SRN_WIRE_OK);
			struct srn_pkt e = srn_from_tenc(&t, m);
			CHECK(pkt_equal(&p, &e));
			CHECK_EQ(srn_icrc_check(&ip, buf, n), SRN_WIRE_OK);
			/* and srn re-encodes the parsed packet to the same bytes */
			int n2 = srn_build(buf2, sizeof(buf2), &p, &ip);
			CHECK_EQ(n2, (int)n);
			CHECK(n2 > 0 && memcmp(buf, buf2, n) == 0);
		}
	}
}

SRN_TEST(test_w01_wire_write_parsed_by_tenc_every_opcode)
{
	init_payload();
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[8192], buf2[8192];
	for (size_t i = 0; i < N_EXP; i++) {
		uint8_t op = exp_ops[i].op;
		uint32_t m = srn_opinfo(op)->mask;
		for (size_t k = 0; k < ((m & SRN_M_PAYLOAD) ? N_PAYLENS : 1); k++) {
			struct srn_pkt p = make_srn(op, (uint32_t)(5 * i + k), paylens[k]);
			int n = srn_build(buf, sizeof(buf), &p, &ip);
			REQUIRE(n > 0);
			struct srn_tenc_pkt t;
			CHECK_EQ(srn_tenc_parse(buf, (size_t)n, &t), exp_ops[i].hdr_len);
			struct srn_pkt e = srn_from_tenc(&t, m);
			CHECK(pkt_equal(&e, &p));
			CHECK(srn_tenc_icrc_ok(buf, (size_t)n, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, IPID));
			/* byte for byte: the independent encoder makes the same packet */
			struct srn_tenc_pkt t2 = tenc_from_srn(&p);
			size_t n2 = srn_tenc_build(buf2, sizeof(buf2), &t2, SRC, DST, SPORT,
						   SRN_ROCEV2_UDP_PORT, IPID);
			CHECK_EQ(n2, (size_t)n);
			CHECK(memcmp(buf, buf2, (size_t)n) == 0);
		}
	}
}

SRN_TEST(test_w01_write_hdrs_writes_reserved_fields_as_zero)
{
	static uint8_t buf[64];
	for (size_t i = 0; i < N_EXP; i++) {
		struct srn_pkt p = make_srn(exp_ops[i].op, 31, 0);
		p.tver = 0xf; /* TVer is never taken from the struct */
		memset(buf, 0xAA, sizeof(buf));
		int h = srn_pkt_write_hdrs(buf, sizeof(buf), &p);
		CHECK_EQ(h, exp_ops[i].hdr_len);
		CHECK_EQ(buf[1] & 0x0f, 0);          /* TVer */
		CHECK_EQ(buf[4] & 0x3f, 0);          /* resv6 */
		CHECK_EQ(buf[8] & 0x7f, 0);          /* resv7 */
		if (exp_ops[i].off[0])
			CHECK_EQ(buf[exp_ops[i].off[0] + 4], 0); /* DETH resv */
		if (exp_ops[i].op == SRN_OP_CNP)
			for (int b = 12; b < 28; b++)
				CHECK_EQ(buf[b], 0);
		CHECK_EQ(buf[h], 0xAA);              /* nothing written past hdr_len */
	}
}

SRN_TEST(test_w01_write_hdrs_rejects_small_buffer_and_unknown_opcode)
{
	static uint8_t buf[64];
	for (size_t i = 0; i < N_EXP; i++) {
		struct srn_pkt p = make_srn(exp_ops[i].op, 1, 0);
		memset(buf, 0xAA, sizeof(buf));
		CHECK_EQ(srn_pkt_write_hdrs(buf, exp_ops[i].hdr_len - 1u, &p), SRN_WIRE_ETRUNC);
		CHECK_EQ(buf[0], 0xAA);
		CHECK_EQ(srn_pkt_write_hdrs(buf, exp_ops[i].hdr_len, &p), exp_ops[i].hdr_len);
	}
	struct srn_pkt p;
	memset(&p, 0, sizeof(p));
	p.opcode = 0x15;
	CHECK_EQ(srn_pkt_write_hdrs(buf, sizeof(buf), &p), SRN_WIRE_EOPCODE);
}

SRN_TEST(test_w01_pkt_finish_sets_pad_and_checks_lengths)
{
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[128];
	struct srn_pkt p = make_srn(SRN_OP_RC_SEND_ONLY, 0, 0);
	p.pad = 0; /* finish computes PadCnt itself */
	CHECK_EQ(srn_pkt_write_hdrs(buf, sizeof(buf), &p), 12);
	memcpy(buf + 12, "abcde", 5);
	memset(buf + 17, 0xEE, 7);
	CHECK_EQ(srn_pkt_finish(buf, sizeof(buf), 12, 5, &ip), 24);
	CHECK_EQ((buf[1] >> 4) & 3, 3);
	CHECK(buf[17] == 0 && buf[18] == 0 && buf[19] == 0);
	CHECK_EQ(srn_icrc_check(&ip, buf, 24), SRN_WIRE_OK);
	/* NULL ip: ICRC slot zeroed */
	CHECK_EQ(srn_pkt_finish(buf, sizeof(buf), 12, 5, NULL), 24);
	CHECK(buf[20] == 0 && buf[21] == 0 && buf[22] == 0 && buf[23] == 0);
	srn_icrc_store(&ip, buf, 24);
	CHECK_EQ(srn_icrc_check(&ip, buf, 24), SRN_WIRE_OK);
	/* errors */
	CHECK_EQ(srn_pkt_finish(buf, 23, 12, 5, &ip), SRN_WIRE_ETRUNC);
	CHECK_EQ(srn_pkt_finish(buf, sizeof(buf), 16, 5, &ip), SRN_WIRE_ELEN);
	CHECK_EQ(srn_pkt_finish(buf, sizeof(buf), 12, SRN_PKT_MAX_LEN, &ip), SRN_WIRE_ELEN);
	struct srn_pkt a = make_srn(SRN_OP_RC_ACKNOWLEDGE, 0, 0);
	CHECK_EQ(srn_pkt_write_hdrs(buf, sizeof(buf), &a), 16);
	CHECK_EQ(srn_pkt_finish(buf, sizeof(buf), 16, 4, &ip), SRN_WIRE_ELEN);
	CHECK_EQ(srn_pkt_finish(buf, sizeof(buf), 16, 0, &ip), 20);
	buf[0] = 0x15;
	CHECK_EQ(srn_pkt_finish(buf, sizeof(buf), 16, 0, &ip), SRN_WIRE_EOPCODE);
}

/* ---- W-05: malformed packets are rejected with the right error ---- */

/* parse a heap copy of exactly len bytes (so ASan builds catch overreads) */
static int parse_exact(const uint8_t *src, size_t len, struct srn_pkt *p)
{
	uint8_t *b = malloc(len ? len : 1);
	if (!b)
		return 1;
	memcpy(b, src, len);
	int r = srn_pkt_parse(p, b, len);
	free(b);
	return r;
}

SRN_TEST(test_w05_parse_rejects_truncated_every_opcode)
{
	init_payload();
	static uint8_t buf[256];
	for (size_t i = 0; i < N_EXP; i++) {
		struct srn_tenc_pkt t = make_tenc(exp_ops[i].op, 0, 0);
		size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
		CHECK_EQ(n, exp_ops[i].hdr_len + 4u);
		struct srn_pkt p;
		for (size_t len = 0; len < n; len++)
			CHECK_EQ(parse_exact(buf, len, &p), SRN_WIRE_ETRUNC);
		CHECK_EQ(parse_exact(buf, n, &p), SRN_WIRE_OK);
	}
}

SRN_TEST(test_w05_parse_rejects_oversized)
{
	static uint8_t buf[SRN_PKT_MAX_LEN + 4];
	struct srn_pkt p;
	/* payload-less opcodes: any extra byte is an error */
	for (size_t i = 0; i < N_EXP; i++) {
		if (exp_ops[i].mask & SRN_M_PAYLOAD)
			continue;
		struct srn_tenc_pkt t = make_tenc(exp_ops[i].op, 2, 0);
		size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
		REQUIRE(n > 0);
		memset(buf + n, 0, 8);
		for (size_t extra = 1; extra <= 8; extra++)
			CHECK_EQ(srn_pkt_parse(&p, buf, n + extra), SRN_WIRE_ELEN);
	}
	/* larger than any UDP payload over IPv4 */
	struct srn_tenc_pkt t = make_tenc(SRN_OP_RC_SEND_ONLY, 0, 0);
	CHECK_EQ(srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0), 16);
	CHECK_EQ(srn_pkt_parse(&p, buf, SRN_PKT_MAX_LEN + 1), SRN_WIRE_ELEN);
	CHECK_EQ(srn_pkt_parse(&p, buf, SRN_PKT_MAX_LEN + 4), SRN_WIRE_ELEN);
	/* the largest legal size parses */
	CHECK_EQ(srn_pkt_parse(&p, buf, SRN_PKT_MAX_LEN - 3), SRN_WIRE_OK);
	CHECK_EQ(p.paylen, SRN_PKT_MAX_LEN - 3 - 16);
}

SRN_TEST(test_w05_parse_rejects_bad_pad)
{
	init_payload();
	static uint8_t buf[256];
	struct srn_pkt p;
	/* a pad count on every payload-less opcode */
	for (size_t i = 0; i < N_EXP; i++) {
		if (exp_ops[i].mask & SRN_M_PAYLOAD)
			continue;
		for (uint8_t pad = 1; pad <= 3; pad++) {
			struct srn_tenc_pkt t = make_tenc(exp_ops[i].op, 0, 0);
			t.pad = pad;
			size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
			CHECK_EQ(n, exp_ops[i].hdr_len + pad + 4u);
			CHECK_EQ(srn_pkt_parse(&p, buf, n), SRN_WIRE_EPAD);
			/* same pad bits without the pad bytes */
			CHECK_EQ(srn_pkt_parse(&p, buf, n - pad), SRN_WIRE_EPAD);
		}
	}
	/* pad count larger than the bytes between headers and ICRC */
	struct srn_tenc_pkt t = make_tenc(SRN_OP_RC_SEND_ONLY, 0, 0);
	t.pad = 0;
	size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
	CHECK_EQ(n, 16);
	for (unsigned pad = 1; pad <= 3; pad++) {
		buf[1] = (uint8_t)((buf[1] & ~0x30) | (pad << 4));
		CHECK_EQ(srn_pkt_parse(&p, buf, n), SRN_WIRE_EPAD);
	}
	/* payload + pad not a multiple of 4: 5-byte payload with pad 0, 1 or 2 */
	for (uint8_t pad = 0; pad <= 2; pad++) {
		t = make_tenc(SRN_OP_RC_SEND_ONLY, 0, 5);
		t.pad = pad;
		n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
		CHECK_EQ(n, 12u + 5 + pad + 4);
		CHECK_EQ(srn_pkt_parse(&p, buf, n), SRN_WIRE_EPAD);
	}
	/* and the correct pad (3) parses to a 5-byte payload */
	t.pad = 3;
	n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
	CHECK_EQ(srn_pkt_parse(&p, buf, n), SRN_WIRE_OK);
	CHECK_EQ(p.paylen, 5);
	CHECK_EQ(p.pad, 3);
}

SRN_TEST(test_w05_parse_rejects_bad_version)
{
	static uint8_t buf[64];
	struct srn_pkt p;
	for (size_t i = 0; i < N_EXP; i++) {
		for (uint8_t v = 1; v <= 15; v++) {
			struct srn_tenc_pkt t = make_tenc(exp_ops[i].op, 0, 0);
			t.tver = v;
			size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
			REQUIRE(n > 0);
			CHECK_EQ(srn_pkt_parse(&p, buf, n), SRN_WIRE_EVERSION);
		}
	}
}

SRN_TEST(test_w05_parse_rejects_unknown_opcode)
{
	static uint8_t buf[64];
	struct srn_pkt p;
	unsigned unknown = 0;
	for (unsigned op = 0; op < 256; op++) {
		if (find_exp(op))
			continue;
		unknown++;
		/* long enough for any header set, so only the opcode can fail */
		memset(buf, 0, sizeof(buf));
		buf[0] = (uint8_t)op;
		CHECK_EQ(srn_pkt_parse(&p, buf, 48), SRN_WIRE_EOPCODE);
		CHECK_EQ(srn_pkt_parse(&p, buf, 16), SRN_WIRE_EOPCODE);
	}
	CHECK_EQ(unknown, 256 - 38);
}

SRN_TEST(test_w05_parse_failure_leaves_no_stale_fields)
{
	static uint8_t buf[64];
	struct srn_pkt p;
	memset(&p, 0x5A, sizeof(p));
	memset(buf, 0, sizeof(buf));
	buf[0] = 0x15;
	CHECK_EQ(srn_pkt_parse(&p, buf, 16), SRN_WIRE_EOPCODE);
	CHECK(p.info == NULL && p.payload == NULL && p.paylen == 0 && p.psn == 0);
}

SRN_TEST(test_w03_cnp_is_exactly_bth_plus_16)
{
	static uint8_t buf[64];
	struct srn_pkt p;
	struct srn_tenc_pkt t = make_tenc(SRN_OP_CNP, 0, 0);
	t.becn = true;
	size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
	CHECK_EQ(n, 12 + SRN_CNP_PAYLOAD_LEN + 4);
	CHECK_EQ(srn_pkt_parse(&p, buf, n), SRN_WIRE_OK);
	CHECK_EQ(p.opcode, SRN_OP_CNP);
	CHECK(p.becn);
	CHECK_EQ(p.paylen, 0);
	CHECK_EQ(p.dqpn, t.dqpn);
	CHECK_EQ(srn_pkt_parse(&p, buf, n - 1), SRN_WIRE_ETRUNC);
	CHECK_EQ(srn_pkt_parse(&p, buf, n - 4), SRN_WIRE_ETRUNC);
	CHECK_EQ(srn_pkt_parse(&p, buf, 16), SRN_WIRE_ETRUNC);
	CHECK_EQ(srn_pkt_parse(&p, buf, n + 4), SRN_WIRE_ELEN);
	CHECK_EQ(srn_pkt_parse(&p, buf, n + 1), SRN_WIRE_ELEN);
}

SRN_TEST(test_w05_strerror_names_every_error)
{
	const int errs[] = { SRN_WIRE_OK, SRN_WIRE_ETRUNC, SRN_WIRE_EOPCODE, SRN_WIRE_EVERSION,
			     SRN_WIRE_EPAD, SRN_WIRE_ELEN, SRN_WIRE_EICRC };
	const char *unk = srn_wire_strerror(-100);
	CHECK(unk != NULL);
	for (size_t i = 0; i < 7; i++) {
		const char *s = srn_wire_strerror(errs[i]);
		CHECK(s != NULL && strcmp(s, unk) != 0);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(s, srn_wire_strerror(errs[j])) != 0);
	}
	CHECK_EQ(strcmp(srn_wire_strerror(SRN_WIRE_EICRC), "ICRC mismatch"), 0);
}

/* ---- W-01: ICRC ---- */

/*
 * Known-answer vectors: UDP payloads (BTH .. ICRC) of packets built by
 * scapy 2.5.0 (python3-scapy, Debian 12), scapy.contrib.roce computing the
 * ICRC, e.g. for kat_send_only:
 *   raw(IP(src="192.168.1.1", dst="192.168.1.2", id=0x1234, flags="DF",
 *          ttl=64, tos=0x02) / UDP(sport=49152, dport=4791) /
 *       BTH(opcode=0x04, padcount=3, becn=1, dqpn=0x123456, ackreq=1,
 *           psn=0xabcdef) / Raw(b"hello\0\0\0"))[28:]
 * kat_ack:  IP(src="10.0.0.1", dst="10.0.0.2", id=0, flags="DF", ttl=1) /
 *           UDP(sport=0xc001, dport=4791) / BTH(opcode=0x11, dqpn=0x11,
 *           psn=0xffffff) / AETH(syndrome=0x1f, msn=0x102)
 * kat_write_imm: IP(src="172.16.0.10", dst="172.16.0.20", id=7, flags=0,
 *           tos=0xb8) / UDP(sport=50000, dport=4791) / BTH(opcode=0x0b,
 *           solicited=1, fecn=1, pkey=0x8001, dqpn=0xabcdef, psn=0) /
 *           Raw(struct.pack("!QII", 0x7f0012345678, 0xdeadbeef, 16) +
 *               b"\xca\xfe\xba\xbe" + bytes(range(16)))
 * kat_cnp:  IP(src="192.168.1.2", dst="192.168.1.1", id=0, flags="DF") /
 *           UDP(sport=49153, dport=4791) / cnp(0x42)
 * scapy fills in real TTL/TOS/IP and UDP checksums and masks them itself,
 * so these also pin that those fields are not covered.
 */
static const uint8_t kat_send_only[] = {
	0x04, 0x30, 0xff, 0xff, 0x40, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef,
	0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0x97, 0x95, 0x36, 0x8b,
};
static const uint8_t kat_ack[] = {
	0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0xff,
	0x1f, 0x00, 0x01, 0x02, 0xc8, 0xa0, 0xa9, 0x97,
};
static const uint8_t kat_write_imm[] = {
	0x0b, 0x80, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, 0xde, 0xad, 0xbe, 0xef,
	0x00, 0x00, 0x00, 0x10, 0xca, 0xfe, 0xba, 0xbe, 0x00, 0x01, 0x02, 0x03,
	0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x3a, 0xa2, 0xb6, 0x32,
};
static const uint8_t kat_cnp[] = {
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x0e, 0x78, 0x82, 0xc0,
};

SRN_TEST(test_w01_icrc_known_answer_vectors_from_scapy)
{
	static const uint8_t a1[4] = { 192, 168, 1, 1 }, a2[4] = { 192, 168, 1, 2 };
	static const uint8_t b1[4] = { 10, 0, 0, 1 }, b2[4] = { 10, 0, 0, 2 };
	static const uint8_t c1[4] = { 172, 16, 0, 10 }, c2[4] = { 172, 16, 0, 20 };
	struct srn_ip_info ip;
	struct srn_pkt p;

	ip = ip4(a1, a2, 49152, 4791, 0x1234, true);
	ip.ttl = 64; ip.tos = 0x02;
	CHECK_EQ(srn_icrc_compute(&ip, kat_send_only, sizeof(kat_send_only)), 0x8b369597u);
	CHECK_EQ(srn_icrc_check(&ip, kat_send_only, sizeof(kat_send_only)), SRN_WIRE_OK);
	CHECK(srn_tenc_icrc_ok(kat_send_only, sizeof(kat_send_only), a1, a2, 49152, 4791, 0x1234));
	CHECK_EQ(srn_pkt_parse(&p, kat_send_only, sizeof(kat_send_only)), SRN_WIRE_OK);
	CHECK(p.opcode == SRN_OP_RC_SEND_ONLY && p.pad == 3 && p.becn && !p.fecn && p.ackreq);
	CHECK(p.dqpn == 0x123456 && p.psn == 0xabcdef && p.pkey == 0xffff);
	CHECK(p.paylen == 5 && memcmp(p.payload, "hello", 5) == 0);

	ip = ip4(b1, b2, 0xc001, 4791, 0, true);
	ip.ttl = 1;
	CHECK_EQ(srn_icrc_compute(&ip, kat_ack, sizeof(kat_ack)), 0x97a9a0c8u);
	CHECK_EQ(srn_icrc_check(&ip, kat_ack, sizeof(kat_ack)), SRN_WIRE_OK);
	CHECK(srn_tenc_icrc_ok(kat_ack, sizeof(kat_ack), b1, b2, 0xc001, 4791, 0));
	CHECK_EQ(srn_pkt_parse(&p, kat_ack, sizeof(kat_ack)), SRN_WIRE_OK);
	CHECK(p.opcode == SRN_OP_RC_ACKNOWLEDGE && p.aeth_syn == 0x1f && p.aeth_msn == 0x102);
	CHECK(p.psn == 0xffffff && p.dqpn == 0x11 && p.paylen == 0);

	ip = ip4(c1, c2, 50000, 4791, 7, false); /* no DF */
	ip.tos = 0xb8;
	CHECK_EQ(srn_icrc_check(&ip, kat_write_imm, sizeof(kat_write_imm)), SRN_WIRE_OK);
	CHECK_EQ(srn_pkt_parse(&p, kat_write_imm, sizeof(kat_write_imm)), SRN_WIRE_OK);
	CHECK(p.opcode == SRN_OP_RC_WRITE_ONLY_IMM && p.se && p.fecn && !p.becn);
	CHECK(p.pkey == 0x8001 && p.dqpn == 0xabcdef && p.psn == 0);
	CHECK(p.reth_va == 0x7f0012345678ull && p.reth_rkey == 0xdeadbeef && p.reth_len == 16);
	CHECK(memcmp(&p.imm_be, "\xca\xfe\xba\xbe", 4) == 0);
	CHECK(p.paylen == 16 && p.payload[0] == 0 && p.payload[15] == 15);
	ip.df = true; /* the DF bit is covered */
	CHECK_EQ(srn_icrc_check(&ip, kat_write_imm, sizeof(kat_write_imm)), SRN_WIRE_EICRC);

	ip = ip4(a2, a1, 49153, 4791, 0, true);
	CHECK_EQ(srn_icrc_check(&ip, kat_cnp, sizeof(kat_cnp)), SRN_WIRE_OK);
	CHECK(srn_tenc_icrc_ok(kat_cnp, sizeof(kat_cnp), a2, a1, 49153, 4791, 0));
	CHECK_EQ(srn_pkt_parse(&p, kat_cnp, sizeof(kat_cnp)), SRN_WIRE_OK);
	CHECK(p.opcode == SRN_OP_CNP && p.becn && p.dqpn == 0x42);

	/* the ISA-L and bitwise implementations agree on the stored bytes */
	uint8_t buf[sizeof(kat_write_imm)];
	memcpy(buf, kat_write_imm, sizeof(buf));
	memset(buf + sizeof(buf) - 4, 0, 4);
	ip = ip4(c1, c2, 50000, 4791, 7, false);
	srn_icrc_store(&ip, buf, sizeof(buf));
	CHECK(memcmp(buf, kat_write_imm, sizeof(buf)) == 0);
}

SRN_TEST(test_w01_icrc_detects_every_bit_flip_in_covered_bytes)
{
	init_payload();
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[128];
	struct srn_tenc_pkt t = make_tenc(SRN_OP_RC_WRITE_ONLY_IMM, 9, 13);
	size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, IPID);
	REQUIRE(n == 32 + 16 + 4);
	REQUIRE(srn_icrc_check(&ip, buf, n) == SRN_WIRE_OK);
	unsigned detected = 0, flips = 0;
	for (size_t byte = 0; byte < n; byte++) {
		if (byte == 4)
			continue; /* masked; see the next test */
		for (int bit = 0; bit < 8; bit++) {
			buf[byte] ^= (uint8_t)(1u << bit);
			flips++;
			detected += srn_icrc_check(&ip, buf, n) == SRN_WIRE_EICRC;
			buf[byte] ^= (uint8_t)(1u << bit);
		}
	}
	CHECK_EQ(detected, flips);
	CHECK_EQ(flips, (n - 1) * 8);
	/* covered IP/UDP fields */
	for (int bit = 0; bit < 32; bit++) {
		struct srn_ip_info m = ip;
		m.src[12 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		CHECK_EQ(srn_icrc_check(&m, buf, n), SRN_WIRE_EICRC);
		m = ip;
		m.dst[12 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		CHECK_EQ(srn_icrc_check(&m, buf, n), SRN_WIRE_EICRC);
	}
	for (int bit = 0; bit < 16; bit++) {
		struct srn_ip_info m = ip;
		m.ip_id ^= (uint16_t)(1u << bit);
		CHECK_EQ(srn_icrc_check(&m, buf, n), SRN_WIRE_EICRC);
		m = ip;
		m.sport ^= (uint16_t)(1u << bit);
		CHECK_EQ(srn_icrc_check(&m, buf, n), SRN_WIRE_EICRC);
		m = ip;
		m.dport ^= (uint16_t)(1u << bit);
		CHECK_EQ(srn_icrc_check(&m, buf, n), SRN_WIRE_EICRC);
	}
	struct srn_ip_info m = ip;
	m.df = false;
	CHECK_EQ(srn_icrc_check(&m, buf, n), SRN_WIRE_EICRC);
	/* a length change (covered via IP total length and UDP length) */
	CHECK_EQ(srn_icrc_check(&ip, buf, n - 4), SRN_WIRE_EICRC);
}

SRN_TEST(test_w01_icrc_masked_fields_not_covered)
{
	init_payload();
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[128];
	struct srn_tenc_pkt t = make_tenc(SRN_OP_RC_SEND_ONLY, 4, 8);
	size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, IPID);
	REQUIRE(n == 24);
	uint32_t ref = srn_icrc_compute(&ip, buf, n);
	/* BTH byte 4: FECN, BECN, resv6 -- all 256 values */
	for (unsigned v = 0; v < 256; v++) {
		buf[4] = (uint8_t)v;
		CHECK_EQ(srn_icrc_check(&ip, buf, n), SRN_WIRE_OK);
		CHECK(srn_tenc_icrc_ok(buf, n, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, IPID));
	}
	/* TTL and TOS (DSCP+ECN) */
	for (unsigned v = 0; v < 256; v++) {
		struct srn_ip_info m = ip;
		m.ttl = (uint8_t)v;
		m.tos = (uint8_t)(255 - v);
		CHECK_EQ(srn_icrc_compute(&m, buf, n), ref);
	}
	/* the IP and UDP checksums have no input at all: the KAT vectors above
	 * (scapy, real checksums) pin that they are masked */
}

SRN_TEST(test_w01_icrc_ipv6_never_accepted)
{
	init_payload();
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[64];
	struct srn_tenc_pkt t = make_tenc(SRN_OP_RC_SEND_ONLY, 0, 4);
	size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, IPID);
	REQUIRE(srn_icrc_check(&ip, buf, n) == SRN_WIRE_OK);
	ip.v6 = true;
	CHECK_EQ(srn_icrc_check(&ip, buf, n), SRN_WIRE_EICRC);
	CHECK_EQ(srn_icrc_compute(&ip, buf, n), 0);
	srn_icrc_store(&ip, buf, n);
	CHECK(buf[n - 4] == 0 && buf[n - 3] == 0 && buf[n - 2] == 0 && buf[n - 1] == 0);
	CHECK_EQ(srn_icrc_check(&ip, buf, n), SRN_WIRE_EICRC);
}

SRN_TEST(test_w05_icrc_check_rejects_short_buffers)
{
	struct srn_ip_info ip = def_ip();
	static const uint8_t zero[16] = { 0 };
	for (size_t len = 0; len < 16; len++)
		CHECK_EQ(srn_icrc_check(&ip, zero, len), SRN_WIRE_EICRC);
}

/* ---- PSN-01: 24-bit modular PSN arithmetic ---- */

SRN_TEST(test_psn01_add_wraps_at_24_bits)
{
	CHECK_EQ(srn_psn_add(0xFFFFFF, 1), 0);
	CHECK_EQ(srn_psn_add(0xFFFFFE, 5), 3);
	CHECK_EQ(srn_psn_add(0, 0xFFFFFF), 0xFFFFFF);
	CHECK_EQ(srn_psn_add(0x800000, 0x800000), 0);
	CHECK_EQ(srn_psn_add(0x123456, 0), 0x123456);
}

SRN_TEST(test_psn01_diff_and_compare_across_wrap)
{
	CHECK_EQ(srn_psn_diff(0, 0xFFFFFF), 1);
	CHECK_EQ(srn_psn_diff(0xFFFFFF, 0), -1);
	CHECK_EQ(srn_psn_diff(2, 0xFFFFFE), 4);
	CHECK_EQ(srn_psn_diff(5, 5), 0);
	CHECK(SRN_PSN_LT(0xFFFFFF, 0));
	CHECK(SRN_PSN_GT(0, 0xFFFFFF));
	CHECK(SRN_PSN_LE(0xFFFFF0, 0x10));
	CHECK(SRN_PSN_GE(0x10, 0xFFFFF0));
	CHECK(SRN_PSN_LE(7, 7) && SRN_PSN_GE(7, 7) && !SRN_PSN_LT(7, 7) && !SRN_PSN_GT(7, 7));
	/* the half-space boundary: +2^23-1 ahead is "greater", 2^23 wraps negative */
	for (uint32_t base = 0; base < 0x1000000; base += 0x0F0F0F) {
		CHECK_EQ(srn_psn_diff(srn_psn_add(base, 0x7FFFFF), base), 0x7FFFFF);
		CHECK_EQ(srn_psn_diff(srn_psn_add(base, 0x800000), base), -0x800000);
		CHECK_EQ(srn_psn_diff(srn_psn_add(base, 0x800001), base), -0x7FFFFF);
		CHECK(SRN_PSN_LT(base, srn_psn_add(base, 1)));
		CHECK(SRN_PSN_GT(srn_psn_add(base, 1), base));
	}
	/* bits above 24 are ignored */
	CHECK_EQ(srn_psn_diff(0x01000005, 0x02000003), 2);
}

SRN_TEST(test_psn01_wire_carries_psn_wrap)
{
	init_payload();
	struct srn_ip_info ip = def_ip();
	static uint8_t buf[64];
	struct srn_pkt p = make_srn(SRN_OP_RC_SEND_MIDDLE, 0, 4);
	p.psn = srn_psn_add(0xFFFFFF, 1);
	int n = srn_build(buf, sizeof(buf), &p, &ip);
	REQUIRE(n > 0);
	CHECK(buf[9] == 0 && buf[10] == 0 && buf[11] == 0);
	p.psn = 0x1FFFFFF; /* only 24 bits are written */
	n = srn_build(buf, sizeof(buf), &p, &ip);
	struct srn_pkt q;
	CHECK_EQ(srn_pkt_parse(&q, buf, (size_t)n), SRN_WIRE_OK);
	CHECK_EQ(q.psn, 0xFFFFFF);
}

int main(void)
{
	return srn_test_main();
}

/* W-01: a GSO segment's ICRC covers the ID the kernel gives it (i for the
 * i-th segment of one send): srn_icrc_set_id rewrites an ICRC computed with
 * ID 0 to exactly what a full recomputation with ID i gives, for every
 * length class, and the independent encoder agrees. */
SRN_TEST(test_w01_icrc_set_id_equals_recomputation)
{
	init_payload();
	static uint8_t buf[8192], ref[8192];
	const uint16_t ids[] = { 1, 2, 3, 7, 63, 64, 255, 0x1234, 0xffff };
	const uint32_t lens[] = { 0, 1, 4, 13, 64, 255, 1024, 4096 };
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		struct srn_tenc_pkt t = make_tenc(SRN_OP_RC_WRITE_MIDDLE, (uint32_t)l, lens[l]);
		size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 0);
		REQUIRE(n > 0);
		uint32_t sh = srn_icrc_id_shift(n);
		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			memcpy(ref, buf, n);
			struct srn_ip_info ip = ip4(SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, ids[k], true);
			srn_icrc_store(&ip, ref, n);
			uint8_t cur[8192];
			memcpy(cur, buf, n);
			srn_icrc_set_id(cur, n, sh, 0, ids[k]);
			CHECK(memcmp(cur, ref, n) == 0);
			CHECK(srn_tenc_icrc_ok(cur, n, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, ids[k]));
			/* and back, from one nonzero ID to another */
			srn_icrc_set_id(cur, n, sh, ids[k], 5);
			ip.ip_id = 5;
			CHECK_EQ(srn_icrc_check(&ip, cur, n), SRN_WIRE_OK);
		}
	}
}

/* W-01: a receiver behind a UDP socket does not see the ID: it accepts a
 * packet whose ICRC matches the hinted ID or another ID a GSO send can
 * produce (0..63), reports which, and still rejects a corrupted packet and
 * an ID outside the span. */
SRN_TEST(test_w01_icrc_check_ids_finds_the_segment_id)
{
	init_payload();
	static uint8_t buf[8192];
	struct srn_tenc_pkt t = make_tenc(SRN_OP_RC_SEND_MIDDLE, 3, 1024);
	for (uint16_t id = 0; id < 64; id += 9) {
		size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, id);
		REQUIRE(n > 0);
		for (uint16_t hint = 0; hint < 64; hint += 21) {
			struct srn_ip_info ip = ip4(SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, hint, true);
			uint16_t got = 0xeeee;
			CHECK_EQ(srn_icrc_check_ids(&ip, buf, n, 64, &got), SRN_WIRE_OK);
			CHECK_EQ(got, id);
			/* without a span only the hint is tried */
			CHECK_EQ(srn_icrc_check_ids(&ip, buf, n, 1, NULL) == SRN_WIRE_OK, hint == id);
			buf[40] ^= 0x10;                 /* payload corrupted */
			CHECK_EQ(srn_icrc_check_ids(&ip, buf, n, 64, NULL), SRN_WIRE_EICRC);
			buf[40] ^= 0x10;
		}
	}
	size_t n = srn_tenc_build(buf, sizeof(buf), &t, SRC, DST, SPORT, SRN_ROCEV2_UDP_PORT, 64);
	struct srn_ip_info ip = def_ip();
	CHECK_EQ(srn_icrc_check_ids(&ip, buf, n, 64, NULL), SRN_WIRE_EICRC);   /* ID 64: outside */
	CHECK_EQ(srn_icrc_check_ids(&ip, buf, n, 128, NULL), SRN_WIRE_OK);
	CHECK_EQ(srn_icrc_check_ids(&ip, buf, 10, 64, NULL), SRN_WIRE_EICRC);  /* too short */
}
