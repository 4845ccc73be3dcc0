/*
 * test_psn_access.c - PSN-21 at the packet level: remote access and invalid
 * request NAKs (bad rkey, bounds, access rights of the MR and of the QP,
 * misaligned atomic), RNR NAK with the responder's min_rnr_timer, READ and
 * ATOMIC on a UC QP, a requester exceeding max_dest_rd_atomic, and a full
 * response queue. Every failing request touches no memory.
 */
#include "srn_test.h"
#include "lib/psn_harness.h"

#define ALL_ACC (SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ | \
		 SRN_ACCESS_REMOTE_ATOMIC)

static bool all_bytes(const uint8_t *b, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

static bool has_async(struct ph *h, enum srn_async_type t)
{
	struct srn_async_event ev;
	bool found = false;
	while (srn_dev_next_async_event(h->dev, &ev) == 0)
		if (ev.type == t && ev.qp == h->qp)
			found = true;
	return found;
}

enum acase {
	A_WRITE_BAD_RKEY, A_WRITE_BOUNDS, A_WRITE_MR_NO_RIGHT, A_WRITE_QP_NO_RIGHT,
	A_READ_BAD_RKEY, A_READ_BOUNDS, A_READ_MR_NO_RIGHT, A_READ_QP_NO_RIGHT,
	A_ATOMIC_MISALIGNED, A_ATOMIC_MR_NO_RIGHT, A_ATOMIC_BOUNDS, A_WRITE_LEN_MISMATCH,
};

/* one request at ePSN that must fail: the NAK, the QP in ERR, memory as it was */
static void access_case(enum acase c, uint8_t nak_code, enum srn_async_type ev)
{
	uint32_t qp_acc = ALL_ACC;
	if (c == A_WRITE_QP_NO_RIGHT)
		qp_acc = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_READ | SRN_ACCESS_REMOTE_ATOMIC;
	if (c == A_READ_QP_NO_RIGHT)
		qp_acc = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_ATOMIC;
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x4242, .access = qp_acc });
	REQUIRE(h);
	static uint8_t mem[1024];
	memset(mem, 0x5A, sizeof(mem));
	uint32_t mr_acc = ALL_ACC;
	if (c == A_WRITE_MR_NO_RIGHT)
		mr_acc = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_READ | SRN_ACCESS_REMOTE_ATOMIC;
	if (c == A_READ_MR_NO_RIGHT)
		mr_acc = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_ATOMIC;
	if (c == A_ATOMIC_MR_NO_RIGHT)
		mr_acc = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ;
	uint32_t key;
	REQUIRE(ph_reg(h, mem + 256, 512, mr_acc, &key));   /* MR = mem[256..768) */
	uint64_t base = (uintptr_t)mem + 256;
	uint8_t data[256];
	memset(data, 0xC3, sizeof(data));
	switch (c) {
	case A_WRITE_BAD_RKEY:
		ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x4242, base, key ^ 0x100, 64, data, 64, true);
		break;
	case A_WRITE_BOUNDS:       /* the last 4 bytes are past the MR end */
		ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x4242, base + 512 - 60, key, 64, data, 64, true);
		break;
	case A_WRITE_MR_NO_RIGHT:
	case A_WRITE_QP_NO_RIGHT:
		ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x4242, base, key, 64, data, 64, true);
		break;
	case A_WRITE_LEN_MISMATCH:  /* ONLY with more payload than the RETH length */
		ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x4242, base, key, 32, data, 64, true);
		break;
	case A_READ_BAD_RKEY:
		ph_read(h, 0x4242, base, key + 1, 64);
		break;
	case A_READ_BOUNDS:
		ph_read(h, 0x4242, base - 1, key, 64);
		break;
	case A_READ_MR_NO_RIGHT:
	case A_READ_QP_NO_RIGHT:
		ph_read(h, 0x4242, base, key, 64);
		break;
	case A_ATOMIC_MISALIGNED:
		ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x4242, base + 4, key, 1, 0);
		break;
	case A_ATOMIC_MR_NO_RIGHT:
		ph_atomic(h, SRN_OP_RC_COMPARE_SWAP, 0x4242, base, key, 1, 0x5A5A5A5A5A5A5A5Aull);
		break;
	case A_ATOMIC_BOUNDS:
		ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x4242, base + 512, key, 1, 0);
		break;
	}
	PH_EXPECT_NAK(h, 0x4242, nak_code, 0);
	PH_EXPECT_NONE(h);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_ERR);
	CHECK(has_async(h, ev));
	CHECK_EQ(ph_ctr(h, nak_code == SRN_NAK_REMOTE_ACCESS ? SRN_CTR_TX_NAK_REM_ACCESS : SRN_CTR_TX_NAK_INV_REQ), 1);
	/* nothing more is answered or executed once in ERR */
	ph_write(h, SRN_OP_RC_WRITE_ONLY, 0x4243, base, key, 8, data, 8, true);
	PH_EXPECT_NONE(h);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	ph_free(h);
}

