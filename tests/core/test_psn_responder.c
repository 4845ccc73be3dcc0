/*
 * test_psn_responder.c - the responder (RQ logic) packet by packet:
 * PSN-01 (rollover), PSN-06, PSN-07, PSN-08, PSN-09, PSN-10, PSN-11,
 * PSN-12, PSN-13, PSN-14, PSN-17, PSN-20, PSN-21.
 *
 * One RC/UC/UD QP on one device (tests/lib/psn_harness); the test plays the
 * remote requester with packets built by the test-only encoder and checks
 * every packet the core answers with (opcode, PSN, AETH syndrome, MSN,
 * payload), memory, completions and counters. Path MTU is 256 bytes.
 */
#include "srn_test.h"
#include "lib/psn_harness.h"

#include <stdlib.h>

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)
#define ACK_SYN SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID)

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 7;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		b[i] = (uint8_t)x;
	}
}

static bool payload_is(const struct ph_pkt *k, const uint8_t *want, uint32_t len)
{
	return k && k->p.paylen == len && (len == 0 || memcmp(k->p.payload, want, len) == 0);
}

/* ------------------------------------------------------------------------ */
/* PSN-01: the responder rolls over from 0xFFFFFF to 0 */

SRN_TEST(test_psn_01_responder_rollover_sends_write_read_straddling_wrap)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0xFFFFF0 });
	REQUIRE(h);
	static uint8_t mem[4096], rbuf[16][64], src[1024];
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	uint32_t rkey_r;
	REQUIRE(ph_reg(h, rbuf, sizeof(rbuf), SRN_ACCESS_LOCAL_WRITE, &rkey_r));
	for (int i = 0; i < 16; i++)
		CHECK_EQ(ph_post_recv(h, 100 + (uint64_t)i, rbuf[i], 64, rkey_r), 0);
	/* 10 SENDs: PSN 0xFFFFF0..0xFFFFF9 */
	for (int i = 0; i < 10; i++) {
		uint8_t msg[16];
		memset(msg, 0x30 + i, sizeof(msg));
		CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, ph_rq(h, i), msg, 16, true), 0);
		PH_EXPECT_AETH(h, SRN_OP_RC_ACKNOWLEDGE, 0xFFFFF0 + i, ACK_SYN, i + 1);
		PH_EXPECT_CQE(h->rcq, 100 + (uint64_t)i, SRN_WC_SUCCESS, SRN_WC_RECV);
		CHECK(memcmp(rbuf[i], msg, 16) == 0);
	}
	/* a 4-packet WRITE 0xFFFFFA..0xFFFFFD, ACK requested on the last only */
	fill(src, sizeof(src), 1);
	static const uint8_t ops[4] = { SRN_OP_RC_WRITE_FIRST, SRN_OP_RC_WRITE_MIDDLE,
					SRN_OP_RC_WRITE_MIDDLE, SRN_OP_RC_WRITE_LAST };
	for (int k = 0; k < 4; k++)
		CHECK_EQ(ph_write(h, ops[k], ph_rq(h, 10 + k), (uintptr_t)mem, key, 1024,
				  src + 256 * k, 256, k == 3), 0);
	PH_EXPECT_ACK(h, 0xFFFFFD, 11);
	PH_EXPECT_NONE(h);
	CHECK(memcmp(mem, src, 1024) == 0);
	/* a READ at 0xFFFFFE of 1024 bytes: responses 0xFFFFFE, 0xFFFFFF, 0, 1 */
	CHECK_EQ(ph_read(h, ph_rq(h, 14), (uintptr_t)mem, key, 1024), 0);
	CHECK_EQ(ph_epsn(h), 2);   /* PSN-07: ePSN advanced by the response count */
	const struct ph_pkt *k;
	k = PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0xFFFFFE, ACK_SYN, 12);
	CHECK(payload_is(k, src, 256));
	k = PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0xFFFFFF);
	CHECK(payload_is(k, src + 256, 256));
	k = PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0);
	CHECK(payload_is(k, src + 512, 256));
	k = PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_LAST, 1, ACK_SYN, 12);
	CHECK(payload_is(k, src + 768, 256));
	PH_EXPECT_NONE(h);
	/* and on after the wrap: a SEND at 2 */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 2, "wrap", 4, true), 0);
	PH_EXPECT_ACK(h, 2, 13);
	PH_EXPECT_CQE(h->rcq, 110, SRN_WC_SUCCESS, SRN_WC_RECV);
	CHECK(memcmp(rbuf[10], "wrap", 4) == 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_REQUESTS), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_OOS_REQ_DROPPED), 0);
	ph_free(h);

	/* a multi-packet WRITE whose packets straddle the wrap: 0xFFFFFE..1 */
	h = ph_new(&(struct ph_opts){ .rq_psn = 0xFFFFFE });
	REQUIRE(h);
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	fill(src, sizeof(src), 2);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ph_write(h, ops[i], ph_rq(h, i), (uintptr_t)mem + 8, key, 1000, src + 256 * i,
				  i == 3 ? 232 : 256, i == 3), 0);
	PH_EXPECT_ACK(h, 1, 1);
	PH_EXPECT_NONE(h);
	CHECK(memcmp(mem + 8, src, 1000) == 0);
	CHECK_EQ(ph_epsn(h), 2);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-06: ePSN = the remote start PSN, settable only on the way to RTR */

