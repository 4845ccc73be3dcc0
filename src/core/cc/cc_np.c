/*
 * cc_np.c - the notification point (CC-13): a receiver that sees an ECN-CE
 * marked packet of a flow sends a CNP to the flow's sender, at most one per
 * flow per configured interval (DCQCN's N = 50 us; ConnectX
 * min_time_between_cnps). The transport keeps one srn_cc_np per flow.
 */
#include "srn_cc_pipe.h"

void srn_cc_np_init(struct srn_cc_np *np)
{
	*np = (struct srn_cc_np){ 0 };
}

bool srn_cc_np_on_ce(struct srn_cc_np *np, srn_ts now, srn_ts interval)
{
	np->ce_seen++;
	if (np->sent_any && now >= np->last_cnp && now - np->last_cnp < interval) {
		np->cnps_suppressed++;
		return false;
	}
	if (np->sent_any && now < np->last_cnp) {   /* time never runs back; be safe */
		np->cnps_suppressed++;
		return false;
	}
	np->sent_any = true;
	np->last_cnp = now;
	np->cnps_sent++;
	return true;
}
