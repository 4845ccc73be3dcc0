/*
 * test_psn_retry.c - retransmission and retry limits packet by packet:
 * PSN-15 (retry from the oldest unacknowledged PSN, high-water mark,
 * coalesced ACK beyond the retried PSN, sequence NAK, mid-message resume,
 * retried READ asks for what is missing) and PSN-16 (timeout =
 * 4.096 us x 2^t exactly, retry_cnt 0..7 with 7 NOT infinite, rnr_retry
 * 0..7 with 7 infinite, the RNR wait taken from the NAK's timer code, then
 * RETRY_EXC_ERR / RNR_RETRY_EXC_ERR, QP in ERR, the rest flushed).
 * Everything runs on the harness's fake clock.
 */
#include "srn_test.h"
#include "lib/psn_harness.h"

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)
#define ACK_SYN SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID)
#define SIG SRN_SEND_SIGNALED
#define RKEY 0x1234u
#define RVA  0x10000000ull

/* the IBA RNR NAK timer table (9.7.5.2.8, table 45), in microseconds x 100 */
static const uint64_t iba_rnr_10ns[32] = {
	65536000, 1000, 2000, 3000, 4000, 6000, 8000, 12000, 16000, 24000, 32000, 48000,
	64000, 96000, 128000, 192000, 256000, 384000, 512000, 768000, 1024000, 1536000,
	2048000, 3072000, 4096000, 6144000, 8192000, 12288000, 16384000, 24576000,
	32768000, 49152000,
};

static uint8_t buf[4096];

static struct ph *mk(uint32_t sq, uint8_t timeout, int retry, int rnr, uint32_t *lk)
{
	struct ph_opts o = { .sq_psn = sq, .timeout = timeout };
	if (retry >= 0) {
		o.retry_set = true;
		o.retry_cnt = (uint8_t)retry;
		o.rnr_retry = (uint8_t)rnr;
	}
	struct ph *h = ph_new(&o);
	if (h && !ph_reg(h, buf, sizeof(buf), ALL_ACC, lk)) {
		ph_free(h);
		return NULL;
	}
	return h;
}

/* ------------------------------------------------------------------------ */
/* PSN-15 */

SRN_TEST(test_psn_15_timeout_retry_from_oldest_unacked_keeps_high_water_mark)
{
	uint32_t lk;
	struct ph *h = mk(0xFFFFFE, 10, -1, -1, &lk);
	REQUIRE(h);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1 + (uint64_t)i, buf + 8 * i, 8, lk, 0, 0, SIG), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0xFFFFFE);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0xFFFFFF);
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0);
	uint8_t orig0[64];
	size_t orig0_len = k ? k->len : 0;
	if (k)
		memcpy(orig0, k->data, k->len < sizeof(orig0) ? k->len : sizeof(orig0));
	CHECK_EQ(ph_ack(h, 0xFFFFFE, ACK_SYN, 1), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	ph_set_time(h, ph_expiry(h));
	/* resent from the oldest unacknowledged PSN, byte for byte */
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0xFFFFFF);
	k = PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0);
	CHECK(k && k->len == orig0_len && memcmp(k->data, orig0, orig0_len) == 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_RETRANSMIT_PKTS), 2);
	CHECK_EQ(ph_ctr(h, SRN_CTR_RETRY_TIMEOUTS), 1);
	CHECK_EQ(ph_max_psn(h), 1);                /* high-water mark kept */
	CHECK_EQ(ph_comp_psn(h), 0xFFFFFF);        /* oldest unacknowledged */
	/* a new WR takes the next never-used PSN */
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 4, buf, 8, lk, 0, 0, SIG), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 1);
	/* a coalesced ACK beyond the retried PSN (the responder saw the retry
	 * as a duplicate and answers with its furthest PSN) completes all */
	CHECK_EQ(ph_ack(h, 1, ACK_SYN, 4), 0);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 3, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 4, SRN_WC_SUCCESS, SRN_WC_SEND);
	CHECK_EQ(ph_expiry(h), SRN_TS_NEVER);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

