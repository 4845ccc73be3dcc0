/*
 * test_cc_fsm.c - the slice state machine of source 004 fig. 9 (CC-06),
 * including firmware override/release, and coalescing into the FF array
 * (CC-07), through the pure transition table and through the engine.
 */
#include <stdlib.h>
#include "srn_test.h"
#include "core/cc/srn_cc.h"

static void *t_calloc(size_t n, size_t s, void *u) { (void)u; return calloc(n, s); }
static void t_free(void *p, void *u) { (void)u; free(p); }
static const struct srn_mem mem = { t_calloc, t_free, NULL };

static struct softrnic_cc_event last_ev;
static int calls;
static void rec_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
		      struct softrnic_cc_result *res)
{
	(void)ctx;
	last_ev = *ev;
	calls++;
	res->rate_kbps = ev->cur_rate_kbps;
}
static const struct softrnic_cc_algo rec_algo = {
	SOFTRNIC_CC_ABI_VERSION, 0, "recorder", NULL, rec_event, NULL,
};

#define NS SRN_CC_SLICE_NSTATES
static struct { int from, to, in; srn_ts t; } trace[256];
static int ntrace;
static void on_tr(void *u, uint32_t s, enum srn_cc_slice_state from, enum srn_cc_slice_state to,
		  enum srn_cc_slice_input in, srn_ts t)
{
	(void)u; (void)s;
	if (ntrace < 256)
		trace[ntrace++] = (__typeof__(trace[0])){ from, to, in, t };
}

static struct srn_cc_engine *mk(bool coalesce)
{
	struct srn_cc_cfg c;
	srn_cc_cfg_default(&c);
	c.algo = &rec_algo;
	c.n_procs = 1;
	c.ctx_cache_entries = 1;
	c.cycle_ns = 0;
	c.proc_ns = 1000;
	c.ctx_miss_ns = 0;
	c.coalesce = coalesce;
	c.on_transition = on_tr;
	struct srn_cc_engine *e = NULL;
	srn_cc_engine_new(&e, &c, &mem);
	ntrace = 0;
	return e;
}

static void post(struct srn_cc_engine *e, unsigned type, uint32_t sn, uint32_t bytes, srn_ts t)
{
	struct srn_cc_ev ev = { .type = (uint8_t)type, .flow_id = 7, .sn = sn, .bytes = bytes, .ts = t };
	srn_cc_post_event(e, &ev, t);
	srn_cc_handle_expiry(e, t);
}

static enum srn_cc_slice_state st(struct srn_cc_engine *e) { return srn_cc_slice_state_of(e, 0); }
static uint64_t tr(struct srn_cc_engine *e, int f, int t) { return srn_cc_transitions(e, 0, f, t); }

/* CC-06 */
SRN_TEST(test_cc_06_fsm_table_every_edge)
{
	enum { I = SRN_CC_SLICE_IDLE, A = SRN_CC_SLICE_ARB, B = SRN_CC_SLICE_BUSY,
	       MA = SRN_CC_SLICE_MORE_WORK_A, F = SRN_CC_SLICE_FW, MB = SRN_CC_SLICE_MORE_WORK_B, X = NS };
	/* rows: state; columns: event, grant, done, fw_override, fw_release */
	static const int want[NS][SRN_CC_IN_N] = {
		[I]  = { A,  X, X,  F, X },
		[A]  = { A,  B, X,  X, X },
		[B]  = { MA, X, I,  F, X },
		[MA] = { MA, X, A,  X, X },
		[F]  = { MB, X, F,  X, I },
		[MB] = { MB, X, MB, X, A },
	};
	for (int s = 0; s < NS; s++)
		for (int in = 0; in < SRN_CC_IN_N; in++)
			CHECK_EQ(srn_cc_slice_next((enum srn_cc_slice_state)s, (enum srn_cc_slice_input)in), want[s][in]);
	CHECK(strcmp(srn_cc_slice_state_names[SRN_CC_SLICE_MORE_WORK_A], "MORE_WORK_A") == 0);
	CHECK(strcmp(srn_cc_slice_state_names[SRN_CC_SLICE_MORE_WORK_B], "MORE_WORK_B") == 0);
	CHECK(strcmp(srn_cc_slice_input_names[SRN_CC_IN_FW_RELEASE], "fw_release") == 0);
	CHECK_EQ(srn_cc_slice_next(NS, SRN_CC_IN_EVENT), NS);
}

