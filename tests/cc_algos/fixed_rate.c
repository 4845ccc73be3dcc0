/*
 * fixed_rate.c - a user congestion-control algorithm written only against
 * <softrnic/cc_algo.h> (CC-14): every flow runs at 2 Gbit/s and never
 * changes. Its effect is easy to see on a running device: `softrnic stats`
 * shows cc_rate_kbps_last 2000000 and a bandwidth test runs at ~2 Gbit/s.
 * Built, signed and loaded by tests/integration/test_cc_load.sh.
 */
#include <softrnic/cc_algo.h>

#define FIXED_KBPS (2u * SOFTRNIC_CC_KBPS_PER_GBPS)

struct fixed_ctx {
	uint64_t events;      /* events seen (the context is per flow) */
};
SOFTRNIC_CC_CTX_CHECK(struct fixed_ctx);

static void fixed_init(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_flow_info *fi,
		       struct softrnic_cc_result *res)
{
	(void)fi;
	SOFTRNIC_CC_CTX_PRIV(ctx, struct fixed_ctx)->events = 0;
	res->rate_kbps = FIXED_KBPS;
}

static void fixed_event(struct softrnic_cc_ctx *ctx, const struct softrnic_cc_event *ev,
			struct softrnic_cc_result *res)
{
	SOFTRNIC_CC_CTX_PRIV(ctx, struct fixed_ctx)->events += ev->count;
	res->rate_kbps = FIXED_KBPS;
}

const struct softrnic_cc_algo softrnic_cc_algo = {
	SOFTRNIC_CC_ABI_VERSION, sizeof(struct fixed_ctx), "fixed-2g", fixed_init, fixed_event, 0,
};
