/*
 * test_cc_engine.c - the CCC/CCP engine of source 004: WRED and FIFOs
 * (CC-03), selector and type-to-class table (CC-04), CAM (CC-05),
 * arbiter (CC-08), context store (CC-09), rate-update FIFO (CC-10), new
 * flows (CC-11), allocation failures. FSM and coalescing: test_cc_fsm.c.
 */
#include <stdlib.h>
#include "srn_test.h"
#include "core/cc/srn_cc.h"

static int n_alloc, n_free, fail_at = -1;
static void *t_calloc(size_t n, size_t s, void *u)
{
	(void)u;
	if (n_alloc++ == fail_at)
		return NULL;
	return calloc(n, s);
}
static void t_free(void *p, void *u) { (void)u; n_free++; free(p); }
static const struct srn_mem mem = { t_calloc, t_free, NULL };

/* a test algorithm: records what the processor received, counts calls in
 * the context, sets rate = min + 1000 * calls */
struct rec_ctx { uint64_t calls; };
struct recorder { struct softrnic_cc_event last[64]; int n; };
static struct recorder R;
static void rec_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
		      struct softrnic_cc_result *res)
{
	struct rec_ctx *c = SOFTRNIC_CC_CTX_PRIV(ctx, struct rec_ctx);
	c->calls++;
	R.last[R.n++ % 64] = *ev;          /* ring: the newest 64 */
	res->rate_kbps = ev->min_rate_kbps + 1000u * (uint32_t)c->calls;
}
static const struct softrnic_cc_algo rec_algo = {
	SOFTRNIC_CC_ABI_VERSION, sizeof(struct rec_ctx), "recorder", NULL, rec_event, NULL,
};

static struct srn_cc_cfg base_cfg(void)
{
	struct srn_cc_cfg c;
	srn_cc_cfg_default(&c);
	c.algo = &rec_algo;
	c.cycle_ns = 0;
	c.proc_ns = 1000;
	c.ctx_miss_ns = 0;
	return c;
}

static struct srn_cc_ev ev_of(unsigned type, uint32_t flow, uint32_t sn, srn_ts ts)
{
	return (struct srn_cc_ev){ .type = (uint8_t)type, .flow_id = flow, .sn = sn,
				   .bytes = 1000, .ts = ts };
}

static uint64_t C(struct srn_cc_engine *e, enum srn_cc_ctr c) { return srn_cc_counters(e)[c]; }

/* CC-03 */
SRN_TEST(test_cc_03_wred_curve)
{
	struct srn_cc_wred w = { 100, 200 };
	CHECK_EQ(srn_cc_wred_prob_ppm(&w, 0), 0);
	CHECK_EQ(srn_cc_wred_prob_ppm(&w, 99), 0);
	CHECK_EQ(srn_cc_wred_prob_ppm(&w, 100), 0);
	CHECK_EQ(srn_cc_wred_prob_ppm(&w, 150), 500000);
	CHECK_EQ(srn_cc_wred_prob_ppm(&w, 200), 1000000);
	CHECK_EQ(srn_cc_wred_prob_ppm(&w, 1000), 1000000);
	struct srn_cc_prng p;
	srn_cc_prng_seed(&p, 42);
	const int trials = 200000;
	for (uint32_t occ = 0; occ <= 260; occ += 5) {
		int drops = 0;
		for (int i = 0; i < trials; i++)
			drops += srn_cc_wred_drop(&w, occ, &p);
		double got = (double)drops / trials;
		double want = srn_cc_wred_prob_ppm(&w, occ) / 1e6;
		if (occ < 100)
			CHECK_EQ(drops, 0);
		else if (occ >= 200)
			CHECK_EQ(drops, trials);
		else
			CHECK(got > want - 0.006 && got < want + 0.006);
	}
	/* repeatable: same seed, same decisions */
	struct srn_cc_prng a, b;
	srn_cc_prng_seed(&a, 7);
	srn_cc_prng_seed(&b, 7);
	int same = 1;
	for (int i = 0; i < 10000; i++)
		same &= srn_cc_wred_drop(&w, 150, &a) == srn_cc_wred_drop(&w, 150, &b);
	CHECK(same);
}