SRN_TEST(test_psn_06_epsn_only_set_on_init_to_rtr)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x123456 });
	REQUIRE(h);
	CHECK_EQ(ph_epsn(h), 0x123456);
	/* RTS -> RTS with IBV_QP_RQ_PSN: ignored by the transport */
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_RTS;
	at.rq_psn = 0x200000;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE | SRN_QP_RQ_PSN, h->now), 0);
	CHECK_EQ(ph_epsn(h), 0x123456);
	/* a request at the attempted PSN is out of sequence, at the real one executed */
	static uint8_t rb[64];
	uint32_t lk;
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	CHECK_EQ(ph_post_recv(h, 1, rb, sizeof(rb), lk), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x200000, "x", 1, true), 0);
	PH_EXPECT_NAK(h, 0x123456, SRN_NAK_PSN_SEQ_ERR, 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x123456, "y", 1, true), 0);
	PH_EXPECT_ACK(h, 0x123456, 1);
	PH_EXPECT_CQE(h->rcq, 1, SRN_WC_SUCCESS, SRN_WC_RECV);
	/* SQD -> RTS with RQ_PSN: ignored too */
	at.qp_state = SRN_QPS_SQD;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE, h->now), 0);
	at.qp_state = SRN_QPS_RTS;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE | SRN_QP_RQ_PSN, h->now), 0);
	CHECK_EQ(ph_epsn(h), 0x123457);
	/* RESET -> INIT -> RTR sets it again */
	at.qp_state = SRN_QPS_RESET;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE, h->now), 0);
	at.qp_state = SRN_QPS_INIT;
	at.qp_access_flags = ALL_ACC;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE | SRN_QP_ACCESS_FLAGS | SRN_QP_RQ_PSN, h->now), 0);
	CHECK_EQ(ph_epsn(h), 0);   /* INIT -> INIT does not set it either */
	at.qp_state = SRN_QPS_RTR;
	at.rq_psn = 0xABCDEF;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE | SRN_QP_RQ_PSN, h->now), 0);
	CHECK_EQ(ph_epsn(h), 0xABCDEF);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-07: PSN == ePSN executes; +1, or + the response count of a READ */

SRN_TEST(test_psn_07_epsn_advances_by_one_or_read_response_count)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x100 });
	REQUIRE(h);
	static uint8_t mem[2048], rb[64];
	uint32_t key, lk;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	CHECK_EQ(ph_post_recv(h, 1, rb, sizeof(rb), lk), 0);
	fill(mem, sizeof(mem), 3);
	CHECK_EQ(ph_read(h, 0x100, (uintptr_t)mem, key, 1000), 0);   /* 4 responses */
	CHECK_EQ(ph_epsn(h), 0x104);
	CHECK_EQ(ph_read(h, 0x104, (uintptr_t)mem, key, 0), 0);      /* 0 bytes: 1 response */
	CHECK_EQ(ph_epsn(h), 0x105);
	CHECK_EQ(ph_read(h, 0x105, (uintptr_t)mem, key, 256), 0);    /* exactly one MTU */
	CHECK_EQ(ph_epsn(h), 0x106);
	CHECK_EQ(ph_read(h, 0x106, (uintptr_t)mem, key, 257), 0);    /* one byte more: 2 */
	CHECK_EQ(ph_epsn(h), 0x108);
	for (uint32_t i = 0; i < 4; i++)
		PH_EXPECT(h, i == 0 ? SRN_OP_RC_READ_RESPONSE_FIRST : i == 3 ? SRN_OP_RC_READ_RESPONSE_LAST
			  : SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x100 + i);
	const struct ph_pkt *k = PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x104, ACK_SYN, 2);
	CHECK(k && k->p.paylen == 0);
	k = PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x105);
	CHECK(payload_is(k, mem, 256));
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x106);
	k = PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x107, ACK_SYN, 4);
	CHECK(payload_is(k, mem + 256, 1));
	PH_EXPECT_NONE(h);
	/* the PSN after the READ's first is not ePSN: 0x109 is ahead (NAK 0x108) */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x109, "a", 1, true), 0);
	PH_EXPECT_NAK(h, 0x108, SRN_NAK_PSN_SEQ_ERR, 4);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x108, "b", 1, true), 0);
	PH_EXPECT_ACK(h, 0x108, 5);
	CHECK_EQ(ph_epsn(h), 0x109);
	PH_EXPECT_CQE(h->rcq, 1, SRN_WC_SUCCESS, SRN_WC_RECV);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-08 / PSN-20: duplicate SEND/WRITE */

