/*
 * test_hostile.c - hostile packets against a connected RC QP (issue 4,
 * "Hostile input"): another PD's rkey, a bad ICRC, an unknown QPN, a spoofed
 * source address, truncated packets. Each is dropped or NAKed as the
 * specification says, counted, and leaves memory untouched; a packet that
 * was dropped consumed nothing (the same request sent correctly afterwards
 * executes normally).
 * Requirements: W-05, PSN-21.
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

/* Inject p as if from src_ip:sport (the harness's own ph_inject always uses
 * the connected peer). corrupt: flip one bit of the ICRC. */
static int raw_inject(struct ph *h, struct srn_tenc_pkt *p, const uint8_t src_ip[4], uint16_t sport,
		      bool corrupt)
{
	uint8_t buf[SRN_MAX_PKT];
	size_t n = srn_tenc_build(buf, sizeof(buf), p, src_ip, h->my_ip, sport, SRN_ROCEV2_UDP_PORT, 0);
	if (!n)
		return -100;
	if (corrupt)
		buf[n - 1] ^= 0x10;
	struct srn_pkt_meta m;
	memset(&m, 0, sizeof(m));
	m.src_gid[10] = m.src_gid[11] = 0xff;
	memcpy(m.src_gid + 12, src_ip, 4);
	m.dst_gid[10] = m.dst_gid[11] = 0xff;
	memcpy(m.dst_gid + 12, h->my_ip, 4);
	m.l4.src = sport;
	m.l4.dst = SRN_ROCEV2_UDP_PORT;
	m.ttl = 64;
	m.ecn = 2;
	return srn_dev_recv(h->dev, buf, n, &m, h->now);
}

static void write_pkt(struct srn_tenc_pkt *p, struct ph *h, uint64_t va, uint32_t rkey, const void *data,
		      uint32_t len)
{
	srn_tenc_init(p, SRN_OP_RC_WRITE_ONLY);
	p->dqpn = h->qpn;
	p->psn = ph_rq(h, 0);
	p->ackreq = true;
	p->va = va;
	p->rkey = rkey;
	p->dmalen = len;
	p->payload = data;
	p->paylen = len;
}

/* W-05/PSN-21: an rkey of an MR in another protection domain of the same
 * device is a remote access error: NAK, QP to ERR, memory untouched. */
SRN_TEST(test_w05_psn21_other_pd_rkey_naked_memory_untouched)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x100 });
	REQUIRE(h);
	static uint8_t mem[512];
	memset(mem, 0x5A, sizeof(mem));
	struct srn_mr *mr;
	uint32_t other_pd = srn_pd_alloc(h->dev);
	CHECK(other_pd != h->pd);
	REQUIRE(srn_mr_reg(h->dev, other_pd, mem, (uintptr_t)mem, sizeof(mem), ALL_ACC, &mr) == 0);
	struct srn_mr_info mi;
	srn_mr_info(mr, &mi);
	uint8_t data[64];
	memset(data, 0xC3, sizeof(data));
	CHECK_EQ(ph_write(h, SRN_OP_RC_WRITE_ONLY, ph_rq(h, 0), (uintptr_t)mem, mi.rkey, 64, data, 64, true), 0);
	ph_expect_aeth_(h, SRN_OP_RC_ACKNOWLEDGE, ph_rq(h, 0), SRN_AETH_SYN(SRN_AETH_NAK, SRN_NAK_REMOTE_ACCESS),
			-1, __FILE__, __LINE__);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	CHECK_EQ(ph_ctr(h, SRN_CTR_TX_NAK_REM_ACCESS), 1);
	CHECK_EQ(srn_qp_state(h->qp), SRN_QPS_ERR);
	/* the same READ with the other PD's rkey is refused the same way (and,
	 * the QP being in ERR now, nothing more is emitted) */
	ph_discard(h);
	CHECK_EQ(ph_read(h, ph_rq(h, 1), (uintptr_t)mem, mi.rkey, 64), SRN_EDROP);
	CHECK_EQ(ph_pending(h), 0);
	srn_mr_dereg(h->dev, mr);
	ph_free(h);
}

/* W-05: a bad ICRC is dropped and counted; nothing is executed or answered;
 * the same packet with a good ICRC then executes (nothing was consumed). */