static uint64_t fill_tx_fifo(uint64_t seed, uint64_t *drops_tx, uint64_t *drops_rtt)
{
	struct srn_cc_cfg c = base_cfg();
	c.seed = seed;
	c.tx_fifo_depth = 16;
	c.wred[SOFTRNIC_CC_EV_TX] = (struct srn_cc_wred){ 4, 12 };
	c.wred[SOFTRNIC_CC_EV_RTT_SENT] = (struct srn_cc_wred){ 12, 16 };
	struct srn_cc_engine *e;
	if (srn_cc_engine_new(&e, &c, &mem))
		return 0;
	for (uint32_t i = 0; i < 1000; i++) {
		unsigned t = i % 2 ? SOFTRNIC_CC_EV_RTT_SENT : SOFTRNIC_CC_EV_TX;
		struct srn_cc_ev ev = ev_of(t, i, i, 0);
		srn_cc_post_event(e, &ev, 0);   /* no handle_expiry: nothing drains */
		CHECK(srn_cc_fifo_depth(e, true) <= 16);
	}
	CHECK_EQ(C(e, SRN_CC_CTR_FIFO_OVERFLOW), 0);
	CHECK_EQ(C(e, SRN_CC_CTR_TX_FIFO_IN) + C(e, SRN_CC_CTR_WRED_DROPS), 1000);
	CHECK_EQ(C(e, SRN_CC_CTR_DROP_TX) + C(e, SRN_CC_CTR_DROP_RTT_SENT), C(e, SRN_CC_CTR_WRED_DROPS));
	*drops_tx = C(e, SRN_CC_CTR_DROP_TX);
	*drops_rtt = C(e, SRN_CC_CTR_DROP_RTT_SENT);
	uint64_t depth = srn_cc_fifo_depth(e, true);
	srn_cc_engine_del(e);
	return depth;
}

/* CC-03 */
SRN_TEST(test_cc_03_fifo_wred_per_type_never_overflows)
{
	uint64_t dtx, drtt, dtx2, drtt2;
	uint64_t depth = fill_tx_fifo(1, &dtx, &drtt);
	CHECK(depth >= 12 && depth <= 16);
	/* TX (TH 4/12) is thinned before RTT_SENT (TH 12/16) */
	CHECK(dtx > drtt);
	CHECK(dtx >= 490);      /* after the FIFO reaches 12 every TX is dropped */
	/* deterministic: same seed, same drops */
	fill_tx_fifo(1, &dtx2, &drtt2);
	CHECK_EQ(dtx, dtx2);
	CHECK_EQ(drtt, drtt2);
	/* config with TH2 beyond the FIFO is refused: it could overflow */
	struct srn_cc_cfg c = base_cfg();
	c.rx_fifo_depth = 8;
	c.wred[SOFTRNIC_CC_EV_CNP] = (struct srn_cc_wred){ 4, 9 };
	struct srn_cc_engine *e = NULL;
	CHECK_EQ(srn_cc_engine_new(&e, &c, &mem), SRN_EINVAL);
	c.wred[SOFTRNIC_CC_EV_CNP] = (struct srn_cc_wred){ 5, 4 };
	CHECK_EQ(srn_cc_engine_new(&e, &c, &mem), SRN_EINVAL);
}

/* CC-03 */
SRN_TEST(test_cc_03_fw_event_no_fifo)
{
	struct srn_cc_cfg c = base_cfg();
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	struct srn_cc_ev fw = ev_of(SOFTRNIC_CC_EV_FW, 5, 0, 0);
	fw.fw_data = 0xabcd;
	CHECK_EQ(srn_cc_post_event(e, &fw, 0), 0);
	CHECK(srn_cc_fw_pending(e));
	CHECK_EQ(srn_cc_post_event(e, &fw, 0), SRN_EBUSY);   /* not consumed yet */
	CHECK_EQ(C(e, SRN_CC_CTR_FW_BUSY_REJECTS), 1);
	srn_cc_handle_expiry(e, 0);
	CHECK(!srn_cc_fw_pending(e));
	CHECK_EQ(C(e, SRN_CC_CTR_SEL_FW), 1);
	CHECK_EQ(srn_cc_post_event(e, &fw, 1), 0);            /* accepted again */
	srn_cc_handle_expiry(e, 2000);
	CHECK(R.n > 0 && R.last[(R.n - 1) % 64].fw_data == 0xabcd);
	srn_cc_engine_del(e);
}

