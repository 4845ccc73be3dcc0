/*
 * rc.c - the Reliable Connected transport: one peer, every request
 * acknowledged (PSN-05..21), READ and atomics, retries with retry_cnt and
 * rnr_retry. The responder is resp.c's RC machine, the completer comp.c,
 * the requester req.c with the connected addressing of reqpkt.c.
 */
#include "core_int.h"

static void rc_recv_req(struct srn_qp *qp, const struct srn_pkt *p, const struct srn_pkt_meta *meta,
			size_t len, srn_ts now)
{
	(void)meta;
	(void)len;
	(void)now;
	srn_resp_rc(&qp->resp, p);
}

static void rc_recv_resp(struct srn_qp *qp, const struct srn_pkt *p, srn_ts now)
{
	if (p->info->mask & SRN_M_AETH)
		srn_cong_on_aeth(qp, p, now);   /* ACK/NAK event of the flow */
	srn_comp_recv(qp, p, now);
}

#define WR(op) (1u << (op))

const struct srn_transport_ops srn_rc_ops = {
	.name = "RC",
	.type = SRN_QPT_RC,
	.op_mask = SRN_M_RC,
	.wr_ops = WR(SRN_WR_SEND) | WR(SRN_WR_SEND_WITH_IMM) | WR(SRN_WR_SEND_WITH_INV) |
		  WR(SRN_WR_RDMA_WRITE) | WR(SRN_WR_RDMA_WRITE_WITH_IMM) |
		  WR(SRN_WR_BIND_MW) | WR(SRN_WR_LOCAL_INV) | WR(SRN_WR_RDMA_READ) |
		  WR(SRN_WR_ATOMIC_CMP_AND_SWP) | WR(SRN_WR_ATOMIC_FETCH_AND_ADD),
	.reliable = true,
	.connected = true,
	.srq_ok = true,
	.paced = true,
	.recv_req = rc_recv_req,
	.recv_resp = rc_recv_resp,
	.req_address = srn_reqpkt_address_connected,
	.emit = srn_xmit_qp,
	.has_output = srn_xmit_has_output,
};
