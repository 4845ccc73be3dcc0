/*
 * cc_pacer.c - the TX pipe's per-flow pacer (CC-10): a token bucket in
 * bytes, refilled at the rate the rate-update FIFO last delivered.
 */
#include "srn_cc_pipe.h"

static int64_t cap_units(const struct srn_cc_pacer *p)
{
	return (int64_t)p->burst_bytes * SRN_CC_PACER_UNIT;
}

/* tokens the bucket holds at `now` (>= p->last) */
static int64_t tokens_at(const struct srn_cc_pacer *p, srn_ts now)
{
	int64_t cap = cap_units(p);
	if (p->tokens >= cap || now <= p->last)
		return p->tokens > cap ? cap : p->tokens;
	if (p->rate_kbps == 0)
		return p->tokens;
	uint64_t need = (uint64_t)(cap - p->tokens);
	uint64_t dt = now - p->last;
	if (dt >= need / p->rate_kbps + 1)
		return cap;
	int64_t t = p->tokens + (int64_t)(dt * p->rate_kbps);
	return t > cap ? cap : t;
}

void srn_cc_pacer_init(struct srn_cc_pacer *p, uint32_t rate_kbps, uint32_t burst_bytes, srn_ts now)
{
	p->rate_kbps = rate_kbps;
	p->burst_bytes = burst_bytes ? burst_bytes : 1;
	p->tokens = cap_units(p);
	p->last = now;
}

void srn_cc_pacer_set_rate(struct srn_cc_pacer *p, uint32_t rate_kbps, srn_ts now)
{
	if (now > p->last) {
		p->tokens = tokens_at(p, now);
		p->last = now;
	}
	p->rate_kbps = rate_kbps;
}

srn_ts srn_cc_pacer_next_send_time(const struct srn_cc_pacer *p, uint32_t bytes, srn_ts now)
{
	if (now < p->last)
		now = p->last;
	int64_t have = tokens_at(p, now);
	uint32_t want = bytes < p->burst_bytes ? bytes : p->burst_bytes;
	int64_t need = (int64_t)want * SRN_CC_PACER_UNIT;
	if (have >= need)
		return now;
	if (p->rate_kbps == 0)
		return SRN_TS_NEVER;
	uint64_t missing = (uint64_t)(need - have);
	return now + (missing + p->rate_kbps - 1) / p->rate_kbps;
}

void srn_cc_pacer_on_send(struct srn_cc_pacer *p, uint32_t bytes, srn_ts now)
{
	if (now > p->last) {
		p->tokens = tokens_at(p, now);
		p->last = now;
	}
	p->tokens -= (int64_t)bytes * SRN_CC_PACER_UNIT;
}