SRN_TEST(test_psn_08_duplicate_send_write_acked_with_last_psn_not_reexecuted)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x200 });
	REQUIRE(h);
	static uint8_t mem[256], rb[2][64];
	uint32_t key, lk;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	CHECK_EQ(ph_post_recv(h, 1, rb[0], 64, lk), 0);
	CHECK_EQ(ph_post_recv(h, 2, rb[1], 64, lk), 0);
	uint8_t a[64], b[64];
	memset(a, 0xAA, sizeof(a));
	memset(b, 0xBB, sizeof(b));
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x200, (uintptr_t)mem, key, 64, a, 64, true), 0);
	PH_EXPECT_ACK(h, 0x200, 1);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x201, a, 32, true), 0);
	PH_EXPECT_ACK(h, 0x201, 2);
	PH_EXPECT_CQE(h->rcq, 1, SRN_WC_SUCCESS, SRN_WC_RECV);
	/* change the target between: a duplicate must not write it again */
	memset(mem, 0xEE, sizeof(mem));
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x200, (uintptr_t)mem, key, 64, b, 64, true), 0);
	PH_EXPECT_ACK(h, 0x201, 2);      /* PSN of the most recently completed request */
	PH_EXPECT_NONE(h);
	for (int i = 0; i < 256; i++)
		CHECK_EQ(mem[i], 0xEE);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x201, b, 32, true), 0);
	PH_EXPECT_ACK(h, 0x201, 2);      /* MSN not advanced (PSN-20) */
	PH_EXPECT_NO_CQE(h->rcq);        /* no receive consumed */
	CHECK_EQ(rb[1][0], 0);
	CHECK_EQ(ph_epsn(h), 0x202);
	CHECK_EQ(ph_msn(h), 2);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_REQUESTS), 2);
	/* the far edge of the duplicate region: 2^23 behind ePSN is a duplicate,
	 * 2^23 - 1 ahead is out of sequence */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, (0x202 - (1u << 23)) & 0xFFFFFF, b, 8, true), 0);
	PH_EXPECT_ACK(h, 0x201, 2);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, (0x202 + (1u << 23) - 1) & 0xFFFFFF, b, 8, true), 0);
	PH_EXPECT_NAK(h, 0x202, SRN_NAK_PSN_SEQ_ERR, 2);
	/* the next receive is still there for the real next SEND */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x202, b, 16, true), 0);
	PH_EXPECT_ACK(h, 0x202, 3);
	PH_EXPECT_CQE(h->rcq, 2, SRN_WC_SUCCESS, SRN_WC_RECV);
	CHECK_EQ(rb[1][0], 0xBB);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

SRN_TEST(test_psn_08_duplicate_of_multi_packet_write_middle_not_rewritten)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x10 });
	REQUIRE(h);
	static uint8_t mem[1024], src[768];
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	fill(src, sizeof(src), 8);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_FIRST, 0x10, (uintptr_t)mem, key, 768, src, 256, false), 0);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_MIDDLE, 0x11, 0, 0, 0, src + 256, 256, false), 0);
	/* duplicate FIRST in the middle of the message: ACKed with 0x11, no write */
	memset(mem, 0, 256);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_FIRST, 0x10, (uintptr_t)mem, key, 768, src, 256, false), 0);
	PH_EXPECT_ACK(h, 0x11, 0);
	CHECK_EQ(mem[0], 0);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_LAST, 0x12, 0, 0, 0, src + 512, 256, true), 0);
	PH_EXPECT_ACK(h, 0x12, 1);
	CHECK(memcmp(mem + 256, src + 256, 512) == 0);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-09: duplicate READ */

SRN_TEST(test_psn_09_duplicate_read_reexecuted_from_its_own_psn)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x300 });
	REQUIRE(h);
	static uint8_t mem[1024];
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	fill(mem, sizeof(mem), 9);
	CHECK_EQ(ph_read(h, 0x300, (uintptr_t)mem, key, 1024), 0);
	CHECK_EQ(ph_pending(h), 4);
	ph_discard(h);
	fill(mem, sizeof(mem), 10);     /* re-executed from memory: the new bytes */
	/* a duplicate for the last two packets (lost responses): PSN 0x302 */
	CHECK_EQ(ph_read(h, 0x302, (uintptr_t)mem + 512, key, 512), 0);
	const struct ph_pkt *k = PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x302, ACK_SYN, 1);
	CHECK(payload_is(k, mem + 512, 256));
	k = PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x303, ACK_SYN, 1);
	CHECK(payload_is(k, mem + 768, 256));
	PH_EXPECT_NONE(h);
	/* the whole READ again */
	CHECK_EQ(ph_read(h, 0x300, (uintptr_t)mem, key, 1024), 0);
	for (uint32_t i = 0; i < 4; i++) {
		k = PH_EXPECT(h, i == 0 ? SRN_OP_RC_READ_RESPONSE_FIRST : i == 3 ? SRN_OP_RC_READ_RESPONSE_LAST
			      : SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x300 + i);
		CHECK(payload_is(k, mem + 256 * i, 256));
	}
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_epsn(h), 0x304);     /* unchanged by duplicates */
	CHECK_EQ(ph_msn(h), 1);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_READ_REEXEC), 2);
	ph_free(h);
}

