/*
 * fuzz_core_pair.c - libFuzzer target for the responder and the completer.
 *
 * Two core devices joined by the in-memory link of tests/lib/core_pair.c,
 * with connected RC, UC and UD QP pairs, outstanding SEND/WRITE/READ/ATOMIC
 * work on side 0 and receives posted on side 1. The fuzz input is a
 * sequence of records, each an arbitrary packet injected into one device as
 * if it came from the connected peer, followed by a fuzzed advance of the
 * clock (so timers, retries and RNR waits are exercised as well as bytes):
 *
 *   [ctl:1][dt:1][len:1] [len bytes: BTH and whatever follows]
 *     ctl bit 0     target device (0 or 1)
 *     ctl bits 1-2  rewrite BTH.DestQP to the target's RC/UC/UD QP (0: keep)
 *     ctl bit 3     deliver with ECN CE
 *     dt            clock advance in units of 4 us (timers fire, link pumped)
 *
 * The ICRC is appended correctly, so the input reaches the transport instead
 * of dying in the ICRC check (the ICRC path has its own target).
 * Properties checked beyond the sanitizers: memory outside the registered
 * regions is never written (guard zones), and srn_dev_del frees everything.
 * Requirements: W-05 (hostile packets never crash or touch ungranted memory).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/core_pair.h"
#include "wire/srn_wire.h"

#define GUARD 256u
#define REGION 65536u
#define GUARD_BYTE 0xEE
/* regions are registered at this fixed I/O address, so inputs that name it
 * in a RETH/AtomicETH stay meaningful across runs (ASLR moves the buffers) */
#define FUZZ_IOVA 0x100000u

struct side_mem {
	uint8_t buf[GUARD + REGION + GUARD];
};

static struct side_mem mem[2];

static void guard_init(struct side_mem *m)
{
	memset(m->buf, GUARD_BYTE, GUARD);
	memset(m->buf + GUARD, 0, REGION);
	memset(m->buf + GUARD + REGION, GUARD_BYTE, GUARD);
}

static void guard_check(const struct side_mem *m)
{
	for (unsigned i = 0; i < GUARD; i++)
		if (m->buf[i] != GUARD_BYTE || m->buf[GUARD + REGION + i] != GUARD_BYTE)
			abort(); /* the NIC wrote memory it was not granted */
}

static void setup_work(struct cp_pair *cp, struct cp_qp *rc, struct cp_qp *uc, struct cp_qp *ud,
		       struct srn_mr *mr[2])
{
	/* SGE addresses are I/O addresses of the regions (checked against the MR) */
	uint8_t *r0 = (uint8_t *)(uintptr_t)FUZZ_IOVA, *r1 = (uint8_t *)(uintptr_t)FUZZ_IOVA;
	uint64_t raddr = FUZZ_IOVA;
	uint32_t rkey;
	struct srn_mr_info info;

	srn_mr_info(mr[1], &info);
	rkey = info.rkey;
	for (int i = 0; i < 4; i++) {
		cp_post_recv(&rc[1], 100 + i, r1 + 4096 * i, 4096, mr[1]);
		cp_post_recv(&uc[1], 200 + i, r1 + 16384 + 1024 * i, 1024, mr[1]);
		cp_post_recv(&ud[1], 300 + i, r1 + 32768 + 4200 * i, 4200, mr[1]);
	}
	cp_post_send(cp, &rc[0], SRN_WR_SEND, 1, r0, 3000, mr[0], 0, 0, SRN_SEND_SIGNALED);
	cp_post_send(cp, &rc[0], SRN_WR_RDMA_WRITE, 2, r0, 5000, mr[0], raddr + 100, rkey, SRN_SEND_SIGNALED);
	cp_post_send(cp, &rc[0], SRN_WR_RDMA_READ, 3, r0 + 8192, 6000, mr[0], raddr, rkey, SRN_SEND_SIGNALED);
	cp_post_send(cp, &rc[0], SRN_WR_ATOMIC_FETCH_AND_ADD, 4, r0 + 16384, 8, mr[0], raddr + 64, rkey,
		     SRN_SEND_SIGNALED);
	cp_post_send(cp, &uc[0], SRN_WR_SEND, 5, r0, 2000, mr[0], 0, 0, SRN_SEND_SIGNALED);
}

