/*
 * test_cc_pipe.c - TX/RX pipe helpers of the CC engine: per-flow pacer
 * (CC-10), RTT probe timestamps (CC-12), CNP at most once per interval at
 * the notification point (CC-13).
 */
#include "srn_test.h"
#include "core/cc/srn_cc_pipe.h"

#define SEC 1000000000ull

/* send `pkt`-byte packets as fast as the pacer allows for one simulated second */
static uint64_t paced_bytes(uint32_t rate_kbps, uint32_t pkt, uint32_t burst)
{
	struct srn_cc_pacer p;
	srn_cc_pacer_init(&p, rate_kbps, burst, 0);
	uint64_t bytes = 0;
	srn_ts t = 0;
	for (;;) {
		t = srn_cc_pacer_next_send_time(&p, pkt, t);
		if (t >= SEC)
			break;
		srn_cc_pacer_on_send(&p, pkt, t);
		bytes += pkt;
	}
	return bytes;
}

/* CC-10 */
SRN_TEST(test_cc_10_pacer_accuracy_one_second)
{
	static const struct { uint32_t kbps, pkt; } cases[] = {
		{ 10000000, 4096 }, { 1000000, 1024 }, { 37123456, 4160 }, { 100000000, 4096 },
		{ 1000, 64 }, { 25000, 1500 },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double want = cases[i].kbps * 1000.0 / 8;       /* bytes per second */
		/* bucket: 100 us worth of bytes, at least one packet */
		uint32_t burst = (uint32_t)(want / 10000);
		if (burst < cases[i].pkt)
			burst = cases[i].pkt;
		double got = (double)paced_bytes(cases[i].kbps, cases[i].pkt, burst);
		CHECK(got > want * 0.99 && got < want * 1.01);
	}
}

/* CC-10 */
SRN_TEST(test_cc_10_pacer_rate_change_and_zero)
{
	struct srn_cc_pacer p;
	srn_cc_pacer_init(&p, 8000, 1000, 0);           /* 8 Mbit/s = 1 byte/us, bucket 1000 B */
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 1000, 0), 0);   /* full bucket */
	srn_cc_pacer_on_send(&p, 1000, 0);
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 1000, 0), 1000000);   /* 1000 B at 1 B/us */
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 500, 0), 500000);
	srn_cc_pacer_set_rate(&p, 16000, 250000);       /* 250 B earned; now 2 B/us */
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 1000, 250000), 250000 + 375000);
	srn_cc_pacer_set_rate(&p, 0, 300000);
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 1000, 300000), SRN_TS_NEVER);
	/* a packet larger than the bucket waits for a full bucket, then goes */
	srn_cc_pacer_init(&p, 8000, 100, 0);
	srn_cc_pacer_on_send(&p, 100, 0);
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 4000, 0), 100000);
	/* the bucket caps idle credit */
	srn_cc_pacer_init(&p, 8000, 1000, 0);
	srn_cc_pacer_on_send(&p, 1000, 0);
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 1000, 50 * SEC), 50 * SEC);
	srn_cc_pacer_on_send(&p, 1000, 50 * SEC);
	CHECK_EQ(srn_cc_pacer_next_send_time(&p, 1, 50 * SEC), 50 * SEC + 1000);
}

