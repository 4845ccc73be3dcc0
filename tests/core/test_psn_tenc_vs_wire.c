/*
 * test_psn_tenc_vs_wire.c - the test-only encoder (tests/lib/srn_tenc, no
 * code shared with src/wire) and the core's wire codec checked against each
 * other on EVERY opcode both know: the same fields give byte-identical
 * packets (headers, payload, pad, ICRC), each side parses the other's packet
 * to the same fields, and each accepts the other's ICRC. This is what makes
 * the packet-level PSN tests (test_psn_*.c) meaningful: the packets they
 * inject and decode are not produced by the code under test.
 */
#include "srn_test.h"
#include "lib/srn_tenc.h"
#include "wire/srn_wire.h"

static const uint8_t SRC[4] = { 10, 0, 0, 2 }, DST[4] = { 10, 0, 0, 1 };

static void ip_of(struct srn_ip_info *ip)
{
	memset(ip, 0, sizeof(*ip));
	ip->src[10] = ip->src[11] = ip->dst[10] = ip->dst[11] = 0xff;
	memcpy(ip->src + 12, SRC, 4);
	memcpy(ip->dst + 12, DST, 4);
	ip->df = true;
	ip->sport = 49300;
	ip->dport = 4791;
	ip->ttl = 64;
}

SRN_TEST(test_psn_tenc_and_wire_codec_agree_on_every_opcode)
{
	static const uint8_t payload[13] = "ABCDEFGHIJKLM";
	int checked = 0;
	for (int op = 0; op < 256; op++) {
		bool tk = srn_tenc_known((uint8_t)op);
		const struct srn_opinfo *info = srn_opinfo((uint8_t)op);
		bool wk = info->mask != 0;
		if (op == SRN_OP_CNP) {
			/* CNP: BTH + 16 reserved bytes; the core parses the encoder's */
			struct srn_tenc_pkt t;
			srn_tenc_init(&t, SRN_OP_CNP);
			t.dqpn = 0x123;
			t.becn = true;
			uint8_t b[64];
			size_t n = srn_tenc_build(b, sizeof(b), &t, SRC, DST, 49300, 4791, 0);
			CHECK_EQ(n, 12 + 16 + 4);
			struct srn_pkt p;
			CHECK_EQ(srn_pkt_parse(&p, b, n), 0);
			CHECK_EQ(p.opcode, SRN_OP_CNP);
			CHECK(p.becn);
			CHECK_EQ(p.dqpn, 0x123);
			struct srn_ip_info ip;
			ip_of(&ip);
			CHECK_EQ(srn_icrc_check(&ip, b, n), 0);
			checked++;
			continue;
		}
		/* both tables name the same opcodes */
		if (tk != wk)
			fprintf(stderr, "  opcode 0x%02x: tenc %d wire %d\n", op, tk, wk);
		CHECK_EQ(tk, wk);
		if (!tk || !wk)
			continue;
		CHECK_EQ(srn_tenc_hdr_len((uint8_t)op), info->hdr_len);
		bool has_pay = (info->mask & SRN_M_PAYLOAD) != 0;
		uint32_t plen = has_pay ? (uint32_t)sizeof(payload) : 0;

		/* the same fields for both */
		struct srn_tenc_pkt t;
		srn_tenc_init(&t, (uint8_t)op);
		t.se = true;
		t.ackreq = true;
		t.dqpn = 0xABCDEF;
		t.psn = 0xFFFFFE;
		t.qkey = 0x11223344;
		t.sqpn = 0x00C0FE;
		t.va = 0x0102030405060708ull;
		t.rkey = 0x99887766;
		t.dmalen = 0x00100001;
		t.swap_add = 0x1111222233334444ull;
		t.cmp = 0x5555666677778888ull;
		t.syndrome = SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_REMOTE_ACCESS);
		t.msn = 0x00FEDCBA;
		t.orig = 0xDEADBEEFCAFEF00Dull;
		t.imm_be = 0x04030201;
		t.ieth_rkey = 0x13572468;
		t.payload = has_pay ? payload : NULL;
		t.paylen = plen;
		uint8_t a[256];
		size_t na = srn_tenc_build(a, sizeof(a), &t, SRC, DST, 49300, 4791, 0);
		CHECK(na > 0);

		struct srn_pkt w;
		memset(&w, 0, sizeof(w));
		w.opcode = (uint8_t)op;
		w.se = true;
		w.ackreq = true;
		w.pkey = 0xFFFF;
		w.dqpn = 0xABCDEF;
		w.psn = 0xFFFFFE;
		w.deth_qkey = t.qkey;
		w.deth_sqpn = t.sqpn;
		w.reth_va = t.va;
		w.reth_rkey = t.rkey;
		w.reth_len = t.dmalen;
		w.atm_va = t.va;
		w.atm_rkey = t.rkey;
		w.atm_swap_add = t.swap_add;
		w.atm_cmp = t.cmp;
		w.aeth_syn = t.syndrome;
		w.aeth_msn = t.msn;
		w.atmack_orig = t.orig;
		w.imm_be = t.imm_be;
		w.ieth_rkey = t.ieth_rkey;
		uint8_t b[256];
		int h = srn_pkt_write_hdrs(b, sizeof(b), &w);
		CHECK_EQ(h, info->hdr_len);
		if (h < 0)
			continue;
		memcpy(b + h, payload, plen);
		struct srn_ip_info ip;
		ip_of(&ip);
		int nb = srn_pkt_finish(b, sizeof(b), (size_t)h, plen, &ip);
		CHECK_EQ(nb, (int)na);
		/* byte-identical, ICRC included */
		if (nb == (int)na && memcmp(a, b, na) != 0)
			fprintf(stderr, "  opcode 0x%02x: encoders differ\n", op);
		CHECK(nb == (int)na && memcmp(a, b, na) == 0);

		/* the core parses the encoder's packet to the same fields */
		struct srn_pkt p;
		REQUIRE(srn_pkt_parse(&p, a, na) == 0);
		CHECK_EQ(srn_icrc_check(&ip, a, na), 0);
		CHECK_EQ(p.opcode, op);
		CHECK_EQ(p.psn, 0xFFFFFE);
		CHECK_EQ(p.dqpn, 0xABCDEF);
		CHECK(p.se && p.ackreq);
		CHECK_EQ(p.paylen, plen);
		CHECK(plen == 0 || memcmp(p.payload, payload, plen) == 0);
		if (info->mask & SRN_M_DETH)
			CHECK(p.deth_qkey == t.qkey && p.deth_sqpn == t.sqpn);
		if (info->mask & SRN_M_RETH)
			CHECK(p.reth_va == t.va && p.reth_rkey == t.rkey && p.reth_len == t.dmalen);
		if (info->mask & SRN_M_ATMETH)
			CHECK(p.atm_va == t.va && p.atm_rkey == t.rkey && p.atm_swap_add == t.swap_add &&
			      p.atm_cmp == t.cmp);
		if (info->mask & SRN_M_AETH)
			CHECK(p.aeth_syn == t.syndrome && p.aeth_msn == t.msn);
		if (info->mask & SRN_M_ATMACK)
			CHECK_EQ(p.atmack_orig, t.orig);
		if (info->mask & SRN_M_IMMDT)
			CHECK_EQ(p.imm_be, t.imm_be);
		if (info->mask & SRN_M_IETH)
			CHECK_EQ(p.ieth_rkey, t.ieth_rkey);

		/* the encoder's decoder parses the core's packet to the same fields */
		struct srn_tenc_pkt d;
		REQUIRE(srn_tenc_parse(b, (size_t)nb, &d) == (int)info->hdr_len);
		CHECK(srn_tenc_icrc_ok(b, (size_t)nb, SRC, DST, 49300, 4791, 0));
		CHECK_EQ(d.opcode, op);
		CHECK_EQ(d.psn, 0xFFFFFE);
		CHECK_EQ(d.dqpn, 0xABCDEF);
		CHECK_EQ(d.paylen, plen);
		if (info->mask & SRN_M_RETH)
			CHECK(d.va == t.va && d.rkey == t.rkey && d.dmalen == t.dmalen);
		if (info->mask & SRN_M_AETH)
			CHECK(d.syndrome == t.syndrome && d.msn == t.msn);
		if (info->mask & SRN_M_ATMACK)
			CHECK_EQ(d.orig, t.orig);
		if (info->mask & SRN_M_ATMETH)
			CHECK(d.swap_add == t.swap_add && d.cmp == t.cmp);
		/* one flipped bit: both ICRC checks refuse it */
		a[na / 2] ^= 0x10;
		CHECK(srn_icrc_check(&ip, a, na) != 0);
		CHECK(!srn_tenc_icrc_ok(a, na, SRC, DST, 49300, 4791, 0));
		checked++;
	}
	CHECK_EQ(checked, 23 + 12 + 2 + 1);   /* RC 23, UC 12, UD 2, CNP */
}

int main(void) { return srn_test_main(); }
