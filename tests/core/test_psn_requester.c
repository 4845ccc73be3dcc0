/*
 * test_psn_requester.c - the requester (SQ logic) and completer packet by
 * packet: PSN-01 (rollover), PSN-02, PSN-03, PSN-04, PSN-05, PSN-17,
 * PSN-18, PSN-19, plus fence, max_rd_atomic, SQD drained and CQ overflow.
 *
 * One RC QP on one device (tests/lib/psn_harness); the test plays the
 * remote responder: it reads the request packets the core emits and answers
 * with ACKs / READ responses / atomic ACKs built by the test-only encoder.
 * Path MTU is 256 bytes.
 */
#include "srn_test.h"
#include "lib/psn_harness.h"

#include <stdlib.h>
#include <sys/mman.h>

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)
#define ACK_SYN SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID)
#define SIG SRN_SEND_SIGNALED
#define RKEY 0x1234u
#define RVA  0x10000000ull

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

static uint8_t rd_op(uint32_t i, uint32_t n)
{
	if (n == 1)
		return SRN_OP_RC_READ_RESPONSE_ONLY;
	return i == 0 ? SRN_OP_RC_READ_RESPONSE_FIRST : i + 1 == n ? SRN_OP_RC_READ_RESPONSE_LAST
		: SRN_OP_RC_READ_RESPONSE_MIDDLE;
}

/* ------------------------------------------------------------------------ */
/* PSN-01: the requester rolls over */

SRN_TEST(test_psn_01_requester_rollover_sends_writes_read_straddling_wrap)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0xFFFFF0 });
	REQUIRE(h);
	static uint8_t buf[4096], rd[1024], resp[1024];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	fill(buf, sizeof(buf), 1);
	fill(resp, sizeof(resp), 2);
	for (int i = 0; i < 9; i++)                                      /* F0..F8 */
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1 + (uint64_t)i, buf + 16 * i, 16, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 20, buf, 1024, lk, RVA, RKEY, SIG), 0);      /* F9..FC */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 21, buf + 2048, 1024, lk, RVA, RKEY, SIG), 0); /* FD..0 */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 22, buf + 1024, 768, lk, RVA, RKEY, SIG), 0); /* 1..3 */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 23, buf, 4, lk, 0, 0, SIG), 0);                   /* 4 */
	for (int i = 0; i < 9; i++) {
		const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0xFFFFF0 + i);
		CHECK(payload_is(k, buf + 16 * i, 16));
		CHECK(k && k->p.ackreq);
	}
	static const uint8_t wops[4] = { SRN_OP_RC_WRITE_FIRST, SRN_OP_RC_WRITE_MIDDLE,
					 SRN_OP_RC_WRITE_MIDDLE, SRN_OP_RC_WRITE_LAST };
	for (int i = 0; i < 4; i++) {
		const struct ph_pkt *k = PH_EXPECT(h, wops[i], 0xFFFFF9 + i);
		CHECK(payload_is(k, buf + 256 * i, 256));
		if (i == 0)
			CHECK(k && k->p.va == RVA && k->p.rkey == RKEY && k->p.dmalen == 1024);
	}
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0xFFFFFD);
	CHECK(k && k->p.va == RVA && k->p.rkey == RKEY && k->p.dmalen == 1024);
	PH_EXPECT(h, SRN_OP_RC_WRITE_FIRST, 1);          /* PSN-03: READ took 4 PSNs */
	PH_EXPECT(h, SRN_OP_RC_WRITE_MIDDLE, 2);
	PH_EXPECT(h, SRN_OP_RC_WRITE_LAST, 3);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 4);
	PH_EXPECT_NONE(h);
	/* answers, across the wrap */
	CHECK_EQ(ph_ack(h, 0xFFFFF8, ACK_SYN, 9), 0);
	for (int i = 0; i < 9; i++)
		PH_EXPECT_CQE(h->scq, 1 + (uint64_t)i, SRN_WC_SUCCESS, SRN_WC_SEND);
	CHECK_EQ(ph_ack(h, 0xFFFFFC, ACK_SYN, 10), 0);
	PH_EXPECT_CQE(h->scq, 20, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE);
	for (uint32_t i = 0; i < 4; i++)
		CHECK_EQ(ph_read_resp(h, rd_op(i, 4), (0xFFFFFD + i) & 0xFFFFFF, 11, resp + 256 * i, 256), 0);
	PH_EXPECT_CQE(h->scq, 21, SRN_WC_SUCCESS, SRN_WC_RDMA_READ);
	CHECK(memcmp(buf + 2048, resp, 1024) == 0);
	CHECK_EQ(ph_ack(h, 4, ACK_SYN, 13), 0);
	PH_EXPECT_CQE(h->scq, 22, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE);
	PH_EXPECT_CQE(h->scq, 23, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_NO_CQE(h->scq);
	CHECK_EQ(ph_comp_psn(h), 5);
	CHECK_EQ(ph_max_psn(h), 5);
	CHECK_EQ(ph_ctr(h, SRN_CTR_RETRANSMIT_PKTS), 0);
	CHECK_EQ(ph_expiry(h), SRN_TS_NEVER);
	PH_EXPECT_NONE(h);
	(void)rd;
	ph_free(h);

	/* a multi-packet WRITE straddling the wrap: 0xFFFFFE, 0xFFFFFF, 0, 1 */
	h = ph_new(&(struct ph_opts){ .sq_psn = 0xFFFFFE });
	REQUIRE(h);
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE_WITH_IMM, 7, buf, 1000, lk, RVA, RKEY, SIG), 0);
	PH_EXPECT(h, SRN_OP_RC_WRITE_FIRST, 0xFFFFFE);
	PH_EXPECT(h, SRN_OP_RC_WRITE_MIDDLE, 0xFFFFFF);
	PH_EXPECT(h, SRN_OP_RC_WRITE_MIDDLE, 0);
	k = PH_EXPECT(h, SRN_OP_RC_WRITE_LAST_IMM, 1);
	CHECK(payload_is(k, buf + 768, 232));
	CHECK_EQ(ph_ack(h, 0, ACK_SYN, 0), 0);           /* partial: no completion */
	PH_EXPECT_NO_CQE(h->scq);
	CHECK_EQ(ph_comp_psn(h), 1);
	CHECK_EQ(ph_ack(h, 1, ACK_SYN, 1), 0);
	PH_EXPECT_CQE(h->scq, 7, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-02: any start PSN is the PSN of the first request */

SRN_TEST(test_psn_02_start_psn_any_value_is_first_request_psn)
{
	static const uint32_t starts[] = { 0, 1, 0x7FFFFF, 0x800000, 0xABCDEF, 0xFFFFFF };
	static uint8_t buf[64];
	for (unsigned i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = starts[i] });
		REQUIRE(h);
		uint32_t lk;
		REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
		struct srn_qp_attr at;
		srn_qp_query(h->qp, &at);
		CHECK_EQ(at.sq_psn, starts[i]);
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf, 8, lk, 0, 0, SIG), 0);
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, starts[i]);
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, (starts[i] + 1) & 0xFFFFFF);
		PH_EXPECT_NONE(h);
		CHECK_EQ(ph_ack(h, (starts[i] + 1) & 0xFFFFFF, ACK_SYN, 2), 0);
		PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
		PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
		ph_free(h);
	}
}