/* CC-04 */
SRN_TEST(test_cc_04_round_robin_selector)
{
	struct srn_cc_cfg c = base_cfg();
	c.n_procs = 8;
	c.ctx_cache_entries = 8;
	c.cycle_ns = 10;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	for (uint32_t i = 0; i < 3; i++) {
		struct srn_cc_ev tx = ev_of(SOFTRNIC_CC_EV_TX, 1 + i, i, 0);
		struct srn_cc_ev rx = ev_of(SOFTRNIC_CC_EV_ACK, 11 + i, i, 0);
		CHECK_EQ(srn_cc_post_event(e, &tx, 0), 0);
		CHECK_EQ(srn_cc_post_event(e, &rx, 0), 0);
	}
	struct srn_cc_ev fw = ev_of(SOFTRNIC_CC_EV_FW, 21, 0, 0);
	CHECK_EQ(srn_cc_post_event(e, &fw, 0), 0);
	/* one event per CCC cycle: TX, RX, FW, TX, RX, (FW empty) TX, RX */
	static const int want[7][3] = { {1,0,0}, {1,1,0}, {1,1,1}, {2,1,1}, {2,2,1}, {3,2,1}, {3,3,1} };
	for (int k = 0; k < 7; k++) {
		srn_cc_handle_expiry(e, (srn_ts)k * 10);
		CHECK_EQ(C(e, SRN_CC_CTR_SEL_TX), want[k][0]);
		CHECK_EQ(C(e, SRN_CC_CTR_SEL_RX), want[k][1]);
		CHECK_EQ(C(e, SRN_CC_CTR_SEL_FW), want[k][2]);
	}
	CHECK_EQ(srn_cc_expiry(e) > 60, 1);
	srn_cc_engine_del(e);
}

/* CC-04 */
SRN_TEST(test_cc_04_type_to_class_table)
{
	struct srn_cc_cfg c = base_cfg();
	CHECK(c.n_classes < SOFTRNIC_CC_EV_NTYPES);    /* more types than classes */
	CHECK_EQ(c.type_class[SOFTRNIC_CC_EV_TX], c.type_class[SOFTRNIC_CC_EV_RTT_SENT]);
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	CHECK_EQ(srn_cc_set_type_class(e, SOFTRNIC_CC_EV_ACK, 1), 0);   /* ACK joins CNP's class */
	CHECK_EQ(srn_cc_type_class(e, SOFTRNIC_CC_EV_ACK), 1);
	CHECK_EQ(srn_cc_set_type_class(e, SOFTRNIC_CC_EV_ACK, 5), SRN_EINVAL);
	CHECK_EQ(srn_cc_set_type_class(e, 7, 0), SRN_EINVAL);
	struct srn_cc_ev tx = ev_of(SOFTRNIC_CC_EV_TX, 9, 1, 0);
	srn_cc_post_event(e, &tx, 0);
	srn_cc_handle_expiry(e, 0);                    /* slice busy until 1000 */
	struct srn_cc_ev cnp = ev_of(SOFTRNIC_CC_EV_CNP, 9, 2, 10);
	struct srn_cc_ev ack = ev_of(SOFTRNIC_CC_EV_ACK, 9, 3, 11);
	srn_cc_post_event(e, &cnp, 10);
	srn_cc_post_event(e, &ack, 11);
	srn_cc_handle_expiry(e, 11);
	uint32_t p;
	REQUIRE(srn_cc_cam_search(e, 9, &p) == 0);
	struct srn_cc_ff_entry f;
	srn_cc_ff_read(e, p, 1, &f);
	CHECK_EQ(f.count, 2);
	CHECK_EQ(f.type_mask, (1u << SOFTRNIC_CC_EV_CNP) | (1u << SOFTRNIC_CC_EV_ACK));
	CHECK_EQ(f.last_type, SOFTRNIC_CC_EV_ACK);
	srn_cc_ff_read(e, p, 3, &f);                  /* ACK's default class stays empty */
	CHECK_EQ(f.count, 0);
	R.n = 0;
	srn_cc_handle_expiry(e, 1000);
	CHECK_EQ(R.n, 1);                              /* one class, one algorithm call */
	CHECK_EQ(R.last[0].class_id, 1);
	CHECK_EQ(R.last[0].count, 2);
	srn_cc_engine_del(e);
}

