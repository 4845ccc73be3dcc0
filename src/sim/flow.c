/*
 * flow.c - a flow: an RC QP pair between two hosts; the sender posts RDMA
 * WRITEs of `msg` bytes back to back, keeping `depth` outstanding, from its
 * start time until `size` bytes are posted (or forever). Every WRITE is
 * signalled; its completion at the sender posts the next one.
 */
#include <string.h>

#include "sim_int.h"

double srn_sim_payload_efficiency(uint32_t mtu)
{
	/* IPv4 + UDP + BTH + ICRC around a full payload (RETH on the first
	 * packet of a message only) */
	return (double)mtu / (double)(mtu + SRN_SIM_HDR + SRN_BTH_LEN + SRN_ICRC_LEN);
}

static uint8_t mtu_enum(uint32_t mtu)
{
	uint8_t e = 1;
	while ((256u << (e - 1)) < mtu)
		e++;
	return e;
}

static int make_qp(struct srn_sim_host *hs, uint32_t sq, uint32_t rq, struct srn_qp **out)
{
	struct srn_qp_init init = {
		.type = SRN_QPT_RC, .pdn = hs->pd, .send_cq = hs->cq, .recv_cq = hs->rcq,
		.max_send_wr = sq, .max_recv_wr = rq, .max_send_sge = 1, .max_recv_sge = 1,
	};
	return srn_qp_new(hs->dev, &init, out);
}

static int to_rts(struct srn_sim *sim, struct srn_qp *qp, struct srn_sim_host *peer,
		  uint32_t peer_qpn, uint32_t my_psn, uint32_t peer_psn)
{
	const struct srn_sim_scen *sc = sim->sc;
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE;
	int rc = srn_qp_modify(qp, &at, SRN_QP_STATE | SRN_QP_PKEY_INDEX | SRN_QP_PORT |
			       SRN_QP_ACCESS_FLAGS, sim->now);
	if (rc)
		return rc;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_RTR;
	at.path_mtu = mtu_enum(sc->mtu);
	at.dest_qp_num = peer_qpn;
	at.rq_psn = peer_psn;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 1;
	memset(at.ah.dgid, 0, 16);
	at.ah.dgid[10] = at.ah.dgid[11] = 0xff;
	srn_put32(at.ah.dgid + 12, peer->ipv4);
	at.ah.hop_limit = 64;
	at.ah.port_num = 1;
	rc = srn_qp_modify(qp, &at, SRN_QP_STATE | SRN_QP_AV | SRN_QP_PATH_MTU | SRN_QP_DEST_QPN |
			   SRN_QP_RQ_PSN | SRN_QP_MAX_DEST_RD_ATOMIC | SRN_QP_MIN_RNR_TIMER, sim->now);
	if (rc)
		return rc;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_RTS;
	at.sq_psn = my_psn;
	at.timeout = sc->qp_timeout;
	at.retry_cnt = sc->qp_retry;
	at.rnr_retry = 7;
	at.max_rd_atomic = 1;
	return srn_qp_modify(qp, &at, SRN_QP_STATE | SRN_QP_SQ_PSN | SRN_QP_TIMEOUT |
			     SRN_QP_RETRY_CNT | SRN_QP_RNR_RETRY | SRN_QP_MAX_QP_RD_ATOMIC, sim->now);
}

int srn_sim_flow_connect(struct srn_sim *sim, uint32_t f, char *err, size_t errlen)
{
	struct srn_sim_flow *fl = &sim->flow[f];
	const struct srn_sim_flow_cfg *c = &sim->sc->flow[f];
	struct srn_sim_host *src = &sim->host[c->src], *dst = &sim->host[c->dst];
	fl->cfg = c;
	fl->wrs_total = c->size ? (c->size + c->msg - 1) / c->msg : 0;
	int rc = make_qp(src, c->depth, 1, &fl->sqp);
	if (!rc)
		rc = make_qp(dst, 1, 1, &fl->rqp);
	if (rc) {
		snprintf(err, errlen, "line %u: flow %u: srn_qp_new: %s", c->line, f, srn_strerror(rc));
		return rc;
	}
	/* random initial PSNs (from the seed): wraparound gets exercised too */
	uint32_t spsn = (uint32_t)srn_sim_rng_below(&sim->rng, 1u << 24);
	uint32_t rpsn = (uint32_t)srn_sim_rng_below(&sim->rng, 1u << 24);
	uint32_t sqpn = srn_qp_num(fl->sqp);
	fl->rqpn = srn_qp_num(fl->rqp);
	rc = to_rts(sim, fl->sqp, dst, fl->rqpn, spsn, rpsn);
	if (!rc)
		rc = to_rts(sim, fl->rqp, src, sqpn, rpsn, spsn);
	if (!rc)
		rc = srn_sim_host_register_qp(src, sqpn, f, false);
	if (!rc)
		rc = srn_sim_host_register_qp(dst, fl->rqpn, f, true);
	if (rc) {
		snprintf(err, errlen, "line %u: flow %u: connecting QPs: %s", c->line, f, srn_strerror(rc));
		return rc;
	}
	fl->rx_epsn = spsn;
	return 0;
}

/* bytes of WRITE number i */
static uint32_t wr_len(const struct srn_sim_flow *fl, uint64_t i)
{
	const struct srn_sim_flow_cfg *c = fl->cfg;
	if (c->size && i + 1 == fl->wrs_total)
		return (uint32_t)(c->size - i * c->msg);
	return c->msg;
}

void srn_sim_flow_post(struct srn_sim *sim, uint32_t f)
{
	struct srn_sim_flow *fl = &sim->flow[f];
	const struct srn_sim_flow_cfg *c = fl->cfg;
	struct srn_sim_host *src = &sim->host[c->src], *dst = &sim->host[c->dst];
	while (!fl->failed && fl->outstanding < c->depth &&
	       (!fl->wrs_total || fl->wrs_posted < fl->wrs_total)) {
		uint32_t len = wr_len(fl, fl->wrs_posted);
		struct srn_sge sge = { (uint64_t)(uintptr_t)src->src_buf, len, src->src_lkey };
		struct srn_send_wr wr;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = fl->wrs_posted;
		wr.opcode = SRN_WR_RDMA_WRITE;
		wr.send_flags = SRN_SEND_SIGNALED;
		wr.remote_addr = (uint64_t)(uintptr_t)dst->sink_buf;
		wr.rkey = dst->sink_rkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (srn_qp_post_send(fl->sqp, &wr, sim->now) != 0)
			break;
		fl->wrs_posted++;
		fl->posted_bytes += len;
		fl->outstanding++;
	}
}

void srn_sim_flow_start(struct srn_sim *sim, uint32_t f)
{
	struct srn_sim_flow *fl = &sim->flow[f];
	fl->started = true;
	srn_sim_flow_post(sim, f);
	srn_sim_host_after(sim, fl->cfg->src);
}

void srn_sim_flow_complete(struct srn_sim *sim, uint32_t f, const struct srn_cqe *cqe)
{
	struct srn_sim_flow *fl = &sim->flow[f];
	if (fl->outstanding)
		fl->outstanding--;
	if (cqe->status != SRN_WC_SUCCESS) {
		if (!fl->failed) {
			fl->failed = true;
			fl->fail_status = cqe->status;
			fl->end = sim->now;
		}
		return;
	}
	fl->acked_bytes += wr_len(fl, cqe->wr_id);
	fl->wrs_done++;
	if (fl->wrs_total && fl->wrs_done == fl->wrs_total) {
		fl->done = true;
		fl->end = sim->now;
		return;
	}
	srn_sim_flow_post(sim, f);
}