/* CC-06 */
SRN_TEST(test_cc_06_fsm_engine_normal_and_more_work_a)
{
	struct srn_cc_engine *e = mk(true);
	REQUIRE(e);
	CHECK_EQ(st(e), SRN_CC_SLICE_IDLE);
	post(e, SOFTRNIC_CC_EV_TX, 1, 100, 0);          /* IDLE→ARB→BUSY */
	CHECK_EQ(st(e), SRN_CC_SLICE_BUSY);
	CHECK_EQ(tr(e, SRN_CC_SLICE_IDLE, SRN_CC_SLICE_ARB), 1);
	CHECK_EQ(tr(e, SRN_CC_SLICE_ARB, SRN_CC_SLICE_BUSY), 1);
	post(e, SOFTRNIC_CC_EV_TX, 2, 100, 10);         /* BUSY→MORE_WORK_A */
	CHECK_EQ(st(e), SRN_CC_SLICE_MORE_WORK_A);
	post(e, SOFTRNIC_CC_EV_ACK, 3, 0, 20);          /* stays */
	CHECK_EQ(st(e), SRN_CC_SLICE_MORE_WORK_A);
	CHECK_EQ(tr(e, SRN_CC_SLICE_MORE_WORK_A, SRN_CC_SLICE_MORE_WORK_A), 1);
	srn_cc_handle_expiry(e, 1000);                  /* done: MORE_WORK_A→ARB→BUSY */
	CHECK_EQ(tr(e, SRN_CC_SLICE_MORE_WORK_A, SRN_CC_SLICE_ARB), 1);
	CHECK_EQ(tr(e, SRN_CC_SLICE_ARB, SRN_CC_SLICE_BUSY), 2);
	CHECK_EQ(st(e), SRN_CC_SLICE_BUSY);
	CHECK_EQ(calls, 3);                             /* 1 + two classes (TX, ACK) */
	srn_cc_handle_expiry(e, 2999);
	CHECK_EQ(st(e), SRN_CC_SLICE_BUSY);             /* two invocations: 2000 ns */
	srn_cc_handle_expiry(e, 3000);
	CHECK_EQ(st(e), SRN_CC_SLICE_IDLE);             /* BUSY→IDLE */
	CHECK_EQ(tr(e, SRN_CC_SLICE_BUSY, SRN_CC_SLICE_IDLE), 1);
	/* the trace hook saw every transition in order with its time */
	CHECK_EQ(ntrace, 7);
	CHECK_EQ(trace[0].from, SRN_CC_SLICE_IDLE);
	CHECK_EQ(trace[ntrace - 1].to, SRN_CC_SLICE_IDLE);
	CHECK_EQ(trace[ntrace - 1].t, 3000);
	CHECK_EQ(trace[ntrace - 1].in, SRN_CC_IN_DONE);
	srn_cc_engine_del(e);
	calls = 0;
}