SRN_TEST(test_psn_09_duplicate_read_not_a_subset_dropped)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x300 });
	REQUIRE(h);
	static uint8_t mem[4096];
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	CHECK_EQ(ph_read(h, 0x300, (uintptr_t)mem + 1024, key, 1024), 0);
	CHECK_EQ(ph_pending(h), 4);
	ph_discard(h);
	/* longer than the original */
	CHECK_EQ(ph_read(h, 0x301, (uintptr_t)mem + 1280, key, 1024), 0);
	PH_EXPECT_NONE(h);
	/* starts before it */
	CHECK_EQ(ph_read(h, 0x300, (uintptr_t)mem + 1016, key, 256), 0);
	PH_EXPECT_NONE(h);
	/* a duplicate PSN that belongs to no READ */
	CHECK_EQ(ph_read(h, 0x2F0, (uintptr_t)mem + 1024, key, 256), 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_READ_REEXEC), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_REQUESTS), 3);
	/* a subset is answered */
	CHECK_EQ(ph_read(h, 0x301, (uintptr_t)mem + 1280, key, 768), 0);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x301);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x302);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x303);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

SRN_TEST(test_psn_09_duplicate_read_with_earlier_psn_preempts_one_in_progress)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x400 });
	REQUIRE(h);
	static uint8_t mem[2048];
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	fill(mem, sizeof(mem), 11);
	CHECK_EQ(ph_read(h, 0x400, (uintptr_t)mem, key, 1024), 0);          /* A: 0x400..0x403 */
	CHECK_EQ(ph_read(h, 0x404, (uintptr_t)mem + 1024, key, 1024), 0);   /* B: 0x404..0x407 */
	CHECK_EQ(ph_collect_n(h, 6), 6);     /* A complete, B half sent */
	CHECK_EQ(ph_read(h, 0x400, (uintptr_t)mem, key, 1024), 0);          /* duplicate A */
	for (uint32_t i = 0; i < 4; i++)
		PH_EXPECT(h, -1, 0x400 + i);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x404);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x405);
	/* B stopped; A answered again from its own PSN */
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x400);
	CHECK(payload_is(k, mem, 256));
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x401);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x402);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x403);
	PH_EXPECT_NONE(h);
	/* the requester resends B; it is a duplicate now, answered in full */
	CHECK_EQ(ph_read(h, 0x406, (uintptr_t)mem + 1536, key, 512), 0);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x406);
	k = PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x407);
	CHECK(payload_is(k, mem + 1792, 256));
	PH_EXPECT_NONE(h);
	ph_free(h);
}

SRN_TEST(test_psn_09_duplicate_read_error_before_first_response_silent_after_some_stops)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x500 });
	REQUIRE(h);
	static uint8_t mem[2048];
	uint32_t key;
	struct srn_mr *mr = ph_reg(h, mem, sizeof(mem), ALL_ACC, &key);
	REQUIRE(mr);
	CHECK_EQ(ph_read(h, 0x500, (uintptr_t)mem, key, 1024), 0);
	ph_discard(h);
	/* a READ in progress whose memory goes away stops without a NAK */
	CHECK_EQ(ph_read(h, 0x504, (uintptr_t)mem, key, 1024), 0);
	CHECK_EQ(ph_collect_n(h, 2), 2);
	CHECK_EQ(srn_mr_dereg(h->dev, mr), 0);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x504);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x505);
	PH_EXPECT_NONE(h);
	/* a duplicate READ that fails before its first response: dropped silently */
	CHECK_EQ(ph_read(h, 0x500, (uintptr_t)mem, key, 1024), 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_RTS);
	CHECK_EQ(ph_epsn(h), 0x508);
	CHECK_EQ(ph_ctr(h, SRN_CTR_TX_NAK_REM_ACCESS), 0);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-10: duplicate ATOMIC */