SRN_TEST(test_psn_21_write_bad_rkey_nak_remote_access)
{ access_case(A_WRITE_BAD_RKEY, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_write_out_of_bounds_nak_remote_access)
{ access_case(A_WRITE_BOUNDS, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_write_mr_without_remote_write_nak_remote_access)
{ access_case(A_WRITE_MR_NO_RIGHT, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_write_qp_without_remote_write_nak_remote_access)
{ access_case(A_WRITE_QP_NO_RIGHT, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_write_length_mismatch_nak_invalid_request)
{ access_case(A_WRITE_LEN_MISMATCH, SRN_NAK_INVALID_REQUEST, SRN_EV_QP_REQ_ERR); }
SRN_TEST(test_psn_21_read_bad_rkey_nak_remote_access)
{ access_case(A_READ_BAD_RKEY, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_read_out_of_bounds_nak_remote_access)
{ access_case(A_READ_BOUNDS, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_read_mr_without_remote_read_nak_remote_access)
{ access_case(A_READ_MR_NO_RIGHT, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_read_qp_without_remote_read_nak_remote_access)
{ access_case(A_READ_QP_NO_RIGHT, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_atomic_misaligned_nak_invalid_request)
{ access_case(A_ATOMIC_MISALIGNED, SRN_NAK_INVALID_REQUEST, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_atomic_mr_without_remote_atomic_nak_remote_access)
{ access_case(A_ATOMIC_MR_NO_RIGHT, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }
SRN_TEST(test_psn_21_atomic_out_of_bounds_nak_remote_access)
{ access_case(A_ATOMIC_BOUNDS, SRN_NAK_REMOTE_ACCESS, SRN_EV_QP_ACCESS_ERR); }

/* a SEND with no posted receive: RNR NAK carrying the QP's min_rnr_timer,
 * the QP stays usable and the retried SEND is executed once a receive exists */
SRN_TEST(test_psn_21_send_without_receive_rnr_nak_with_min_rnr_timer)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x10, .min_rnr_timer = 14 });
	REQUIRE(h);
	static uint8_t rb[64];
	uint32_t lk;
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x10, "hello", 5, true), 0);
	PH_EXPECT_RNR(h, 0x10, 14, 0);
	/* the next packets of the same burst are out of sequence: silent */
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x11, "again", 5, true), 0);
	PH_EXPECT_NONE(h);
	CHECK_EQ(ph_epsn(h), 0x10);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_RTS);
	CHECK_EQ(ph_ctr(h, SRN_CTR_TX_NAK_RNR), 1);
	CHECK(all_bytes(rb, sizeof(rb), 0));
	/* a multi-packet SEND: the RNR NAK comes for its FIRST packet */
	CHECK_EQ(ph_post_recv(h, 7, rb, sizeof(rb), lk), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x10, "hello", 5, true), 0);
	PH_EXPECT_ACK(h, 0x10, 1);
	PH_EXPECT_CQE(h->rcq, 7, SRN_WC_SUCCESS, SRN_WC_RECV);
	CHECK(memcmp(rb, "hello", 5) == 0);
	uint8_t big[256];
	memset(big, 1, sizeof(big));
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_FIRST, 0x11, big, 256, false), 0);
	PH_EXPECT_RNR(h, 0x11, 14, 1);
	ph_free(h);
}

