/* psn_harness.c - see psn_harness.h */
#include "psn_harness.h"
#include "core/core_int.h"   /* white-box reads of ePSN / cursor / MSN only */
#include "srn_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *ph_calloc(size_t n, size_t sz, void *user) { (void)user; return calloc(n, sz); }
static void ph_freefn(void *p, void *user) { (void)user; free(p); }

static void gid_of(uint8_t gid[16], const uint8_t ip[4])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

static int to_rts(struct ph *h)
{
	const struct ph_opts *o = &h->o;
	struct srn_qp_attr at;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = o->access;
	at.qkey = 0x11111111;
	uint32_t mask = SRN_QP_STATE | SRN_QP_PKEY_INDEX | SRN_QP_PORT |
			(o->type == SRN_QPT_UD ? SRN_QP_QKEY : SRN_QP_ACCESS_FLAGS);
	int rc = srn_qp_modify(h->qp, &at, mask, h->now);
	if (rc)
		return rc;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_RTR;
	mask = SRN_QP_STATE;
	if (o->type != SRN_QPT_UD) {
		at.path_mtu = o->path_mtu;
		at.dest_qp_num = PH_PEER_QPN;
		at.rq_psn = o->rq_psn;
		at.max_dest_rd_atomic = o->max_dest_rd_atomic;
		at.min_rnr_timer = o->min_rnr_timer;
		gid_of(at.ah.dgid, h->peer_ip);
		at.ah.hop_limit = 64;
		at.ah.port_num = 1;
		mask |= SRN_QP_AV | SRN_QP_PATH_MTU | SRN_QP_DEST_QPN | SRN_QP_RQ_PSN;
		if (o->type == SRN_QPT_RC)
			mask |= SRN_QP_MAX_DEST_RD_ATOMIC | SRN_QP_MIN_RNR_TIMER;
	}
	rc = srn_qp_modify(h->qp, &at, mask, h->now);
	if (rc)
		return rc;
	memset(&at, 0, sizeof(at));
	at.qp_state = SRN_QPS_RTS;
	at.sq_psn = o->sq_psn;
	at.timeout = o->timeout;
	at.retry_cnt = o->retry_cnt;
	at.rnr_retry = o->rnr_retry;
	at.max_rd_atomic = o->max_rd_atomic;
	mask = SRN_QP_STATE | SRN_QP_SQ_PSN;
	if (o->type == SRN_QPT_RC)
		mask |= SRN_QP_TIMEOUT | SRN_QP_RETRY_CNT | SRN_QP_RNR_RETRY | SRN_QP_MAX_QP_RD_ATOMIC;
	return srn_qp_modify(h->qp, &at, mask, h->now);
}

struct ph *ph_new(const struct ph_opts *oin)
{
	struct ph *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->out = calloc(PH_OUTCAP, sizeof(*h->out));
	if (!h->out) {
		free(h);
		return NULL;
	}
	struct ph_opts o;
	memset(&o, 0, sizeof(o));
	if (oin)
		o = *oin;
	if (!o.type)
		o.type = SRN_QPT_RC;
	if (!o.path_mtu)
		o.path_mtu = 1;
	if (o.no_timeout)
		o.timeout = 0;
	else if (!o.timeout)
		o.timeout = 14;
	if (!o.retry_set) {
		o.retry_cnt = 7;
		o.rnr_retry = 7;
	}
	if (!o.max_rd_atomic)
		o.max_rd_atomic = 4;
	if (!o.max_dest_rd_atomic)
		o.max_dest_rd_atomic = 4;
	if (!o.access)
		o.access = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ |
			   SRN_ACCESS_REMOTE_ATOMIC;
	if (!o.max_send_wr)
		o.max_send_wr = 256;
	if (!o.max_recv_wr)
		o.max_recv_wr = 256;
	if (!o.cq_size)
		o.cq_size = 4096;
	h->o = o;
	h->now = 1000000;   /* 1 ms, not 0 */
	const uint8_t me[4] = { 10, 0, 0, 1 }, peer[4] = { 10, 0, 0, 2 };
	memcpy(h->my_ip, me, 4);
	memcpy(h->peer_ip, peer, 4);
	h->peer_sport = 49200;

