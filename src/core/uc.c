/*
 * uc.c - the Unreliable Connected transport: one peer, SEND and WRITE,
 * no acknowledgements; a lost packet loses its message (PSN-13, resp.c's
 * UC machine). A WQE completes once its last packet is on the wire.
 */
#include "core_int.h"

static void uc_recv_req(struct srn_qp *qp, const struct srn_pkt *p, const struct srn_pkt_meta *meta,
			size_t len, srn_ts now)
{
	(void)meta;
	(void)len;
	(void)now;
	srn_resp_uc(&qp->resp, p);
}

#define WR(op) (1u << (op))

const struct srn_transport_ops srn_uc_ops = {
	.name = "UC",
	.type = SRN_QPT_UC,
	.op_mask = SRN_M_UC,
	.wr_ops = WR(SRN_WR_SEND) | WR(SRN_WR_SEND_WITH_IMM) | WR(SRN_WR_RDMA_WRITE) |
		  WR(SRN_WR_RDMA_WRITE_WITH_IMM) |
		  WR(SRN_WR_BIND_MW) | WR(SRN_WR_LOCAL_INV),
	.reliable = false,
	.connected = true,
	.srq_ok = false,
	.paced = true,
	.recv_req = uc_recv_req,
	.recv_resp = NULL,
	.req_address = srn_reqpkt_address_connected,
	.emit = srn_xmit_qp,
	.has_output = srn_xmit_has_output,
};