/* CC-05 */
SRN_TEST(test_cc_05_cam_hit_miss_random_idle_choice)
{
	struct srn_cc_cfg c = base_cfg();
	c.n_procs = 4;
	c.ctx_cache_entries = 4;
	int hist[4] = { 0 };
	for (uint64_t seed = 0; seed < 400; seed++) {
		c.seed = seed;
		struct srn_cc_engine *e;
		REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
		struct srn_cc_ev ev = ev_of(SOFTRNIC_CC_EV_TX, 77, 0, 0);
		srn_cc_post_event(e, &ev, 0);
		srn_cc_handle_expiry(e, 0);
		uint32_t p = 99, f = 0;
		CHECK_EQ(srn_cc_cam_search(e, 77, &p), 0);
		CHECK(p < 4);
		if (p < 4)
			hist[p]++;
		CHECK_EQ(srn_cc_cam_read(e, p, &f), 0);
		CHECK_EQ(f, 77);
		srn_cc_engine_del(e);
	}
	for (int i = 0; i < 4; i++)
		CHECK(hist[i] > 60);          /* uniform: ~100 each */

	c.seed = 3;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	for (uint32_t fl = 1; fl <= 3; fl++) {
		struct srn_cc_ev ev = ev_of(SOFTRNIC_CC_EV_TX, fl, 0, 0);
		srn_cc_post_event(e, &ev, 0);
	}
	srn_cc_handle_expiry(e, 0);
	CHECK_EQ(C(e, SRN_CC_CTR_CAM_MISSES), 3);
	struct srn_cc_ev again = ev_of(SOFTRNIC_CC_EV_TX, 2, 1, 5);
	srn_cc_post_event(e, &again, 5);
	srn_cc_handle_expiry(e, 5);
	CHECK_EQ(C(e, SRN_CC_CTR_CAM_HITS), 1);
	/* flow 4 can only get the one idle slice */
	uint32_t used = 0, p;
	for (uint32_t fl = 1; fl <= 3; fl++)
		if (srn_cc_cam_search(e, fl, &p) == 0)
			used |= 1u << p;
	struct srn_cc_ev f4 = ev_of(SOFTRNIC_CC_EV_TX, 4, 0, 6);
	srn_cc_post_event(e, &f4, 6);
	srn_cc_handle_expiry(e, 6);
	REQUIRE(srn_cc_cam_search(e, 4, &p) == 0);
	CHECK(!(used & (1u << p)));
	/* all four busy: flow 5 misses and waits for an idle processor */
	struct srn_cc_ev f5 = ev_of(SOFTRNIC_CC_EV_TX, 5, 0, 7);
	srn_cc_post_event(e, &f5, 7);
	srn_cc_handle_expiry(e, 7);
	CHECK(srn_cc_selector_stalled(e));
	CHECK_EQ(C(e, SRN_CC_CTR_CAM_STALLS), 1);
	CHECK_EQ(srn_cc_cam_search(e, 5, &p), SRN_ENOENT);
	srn_cc_handle_expiry(e, 999);
	CHECK(srn_cc_selector_stalled(e));
	srn_cc_handle_expiry(e, 1000);                 /* flows 1 and 3 finish at 1000 */
	CHECK(!srn_cc_selector_stalled(e));
	CHECK_EQ(srn_cc_cam_search(e, 5, &p), 0);
	CHECK_EQ(C(e, SRN_CC_CTR_CAM_MISSES), 5);
	srn_cc_engine_del(e);
}