SRN_TEST(test_psn_10_duplicate_atomic_answered_from_saved_result_once)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x600, .max_dest_rd_atomic = 2 });
	REQUIRE(h);
	static uint64_t target;
	static uint8_t rb[64];
	uint32_t key, lk;
	REQUIRE(ph_reg(h, &target, 8, ALL_ACC, &key));
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	target = 10;
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x600, (uintptr_t)&target, key, 5, 0), 0);
	const struct ph_pkt *k = PH_EXPECT_AETH(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x600, ACK_SYN, 1);
	CHECK(k && k->p.orig == 10);
	CHECK_EQ(target, 15);
	target = 100;    /* changed behind the responder's back */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x600, (uintptr_t)&target, key, 5, 0), 0);
	k = PH_EXPECT_AETH(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x600, ACK_SYN, 1);
	CHECK(k && k->p.orig == 10);
	CHECK_EQ(target, 100);           /* not executed again */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_COMPARE_SWAP, 0x601, (uintptr_t)&target, key, 7, 100), 0);
	k = PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x601);
	CHECK(k && k->p.orig == 100);
	CHECK_EQ(target, 7);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_COMPARE_SWAP, 0x601, (uintptr_t)&target, key, 7, 7), 0);
	k = PH_EXPECT_AETH(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x601, ACK_SYN, 2);
	CHECK(k && k->p.orig == 100);
	CHECK_EQ(target, 7);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_ATOMIC_REPLAY), 2);
	/* unknown duplicate ATOMICs are dropped: a PSN never used by an atomic,
	 * and the PSN of a SEND */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x5F0, (uintptr_t)&target, key, 1, 0), 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_post_recv(h, 1, rb, sizeof(rb), lk), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x602, "s", 1, true), 0);
	PH_EXPECT_ACK(h, 0x602, 3);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x602, (uintptr_t)&target, key, 1, 0), 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(target, 7);
	/* max_dest_rd_atomic = 2 saved results: a third atomic pushes out 0x600 */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x603, (uintptr_t)&target, key, 1, 0), 0);
	k = PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x603);
	CHECK(k && k->p.orig == 7);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x600, (uintptr_t)&target, key, 5, 0), 0);
	PH_EXPECT_NONE(h);               /* no saved result any more */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_COMPARE_SWAP, 0x601, (uintptr_t)&target, key, 7, 100), 0);
	k = PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x601);
	CHECK(k && k->p.orig == 100);
	CHECK_EQ(target, 8);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_ATOMIC_REPLAY), 3);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-11: duplicates answered in PSN order */

SRN_TEST(test_psn_11_duplicates_answered_in_psn_order)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x700 });
	REQUIRE(h);
	static uint8_t mem[512], rb[64];
	static uint64_t target = 1;
	uint32_t key, tkey, lk;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	REQUIRE(ph_reg(h, &target, 8, ALL_ACC, &tkey));
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	CHECK_EQ(ph_post_recv(h, 1, rb, sizeof(rb), lk), 0);
	fill(mem, sizeof(mem), 12);
	CHECK_EQ(ph_read(h, 0x700, (uintptr_t)mem, key, 100), 0);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x701, (uintptr_t)&target, tkey, 2, 0), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x702, "abc", 3, true), 0);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x703, (uintptr_t)mem + 256, key, 4, "wxyz", 4, true), 0);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x700);
	PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x701);
	PH_EXPECT_ACK(h, 0x703, 4);       /* the two ACKs coalesce (PSN-17) */
	PH_EXPECT_NONE(h);
	/* the requester retries all four; the answers keep PSN order */
	CHECK_EQ(ph_read(h, 0x700, (uintptr_t)mem, key, 100), 0);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x701, (uintptr_t)&target, tkey, 2, 0), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x702, "abc", 3, true), 0);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x703, (uintptr_t)mem + 256, key, 4, "wxyz", 4, true), 0);
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x700);
	CHECK(payload_is(k, mem, 100));
	k = PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x701);
	CHECK(k && k->p.orig == 1);
	PH_EXPECT_ACK(h, 0x703, 4);
	PH_EXPECT_NONE(h);
	/* a duplicate ATOMIC followed by a duplicate READ with an earlier PSN:
	 * never a later PSN answered before an earlier one */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x701, (uintptr_t)&target, tkey, 2, 0), 0);
	CHECK_EQ(ph_read(h, 0x700, (uintptr_t)mem, key, 100), 0);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x700);
	PH_EXPECT_NONE(h);
	CHECK_EQ(target, 3);
	PH_EXPECT_CQE(h->rcq, 1, SRN_WC_SUCCESS, SRN_WC_RECV);
	PH_EXPECT_NO_CQE(h->rcq);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-12: request ahead of ePSN */