/* CC-12 */
SRN_TEST(test_cc_12_probe_timestamps_arithmetic)
{
	uint8_t req[64], resp[64];
	CHECK_EQ(srn_cc_probe_build_req(req, 10, 1, 2, 3), 0);       /* too small */
	size_t n = srn_cc_probe_build_req(req, sizeof(req), 0x01020304, 77, 1000);
	CHECK_EQ(n, SRN_CC_PROBE_LEN);
	CHECK_EQ(req[0], SRN_CC_PROBE_VERSION);
	CHECK_EQ(req[4], 0x01);
	CHECK_EQ(req[7], 0x04);
	CHECK_EQ(req[19], 1000 & 0xff);                               /* T1 big-endian */
	CHECK_EQ(req[18], 1000 >> 8);
	/* the responder's clock runs 1 s ahead of the sender's */
	const srn_ts off = SEC;
	size_t m = srn_cc_probe_answer(req, n, 6000 + off, 6700 + off, resp, sizeof(resp));
	CHECK_EQ(m, SRN_CC_PROBE_LEN);
	CHECK_EQ(srn_cc_probe_answer(resp, m, 1, 2, req, sizeof(req)), 0);   /* not a request */
	CHECK_EQ(srn_cc_probe_answer(req, n - 1, 1, 2, resp, sizeof(resp)), 0);
	struct srn_cc_probe pr;
	REQUIRE(srn_cc_probe_parse(resp, m, &pr) == 0);
	CHECK_EQ(pr.kind, SRN_CC_PROBE_RESP);
	CHECK_EQ(pr.flow_id, 0x01020304);
	CHECK_EQ(pr.seq, 77);
	CHECK_EQ(pr.t1, 1000);
	CHECK_EQ(pr.t2, 6000 + off);
	CHECK_EQ(pr.t3, 6700 + off);
	struct srn_cc_rtt_sample d;
	REQUIRE(srn_cc_probe_delays(&pr, 12000, &d) == 0);
	CHECK_EQ(d.responder_ns, 700);
	CHECK_EQ(d.rtt_ns, 12000 - 1000 - 700);                      /* offset-free */
	CHECK_EQ(d.forward_ns, 5000 + (int64_t)off);
	CHECK_EQ(d.return_ns, 12000 - 6700 - (int64_t)off);           /* negative */
	CHECK_EQ(d.forward_ns + (int64_t)d.responder_ns + d.return_ns, 11000);
	/* same clocks: forward + responder + return = T4 - T1 */
	m = srn_cc_probe_answer(req, n, 5000, 5300, resp, sizeof(resp));
	REQUIRE(srn_cc_probe_parse(resp, m, &pr) == 0);
	REQUIRE(srn_cc_probe_delays(&pr, 9000, &d) == 0);
	CHECK_EQ(d.forward_ns, 4000);
	CHECK_EQ(d.responder_ns, 300);
	CHECK_EQ(d.return_ns, 3700);
	CHECK_EQ(d.rtt_ns, 7700);
	CHECK_EQ(srn_cc_probe_delays(&pr, 500, &d), SRN_EINVAL);      /* before T1 */
	struct srn_cc_ev ev;
	srn_cc_probe_event(&pr, 9000, &ev);
	CHECK_EQ(ev.type, SOFTRNIC_CC_EV_RTT);
	CHECK_EQ(ev.ts, 9000);
	CHECK_EQ(ev.rtt_t2, 5000);
	CHECK_EQ(ev.flow_id, 0x01020304);
	resp[0] = 9;
	CHECK_EQ(srn_cc_probe_parse(resp, m, &pr), SRN_EINVAL);
}

/* CC-13 */
SRN_TEST(test_cc_13_cnp_at_most_once_per_interval)
{
	const srn_ts us = 1000, interval = 50 * us;
	struct srn_cc_np a, b;
	srn_cc_np_init(&a);
	srn_cc_np_init(&b);
	int sent = 0;
	srn_ts last = 0;
	for (srn_ts t = 0; t < 1000 * us; t += us) {       /* CE-marked packet every us */
		if (srn_cc_np_on_ce(&a, t, interval)) {
			if (sent)
				CHECK_EQ(t - last, interval);
			sent++;
			last = t;
		}
	}
	CHECK_EQ(sent, 20);
	CHECK_EQ(a.ce_seen, 1000);
	CHECK_EQ(a.cnps_sent, 20);
	CHECK_EQ(a.cnps_suppressed, 980);
	/* flows are independent */
	CHECK(srn_cc_np_on_ce(&b, 10 * us, interval));
	CHECK(!srn_cc_np_on_ce(&b, 59 * us, interval));
	CHECK(srn_cc_np_on_ce(&b, 60 * us, interval));
}

int main(void) { return srn_test_main(); }