/* CC-08 */
SRN_TEST(test_cc_08_arbiter_round_robin_fairness_and_hash)
{
	struct srn_cc_cfg c = base_cfg();
	c.n_procs = 4;
	c.ctx_cache_entries = 8;
	c.cycle_ns = 10;
	c.proc_ns = 5;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	R.n = 0;
	srn_ts t = 0;
	uint32_t slice_of[4];
	/* flows 100..103 each get their own slice: firmware holds a slice after
	 * its flow ran, so the next miss must pick another idle one */
	for (uint32_t fl = 0; fl < 4; fl++) {
		struct srn_cc_ev ev = ev_of(SOFTRNIC_CC_EV_TX, 100 + fl, 0, t);
		srn_cc_post_event(e, &ev, t);
		srn_cc_handle_expiry(e, t += 100);
		REQUIRE(srn_cc_cam_search(e, 100 + fl, &slice_of[fl]) == 0);
		CHECK_EQ(srn_cc_fw_override(e, slice_of[fl], t), 0);
	}
	for (uint32_t s = 0; s < 4; s++)
		CHECK_EQ(srn_cc_fw_release(e, s, t), 0);
	uint64_t grants[4] = { 0 };
	for (int round = 0; round < 50; round++) {
		/* firmware holds all four; events merge (MORE_WORK_B); release all
		 * at once: four slices compete in ARB */
		for (uint32_t s = 0; s < 4; s++)
			CHECK_EQ(srn_cc_fw_override(e, s, t), 0);
		for (uint32_t fl = 0; fl < 4; fl++) {
			struct srn_cc_ev ev = ev_of(SOFTRNIC_CC_EV_TX, 100 + fl, 1, t);
			srn_cc_post_event(e, &ev, t);
		}
		srn_cc_handle_expiry(e, t += 40);
		for (uint32_t s = 0; s < 4; s++) {
			CHECK_EQ(srn_cc_slice_state_of(e, s), SRN_CC_SLICE_MORE_WORK_B);
			CHECK_EQ(srn_cc_fw_release(e, s, t), 0);
		}
		uint64_t before[4];
		for (uint32_t s = 0; s < 4; s++) {
			struct srn_cc_proc_info pi;
			srn_cc_proc_info(e, s, &pi);
			before[s] = pi.runs;
		}
		/* one grant per cycle, each slice exactly once, cyclic order */
		uint32_t order[4], n = 0;
		for (int k = 0; k < 4; k++) {
			srn_cc_handle_expiry(e, t + (srn_ts)k * 10);
			for (uint32_t s = 0; s < 4; s++) {
				struct srn_cc_proc_info pi;
				srn_cc_proc_info(e, s, &pi);
				if (pi.runs != before[s] && n < 4) {
					order[n++] = s;
					before[s] = pi.runs;
					grants[s]++;
				}
			}
		}
		CHECK_EQ(n, 4);
		for (uint32_t k = 1; k < n; k++)
			CHECK_EQ(order[k], (order[k - 1] + 1) % 4);
		t += 100;
		srn_cc_handle_expiry(e, t);
		struct srn_cc_rate_update u;          /* the TX pipe drains the rate FIFO */
		while (srn_cc_pop_rate_update(e, &u) == 0)
			;
	}
	for (uint32_t s = 0; s < 4; s++)
		CHECK_EQ(grants[s], 50);
	/* the processor got its ID, the flow ID and the flow-ID hash */
	REQUIRE(R.n > 0);
	const struct softrnic_cc_event *last = &R.last[(R.n - 1) % 64];
	CHECK_EQ(last->flow_hash, srn_cc_flow_hash(last->flow_id));
	CHECK_EQ(slice_of[last->flow_id - 100], last->proc_id);
	CHECK(srn_cc_flow_hash(1) != srn_cc_flow_hash(2));
	srn_cc_engine_del(e);
	R.n = 0;
}

static void run_flow(struct srn_cc_engine *e, uint32_t flow, srn_ts *t)
{
	struct srn_cc_ev ev = ev_of(SOFTRNIC_CC_EV_TX, flow, 0, *t);
	srn_cc_post_event(e, &ev, *t);
	srn_cc_handle_expiry(e, *t);
	*t += 10000;
	srn_cc_handle_expiry(e, *t);
	struct srn_cc_rate_update u;
	while (srn_cc_pop_rate_update(e, &u) == 0)
		;
}