/* ------------------------------------------------------------------------ */
/* PSN-03: next PSN after a READ = its PSN + the responses it expects; the
 * requester checks a READ response against the READ's PSN range */

SRN_TEST(test_psn_03_read_advances_next_psn_by_response_count)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x100, .max_rd_atomic = 8 });
	REQUIRE(h);
	static uint8_t buf[4096];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	static const uint32_t lens[] = { 1000, 0, 256, 257, 4096 };
	static const uint32_t npsn[] = { 4, 1, 1, 2, 16 };
	for (int i = 0; i < 5; i++)
		CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 1 + (uint64_t)i, lens[i] ? buf : NULL, lens[i], lk,
				 RVA + 4096 * (uint64_t)i, RKEY, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 9, buf, 1, lk, 0, 0, SIG), 0);
	uint32_t psn = 0x100;
	for (int i = 0; i < 5; i++) {
		const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, psn);
		CHECK(k && k->p.dmalen == lens[i] && k->p.va == RVA + 4096 * (uint64_t)i);
		psn += npsn[i];
	}
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, psn);   /* 0x100 + 24 */
	CHECK_EQ(psn, 0x118);
	CHECK_EQ(ph_max_psn(h), 0x119);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

SRN_TEST(test_psn_03_read_response_range_checked_by_requester)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x200 });
	REQUIRE(h);
	static uint8_t buf[2048], resp[1024];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	fill(resp, sizeof(resp), 3);
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 1, buf, 1024, lk, RVA, RKEY, SIG), 0);   /* 0x200..0x203 */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf + 1024, 8, lk, 0, 0, SIG), 0);         /* 0x204 */
	PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x200);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x204);
	/* an ONLY carrying 256 bytes for a 1024-byte READ: wrong length, dropped */
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x200, 1, resp, 256), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_BAD_LENGTH), 1);
	PH_EXPECT_NO_CQE(h->scq);
	CHECK_EQ(ph_comp_psn(h), 0x200);
	/* a READ response at the SEND's PSN is outside the READ's range */
	memset(buf, 0, 1024);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x200, 1, resp, 256), 0);
	CHECK_EQ(ph_comp_psn(h), 0x201);
	CHECK(memcmp(buf, resp, 256) == 0);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x204, 1, resp, 8), 0);
	PH_EXPECT_NO_CQE(h->scq);
	CHECK_EQ(ph_comp_psn(h), 0x201);
	/* a LAST at 0x201 although the READ ends at 0x203: wrong length, dropped */
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x201, 1, resp + 256, 256), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_BAD_LENGTH), 2);
	CHECK_EQ(ph_comp_psn(h), 0x201);
	/* a response past the high-water mark is a ghost */
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x205, 1, resp, 8), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_GHOST_ACKS), 1);
	/* the right ones complete it */
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x201, 1, resp + 256, 256), 0);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x202, 1, resp + 512, 256), 0);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x203, 1, resp + 768, 256), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_RDMA_READ);
	CHECK(memcmp(buf, resp, 1024) == 0);
	/* a repeated response is in the duplicate region now */
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x202, 1, resp, 256), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_ACKS), 1);
	CHECK(memcmp(buf + 512, resp + 512, 256) == 0);
	CHECK_EQ(ph_ack(h, 0x204, ACK_SYN, 2), 0);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-04: at most 2^23 PSNs outstanding */