SRN_TEST(test_psn_12_out_of_sequence_nak_once_after_earlier_acked)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x800 });
	REQUIRE(h);
	static uint8_t rb[8][64];
	uint32_t lk;
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	for (int i = 0; i < 8; i++)
		CHECK_EQ(ph_post_recv(h, 1 + (uint64_t)i, rb[i], 64, lk), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x800, "m0", 2, false), 0);
	PH_EXPECT_NONE(h);                               /* coalesced: no ACK yet */
	/* 0x801 is lost; 0x802 arrives */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x802, "m2", 2, true), 0);
	PH_EXPECT_CQE(h->rcq, 1, SRN_WC_SUCCESS, SRN_WC_RECV);   /* earlier completed */
	PH_EXPECT_ACK(h, 0x800, 1);                      /* ... and acknowledged first */
	PH_EXPECT_NAK(h, 0x801, SRN_NAK_PSN_SEQ_ERR, 1); /* one NAK carrying ePSN */
	PH_EXPECT_NONE(h);
	/* later out-of-sequence requests: dropped, no more NAKs */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x803, "m3", 2, true), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x802, "m2", 2, true), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x900, "xx", 2, true), 0);
	PH_EXPECT_NONE(h);
	PH_EXPECT_NO_CQE(h->rcq);
	CHECK_EQ(ph_epsn(h), 0x801);
	CHECK_EQ(ph_ctr(h, SRN_CTR_OOS_REQ_DROPPED), 4);
	CHECK_EQ(ph_ctr(h, SRN_CTR_TX_NAK_SEQ), 1);
	/* recovery: the retransmission from 0x801 */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x801, "m1", 2, false), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x802, "m2", 2, true), 0);
	PH_EXPECT_ACK(h, 0x802, 3);
	PH_EXPECT_CQE(h->rcq, 2, SRN_WC_SUCCESS, SRN_WC_RECV);
	PH_EXPECT_CQE(h->rcq, 3, SRN_WC_SUCCESS, SRN_WC_RECV);
	CHECK(memcmp(rb[1], "m1", 2) == 0 && memcmp(rb[2], "m2", 2) == 0);
	/* a new gap gets a new NAK */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x805, "m5", 2, true), 0);
	PH_EXPECT_NAK(h, 0x803, SRN_NAK_PSN_SEQ_ERR, 3);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x806, "m6", 2, true), 0);
	PH_EXPECT_NONE(h);
	/* a duplicate also ends the silence: it is answered, and the next
	 * out-of-sequence request is NAKed again */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x801, "m1", 2, true), 0);
	PH_EXPECT_ACK(h, 0x802, 3);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x806, "m6", 2, true), 0);
	PH_EXPECT_NAK(h, 0x803, SRN_NAK_PSN_SEQ_ERR, 3);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_epsn(h), 0x803);
	CHECK_EQ(ph_ctr(h, SRN_CTR_TX_NAK_SEQ), 3);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-13: UC */

SRN_TEST(test_psn_13_uc_resync_on_first_only_drop_until_first_after_mismatch)
{
	struct ph *h = ph_new(&(struct ph_opts){ .type = SRN_QPT_UC, .rq_psn = 0xFFFFFE });
	REQUIRE(h);
	static uint8_t rb[4][1024], src[1024], mem[1024];
	uint32_t lk, key;
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ph_post_recv(h, 1 + (uint64_t)i, rb[i], 1024, lk), 0);
	fill(src, sizeof(src), 13);
	/* a 3-packet message across the wrap: 0xFFFFFE, 0xFFFFFF, 0 */
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_FIRST, 0xFFFFFE, src, 256, false), 0);
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_MIDDLE, 0xFFFFFF, src + 256, 256, false), 0);
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_LAST, 0, src + 512, 100, false), 0);
	struct srn_cqe c;
	REQUIRE(ph_poll(h->rcq, &c, 1) == 1);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.byte_len, 612);
	CHECK(memcmp(rb[0], src, 612) == 0);
	CHECK_EQ(ph_epsn(h), 1);
	/* FIRST at 1, MIDDLE at 2 lost, LAST at 3: a Last mismatch drops it, and
	 * everything until the next First/Only (a MIDDLE at 4 too) */
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_FIRST, 1, src, 256, false), 0);
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_LAST, 3, src, 10, false), 0);
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_MIDDLE, 4, src, 256, false), 0);
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_LAST, 5, src, 10, false), 0);
	PH_EXPECT_NO_CQE(h->rcq);
	CHECK_EQ(ph_ctr(h, SRN_CTR_UC_MSG_DROPPED), 4);
	/* an Only with any PSN starts a new message: ePSN = its PSN + 1 */
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_ONLY, 0x123, src + 1, 50, false), 0);
	REQUIRE(ph_poll(h->rcq, &c, 1) == 1);
	CHECK_EQ(c.wr_id, 2);             /* the abandoned message's WQE is reused */
	CHECK_EQ(c.byte_len, 50);
	CHECK(memcmp(rb[1], src + 1, 50) == 0);
	CHECK_EQ(ph_epsn(h), 0x124);
	/* a First with a mismatching PSN resynchronises too */
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_FIRST, 0x200, src, 256, false), 0);
	CHECK_EQ(ph_send(h, SRN_OP_UC_SEND_LAST, 0x201, src + 256, 4, false), 0);
	REQUIRE(ph_poll(h->rcq, &c, 1) == 1);
	CHECK_EQ(c.wr_id, 3);
	CHECK_EQ(c.byte_len, 260);
	CHECK(memcmp(rb[2], src, 260) == 0);
	/* UC WRITE: a Middle mismatch drops the rest, memory beyond it untouched */
	memset(mem, 0, sizeof(mem));
	CHECK_EQ(ph_write(h, SRN_OP_UC_WRITE_FIRST, 0x202, (uintptr_t)mem, key, 768, src, 256, false), 0);
	CHECK_EQ(ph_write(h, SRN_OP_UC_WRITE_MIDDLE, 0x204, 0, 0, 0, src + 256, 256, false), 0);
	CHECK_EQ(ph_write(h, SRN_OP_UC_WRITE_LAST, 0x205, 0, 0, 0, src + 512, 256, false), 0);
	CHECK(memcmp(mem, src, 256) == 0);
	for (int i = 256; i < 1024; i++)
		CHECK_EQ(mem[i], 0);
	/* a WRITE_ONLY with a new PSN is accepted */
	CHECK_EQ(ph_write(h, SRN_OP_UC_WRITE_ONLY, 0x7000, (uintptr_t)mem + 512, key, 8, "ABCDEFGH", 8, false), 0);
	CHECK(memcmp(mem + 512, "ABCDEFGH", 8) == 0);
	CHECK_EQ(ph_epsn(h), 0x7001);
	PH_EXPECT_NONE(h);               /* UC never acknowledges */
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-14: UD */