	struct srn_dev_cfg *c = &h->cfg;
	srn_dev_cfg_default(c);
	gid_of(c->gid, h->my_ip);
	c->max_qp = 16;
	c->max_mr = 64;
	c->qpn_seed = 0x20;
	c->qpn_timewait = 1000000000ull;
	c->max_rd_atomic = o.dev_max_rd_atomic ? o.dev_max_rd_atomic : 16;
	if (o.max_inflight_pkts)
		c->max_inflight_pkts = o.max_inflight_pkts;
	if (o.ack_coalesce)
		c->ack_coalesce = o.ack_coalesce;
	c->ack_delay_ns = o.ack_delay_ns;
	c->mem.calloc = ph_calloc;
	c->mem.free = ph_freefn;
	if (srn_dev_new(&h->dev, c) != 0)
		goto fail;
	h->pd = srn_pd_alloc(h->dev);
	if (srn_cq_new(h->dev, o.cq_size, NULL, &h->scq) || srn_cq_new(h->dev, o.cq_size, NULL, &h->rcq))
		goto fail;
	struct srn_qp_init init = {
		.type = o.type, .pdn = h->pd, .send_cq = h->scq, .recv_cq = h->rcq,
		.max_send_wr = o.max_send_wr, .max_recv_wr = o.max_recv_wr,
		.max_send_sge = 4, .max_recv_sge = 4, .max_inline_data = 64, .sq_sig_all = o.sq_sig_all,
	};
	if (srn_qp_new(h->dev, &init, &h->qp))
		goto fail;
	h->qpn = srn_qp_num(h->qp);
	if (to_rts(h))
		goto fail;
	return h;
fail:
	ph_free(h);
	return NULL;
}

void ph_free(struct ph *h)
{
	if (!h)
		return;
	if (h->dev)
		srn_dev_del(h->dev);
	free(h->out);
	free(h);
}

uint32_t ph_rq(const struct ph *h, int32_t off) { return (h->o.rq_psn + (uint32_t)off) & SRN_PSN_MASK; }
uint32_t ph_sq(const struct ph *h, int32_t off) { return (h->o.sq_psn + (uint32_t)off) & SRN_PSN_MASK; }
uint32_t ph_epsn(const struct ph *h) { return h->qp->resp.epsn; }
uint32_t ph_sq_next(const struct ph *h) { return h->qp->req.psn; }
uint32_t ph_msn(const struct ph *h) { return h->qp->resp.msn; }
uint32_t ph_comp_psn(const struct ph *h) { return h->qp->req.comp.psn; }
uint32_t ph_max_psn(const struct ph *h) { return h->qp->req.max_psn; }
uint32_t ph_credits(const struct ph *h) { return h->qp->req.comp.credits; }
uint32_t ph_comp_msn(const struct ph *h) { return h->qp->req.comp.msn; }

int ph_inject_ecn(struct ph *h, const struct srn_tenc_pkt *pin, uint8_t ecn)
{
	static uint8_t buf[SRN_MAX_PKT + 64];
	struct srn_tenc_pkt p = *pin;
	if (!p.dqpn)
		p.dqpn = h->qpn;
	size_t n = srn_tenc_build(buf, sizeof(buf), &p, h->peer_ip, h->my_ip, h->peer_sport, 4791, 0);
	if (n == 0) {
		fprintf(stderr, "  psn_harness: srn_tenc_build failed (opcode 0x%02x)\n", p.opcode);
		srn_test_failed_checks++;
		return SRN_EINVAL;
	}
	struct srn_pkt_meta m;
	memset(&m, 0, sizeof(m));
	gid_of(m.src_gid, h->peer_ip);
	gid_of(m.dst_gid, h->my_ip);
	m.l4.src = h->peer_sport;
	m.l4.dst = 4791;
	m.ecn = ecn;
	m.ttl = 64;
	return srn_dev_recv(h->dev, buf, n, &m, h->now);
}

int ph_inject(struct ph *h, const struct srn_tenc_pkt *p) { return ph_inject_ecn(h, p, 2); }

int ph_send(struct ph *h, uint8_t opcode, uint32_t psn, const void *data, uint32_t len, bool ackreq)
{
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, opcode);
	p.psn = psn;
	p.ackreq = ackreq;
	p.payload = data;
	p.paylen = len;
	return ph_inject(h, &p);
}

int ph_write(struct ph *h, uint8_t opcode, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t dmalen,
	     const void *data, uint32_t len, bool ackreq)
{
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, opcode);
	p.psn = psn;
	p.ackreq = ackreq;
	p.va = va;
	p.rkey = rkey;
	p.dmalen = dmalen;
	p.payload = data;
	p.paylen = len;
	return ph_inject(h, &p);
}

int ph_read(struct ph *h, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, SRN_OP_RC_READ_REQUEST);
	p.psn = psn;
	p.ackreq = true;
	p.va = va;
	p.rkey = rkey;
	p.dmalen = len;
	return ph_inject(h, &p);
}

int ph_atomic(struct ph *h, uint8_t opcode, uint32_t psn, uint64_t va, uint32_t rkey,
	      uint64_t swap_add, uint64_t cmp)
{
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, opcode);
	p.psn = psn;
	p.ackreq = true;
	p.va = va;
	p.rkey = rkey;
	p.swap_add = swap_add;
	p.cmp = cmp;
	return ph_inject(h, &p);
}