/* CC-09 */
SRN_TEST(test_cc_09_context_cache_eviction_and_reload)
{
	struct srn_cc_cfg c = base_cfg();
	c.n_procs = 1;
	c.ctx_cache_entries = 2;
	c.ctx_store_flows = 3;
	c.ctx_miss_ns = 500;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	srn_ts t = 0;
	struct srn_cc_flow_state fs;
	run_flow(e, 1, &t);                          /* A new */
	run_flow(e, 2, &t);                          /* B new */
	run_flow(e, 1, &t);                          /* A hit: calls = 2 */
	CHECK_EQ(C(e, SRN_CC_CTR_NEW_FLOWS), 2);
	CHECK_EQ(C(e, SRN_CC_CTR_CTX_HITS), 1);
	struct srn_cc_proc_info pi;
	srn_cc_proc_info(e, 0, &pi);
	CHECK_EQ(pi.done_at - pi.started, 1000);     /* hit: no miss penalty */
	run_flow(e, 3, &t);                          /* C new: evicts B (LRU) */
	srn_cc_proc_info(e, 0, &pi);
	CHECK_EQ(pi.done_at - pi.started, 1500);     /* miss penalty */
	CHECK_EQ(C(e, SRN_CC_CTR_CTX_EVICTIONS), 1);
	REQUIRE(srn_cc_flow_state(e, 2, &fs) == 0);
	CHECK(!fs.in_cache);
	REQUIRE(srn_cc_flow_state(e, 1, &fs) == 0);
	CHECK(fs.in_cache);
	run_flow(e, 2, &t);                          /* B reloaded from the store */
	CHECK_EQ(C(e, SRN_CC_CTR_CTX_RELOADS), 1);
	REQUIRE(srn_cc_flow_state(e, 2, &fs) == 0);
	CHECK(fs.in_cache);
	CHECK_EQ(SOFTRNIC_CC_CTX_PRIV(&fs.ctx, struct rec_ctx)->calls, 2);  /* context survived */
	CHECK_EQ(fs.rate_kbps, c.min_rate_kbps + 2000);
	run_flow(e, 4, &t);                          /* evicts A (LRU) → store: 3 flows */
	run_flow(e, 5, &t);                          /* evicts C? (store has A,B,C now) */
	CHECK_EQ(C(e, SRN_CC_CTR_CTX_EVICTIONS), 4);
	run_flow(e, 6, &t);                          /* evicts 4: store full, context lost */
	CHECK_EQ(C(e, SRN_CC_CTR_CTX_STORE_FULL), 1);
	CHECK_EQ(srn_cc_flow_state(e, 4, &fs), SRN_ENOENT);
	/* flow removal */
	CHECK_EQ(srn_cc_flow_del(e, 1), 0);
	CHECK_EQ(srn_cc_flow_state(e, 1, &fs), SRN_ENOENT);
	CHECK_EQ(srn_cc_flow_del(e, 1), SRN_ENOENT);
	REQUIRE(srn_cc_flow_state(e, 2, &fs) == 0);  /* still there after backward shift */
	REQUIRE(srn_cc_flow_state(e, 3, &fs) == 0);
	srn_cc_engine_del(e);
	R.n = 0;
}