SRN_TEST(test_psn_15_coalesced_ack_beyond_retried_psn_mid_retry)
{
	uint32_t lk;
	struct ph *h = mk(0x100, 10, -1, -1, &lk);
	REQUIRE(h);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1 + (uint64_t)i, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_pending(h), 4);
	ph_discard(h);
	ph_set_time(h, ph_expiry(h));
	CHECK_EQ(ph_collect_n(h, 1), 1);           /* the retry has sent 0x100 only */
	/* the ACK of 0x102 (beyond the retried 0x100) arrives */
	CHECK_EQ(ph_ack(h, 0x102, ACK_SYN, 3), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x100);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 3, SRN_WC_SUCCESS, SRN_WC_SEND);
	/* the retry continues at the oldest unacknowledged PSN, not 0x101 */
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x103);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ack(h, 0x103, ACK_SYN, 4), 0);
	PH_EXPECT_CQE(h->scq, 4, SRN_WC_SUCCESS, SRN_WC_SEND);
	ph_free(h);
}

SRN_TEST(test_psn_15_sequence_nak_retries_from_its_psn)
{
	uint32_t lk;
	struct ph *h = mk(0x200, 14, -1, -1, &lk);
	REQUIRE(h);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1 + (uint64_t)i, buf, 8, lk, 0, 0, SIG), 0);
	ph_discard(h);
	/* NAK PSN sequence error with 0x202: 0x200 and 0x201 are acknowledged */
	CHECK_EQ(ph_ack(h, 0x202, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), 2), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_NO_CQE(h->scq);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x202);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x203);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_RX_NAK_SEQ), 1);
	CHECK_EQ(ph_ack(h, 0x203, ACK_SYN, 4), 0);
	PH_EXPECT_CQE(h->scq, 3, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 4, SRN_WC_SUCCESS, SRN_WC_SEND);
	ph_free(h);
}

SRN_TEST(test_psn_15_retry_resumes_mid_write_and_read_asks_for_the_rest)
{
	uint32_t lk;
	struct ph *h = mk(0x300, 12, -1, -1, &lk);
	REQUIRE(h);
	for (int i = 0; i < 1024; i++)
		buf[i] = (uint8_t)(i * 7);
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 1, buf, 1024, lk, RVA, RKEY, SIG), 0);   /* 0x300..0x303 */
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 2, buf + 2048, 1024, lk, RVA, RKEY, SIG), 0); /* 0x304..0x307 */
	CHECK_EQ(ph_pending(h), 5);
	ph_discard(h);
	CHECK_EQ(ph_ack(h, 0x301, ACK_SYN, 0), 0);         /* first two WRITE packets */
	static uint8_t resp[1024];
	for (int i = 0; i < 1024; i++)
		resp[i] = (uint8_t)(i * 13 + 1);
	ph_set_time(h, ph_expiry(h));
	const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_WRITE_MIDDLE, 0x302);
	CHECK(k && k->p.paylen == 256 && memcmp(k->p.payload, buf + 512, 256) == 0);
	PH_EXPECT(h, SRN_OP_RC_WRITE_LAST, 0x303);
	k = PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x304);
	CHECK(k && k->p.dmalen == 1024 && k->p.va == RVA);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ack(h, 0x303, ACK_SYN, 1), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_RDMA_WRITE);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x304, 2, resp, 256), 0);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_MIDDLE, 0x305, 2, resp + 256, 256), 0);
	/* the rest is lost; the retried READ asks only for bytes 512.. at 0x306 */
	ph_set_time(h, ph_expiry(h));
	k = PH_EXPECT(h, SRN_OP_RC_READ_REQUEST, 0x306);
	CHECK(k && k->p.dmalen == 512 && k->p.va == RVA + 512 && k->p.rkey == RKEY);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x306, 2, resp + 512, 256), 0);
	CHECK_EQ(ph_read_resp(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x307, 2, resp + 768, 256), 0);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_RDMA_READ);
	CHECK(memcmp(buf + 2048, resp, 1024) == 0);
	ph_free(h);
}