/* READ and ATOMIC do not exist on UC: a requester cannot post them and the
 * responder drops RC READ/ATOMIC opcodes sent to a UC QP without touching memory */
SRN_TEST(test_psn_21_read_atomic_on_uc_qp_rejected_memory_untouched)
{
	struct ph *h = ph_new(&(struct ph_opts){ .type = SRN_QPT_UC, .rq_psn = 0x20 });
	REQUIRE(h);
	static uint8_t mem[64];
	static uint64_t res;
	memset(mem, 0x77, sizeof(mem));
	uint32_t key, rk;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	REQUIRE(ph_reg(h, &res, 8, SRN_ACCESS_LOCAL_WRITE, &rk));
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_READ, 1, mem, 8, key, (uintptr_t)mem, key, SRN_SEND_SIGNALED), SRN_EINVAL);
	CHECK_EQ(ph_post_atomic(h, SRN_WR_ATOMIC_FETCH_AND_ADD, 2, &res, rk, (uintptr_t)mem, key, 1, 0,
				SRN_SEND_SIGNALED), SRN_EINVAL);
	CHECK_EQ(ph_read(h, 0x20, (uintptr_t)mem, key, 8), SRN_EDROP);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x20, (uintptr_t)mem, key, 1, 0), SRN_EDROP);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_COMPARE_SWAP, 0x20, (uintptr_t)mem, key, 1, 0x7777777777777777ull), SRN_EDROP);
	PH_EXPECT_NONE(h);
	CHECK(all_bytes(mem, sizeof(mem), 0x77));
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_BAD_OPCODE), 3);
	CHECK_EQ(ph_epsn(h), 0x20);
	PH_EXPECT_NO_CQE(h->scq);
	ph_free(h);
}

/* a requester with more READ/ATOMICs outstanding than max_dest_rd_atomic:
 * the one too many is NAKed Invalid Request and not executed */
SRN_TEST(test_psn_21_requester_exceeding_max_dest_rd_atomic_nak_invalid_request)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x30, .max_dest_rd_atomic = 2 });
	REQUIRE(h);
	static uint8_t mem[1024];
	static uint64_t target = 5;
	uint32_t key, tk;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	REQUIRE(ph_reg(h, &target, 8, ALL_ACC, &tk));
	/* two outstanding (their responses not sent yet): allowed */
	CHECK_EQ(ph_read(h, 0x30, (uintptr_t)mem, key, 512), 0);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x32, (uintptr_t)&target, tk, 1, 0), 0);
	CHECK_EQ(target, 6);
	/* a duplicate does not count */
	CHECK_EQ(ph_read(h, 0x30, (uintptr_t)mem, key, 512), 0);
	/* the third: NAK, not executed */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x33, (uintptr_t)&target, tk, 1, 0), 0);
	CHECK_EQ(target, 6);
	PH_EXPECT_NAK(h, 0x33, SRN_NAK_INVALID_REQUEST, 2);
	PH_EXPECT_NONE(h);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_ERR);
	CHECK(has_async(h, SRN_EV_QP_REQ_ERR));
	CHECK_EQ(ph_ctr(h, SRN_CTR_TX_NAK_RD_ATOMIC_EXC), 1);
	ph_free(h);

	/* once the answers are out, the same sequence is fine */
	h = ph_new(&(struct ph_opts){ .rq_psn = 0x30, .max_dest_rd_atomic = 2 });
	REQUIRE(h);
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	REQUIRE(ph_reg(h, &target, 8, ALL_ACC, &tk));
	CHECK_EQ(ph_read(h, 0x30, (uintptr_t)mem, key, 512), 0);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x32, (uintptr_t)&target, tk, 1, 0), 0);
	CHECK_EQ(ph_collect_n(h, 2), 2);   /* the READ's two responses */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x33, (uintptr_t)&target, tk, 1, 0), 0);
	CHECK_EQ(target, 8);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_FIRST, 0x30);
	PH_EXPECT(h, SRN_OP_RC_READ_RESPONSE_LAST, 0x31);
	PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x32);
	PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x33);
	PH_EXPECT_NONE(h);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_RTS);
	ph_free(h);

	/* max_dest_rd_atomic 0: the responder takes no READ at all */
	h = ph_new(&(struct ph_opts){ .rq_psn = 0x30 });
	REQUIRE(h);
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	CHECK_EQ(srn_qp_modify(h->qp, &(struct srn_qp_attr){ .qp_state = SRN_QPS_RESET }, SRN_QP_STATE, h->now), 0);
	at.qp_state = SRN_QPS_INIT;
	at.qp_access_flags = ALL_ACC;
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE | SRN_QP_ACCESS_FLAGS, h->now), 0);
	at.qp_state = SRN_QPS_RTR;
	at.rq_psn = 0x30;
	at.dest_qp_num = PH_PEER_QPN;
	at.path_mtu = 1;
	at.max_dest_rd_atomic = 0;
	at.ah.dgid[10] = at.ah.dgid[11] = 0xff;
	memcpy(at.ah.dgid + 12, h->peer_ip, 4);
	CHECK_EQ(srn_qp_modify(h->qp, &at, SRN_QP_STATE | SRN_QP_RQ_PSN | SRN_QP_DEST_QPN | SRN_QP_PATH_MTU |
			       SRN_QP_AV | SRN_QP_MAX_DEST_RD_ATOMIC, h->now), 0);
	CHECK_EQ(ph_read(h, 0x30, (uintptr_t)mem, key, 8), 0);
	PH_EXPECT_NAK(h, 0x30, SRN_NAK_INVALID_REQUEST, 0);
	PH_EXPECT_NONE(h);
	ph_free(h);
}