SRN_TEST(test_psn_04_window_of_2_23_psns_stops_and_resumes_on_ack)
{
	/* the in-flight limit is set above 2^23 so that the PSN window is what
	 * stops the requester; large READs consume PSNs without packets */
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0xFFFF00, .max_inflight_pkts = UINT32_MAX });
	REQUIRE(h);
	size_t big = (size_t)1 << 31;
	uint8_t *mem = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	REQUIRE(mem != MAP_FAILED);
	uint32_t lk;
	REQUIRE(ph_reg(h, mem, big, ALL_ACC, &lk));
	const uint32_t p = 0xFFFF00, W = 1u << 23;
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, mem, 8, lk, 0, 0, SIG), 0);                       /* p */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 2, mem, 1u << 30, lk, RVA, RKEY, SIG), 0);       /* 2^22 PSNs */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 3, mem, (W / 2 - 2) * 256, lk, RVA, RKEY, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 4, mem, 8, lk, 0, 0, SIG), 0);   /* the last PSN of the window */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 5, mem, 8, lk, 0, 0, SIG), 0);   /* one too many */
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, p);
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, (p + 1) & 0xFFFFFF);
	CHECK(k && k->p.dmalen == 1u << 30);
	PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, (p + 1 + W / 2) & 0xFFFFFF);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, (p + W - 1) & 0xFFFFFF);
	PH_EXPECT_NONE(h);                               /* stopped at the edge */
	CHECK_EQ(ph_max_psn(h), (p + W) & 0xFFFFFF);
	CHECK_EQ(ph_comp_psn(h), p);
	/* a ghost ACK at the high-water mark does not open it */
	CHECK_EQ(ph_ack(h, (p + W) & 0xFFFFFF, ACK_SYN, 9), 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_GHOST_ACKS), 1);
	/* the ACK of the first SEND moves the window by one: the fifth goes */
	CHECK_EQ(ph_ack(h, p, ACK_SYN, 1), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, (p + W) & 0xFFFFFF);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_max_psn(h), (p + W + 1) & 0xFFFFFF);
	ph_free(h);
	munmap(mem, big);
}

/* ------------------------------------------------------------------------ */
/* PSN-05 / PSN-18: ghost and duplicate ACKs */