/* CC-06 */
SRN_TEST(test_cc_06_fsm_firmware_override_release)
{
	struct srn_cc_engine *e = mk(true);
	REQUIRE(e);
	const uint64_t *ctr = srn_cc_counters(e);
	CHECK_EQ(srn_cc_fw_release(e, 0, 0), SRN_ESTATE);      /* not an edge from IDLE */
	CHECK_EQ(srn_cc_fw_override(e, 0, 0), 0);               /* IDLE→FW */
	CHECK_EQ(st(e), SRN_CC_SLICE_FW);
	CHECK_EQ(srn_cc_fw_override(e, 0, 0), SRN_ESTATE);
	CHECK_EQ(srn_cc_fw_release(e, 0, 10), 0);               /* FW→IDLE */
	CHECK_EQ(st(e), SRN_CC_SLICE_IDLE);
	CHECK_EQ(tr(e, SRN_CC_SLICE_IDLE, SRN_CC_SLICE_FW), 1);
	CHECK_EQ(tr(e, SRN_CC_SLICE_FW, SRN_CC_SLICE_IDLE), 1);

	post(e, SOFTRNIC_CC_EV_TX, 1, 100, 100);               /* BUSY, done at 1100 */
	CHECK_EQ(st(e), SRN_CC_SLICE_BUSY);
	CHECK_EQ(srn_cc_fw_override(e, 0, 200), 0);             /* BUSY→FW */
	CHECK_EQ(st(e), SRN_CC_SLICE_FW);
	post(e, SOFTRNIC_CC_EV_CNP, 2, 0, 300);                 /* FW→MORE_WORK_B */
	CHECK_EQ(st(e), SRN_CC_SLICE_MORE_WORK_B);
	post(e, SOFTRNIC_CC_EV_CNP, 3, 0, 400);                 /* stays */
	CHECK_EQ(tr(e, SRN_CC_SLICE_MORE_WORK_B, SRN_CC_SLICE_MORE_WORK_B), 1);
	srn_cc_handle_expiry(e, 1100);                          /* processor done: ignored */
	CHECK_EQ(st(e), SRN_CC_SLICE_MORE_WORK_B);
	CHECK_EQ(ctr[SRN_CC_CTR_DONE_IGNORED], 1);
	CHECK_EQ(srn_cc_fw_override(e, 0, 1150), SRN_ESTATE);
	CHECK_EQ(srn_cc_fw_release(e, 0, 1200), 0);             /* MORE_WORK_B→ARB */
	CHECK_EQ(tr(e, SRN_CC_SLICE_MORE_WORK_B, SRN_CC_SLICE_ARB), 1);
	CHECK_EQ(st(e), SRN_CC_SLICE_ARB);
	srn_cc_handle_expiry(e, 1200);                          /* ARB→BUSY: merged CNPs */
	CHECK_EQ(st(e), SRN_CC_SLICE_BUSY);
	CHECK_EQ(last_ev.count, 2);
	CHECK_EQ(last_ev.sn_first, 2);
	CHECK_EQ(last_ev.sn_last, 3);
	srn_cc_handle_expiry(e, 2200);
	CHECK_EQ(st(e), SRN_CC_SLICE_IDLE);

	/* release while the processor still runs: IDLE, then an event waits in
	 * ARB until the processor is free */
	post(e, SOFTRNIC_CC_EV_TX, 4, 100, 3000);               /* BUSY until 4000 */
	CHECK_EQ(srn_cc_fw_override(e, 0, 3100), 0);
	CHECK_EQ(srn_cc_fw_release(e, 0, 3200), 0);
	CHECK_EQ(st(e), SRN_CC_SLICE_IDLE);
	post(e, SOFTRNIC_CC_EV_TX, 5, 100, 3300);
	CHECK_EQ(st(e), SRN_CC_SLICE_ARB);                      /* processor busy */
	srn_cc_handle_expiry(e, 3999);
	CHECK_EQ(st(e), SRN_CC_SLICE_ARB);
	srn_cc_handle_expiry(e, 4000);                          /* done (ignored), then grant */
	CHECK_EQ(st(e), SRN_CC_SLICE_BUSY);
	CHECK_EQ(ctr[SRN_CC_CTR_DONE_IGNORED], 2);
	CHECK_EQ(ctr[SRN_CC_CTR_FW_OVERRIDES], 3);
	CHECK_EQ(ctr[SRN_CC_CTR_FW_RELEASES], 3);
	CHECK_EQ(ctr[SRN_CC_CTR_BAD_SIGNALS], 3);
	/* override in ARB/MORE_WORK_A is not in fig. 9 */
	post(e, SOFTRNIC_CC_EV_TX, 6, 100, 4100);
	CHECK_EQ(st(e), SRN_CC_SLICE_MORE_WORK_A);
	CHECK_EQ(srn_cc_fw_override(e, 0, 4100), SRN_ESTATE);
	srn_cc_engine_del(e);
	calls = 0;
}

