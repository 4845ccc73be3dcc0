/*
 * cc_probe.c - RTT probe contents and arithmetic (source 004 fig. 4, CC-12).
 * The sender stamps T1; the receiving NIC stamps T2 when the probe arrives
 * and T3 when it sends it back, at once, without queueing behind data; the
 * sender receives the answer at T4 and splits the round trip into forward,
 * responder and return delay.
 */
#include "srn_cc_pipe.h"

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static size_t build(uint8_t *buf, size_t cap, const struct srn_cc_probe *pr)
{
	if (cap < SRN_CC_PROBE_LEN)
		return 0;
	buf[0] = SRN_CC_PROBE_VERSION;
	buf[1] = pr->kind;
	put16(buf + 2, 0);
	put32(buf + 4, pr->flow_id);
	put32(buf + 8, pr->seq);
	put64(buf + 12, pr->t1);
	put64(buf + 20, pr->t2);
	put64(buf + 28, pr->t3);
	return SRN_CC_PROBE_LEN;
}

size_t srn_cc_probe_build_req(uint8_t *buf, size_t cap, uint32_t flow_id, uint32_t seq, srn_ts t1)
{
	struct srn_cc_probe pr = { .kind = SRN_CC_PROBE_REQ, .flow_id = flow_id, .seq = seq, .t1 = t1 };
	return build(buf, cap, &pr);
}

int srn_cc_probe_parse(const uint8_t *buf, size_t len, struct srn_cc_probe *out)
{
	if (!buf || len < SRN_CC_PROBE_LEN || buf[0] != SRN_CC_PROBE_VERSION ||
	    buf[1] > SRN_CC_PROBE_RESP)
		return SRN_EINVAL;
	out->kind = buf[1];
	out->flow_id = get32(buf + 4);
	out->seq = get32(buf + 8);
	out->t1 = get64(buf + 12);
	out->t2 = get64(buf + 20);
	out->t3 = get64(buf + 28);
	return 0;
}

size_t srn_cc_probe_answer(const uint8_t *req, size_t len, srn_ts t2, srn_ts t3,
			   uint8_t *out, size_t cap)
{
	struct srn_cc_probe pr;
	if (srn_cc_probe_parse(req, len, &pr) || pr.kind != SRN_CC_PROBE_REQ || t3 < t2)
		return 0;
	pr.kind = SRN_CC_PROBE_RESP;
	pr.t2 = t2;
	pr.t3 = t3;
	return build(out, cap, &pr);
}

int srn_cc_probe_delays(const struct srn_cc_probe *r, srn_ts t4, struct srn_cc_rtt_sample *out)
{
	if (r->t3 < r->t2 || t4 < r->t1)
		return SRN_EINVAL;
	uint64_t total = t4 - r->t1, resp = r->t3 - r->t2;
	if (resp > total)
		return SRN_EINVAL;
	out->forward_ns = (int64_t)(r->t2 - r->t1);   /* two's complement: may be negative */
	out->responder_ns = resp;
	out->return_ns = (int64_t)(t4 - r->t3);
	out->rtt_ns = total - resp;
	return 0;
}

void srn_cc_probe_event(const struct srn_cc_probe *r, srn_ts t4, struct srn_cc_ev *ev)
{
	*ev = (struct srn_cc_ev){ .type = SOFTRNIC_CC_EV_RTT, .flow_id = r->flow_id, .sn = r->seq,
				  .ts = t4, .rtt_t1 = r->t1, .rtt_t2 = r->t2, .rtt_t3 = r->t3 };
}