SRN_TEST(test_psn_14_ud_no_psn_check)
{
	struct ph *h = ph_new(&(struct ph_opts){ .type = SRN_QPT_UD });
	REQUIRE(h);
	static uint8_t rb[6][128];
	uint32_t lk;
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	for (int i = 0; i < 6; i++)
		CHECK_EQ(ph_post_recv(h, 1 + (uint64_t)i, rb[i], 128, lk), 0);
	static const uint32_t psns[6] = { 0, 0x777777, 0, 0xFFFFFF, 5, 4 };
	for (int i = 0; i < 6; i++) {
		struct srn_tenc_pkt p;
		srn_tenc_init(&p, SRN_OP_UD_SEND_ONLY);
		p.psn = psns[i];
		p.qkey = 0x11111111;
		p.sqpn = 0x99;
		uint8_t msg[8];
		memset(msg, 0x40 + i, sizeof(msg));
		p.payload = msg;
		p.paylen = 8;
		CHECK_EQ(ph_inject(h, &p), 0);
		struct srn_cqe c;
		REQUIRE(ph_poll(h->rcq, &c, 1) == 1);
		CHECK_EQ(c.wr_id, 1 + (uint64_t)i);
		CHECK_EQ(c.status, SRN_WC_SUCCESS);
		CHECK_EQ(c.byte_len, 40 + 8);
		CHECK_EQ(c.src_qp, 0x99);
		CHECK(memcmp(rb[i] + 40, msg, 8) == 0);
	}
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_REQUESTS), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_OOS_REQ_DROPPED), 0);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-17 (responder side): one ACK for several requests */

SRN_TEST(test_psn_17_responder_acks_several_requests_with_one_ack)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x900, .ack_coalesce = 3 });
	REQUIRE(h);
	static uint8_t mem[256];
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	/* no AckReq: an ACK every ack_coalesce (3) packets */
	for (int i = 0; i < 7; i++)
		CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x900 + (uint32_t)i, (uintptr_t)mem + 8 * (uint32_t)i,
				  key, 8, "01234567", 8, false), 0);
	PH_EXPECT_ACK(h, 0x905, 6);   /* 0x902's ACK coalesced into 0x905's (not yet sent) */
	PH_EXPECT_NONE(h);
	/* AckReq on the last one: one ACK for 0x906..0x909 */
	for (int i = 7; i < 10; i++)
		CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x900 + (uint32_t)i, (uintptr_t)mem, key, 8,
				  "abcdefgh", 8, i == 9), 0);
	PH_EXPECT_ACK(h, 0x909, 10);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

/* PSN-17 with cfg.ack_delay_ns (ping-pong traffic): a two-way QP's lone ACK
 * waits for the QP's next request and leaves right behind it, or at its
 * deadline; a one-way QP, a READ response and a QP quiet for more than
 * SRN_ACK_DELAY_PEER_NS are answered at once. */