SRN_TEST(test_psn_05_ghost_and_duplicate_acks_dropped_without_effect)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x10 });
	REQUIRE(h);
	static uint8_t buf[64];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1 + (uint64_t)i, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_pending(h), 3);
	ph_discard(h);
	CHECK_EQ(ph_ack(h, 0x10, SRN_AETH_SYN(SRN_AETH_ACK, 4), 1), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	CHECK_EQ(ph_credits(h), 4);
	/* ghosts: at the high-water mark, far ahead, and more than 2^23 behind it */
	CHECK_EQ(ph_ack(h, 0x13, SRN_AETH_SYN(SRN_AETH_ACK, 9), 3), 0);
	CHECK_EQ(ph_ack(h, 0x10 + 0x7FFFFF, SRN_AETH_SYN(SRN_AETH_ACK, 9), 3), 0);
	CHECK_EQ(ph_ack(h, (0x13 - (1u << 23) - 1) & 0xFFFFFF, SRN_AETH_SYN(SRN_AETH_ACK, 9), 3), 0);
	CHECK_EQ(ph_ack(h, 0x20, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_REMOTE_ACCESS), 3), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_GHOST_ACKS), 4);
	CHECK_EQ(ph_credits(h), 4);        /* nothing taken from a ghost */
	CHECK_EQ(ph_comp_msn(h), 1);
	PH_EXPECT_NO_CQE(h->scq);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_RTS);
	/* duplicates (already acknowledged region, up to 2^23 behind the
	 * high-water mark): credits and MSN taken, nothing else */
	CHECK_EQ(ph_ack(h, 0x10, SRN_AETH_SYN(SRN_AETH_ACK, 7), 1), 0);
	CHECK_EQ(ph_credits(h), 7);
	CHECK_EQ(ph_ack(h, (0x13 - (1u << 23)) & 0xFFFFFF, SRN_AETH_SYN(SRN_AETH_ACK, 11), 1), 0);
	CHECK_EQ(ph_credits(h), 11);
	CHECK_EQ(ph_ack(h, 0x0F, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), 1), 0);
	CHECK_EQ(ph_ack(h, 0x0F, SRN_AETH_SYN(SRN_AETH_RNR_NAK, 3), 1), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_ACKS), 4);
	CHECK_EQ(ph_credits(h), 11);       /* a NAK carries no credits */
	PH_EXPECT_NO_CQE(h->scq);
	PH_EXPECT_NONE(h);                 /* no retry caused by a duplicate NAK */
	CHECK_EQ(ph_comp_psn(h), 0x11);
	CHECK_EQ(ph_ctr(h, SRN_CTR_RETRANSMIT_PKTS), 0);
	/* the real ACK still completes the rest */
	CHECK_EQ(ph_ack(h, 0x12, ACK_SYN, 3), 0);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 3, SRN_WC_SUCCESS, SRN_WC_SEND);
	CHECK_EQ(ph_comp_msn(h), 3);
	ph_free(h);
}

SRN_TEST(test_psn_18_aeth_msn_and_credits_taken_even_from_duplicates)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x500 });
	REQUIRE(h);
	static uint8_t buf[64];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf, 8, lk, 0, 0, SIG), 0);
	ph_discard(h);
	CHECK_EQ(ph_ack(h, 0x500, SRN_AETH_SYN(SRN_AETH_ACK, 3), 1), 0);
	CHECK_EQ(ph_credits(h), 3);
	CHECK_EQ(ph_comp_msn(h), 1);
	/* the responder repeats its last ACK on purpose to hand out credits */
	CHECK_EQ(ph_ack(h, 0x500, SRN_AETH_SYN(SRN_AETH_ACK, 12), 1), 0);
	CHECK_EQ(ph_credits(h), 12);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DUP_ACKS), 1);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_NO_CQE(h->scq);
	CHECK_EQ(ph_ack(h, 0x501, SRN_AETH_SYN(SRN_AETH_ACK, 0), 2), 0);
	CHECK_EQ(ph_credits(h), 0);
	CHECK_EQ(ph_comp_msn(h), 2);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-17: one ACK completes every WR up to its PSN */