/* CC-07 */
SRN_TEST(test_cc_07_coalesced_fields)
{
	struct srn_cc_engine *e = mk(true);
	REQUIRE(e);
	post(e, SOFTRNIC_CC_EV_TX, 9, 50, 0);                  /* busy until 1000 */
	post(e, SOFTRNIC_CC_EV_TX, 10, 100, 5);
	post(e, SOFTRNIC_CC_EV_RTT_SENT, 11, 200, 6);          /* same class as TX */
	post(e, SOFTRNIC_CC_EV_TX, 12, 300, 7);
	struct srn_cc_ev rtt1 = { .type = SOFTRNIC_CC_EV_RTT, .flow_id = 7, .sn = 1, .ts = 8,
				  .rtt_t1 = 1, .rtt_t2 = 2, .rtt_t3 = 3 };
	struct srn_cc_ev rtt2 = { .type = SOFTRNIC_CC_EV_RTT, .flow_id = 7, .sn = 2, .ts = 9,
				  .rtt_t1 = 4, .rtt_t2 = 5, .rtt_t3 = 6 };
	srn_cc_post_event(e, &rtt1, 8);
	srn_cc_post_event(e, &rtt2, 9);
	srn_cc_handle_expiry(e, 9);
	struct srn_cc_ff_entry f;
	srn_cc_ff_read(e, 0, 0, &f);
	CHECK_EQ(f.count, 3);
	CHECK_EQ(f.bytes, 600);
	CHECK_EQ(f.sn_first, 10);
	CHECK_EQ(f.sn_last, 12);
	CHECK_EQ(f.ts_first, 5);
	CHECK_EQ(f.ts_last, 7);
	CHECK_EQ(f.type_mask, (1u << SOFTRNIC_CC_EV_TX) | (1u << SOFTRNIC_CC_EV_RTT_SENT));
	srn_cc_ff_read(e, 0, 4, &f);                           /* RTT class: newest stamps */
	CHECK_EQ(f.count, 2);
	CHECK_EQ(f.rtt_t1, 4);
	CHECK_EQ(f.rtt_t3, 6);
	CHECK_EQ(f.rtt_t4, 9);
	CHECK_EQ(f.sn_first, 1);
	CHECK_EQ(srn_cc_counters(e)[SRN_CC_CTR_COALESCED], 3);
	calls = 0;
	srn_cc_handle_expiry(e, 1000);                         /* the processor gets them */
	CHECK_EQ(calls, 2);
	CHECK_EQ(last_ev.class_id, 4);
	CHECK_EQ(last_ev.count, 2);
	CHECK_EQ(last_ev.rtt_t2, 5);
	srn_cc_ff_read(e, 0, 0, &f);
	CHECK_EQ(f.count, 0);                                  /* the FF entry is free again */
	srn_cc_engine_del(e);

	/* without coalescing an entry holds one event; the next waits */
	e = mk(false);
	REQUIRE(e);
	post(e, SOFTRNIC_CC_EV_TX, 1, 10, 0);
	post(e, SOFTRNIC_CC_EV_TX, 2, 10, 1);                  /* fills the entry: MORE_WORK_A */
	post(e, SOFTRNIC_CC_EV_TX, 3, 10, 2);                  /* waits at the selector */
	CHECK(srn_cc_selector_stalled(e));
	CHECK_EQ(srn_cc_counters(e)[SRN_CC_CTR_COALESCE_STALLS], 1);
	srn_cc_ff_read(e, 0, 0, &f);
	CHECK_EQ(f.count, 1);
	srn_cc_handle_expiry(e, 1000);                         /* grant frees the entry */
	CHECK(!srn_cc_selector_stalled(e));
	srn_cc_ff_read(e, 0, 0, &f);
	CHECK_EQ(f.count, 1);
	CHECK_EQ(f.sn_first, 3);
	srn_cc_engine_del(e);
	calls = 0;
}

int main(void) { return srn_test_main(); }