SRN_TEST(test_psn_17_delayed_ack_leaves_behind_the_qps_next_request)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x900, .ack_delay_ns = 20000 });
	REQUIRE(h);
	static uint8_t mem[256], out[64];
	uint32_t key, lk;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	REQUIRE(ph_reg(h, out, sizeof(out), ALL_ACC, &lk));
	fill(mem, sizeof(mem), 17);

	/* one-way so far (the QP never sent a request): ACK at once */
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x900, (uintptr_t)mem, key, 8, "01234567", 8, true), 0);
	PH_EXPECT_ACK(h, 0x900, 1);
	PH_EXPECT_NONE(h);

	/* the QP sends a WRITE of its own (acknowledged by the peer) */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 1, out, 8, lk, 0x1000, 0x77, SRN_SEND_SIGNALED), 0);
	PH_EXPECT(h, SRN_OP_RC_WRITE_ONLY, ph_sq(h, 0));
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ack(h, ph_sq(h, 0), ACK_SYN, 1), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE);

	/* now two-way: the ACK for 0x901 is held, its timer armed */
	srn_ts t0 = h->now;
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x901, (uintptr_t)mem + 8, key, 8, "abcdefgh", 8, true), 0);
	PH_EXPECT_NONE(h);
	CHECK(memcmp(mem + 8, "abcdefgh", 8) == 0);      /* executed, only the ACK waits */
	CHECK_EQ(ph_ctr(h, SRN_CTR_ACKS_DELAYED), 1);
	CHECK_EQ(ph_expiry(h), t0 + 20000);
	/* the QP's next request goes first, the ACK right behind it */
	ph_advance(h, 3000);
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 2, out, 8, lk, 0x1000, 0x77, SRN_SEND_SIGNALED), 0);
	PH_EXPECT(h, SRN_OP_RC_WRITE_ONLY, ph_sq(h, 1));
	PH_EXPECT_ACK(h, 0x901, 2);
	PH_EXPECT_NONE(h);
	CHECK(ph_expiry(h) != t0 + 20000);              /* its timer is gone */

	/* no request comes: the ACK leaves at its deadline, not before */
	srn_ts t1 = h->now;
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x902, (uintptr_t)mem, key, 8, "ABCDEFGH", 8, true), 0);
	PH_EXPECT_NONE(h);
	ph_set_time(h, t1 + 19999);
	PH_EXPECT_NONE(h);
	ph_set_time(h, t1 + 20000);
	PH_EXPECT_ACK(h, 0x902, 3);
	PH_EXPECT_NONE(h);

	/* requests that come while an ACK waits coalesce into it; the first
	 * one's deadline holds (the delay is bounded) */
	srn_ts t2 = h->now;
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x903, (uintptr_t)mem, key, 8, "--------", 8, true), 0);
	ph_set_time(h, t2 + 15000);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x904, (uintptr_t)mem, key, 8, "++++++++", 8, true), 0);
	PH_EXPECT_NONE(h);
	ph_set_time(h, t2 + 20000);
	PH_EXPECT_ACK(h, 0x904, 5);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_ACKS_DELAYED), 3);

	/* a QP about to be destroyed releases its held ACK at once */
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x905, (uintptr_t)mem, key, 8, "********", 8, true), 0);
	PH_EXPECT_NONE(h);
	CHECK(srn_qp_release_acks(h->qp));
	PH_EXPECT_ACK(h, 0x905, 6);
	PH_EXPECT_NONE(h);
	CHECK(!srn_qp_release_acks(h->qp));
	CHECK_EQ(ph_ctr(h, SRN_CTR_ACKS_DELAYED), 4);

	/* a READ response is never held */
	CHECK_EQ(ph_read(h, 0x906, (uintptr_t)mem, key, 16), 0);
	const struct ph_pkt *k = ph_next(h);
	CHECK(k && k->p.opcode == SRN_OP_RC_READ_RESPONSE_ONLY && k->p.psn == 0x906);
	CHECK(k && payload_is(k, mem, 16));
	PH_EXPECT_NONE(h);

	/* the QP quiet as a requester for longer than SRN_ACK_DELAY_PEER_NS:
	 * one-way again, ACK at once */
	ph_advance(h, 1000 * 1000 + 1);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x907, (uintptr_t)mem, key, 8, "01234567", 8, true), 0);
	PH_EXPECT_ACK(h, 0x907, 8);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_ACKS_DELAYED), 4);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-20: MSN once per message, never for duplicates */

SRN_TEST(test_psn_20_msn_once_per_message_never_for_duplicates)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0xA00 });
	REQUIRE(h);
	static uint8_t rb[1024], mem[1024];
	uint32_t lk, key;
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	CHECK_EQ(ph_post_recv(h, 1, rb, sizeof(rb), lk), 0);
	uint8_t d[256];
	memset(d, 7, sizeof(d));
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_FIRST, 0xA00, d, 256, true), 0);
	PH_EXPECT_ACK(h, 0xA00, 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_MIDDLE, 0xA01, d, 256, true), 0);
	PH_EXPECT_ACK(h, 0xA01, 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_LAST, 0xA02, d, 10, true), 0);
	PH_EXPECT_ACK(h, 0xA02, 1);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_LAST, 0xA02, d, 10, true), 0);   /* duplicate */
	PH_EXPECT_ACK(h, 0xA02, 1);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_FIRST, 0xA03, (uintptr_t)mem, key, 300, d, 256, true), 0);
	PH_EXPECT_ACK(h, 0xA03, 1);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_LAST, 0xA04, 0, 0, 0, d, 44, true), 0);
	PH_EXPECT_ACK(h, 0xA04, 2);
	CHECK_EQ(ph_read(h, 0xA05, (uintptr_t)mem, key, 8), 0);
	PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0xA05, ACK_SYN, 3);
	CHECK_EQ(ph_read(h, 0xA05, (uintptr_t)mem, key, 8), 0);             /* duplicate */
	PH_EXPECT_AETH(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0xA05, ACK_SYN, 3);
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, 0xA03, (uintptr_t)mem, key, 8, d, 8, true), 0);
	PH_EXPECT_ACK(h, 0xA05, 3);
	CHECK_EQ(ph_msn(h), 3);
	PH_EXPECT_CQE(h->rcq, 1, SRN_WC_SUCCESS, SRN_WC_RECV);
	ph_free(h);
}

int main(void) { return srn_test_main(); }