SRN_TEST(test_psn_17_one_ack_completes_several_wrs)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x700 });
	REQUIRE(h);
	static uint8_t buf[2048];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);                 /* 0x700 */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 2, buf, 600, lk, RVA, RKEY, 0), 0);      /* 0x701..0x703, unsignaled */
	CHECK_EQ(ph_post(h, SRN_WR_SEND_WITH_IMM, 3, buf, 8, lk, 0, 0, SIG), 0);        /* 0x704 */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 4, buf, 8, lk, RVA, RKEY, SIG), 0);      /* 0x705 */
	CHECK_EQ(ph_pending(h), 6);
	ph_discard(h);
	CHECK_EQ(ph_ack(h, 0x705, ACK_SYN, 4), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 3, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 4, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE);
	PH_EXPECT_NO_CQE(h->scq);
	CHECK_EQ(ph_expiry(h), SRN_TS_NEVER);
	/* an ACK beyond an unanswered READ means its responses were lost: the
	 * WRs before it complete, the READ is asked for again (not completed) */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 5, buf, 8, lk, 0, 0, SIG), 0);                 /* 0x706 */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 6, buf, 8, lk, RVA, RKEY, SIG), 0);       /* 0x707 */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 7, buf, 8, lk, 0, 0, SIG), 0);                 /* 0x708 */
	CHECK_EQ(ph_pending(h), 3);
	ph_discard(h);
	CHECK_EQ(ph_ack(h, 0x708, ACK_SYN, 7), 0);
	PH_EXPECT_CQE(h->scq, 5, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_NO_CQE(h->scq);
	PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x707);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x708);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x707, 6, "12345678", 8), 0);
	PH_EXPECT_CQE(h->scq, 6, SRN_WC_SUCCESS, SRN_WC_RDMA_READ);
	CHECK(memcmp(buf, "12345678", 8) == 0);
	CHECK_EQ(ph_ack(h, 0x708, ACK_SYN, 7), 0);
	PH_EXPECT_CQE(h->scq, 7, SRN_WC_SUCCESS, SRN_WC_SEND);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* fence, max_rd_atomic, SQD drained, CQ overflow */

SRN_TEST(test_psn_fence_waits_for_outstanding_read)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x40 });
	REQUIRE(h);
	static uint8_t buf[64];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 1, buf, 8, lk, RVA, RKEY, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf + 8, 8, lk, 0, 0, SIG | SRN_SEND_FENCE), 0);
	PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x40);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x40, 1, "fencedat", 8), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_RDMA_READ);
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x41);
	CHECK(payload_is(k, buf + 8, 8));
	/* a fence after a SEND does not wait */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 3, buf, 8, lk, 0, 0, SIG | SRN_SEND_FENCE), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x42);
	ph_free(h);
}

SRN_TEST(test_psn_max_rd_atomic_limits_outstanding_reads_and_atomics)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x50, .max_rd_atomic = 2 });
	REQUIRE(h);
	static uint8_t buf[64];
	static uint64_t res;
	uint32_t lk, rk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	REQUIRE(ph_reg(h, &res, 8, ALL_ACC, &rk));
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 1, buf, 8, lk, RVA, RKEY, SIG), 0);
	CHECK_EQ(ph_post_atomic(h, SRN_WR_ATOMIC_FETCH_AND_ADD, 2, &res, rk, RVA, RKEY, 1, 0, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 3, buf + 8, 8, lk, RVA, RKEY, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 4, buf, 8, lk, 0, 0, SIG), 0);
	PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x50);
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_FETCH_ADD, 0x51);
	CHECK(k && k->p.swap_add == 1 && k->p.va == RVA);
	PH_EXPECT_NONE(h);                 /* the third waits, and the SEND behind it */
	/* an atomic ACK before the READ's response: that response was lost
	 * (responses come in PSN order), so both are asked for again */
	CHECK_EQ(ph_atomic_ack(h, 0x51, 2, 77), 0);
	PH_EXPECT_NO_CQE(h->scq);
	PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x50);
	PH_EXPECT(h, SRN_OP_RC_FETCH_ADD, 0x51);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_ONLY, 0x50, 1, "abcdefgh", 8), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_RDMA_READ);
	PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x52);   /* one READ/ATOMIC done: the next goes */
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x53);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_atomic_ack(h, 0x51, 2, 77), 0);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_FETCH_ADD);
	CHECK_EQ(res, 77);
	ph_free(h);
}

SRN_TEST(test_psn_sqd_drained_event_after_outstanding_acked)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x60 });
	REQUIRE(h);
	static uint8_t buf[64];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf, 8, lk, 0, 0, SIG), 0);
	ph_discard(h);
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_SQD;
	at.en_sqd_async_notify = true;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE | SRN_QP_EN_SQD_ASYNC_NOTIFY, h->now), 0);
	struct srn_async_event ev;
	CHECK_EQ(srn_dev_next_async_event(h->dev, &ev), SRN_EAGAIN);
	srn_qp_query(h->qp, &at);
	CHECK(at.sq_draining);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 3, buf, 8, lk, 0, 0, SIG), 0);
	PH_EXPECT_NONE(h);                 /* SQD starts nothing new */
	CHECK_EQ(ph_ack(h, 0x60, ACK_SYN, 1), 0);
	CHECK_EQ(srn_dev_next_async_event(h->dev, &ev), SRN_EAGAIN);
	CHECK_EQ(ph_ack(h, 0x61, ACK_SYN, 2), 0);
	REQUIRE(srn_dev_next_async_event(h->dev, &ev) == 0);
	CHECK_EQ(ev.type, SRN_EV_SQ_DRAINED);
	CHECK(ev.qp == h->qp);
	CHECK_EQ(srn_dev_next_async_event(h->dev, &ev), SRN_EAGAIN);
	srn_qp_query(h->qp, &at);
	CHECK(!at.sq_draining);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	at.qp_state = SRN_QPS_RTS;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE, h->now), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x62);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