int ph_ack(struct ph *h, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, SRN_OP_RC_ACKNOWLEDGE);
	p.psn = psn;
	p.syndrome = syndrome;
	p.msn = msn;
	return ph_inject(h, &p);
}

int ph_read_resp(struct ph *h, uint8_t opcode, uint32_t psn, uint32_t msn, const void *data, uint32_t len)
{
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, opcode);
	p.psn = psn;
	p.syndrome = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
	p.msn = msn;
	p.payload = data;
	p.paylen = len;
	return ph_inject(h, &p);
}

int ph_atomic_ack(struct ph *h, uint32_t psn, uint32_t msn, uint64_t orig)
{
	struct srn_tenc_pkt p;
	srn_tenc_init(&p, SRN_OP_RC_ATOMIC_ACKNOWLEDGE);
	p.psn = psn;
	p.syndrome = SRN_AETH_SYN(SRN_AETH_ACK, SRN_AETH_CREDITS_INVALID);
	p.msn = msn;
	p.orig = orig;
	return ph_inject(h, &p);
}

void ph_set_time(struct ph *h, srn_ts t)
{
	h->now = t;
	if (srn_dev_expiry(h->dev) <= h->now)
		srn_dev_handle_expiry(h->dev, h->now);
}

void ph_advance(struct ph *h, srn_ts ns) { ph_set_time(h, h->now + ns); }
srn_ts ph_expiry(const struct ph *h) { return srn_dev_expiry(h->dev); }

uint32_t ph_collect(struct ph *h) { return ph_collect_n(h, UINT32_MAX); }

uint32_t ph_collect_n(struct ph *h, uint32_t max)
{
	uint32_t got = 0;
	while (got < max) {
		if (h->out_n == PH_OUTCAP)
			break;   /* the test reads before more is produced */
		struct ph_pkt *k = &h->out[(h->out_head + h->out_n) % PH_OUTCAP];
		ssize_t n = srn_dev_send(h->dev, k->data, sizeof(k->data), &k->meta, h->now);
		if (n <= 0)
			break;
		k->len = (size_t)n;
		uint8_t src[4], dst[4];
		memcpy(src, k->meta.src_gid + 12, 4);
		memcpy(dst, k->meta.dst_gid + 12, 4);
		if (memcmp(src, h->my_ip, 4) != 0 || memcmp(dst, h->peer_ip, 4) != 0 || k->meta.l4.dst != 4791) {
			fprintf(stderr, "  psn_harness: emitted packet has wrong addresses/port\n");
			srn_test_failed_checks++;
		}
		if (!srn_tenc_icrc_ok(k->data, k->len, src, dst, k->meta.l4.src, k->meta.l4.dst, 0)) {
			fprintf(stderr, "  psn_harness: emitted packet has a bad ICRC\n");
			srn_test_failed_checks++;
		}
		if (srn_tenc_parse(k->data, k->len, &k->p) < 0) {
			fprintf(stderr, "  psn_harness: emitted packet does not decode (opcode 0x%02x)\n", k->data[0]);
			srn_test_failed_checks++;
		}
		h->out_n++;
		h->emitted++;
		got++;
	}
	return got;
}

uint32_t ph_pending(struct ph *h)
{
	ph_collect(h);
	return h->out_n;
}

const struct ph_pkt *ph_next(struct ph *h)
{
	ph_collect(h);
	if (!h->out_n)
		return NULL;
	h->last = h->out[h->out_head];
	/* keep payload pointing into our own copy */
	if (h->last.p.payload)
		h->last.p.payload = h->last.data + ((const uint8_t *)h->out[h->out_head].p.payload -
						    h->out[h->out_head].data);
	h->out_head = (h->out_head + 1) % PH_OUTCAP;
	h->out_n--;
	return &h->last;
}

void ph_discard(struct ph *h)
{
	while (ph_next(h))
		;
}

struct srn_mr *ph_reg(struct ph *h, void *buf, size_t len, uint32_t access, uint32_t *key)
{
	struct srn_mr *mr = NULL;
	if (srn_mr_reg(h->dev, h->pd, buf, (uint64_t)(uintptr_t)buf, len, access, &mr))
		return NULL;
	struct srn_mr_info mi;
	srn_mr_info(mr, &mi);
	if (key)
		*key = mi.rkey;
	return mr;
}