static void drain_cqs(struct cp_qp *q)
{
	struct srn_cqe c;
	while (cp_poll1(q->scq, &c) == 1)
		;
	while (cp_poll1(q->rcq, &c) == 1)
		;
}

/* both devices as the runtime configures them: delayed ACKs on (PSN-17),
 * so the held-ACK state meets every fuzzed packet sequence and clock */
static void tune(struct srn_dev_cfg *c, int side)
{
	(void)side;
	c->ack_delay_ns = 20000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cp_qp_opts o;
	struct cp_qp rc[2], uc[2], ud[2];
	struct srn_mr *mr[2];
	cp_qcap = 512;          /* a small link queue makes each input cheap; */
	cp_qdrop = true;        /* a full one drops, as a switch queue would */
	struct cp_pair *cp = cp_new(tune);

	if (!cp)
		abort();
	cp_qp_opts_default(&o);
	o.sq_psn[0] = 0;
	o.sq_psn[1] = 0;
	o.timeout = 8;          /* ~1 ms */
	o.retry_cnt = 3;
	o.rnr_retry = 3;
	if (cp_connect(cp, SRN_QPT_RC, &rc[0], &rc[1], &o) || cp_connect(cp, SRN_QPT_UC, &uc[0], &uc[1], &o) ||
	    cp_connect(cp, SRN_QPT_UD, &ud[0], &ud[1], &o))
		abort();
	for (int s = 0; s < 2; s++) {
		guard_init(&mem[s]);
		if (srn_mr_reg(cp->dev[s], cp->pd[s], mem[s].buf + GUARD, FUZZ_IOVA, REGION,
			       SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ |
			       SRN_ACCESS_REMOTE_ATOMIC, &mr[s]))
			abort();
	}
	setup_work(cp, rc, uc, ud, mr);

	size_t off = 0;
	static uint8_t pkt[4096 + 64];
	while (off + 3 <= size) {
		uint8_t ctl = data[off], dt = data[off + 1], len = data[off + 2];
		off += 3;
		if (len > size - off)
			len = (uint8_t)(size - off);
		int side = ctl & 1;
		memcpy(pkt, data + off, len);
		off += len;
		size_t plen = (size_t)len + SRN_ICRC_LEN;
		struct cp_qp *tq = NULL;
		switch ((ctl >> 1) & 3) {
		case 1: tq = &rc[side]; break;
		case 2: tq = &uc[side]; break;
		case 3: tq = &ud[side]; break;
		}
		if (tq && len >= SRN_BTH_LEN)
			srn_put24(pkt + 5, srn_qp_num(tq->qp));
		struct srn_pkt_meta m;
		memset(&m, 0, sizeof(m));
		memcpy(m.src_gid, cp->cfg[1 - side].gid, 16);
		memcpy(m.dst_gid, cp->cfg[side].gid, 16);
		m.l4.src = 49152;
		m.l4.dst = SRN_ROCEV2_UDP_PORT;
		m.ttl = 64;
		m.ecn = (ctl & 8) ? 3 : 2;
		struct srn_ip_info ip;
		memset(&ip, 0, sizeof(ip));
		memcpy(ip.src, m.src_gid, 16);
		memcpy(ip.dst, m.dst_gid, 16);
		ip.df = true;
		ip.sport = m.l4.src;
		ip.dport = m.l4.dst;
		memset(pkt + len, 0, SRN_ICRC_LEN);
		srn_icrc_store(&ip, pkt, plen);
		srn_dev_recv(cp->dev[side], pkt, plen, &m, cp->now);
		cp_advance(cp, (srn_ts)dt * 4096);
		for (int s = 0; s < 2; s++) {
			drain_cqs(&rc[s]);
			drain_cqs(&uc[s]);
			drain_cqs(&ud[s]);
		}
	}
	/* let retries run out so every timer path is taken, bounded */
	cp_run_n(cp, 64);
	guard_check(&mem[0]);
	guard_check(&mem[1]);
	cp_free(cp);
	if (cp_live_allocs() != 0)
		abort(); /* leak */
	return 0;
}