SRN_TEST(test_psn_cq_overflow_counted_and_cq_err_event)
{
	struct ph *h = ph_new(&(struct ph_opts){ .sq_psn = 0x70, .cq_size = 2 });
	REQUIRE(h);
	static uint8_t buf[64];
	uint32_t lk;
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1 + (uint64_t)i, buf, 8, lk, 0, 0, SIG), 0);
	ph_discard(h);
	CHECK_EQ(ph_ack(h, 0x72, ACK_SYN, 3), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_CQ_OVERFLOW), 1);
	struct srn_async_event ev;
	REQUIRE(srn_dev_next_async_event(h->dev, &ev) == 0);
	CHECK_EQ(ev.type, SRN_EV_CQ_ERR);
	CHECK(ev.cq == h->scq);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_NO_CQE(h->scq);
	/* after it was drained the CQ takes completions again */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 4, buf, 8, lk, 0, 0, SIG), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x73);
	CHECK_EQ(ph_ack(h, 0x73, ACK_SYN, 4), 0);
	PH_EXPECT_CQE(h->scq, 4, SRN_WC_SUCCESS, SRN_WC_SEND);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-19: QPN time-wait */

static void *t_calloc(size_t n, size_t s, void *u) { (void)u; return calloc(n, s); }
static void t_free(void *p, void *u) { (void)u; free(p); }

SRN_TEST(test_psn_19_qpn_not_reused_before_time_wait)
{
	struct srn_dev_cfg cfg;
	srn_dev_cfg_default(&cfg);
	cfg.max_qp = 2;
	cfg.qpn_timewait = 5000000;   /* 5 ms */
	cfg.mem.calloc = t_calloc;
	cfg.mem.free = t_free;
	struct srn_dev *dev;
	REQUIRE(srn_dev_new(&dev, &cfg) == 0);
	struct srn_cq *cq;
	REQUIRE(srn_cq_new(dev, 16, NULL, &cq) == 0);
	struct srn_qp_init init = { .type = SRN_QPT_RC, .pdn = srn_pd_alloc(dev), .send_cq = cq,
				    .recv_cq = cq, .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				    .max_recv_sge = 1 };
	srn_ts t = 1000000;
	srn_dev_handle_expiry(dev, t);
	struct srn_qp *a, *b, *c;
	REQUIRE(srn_qp_new(dev, &init, &a) == 0);
	REQUIRE(srn_qp_new(dev, &init, &b) == 0);
	uint32_t qa = srn_qp_num(a), qb = srn_qp_num(b);
	CHECK(qa != qb);
	CHECK_EQ(srn_qp_del(a, t), 0);
	/* the only free QPN is in time-wait: no QP can be created */
	CHECK_EQ(srn_qp_new(dev, &init, &c), SRN_ENOMEM);
	srn_dev_handle_expiry(dev, t + 4999999);
	CHECK_EQ(srn_qp_new(dev, &init, &c), SRN_ENOMEM);
	srn_dev_handle_expiry(dev, t + 5000000);
	REQUIRE(srn_qp_new(dev, &init, &c) == 0);
	CHECK_EQ(srn_qp_num(c), qa);
	srn_dev_del(dev);

	/* a stale packet for a destroyed QPN is dropped as unknown */
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x10 });
	REQUIRE(h);
	uint32_t old = h->qpn;
	CHECK_EQ(srn_qp_del(h->qp, h->now), 0);
	h->qp = NULL;
	struct srn_qp *n2;
	struct srn_qp_init i2 = init;
	i2.pdn = h->pd;
	i2.send_cq = h->scq;
	i2.recv_cq = h->rcq;
	REQUIRE(srn_qp_new(h->dev, &i2, &n2) == 0);
	CHECK(srn_qp_num(n2) != old);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x10, "stale", 5, true), SRN_EDROP);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_UNKNOWN_QPN), 1);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

int main(void) { return srn_test_main(); }