/* ------------------------------------------------------------------------ */
/* PSN-16: timeout = 4.096 us x 2^t */

SRN_TEST(test_psn_16_timeout_is_4096ns_times_2_pow_t_exactly)
{
	static const uint8_t ts[] = { 1, 2, 8, 14, 18, 24, 31 };
	for (unsigned i = 0; i < sizeof(ts); i++) {
		uint32_t lk;
		struct ph *h = mk(0x10, ts[i], -1, -1, &lk);
		REQUIRE(h);
		uint64_t rto = 4096ull << ts[i];
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
		srn_ts t0 = h->now;
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x10);
		CHECK_EQ(ph_expiry(h), t0 + rto);
		ph_set_time(h, t0 + rto - 1);
		PH_EXPECT_NONE(h);
		ph_set_time(h, t0 + rto);
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x10);
		CHECK_EQ(ph_expiry(h), t0 + 2 * rto);    /* restarted at the retry */
		/* progress restarts it from the ACK's time */
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf, 8, lk, 0, 0, SIG), 0);
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x11);
		ph_advance(h, rto / 2);
		CHECK_EQ(ph_ack(h, 0x10, ACK_SYN, 1), 0);
		CHECK_EQ(ph_expiry(h), h->now + rto);
		ph_free(h);
	}
	/* timeout 0: no retransmission timer at all */
	uint32_t lk;
	struct ph *h = ph_new(&(struct ph_opts){ .no_timeout = true });
	REQUIRE(h);
	REQUIRE(ph_reg(h, buf, sizeof(buf), ALL_ACC, &lk));
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_pending(h), 1);
	CHECK_EQ(ph_expiry(h), SRN_TS_NEVER);
	ph_free(h);
}

/* PSN-16: retry_cnt n -> exactly n + 1 transmissions, then RETRY_EXC_ERR */
SRN_TEST(test_psn_16_retry_cnt_0_to_7_then_retry_exc_err_qp_err_rest_flushed)
{
	for (int n = 0; n <= 7; n++) {
		uint32_t lk;
		struct ph *h = mk(0x400, 5, n, 0, &lk);
		REQUIRE(h);
		for (int i = 0; i < 3; i++)
			CHECK_EQ(ph_post(h, SRN_WR_SEND, 1 + (uint64_t)i, buf, 8, lk, 0, 0, SIG), 0);
		int tx = 0;
		for (int round = 0; round < 20; round++) {
			const struct ph_pkt *k;
			bool first = true;
			while ((k = ph_next(h))) {
				CHECK_EQ(k->p.opcode, SRN_OP_RC_SEND_ONLY);
				if (first)
					CHECK_EQ(k->p.psn, 0x400);
				if (k->p.psn == 0x400)
					tx++;
				first = false;
			}
			if (srn_qp_state(h->qp) == SRN_QPS_ERR || ph_expiry(h) == SRN_TS_NEVER)
				break;
			ph_set_time(h, ph_expiry(h));
		}
		CHECK_EQ(tx, n + 1);                       /* 7 is NOT infinite: 8 */
		CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_ERR);
		PH_EXPECT_CQE(h->scq, 1, SRN_WC_RETRY_EXC_ERR, SRN_WC_SEND);
		PH_EXPECT_CQE(h->scq, 2, SRN_WC_WR_FLUSH_ERR, -1);
		PH_EXPECT_CQE(h->scq, 3, SRN_WC_WR_FLUSH_ERR, -1);
		PH_EXPECT_NO_CQE(h->scq);
		CHECK_EQ(ph_ctr(h, SRN_CTR_RETRY_TIMEOUTS), n + 1);
		CHECK_EQ(ph_ctr(h, SRN_CTR_RETRY_EXC_ERR), 1);
		CHECK_EQ(ph_expiry(h), SRN_TS_NEVER);
		/* a WR posted in ERR is flushed at once */
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 9, buf, 8, lk, 0, 0, SIG), 0);
		PH_EXPECT_CQE(h->scq, 9, SRN_WC_WR_FLUSH_ERR, -1);
		PH_EXPECT_NONE(h);
		ph_free(h);
	}
}