/* a full response queue: the request at ePSN is dropped unexecuted and
 * counted as drop_resp_queue_full; the retry after the queue drained works */
SRN_TEST(test_psn_21_response_queue_full_drop_counted_then_retry_executes)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x40 });
	REQUIRE(h);
	static uint64_t target = 100;
	static uint8_t rb[64];
	uint32_t tk, lk;
	REQUIRE(ph_reg(h, &target, 8, ALL_ACC, &tk));
	REQUIRE(ph_reg(h, rb, sizeof(rb), SRN_ACCESS_LOCAL_WRITE, &lk));
	CHECK_EQ(ph_post_recv(h, 1, rb, sizeof(rb), lk), 0);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x40, (uintptr_t)&target, tk, 1, 0), 0);
	/* queue capacity is 2 * max_rd_atomic(16) + 64 = 96; 94 duplicate replays
	 * fill it to 95 entries, leaving one slot */
	for (int i = 0; i < 94; i++)
		CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x40, (uintptr_t)&target, tk, 1, 0), 0);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x41, "q", 1, true), 0);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_RESP_QUEUE_FULL), 1);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_BAD_STATE), 0);
	CHECK_EQ(ph_epsn(h), 0x41);
	PH_EXPECT_NO_CQE(h->rcq);
	/* more duplicates are dropped silently when there is no room at all */
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x40, (uintptr_t)&target, tk, 1, 0), 0);
	CHECK_EQ(ph_atomic(h, SRN_OP_RC_FETCH_ADD, 0x40, (uintptr_t)&target, tk, 1, 0), 0);
	CHECK_EQ(ph_pending(h), 96);
	for (int i = 0; i < 96; i++) {
		const struct ph_pkt *k = PH_EXPECT(h, SRN_OP_RC_ATOMIC_ACKNOWLEDGE, 0x40);
		CHECK(k && k->p.orig == 100);
	}
	PH_EXPECT_NONE(h);
	CHECK_EQ(target, 101);
	CHECK_EQ(ph_send(h, SRN_OP_RC_SEND_ONLY, 0x41, "q", 1, true), 0);
	PH_EXPECT_ACK(h, 0x41, 2);
	PH_EXPECT_CQE(h->rcq, 1, SRN_WC_SUCCESS, SRN_WC_RECV);
	ph_free(h);
}

int main(void) { return srn_test_main(); }