int ph_post(struct ph *h, uint8_t opcode, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey,
	    uint64_t raddr, uint32_t rkey, uint32_t flags)
{
	struct srn_sge sge = { (uint64_t)(uintptr_t)buf, len, lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = flags;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	wr.sg_list = &sge;
	wr.num_sge = buf ? 1 : 0;
	return srn_qp_post_send(h->qp, &wr, h->now);
}

int ph_post_atomic(struct ph *h, uint8_t opcode, uint64_t wr_id, uint64_t *res, uint32_t lkey,
		   uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap, uint32_t flags)
{
	struct srn_sge sge = { (uint64_t)(uintptr_t)res, 8, lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = flags;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	wr.compare_add = cmp_add;
	wr.swap = swap;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return srn_qp_post_send(h->qp, &wr, h->now);
}

int ph_post_recv(struct ph *h, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct srn_sge sge = { (uint64_t)(uintptr_t)buf, len, lkey };
	struct srn_recv_wr wr = { wr_id, &sge, buf ? 1u : 0u };
	return srn_qp_post_recv(h->qp, &wr);
}

int ph_poll(struct srn_cq *cq, struct srn_cqe *out, int n) { return srn_cq_poll(cq, out, n); }
uint64_t ph_ctr(const struct ph *h, enum srn_ctr c) { return srn_dev_counters(h->dev)[c]; }

/* ---- assertions ---- */

static void fail_at(const char *f, int l, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_at(const char *f, int l, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "  %s:%d: ", f, l);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	srn_test_failed_checks++;
}

const struct ph_pkt *ph_expect_(struct ph *h, int opcode, int64_t psn, const char *f, int l)
{
	const struct ph_pkt *k = ph_next(h);
	if (!k) {
		fail_at(f, l, "expected opcode 0x%02x psn 0x%06llx, nothing emitted", opcode,
			(unsigned long long)(psn < 0 ? 0 : psn));
		return NULL;
	}
	if (opcode >= 0 && k->p.opcode != opcode) {
		fail_at(f, l, "expected opcode 0x%02x, got 0x%02x (psn 0x%06x)", opcode, k->p.opcode, k->p.psn);
		return NULL;
	}
	if (psn >= 0 && k->p.psn != (uint32_t)psn) {
		fail_at(f, l, "opcode 0x%02x: expected psn 0x%06llx, got 0x%06x", k->p.opcode,
			(unsigned long long)psn, k->p.psn);
		return NULL;
	}
	if (k->p.dqpn != PH_PEER_QPN && h->o.type != SRN_QPT_UD) {
		fail_at(f, l, "destination QPN 0x%06x, expected the peer 0x%06x", k->p.dqpn, PH_PEER_QPN);
		return NULL;
	}
	return k;
}

const struct ph_pkt *ph_expect_aeth_(struct ph *h, int opcode, int64_t psn, int syn, int64_t msn,
				     const char *f, int l)
{
	const struct ph_pkt *k = ph_expect_(h, opcode, psn, f, l);
	if (!k)
		return NULL;
	if (syn >= 0 && k->p.syndrome != (uint8_t)syn) {
		fail_at(f, l, "psn 0x%06x: expected syndrome 0x%02x, got 0x%02x", k->p.psn, syn, k->p.syndrome);
		return NULL;
	}
	if (msn >= 0 && k->p.msn != (uint32_t)msn) {
		fail_at(f, l, "psn 0x%06x: expected MSN %lld, got %u", k->p.psn, (long long)msn, k->p.msn);
		return NULL;
	}
	return k;
}

void ph_expect_none_(struct ph *h, const char *f, int l)
{
	const struct ph_pkt *k = ph_next(h);
	if (k)
		fail_at(f, l, "expected nothing emitted, got opcode 0x%02x psn 0x%06x syndrome 0x%02x",
			k->p.opcode, k->p.psn, k->p.syndrome);
}

void ph_expect_cqe_(struct srn_cq *cq, uint64_t wr_id, int status, int opcode, const char *f, int l)
{
	struct srn_cqe c;
	if (srn_cq_poll(cq, &c, 1) != 1) {
		fail_at(f, l, "expected a CQE wr_id %llu, CQ empty", (unsigned long long)wr_id);
		return;
	}
	if (c.wr_id != wr_id || c.status != status || (opcode >= 0 && c.opcode != opcode))
		fail_at(f, l, "CQE: expected wr_id %llu status %d opcode %d, got wr_id %llu status %u opcode %u",
			(unsigned long long)wr_id, status, opcode, (unsigned long long)c.wr_id, c.status, c.opcode);
}

void ph_expect_no_cqe_(struct srn_cq *cq, const char *f, int l)
{
	struct srn_cqe c;
	if (srn_cq_poll(cq, &c, 1) == 1)
		fail_at(f, l, "expected no CQE, got wr_id %llu status %u", (unsigned long long)c.wr_id, c.status);
}