/* PSN-16: sequence NAKs count against retry_cnt like timeouts */
SRN_TEST(test_psn_16_sequence_naks_count_against_retry_cnt)
{
	uint32_t lk;
	struct ph *h = mk(0x500, 14, 2, 0, &lk);
	REQUIRE(h);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf, 8, lk, 0, 0, SIG), 0);
	ph_discard(h);
	/* the first sequence NAK: go back, one retry spent */
	CHECK_EQ(ph_ack(h, 0x500, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), 0), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x500);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x501);
	PH_EXPECT_NONE(h);
	/* the retransmission is lost: the timer goes back again, second retry */
	ph_advance(h, 4096ull * (1u << 14) + 1000);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x500);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x501);
	PH_EXPECT_NONE(h);
	/* a sequence NAK after that go-back counts again: budget exhausted */
	CHECK_EQ(ph_ack(h, 0x500, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), 0), 0);
	PH_EXPECT_NONE(h);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_RETRY_EXC_ERR, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_WR_FLUSH_ERR, -1);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_ERR);
	ph_free(h);
}

/* PSN-15/PSN-16 under reordering: after a go-back from PSN X, the responder
 * may NAK X again because packets sent before the go-back arrive late (a
 * duplicate clears its one-NAK rule, then the next stale packet opens the gap
 * again). Such repeated NAKs without progress neither restart the go-back nor
 * spend the retry budget, however many arrive; progress re-arms the rule. */
SRN_TEST(test_psn_15_repeated_sequence_nak_without_progress_not_retried)
{
	uint32_t lk;
	struct ph *h = mk(0x700, 14, 1, 0, &lk);
	REQUIRE(h);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 2, buf, 8, lk, 0, 0, SIG), 0);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 3, buf, 8, lk, 0, 0, SIG), 0);
	ph_discard(h);
	CHECK_EQ(ph_ack(h, 0x700, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), 0), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x700);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x701);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x702);
	for (int i = 0; i < 20; i++)
		CHECK_EQ(ph_ack(h, 0x700, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), 0), 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_ctr(h, SRN_CTR_RX_NAK_SEQ_REPEAT), 20);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_RTS);
	struct srn_cqe c;
	CHECK_EQ(ph_poll(h->scq, &c, 1), 0);
	/* progress: 0x700 acknowledged; a NAK for 0x701 is a new go-back */
	CHECK_EQ(ph_ack(h, 0x700, SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID), 1), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	CHECK_EQ(ph_ack(h, 0x701, SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_PSN_SEQ_ERR), 1), 0);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x701);
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x702);
	PH_EXPECT_NONE(h);
	/* and the peer acknowledges everything: all complete successfully */
	CHECK_EQ(ph_ack(h, 0x702, SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID), 3), 0);
	PH_EXPECT_CQE(h->scq, 2, SRN_WC_SUCCESS, SRN_WC_SEND);
	PH_EXPECT_CQE(h->scq, 3, SRN_WC_SUCCESS, SRN_WC_SEND);
	ph_free(h);
}