SRN_TEST(test_w05_bad_icrc_dropped_counted)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0xFFFFFE });
	REQUIRE(h);
	static uint8_t mem[256];
	memset(mem, 0x5A, sizeof(mem));
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	uint8_t data[32];
	memset(data, 0x77, sizeof(data));
	struct srn_tenc_pkt p;
	write_pkt(&p, h, (uintptr_t)mem, key, data, sizeof(data));
	uint64_t before = ph_ctr(h, SRN_CTR_DROP_BAD_ICRC);
	CHECK_EQ(raw_inject(h, &p, h->peer_ip, h->peer_sport, true), SRN_EDROP);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_BAD_ICRC), before + 1);
	CHECK_EQ(ph_pending(h), 0);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	CHECK_EQ(ph_epsn(h), 0xFFFFFE);
	/* now the intact packet: executed and ACKed */
	CHECK_EQ(raw_inject(h, &p, h->peer_ip, h->peer_sport, false), 0);
	ph_expect_aeth_(h, SRN_OP_RC_ACKNOWLEDGE, 0xFFFFFE, SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID),
			1, __FILE__, __LINE__);
	CHECK(all_bytes(mem, 32, 0x77));
	CHECK(all_bytes(mem + 32, sizeof(mem) - 32, 0x5A));
	ph_free(h);
}

/* W-05: a packet for a QPN that does not exist is dropped and counted. */
SRN_TEST(test_w05_unknown_qpn_dropped_counted)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0 });
	REQUIRE(h);
	static uint8_t mem[128];
	memset(mem, 0x5A, sizeof(mem));
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	struct srn_tenc_pkt p;
	uint8_t data[16] = { 1 };
	write_pkt(&p, h, (uintptr_t)mem, key, data, sizeof(data));
	p.dqpn = h->qpn + 0x777;
	uint64_t before = ph_ctr(h, SRN_CTR_DROP_UNKNOWN_QPN);
	CHECK_EQ(raw_inject(h, &p, h->peer_ip, h->peer_sport, false), SRN_EDROP);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_UNKNOWN_QPN), before + 1);
	CHECK_EQ(ph_pending(h), 0);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	ph_free(h);
}

/* W-05: a request for a connected QP from an address that is not its peer
 * (a valid ICRC, the right QPN and PSN and rkey) is dropped and counted:
 * memory untouched, ePSN unchanged. A response from a spoofed address does
 * not complete the QP's own work either. */
SRN_TEST(test_w05_spoofed_source_address_dropped)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x10 });
	REQUIRE(h);
	static uint8_t mem[128];
	memset(mem, 0x5A, sizeof(mem));
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	struct srn_tenc_pkt p;
	uint8_t data[16];
	memset(data, 0xEE, sizeof(data));
	write_pkt(&p, h, (uintptr_t)mem, key, data, sizeof(data));
	const uint8_t evil[4] = { 10, 66, 66, 66 };
	uint64_t before = ph_ctr(h, SRN_CTR_DROP_BAD_SRC);
	CHECK_EQ(raw_inject(h, &p, evil, h->peer_sport, false), SRN_EDROP);
	CHECK_EQ(ph_ctr(h, SRN_CTR_DROP_BAD_SRC), before + 1);
	CHECK_EQ(ph_pending(h), 0);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	CHECK_EQ(ph_epsn(h), 0x10);

	/* the QP's own WRITE is outstanding; a spoofed ACK for it is ignored */
	static uint8_t src[64];
	uint32_t lkey;
	REQUIRE(ph_reg(h, src, sizeof(src), ALL_ACC, &lkey));
	CHECK_EQ(ph_post(h, SRN_WR_RDMA_WRITE, 9, src, 64, lkey, 0x1000, 0x99, SRN_SEND_SIGNALED), 0);
	ph_expect_(h, SRN_OP_RC_WRITE_ONLY, ph_sq(h, 0), __FILE__, __LINE__);
	struct srn_tenc_pkt a;
	srn_tenc_init(&a, SRN_OP_RC_ACKNOWLEDGE);
	a.dqpn = h->qpn;
	a.psn = ph_sq(h, 0);
	a.syndrome = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
	a.msn = 1;
	CHECK_EQ(raw_inject(h, &a, evil, 50000, false), SRN_EDROP);
	struct srn_cqe c;
	CHECK_EQ(ph_poll(h->scq, &c, 1), 0);
	CHECK_EQ(ph_comp_psn(h), ph_sq(h, 0));
	/* the real peer's ACK completes it */
	CHECK_EQ(ph_ack(h, ph_sq(h, 0), SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID), 1), 0);
	REQUIRE(ph_poll(h->scq, &c, 1) == 1);
	CHECK_EQ(c.status, SRN_WC_SUCCESS);
	CHECK_EQ(c.wr_id, 9);
	ph_free(h);
}

