/*
 * fuzz_wire_parse.c - libFuzzer target for src/wire (W-05).
 *
 * For arbitrary bytes (one UDP payload):
 *   - srn_icrc_check must not crash and must agree with the independent
 *     bitwise ICRC of tests/lib/srn_tenc;
 *   - srn_pkt_parse must not read outside the input; on success its result
 *     must be self-consistent, agree with srn_tenc_parse, and survive
 *     srn_pkt_write_hdrs + srn_pkt_finish + srn_pkt_parse unchanged, with
 *     the re-encoded bytes equal to the input except for reserved bits and
 *     the ICRC.
 * Any disagreement aborts.
 *
 * Seeds: tests/fuzz/corpus/wire_parse/ - valid packets (correct ICRC for
 * fuzz_ip() below) of 24 opcodes, made with srn_tenc_build; the file name
 * is <opcode hex>_<name>.
 */
#include "wire/srn_wire.h"
#include "lib/srn_tenc.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

static const uint8_t SRC[4] = { 10, 0, 0, 1 };
static const uint8_t DST[4] = { 10, 0, 0, 2 };

static struct srn_ip_info fuzz_ip(void)
{
	struct srn_ip_info ip;
	memset(&ip, 0, sizeof(ip));
	memcpy(ip.src + 12, SRC, 4);
	memcpy(ip.dst + 12, DST, 4);
	ip.sport = 0xC000;
	ip.dport = SRN_ROCEV2_UDP_PORT;
	ip.ip_id = 0;
	ip.df = true;
	return ip;
}

static bool same_fields(const struct srn_pkt *a, const struct srn_pkt *b)
{
	return a->opcode == b->opcode && a->se == b->se && a->mig == b->mig &&
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
	       a->paylen == b->paylen && a->info == b->info &&
	       (a->paylen == 0 || memcmp(a->payload, b->payload, a->paylen) == 0);
}

/* the independent decoder sees the same packet */
static void check_against_tenc(const struct srn_pkt *p, const uint8_t *data, size_t size)
{
	struct srn_tenc_pkt t;
	uint32_t m = p->info->mask;
	FUZZ_CHECK(srn_tenc_parse(data, size, &t) == p->info->hdr_len);
	FUZZ_CHECK(t.opcode == p->opcode && t.se == p->se && t.mig == p->mig);
	FUZZ_CHECK(t.pad == p->pad && t.pkey == p->pkey && t.fecn == p->fecn);
	FUZZ_CHECK(t.becn == p->becn && t.dqpn == p->dqpn && t.ackreq == p->ackreq);
	FUZZ_CHECK(t.psn == p->psn && t.paylen == p->paylen && t.payload == p->payload);
	if (m & SRN_M_DETH)
		FUZZ_CHECK(t.qkey == p->deth_qkey && t.sqpn == p->deth_sqpn);
	if (m & SRN_M_RETH)
		FUZZ_CHECK(t.va == p->reth_va && t.rkey == p->reth_rkey && t.dmalen == p->reth_len);
	if (m & SRN_M_ATMETH)
		FUZZ_CHECK(t.va == p->atm_va && t.rkey == p->atm_rkey &&
			   t.swap_add == p->atm_swap_add && t.cmp == p->atm_cmp);
	if (m & SRN_M_AETH)
		FUZZ_CHECK(t.syndrome == p->aeth_syn && t.msn == p->aeth_msn);
	if (m & SRN_M_ATMACK)
		FUZZ_CHECK(t.orig == p->atmack_orig);
	if (m & SRN_M_IMMDT)
		FUZZ_CHECK(t.imm_be == p->imm_be);
	if (m & SRN_M_IETH)
		FUZZ_CHECK(t.ieth_rkey == p->ieth_rkey);
}

/* re-encode and re-parse */
static void check_reencode(const struct srn_pkt *p, const uint8_t *data, size_t size,
			   const struct srn_ip_info *ip)
{
	uint8_t *buf = malloc(size);
	FUZZ_CHECK(buf != NULL);
	int h = srn_pkt_write_hdrs(buf, size, p);
	FUZZ_CHECK(h == p->info->hdr_len);
	if (p->paylen)
		memcpy(buf + h, p->payload, p->paylen);
	int n = srn_pkt_finish(buf, size, (size_t)h, p->paylen, ip);
	FUZZ_CHECK(n >= 0 && (size_t)n == size);
	FUZZ_CHECK(srn_icrc_check(ip, buf, size) == SRN_WIRE_OK);

	struct srn_pkt q;
	FUZZ_CHECK(srn_pkt_parse(&q, buf, size) == SRN_WIRE_OK);
	FUZZ_CHECK(same_fields(p, &q));

	/* bytes equal except reserved bits, pad bytes and the ICRC */
	uint8_t a[48], b[48];
	FUZZ_CHECK((size_t)h <= sizeof(a));
	memcpy(a, data, (size_t)h);
	memcpy(b, buf, (size_t)h);
	a[4] &= 0xC0; b[4] &= 0xC0;           /* resv6 */
	a[8] &= 0x80; b[8] &= 0x80;           /* resv7 */
	if (p->info->off_deth)
		a[p->info->off_deth + 4] = b[p->info->off_deth + 4] = 0;
	if (p->info->mask & SRN_M_CNP) {
		memset(a + 12, 0, 16);
		memset(b + 12, 0, 16);
	}
	FUZZ_CHECK(memcmp(a, b, (size_t)h) == 0);
	FUZZ_CHECK(p->paylen == 0 || memcmp(buf + h, data + h, p->paylen) == 0);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srn_ip_info ip = fuzz_ip();

	/* ISA-L and the bitwise CRC agree on every input */
	int ic = srn_icrc_check(&ip, data, size);
	FUZZ_CHECK(ic == SRN_WIRE_OK || ic == SRN_WIRE_EICRC);
	if (size >= 16 && size <= SRN_PKT_MAX_LEN)
		FUZZ_CHECK((ic == SRN_WIRE_OK) ==
			   srn_tenc_icrc_ok(data, size, SRC, DST, ip.sport, ip.dport, ip.ip_id));

	struct srn_pkt p;
	int r = srn_pkt_parse(&p, data, size);
	FUZZ_CHECK(r <= 0 && r >= SRN_WIRE_ELEN);
	if (r != SRN_WIRE_OK) {
		FUZZ_CHECK(p.info == NULL && p.payload == NULL);
		return 0;
	}
	FUZZ_CHECK(p.info == srn_opinfo(data[0]));
	FUZZ_CHECK(p.tver == 0 && p.pad <= 3);
	FUZZ_CHECK(p.payload == data + p.info->hdr_len);
	FUZZ_CHECK((size_t)p.info->hdr_len + p.paylen + p.pad + SRN_ICRC_LEN == size);
	FUZZ_CHECK((p.info->mask & SRN_M_PAYLOAD) || (p.paylen == 0 && p.pad == 0));
	FUZZ_CHECK(p.dqpn <= SRN_QPN_MASK && p.psn <= SRN_PSN_MASK);

	check_against_tenc(&p, data, size);
	check_reencode(&p, data, size, &ip);
	return 0;
}