/* PSN-16: rnr_retry n (0..6) -> n + 1 transmissions, then RNR_RETRY_EXC_ERR */
SRN_TEST(test_psn_16_rnr_retry_0_to_6_then_rnr_retry_exc_err)
{
	for (int n = 0; n <= 6; n++) {
		uint32_t lk;
		struct ph *h = mk(0x600, 14, 7, n, &lk);
		REQUIRE(h);
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
		CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 2, buf, 8, lk, RVA, RKEY, SIG), 0);
		int tx = 0;
		for (int round = 0; round < 10; round++) {
			const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x600);
			if (!k)
				break;
			tx++;
			ph_discard(h);
			CHECK_EQ(ph_ack(h, 0x600, SRN_AETH_SYN(SRN_AETH_RNR_NAK, 1), 0), 0);
			if (srn_qp_state(h->qp) == SRN_QPS_ERR)
				break;
			PH_EXPECT_NONE(h);            /* waiting for the RNR timer */
			ph_set_time(h, ph_expiry(h));
		}
		CHECK_EQ(tx, n + 1);
		CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_ERR);
		PH_EXPECT_CQE(h->scq, 1, SRN_WC_RNR_RETRY_EXC_ERR, SRN_WC_SEND);
		PH_EXPECT_CQE(h->scq, 2, SRN_WC_WR_FLUSH_ERR, -1);
		PH_EXPECT_NO_CQE(h->scq);
		CHECK_EQ(ph_ctr(h, SRN_CTR_RNR_RETRY_EXC_ERR), 1);
		CHECK_EQ(ph_ctr(h, SRN_CTR_RX_NAK_RNR), n + 1);
		CHECK_EQ(ph_ctr(h, SRN_CTR_RETRY_EXC_ERR), 0);
		ph_free(h);
	}
}

/* PSN-16: rnr_retry 7 is infinite */
SRN_TEST(test_psn_16_rnr_retry_7_is_infinite)
{
	uint32_t lk;
	struct ph *h = mk(0x700, 14, 0, 7, &lk);
	REQUIRE(h);
	CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
	for (int i = 0; i < 100; i++) {
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x700);
		PH_EXPECT_NONE(h);
		CHECK_EQ(ph_ack(h, 0x700, SRN_AETH_SYN(SRN_AETH_RNR_NAK, 1), 0), 0);
		ph_set_time(h, ph_expiry(h));
	}
	PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x700);
	CHECK_EQ(ph_ack(h, 0x700, ACK_SYN, 1), 0);
	PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_RTS);
	CHECK_EQ(ph_ctr(h, SRN_CTR_RNR_RETRIES), 100);
	ph_free(h);
}

/* PSN-16: the RNR wait is the timer code of the NAK (IBA table 45) */
SRN_TEST(test_psn_16_rnr_wait_from_nak_timer_code_exact)
{
	static const uint8_t codes[] = { 0, 1, 2, 5, 13, 14, 18, 24, 31 };
	for (unsigned i = 0; i < sizeof(codes); i++) {
		uint32_t lk;
		struct ph *h = mk(0x800, 31, 7, 7, &lk);    /* RTO far away */
		REQUIRE(h);
		CHECK_EQ(ph_post(h, SRN_WR_SEND, 1, buf, 8, lk, 0, 0, SIG), 0);
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x800);
		ph_advance(h, 12345);
		srn_ts t = h->now;
		CHECK_EQ(ph_ack(h, 0x800, SRN_AETH_SYN(SRN_AETH_RNR_NAK, codes[i]), 0), 0);
		uint64_t wait = iba_rnr_10ns[codes[i]] * 10;
		CHECK_EQ(ph_expiry(h), t + wait);
		ph_set_time(h, t + wait - 1);
		PH_EXPECT_NONE(h);
		ph_set_time(h, t + wait);
		PH_EXPECT(h, SRN_OP_RC_SEND_ONLY, 0x800);
		PH_EXPECT_NONE(h);
		CHECK_EQ(ph_ack(h, 0x800, ACK_SYN, 1), 0);
		PH_EXPECT_CQE(h->scq, 1, SRN_WC_SUCCESS, SRN_WC_SEND);
		ph_free(h);
	}
}

int main(void) { return srn_test_main(); }