/* CC-10 */
SRN_TEST(test_cc_10_rate_update_fifo_backpressure)
{
	struct srn_cc_cfg c = base_cfg();
	c.n_procs = 2;
	c.ctx_cache_entries = 2;
	c.rate_fifo_depth = 1;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	struct srn_cc_ev a = ev_of(SOFTRNIC_CC_EV_TX, 1, 0, 0), b = ev_of(SOFTRNIC_CC_EV_TX, 2, 0, 0);
	srn_cc_post_event(e, &a, 0);
	srn_cc_post_event(e, &b, 0);
	srn_cc_handle_expiry(e, 1000);
	CHECK_EQ(srn_cc_rate_fifo_depth(e), 1);
	CHECK_EQ(C(e, SRN_CC_CTR_RATE_FIFO_STALLS), 1);
	CHECK_EQ(srn_cc_expiry(e), SRN_TS_NEVER);   /* waits for the TX pipe */
	struct srn_cc_rate_update u;
	CHECK_EQ(srn_cc_pop_rate_update(e, &u), 0);
	CHECK(u.flow_id == 1 || u.flow_id == 2);
	CHECK_EQ(u.rate_kbps, c.min_rate_kbps + 1000);
	CHECK(u.rtt_request);                        /* new flow (CC-11) */
	CHECK_EQ(u.ts, 1000);
	uint32_t p;
	REQUIRE(srn_cc_cam_search(e, u.flow_id, &p) == 0);
	CHECK_EQ(u.proc_id, p);
	CHECK(srn_cc_expiry(e) <= 1000);
	srn_cc_handle_expiry(e, 1200);
	CHECK_EQ(srn_cc_pop_rate_update(e, &u), 0);
	CHECK_EQ(u.ts, 1000);        /* entered when the pop made room (engine time 1000) */
	CHECK_EQ(srn_cc_pop_rate_update(e, &u), SRN_EAGAIN);
	CHECK_EQ(srn_cc_fw_set_rate(e, 2, 12345, false, 1300), 0);   /* firmware-set rate */
	CHECK_EQ(srn_cc_pop_rate_update(e, &u), 0);
	CHECK_EQ(u.proc_id, UINT32_MAX);
	CHECK_EQ(u.rate_kbps, 12345);
	struct srn_cc_flow_state fs;
	REQUIRE(srn_cc_flow_state(e, 2, &fs) == 0);
	CHECK_EQ(fs.rate_kbps, 12345);
	srn_cc_engine_del(e);
	R.n = 0;
}

/* CC-11 */
SRN_TEST(test_cc_11_new_flow_default_rate_and_rtt_request)
{
	struct srn_cc_cfg c;
	srn_cc_cfg_default(&c);
	c.algo = &srn_cc_algo_timely;
	c.default_rate_kbps = 1 * SOFTRNIC_CC_KBPS_PER_GBPS;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	struct srn_cc_ev tx = ev_of(SOFTRNIC_CC_EV_TX, 42, 0, 0);
	srn_cc_post_event(e, &tx, 0);
	srn_cc_handle_expiry(e, 10000);
	struct srn_cc_rate_update u;
	REQUIRE(srn_cc_pop_rate_update(e, &u) == 0);
	CHECK_EQ(u.flow_id, 42);
	CHECK_EQ(u.rate_kbps, c.default_rate_kbps);
	CHECK(u.rtt_request);
	CHECK_EQ(C(e, SRN_CC_CTR_NEW_FLOWS), 1);
	/* the TX pipe sends the probe; the answer (network RTT 8 us) sets the rate */
	struct srn_cc_ev rtt = { .type = SOFTRNIC_CC_EV_RTT, .flow_id = 42, .ts = 20000,
				 .rtt_t1 = 10000, .rtt_t2 = 900000, .rtt_t3 = 902000 };
	srn_cc_post_event(e, &rtt, 20000);
	srn_cc_handle_expiry(e, 30000);
	REQUIRE(srn_cc_pop_rate_update(e, &u) == 0);
	CHECK_EQ(u.rate_kbps, c.line_rate_kbps);
	CHECK_EQ(srn_cc_pop_rate_update(e, &u), SRN_EAGAIN);
	srn_cc_engine_del(e);
}

/* CC-01 */
SRN_TEST(test_cc_01_alloc_failure_clean)
{
	struct srn_cc_cfg c = base_cfg();
	n_alloc = 0;
	fail_at = -1;
	struct srn_cc_engine *e;
	REQUIRE(srn_cc_engine_new(&e, &c, &mem) == 0);
	srn_cc_engine_del(e);
	int total = n_alloc;
	CHECK(total > 5);
	for (int i = 0; i < total; i++) {
		n_alloc = n_free = 0;
		fail_at = i;
		e = (struct srn_cc_engine *)&c;
		CHECK_EQ(srn_cc_engine_new(&e, &c, &mem), SRN_ENOMEM);
		CHECK(e == NULL);
		CHECK_EQ(n_free, n_alloc - 1);            /* every success freed */
	}
	fail_at = -1;
}

int main(void) { return srn_test_main(); }