/* W-02/W-05: the UDP source port is flow entropy (RoCEv2 senders choose it
 * per flow for ECMP), so a receiver must not filter on it: the connected
 * peer's request from another source port is accepted. */
SRN_TEST(test_w02_other_source_port_of_peer_accepted)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x20 });
	REQUIRE(h);
	static uint8_t mem[64];
	memset(mem, 0x5A, sizeof(mem));
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	struct srn_tenc_pkt p;
	uint8_t data[8];
	memset(data, 0x42, sizeof(data));
	write_pkt(&p, h, (uintptr_t)mem, key, data, sizeof(data));
	CHECK_EQ(raw_inject(h, &p, h->peer_ip, (uint16_t)(h->peer_sport ^ 0x1234), false), 0);
	ph_expect_aeth_(h, SRN_OP_RC_ACKNOWLEDGE, 0x20, SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID), 1,
			__FILE__, __LINE__);
	CHECK(all_bytes(mem, 8, 0x42));
	ph_free(h);
}

/* W-05: truncated packets (every length shorter than a full WRITE_ONLY) and a
 * length that disagrees with the RETH never touch memory; the device keeps
 * working afterwards. */
SRN_TEST(test_w05_truncated_and_inconsistent_lengths_dropped)
{
	struct ph *h = ph_new(&(struct ph_opts){ .rq_psn = 0x30 });
	REQUIRE(h);
	static uint8_t mem[256];
	memset(mem, 0x5A, sizeof(mem));
	uint32_t key;
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	uint8_t data[64];
	memset(data, 0x99, sizeof(data));
	struct srn_tenc_pkt p;
	write_pkt(&p, h, (uintptr_t)mem, key, data, sizeof(data));
	uint8_t full[SRN_MAX_PKT];
	size_t n = srn_tenc_build(full, sizeof(full), &p, h->peer_ip, h->my_ip, h->peer_sport,
				  SRN_ROCEV2_UDP_PORT, 0);
	REQUIRE(n > 0);
	struct srn_pkt_meta m;
	memset(&m, 0, sizeof(m));
	m.src_gid[10] = m.src_gid[11] = m.dst_gid[10] = m.dst_gid[11] = 0xff;
	memcpy(m.src_gid + 12, h->peer_ip, 4);
	memcpy(m.dst_gid + 12, h->my_ip, 4);
	m.l4.src = h->peer_sport;
	m.l4.dst = SRN_ROCEV2_UDP_PORT;
	for (size_t len = 0; len < n; len++)
		CHECK_EQ(srn_dev_recv(h->dev, full, len, &m, h->now), SRN_EDROP);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	CHECK_EQ(ph_pending(h), 0);
	CHECK_EQ(ph_epsn(h), 0x30);
	/* a WRITE_ONLY whose payload (64) disagrees with its RETH length (32) */
	p.dmalen = 32;
	CHECK_EQ(raw_inject(h, &p, h->peer_ip, h->peer_sport, false), 0);
	CHECK(all_bytes(mem, sizeof(mem), 0x5A));
	ph_discard(h);
	ph_free(h);

	/* and the device still executes a correct request */
	h = ph_new(&(struct ph_opts){ .rq_psn = 0x30 });
	REQUIRE(h);
	REQUIRE(ph_reg(h, mem, sizeof(mem), ALL_ACC, &key));
	write_pkt(&p, h, (uintptr_t)mem, key, data, sizeof(data));
	CHECK_EQ(raw_inject(h, &p, h->peer_ip, h->peer_sport, false), 0);
	CHECK(all_bytes(mem, 64, 0x99));
	ph_free(h);
}

int main(void)
{
	return srn_test_main();
}
