/*
 * cc_ff.c - the coalescing unit (source 004 fig. 8, 806) writing the FF
 * array (808): one entry per (processor, class) accumulating every event of
 * that class for the processor's flow until the processor takes it (CC-07).
 */
#include "cc_int.h"

void srn_cc_ff_merge(struct srn_cc_ff_entry *e, const struct srn_cc_ev *ev)
{
	if (e->count == 0) {
		e->sn_first = ev->sn;
		e->ts_first = ev->ts;
	}
	e->count++;
	e->type_mask |= (uint16_t)(1u << ev->type);
	e->last_type = ev->type;
	e->sn_last = ev->sn;
	e->ts_last = ev->ts;
	if (srn_cc_ev_is_tx(ev->type))
		e->bytes += ev->bytes;
	if (ev->type == SOFTRNIC_CC_EV_RTT) {
		/* the newest probe answer is the one worth acting on */
		e->rtt_t1 = ev->rtt_t1;
		e->rtt_t2 = ev->rtt_t2;
		e->rtt_t3 = ev->rtt_t3;
		e->rtt_t4 = ev->ts;
	}
	if (ev->type == SOFTRNIC_CC_EV_FW)
		e->fw_data = ev->fw_data;
}
