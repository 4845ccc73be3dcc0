/* core_pair.c - see core_pair.h */
#include "core_pair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t cp_qcap = CP_QCAP;
bool cp_qdrop;

static long live_allocs, total_allocs;

static void *cp_calloc(size_t n, size_t sz, void *user)
{
	(void)user;
	void *p = calloc(n, sz);
	if (p) {
		live_allocs++;
		total_allocs++;
	}
	return p;
}

static void cp_freefn(void *p, void *user)
{
	(void)user;
	if (p)
		live_allocs--;
	free(p);
}

long cp_live_allocs(void) { return live_allocs; }
long cp_total_allocs(void) { return total_allocs; }

static const struct srn_l4 cp_l4[4] = {
	{ .src = 49152, .dst = 4791 }, { .src = 49153, .dst = 4791 },
	{ .src = 49154, .dst = 4791 }, { .src = 49155, .dst = 4791 },
};

static void gid_v4(uint8_t gid[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = a; gid[13] = b; gid[14] = c; gid[15] = d;
}

struct cp_pair *cp_new(cp_cfg_fn tune)
{
	struct cp_pair *cp = calloc(1, sizeof(*cp));
	if (!cp)
		return NULL;
	cp->now = 1000000;   /* 1 ms: not zero, so "time 0" bugs show */
	for (int i = 0; i < 2; i++) {
		struct srn_dev_cfg *c = &cp->cfg[i];
		srn_dev_cfg_default(c);
		gid_v4(c->gid, 10, 0, 0, (uint8_t)(1 + i));
		c->l4 = cp_l4;
		c->n_l4 = 4;
		c->max_qp = 64;
		c->max_mr = 256;
		c->qpn_seed = 0x11 + (uint32_t)i * 8;
		c->qpn_timewait = 1000000000ull;
		c->mem.calloc = cp_calloc;
		c->mem.free = cp_freefn;
		if (tune)
			tune(c, i);
		if (srn_dev_new(&cp->dev[i], c) != 0) {
			cp_free(cp);
			return NULL;
		}
		cp->pd[i] = srn_pd_alloc(cp->dev[i]);
		cp->link[i].q = calloc(cp_qcap, sizeof(struct cp_pkt));
		if (!cp->link[i].q) {
			cp_free(cp);
			return NULL;
		}
	}
	return cp;
}

void cp_free(struct cp_pair *cp)
{
	if (!cp)
		return;
	for (int i = 0; i < 2; i++) {
		if (cp->dev[i])
			srn_dev_del(cp->dev[i]);
		free(cp->link[i].q);
	}
	free(cp);
}

static void link_push(struct cp_link *l, const struct cp_pkt *p)
{
	if (l->n == cp_qcap) {
		if (cp_qdrop)
			return;         /* a full link drops, like a full switch queue */
		fprintf(stderr, "core_pair: link queue overflow\n");
		abort();
	}
	l->q[(l->head + l->n) % cp_qcap] = *p;
	l->n++;
}

/* pull everything a device wants to send into its outgoing link */
static uint64_t drain_dev(struct cp_pair *cp, int side)
{
	static struct cp_pkt tmp;
	uint64_t n = 0;
	struct cp_link *l = &cp->link[side];
	for (;;) {
		ssize_t len = srn_dev_send(cp->dev[side], tmp.data, sizeof(tmp.data), &tmp.meta, cp->now);
		if (len <= 0)
			break;
		tmp.len = (size_t)len;
		n++;
		if (cp->tap)
			cp->tap(cp, side, tmp.data, tmp.len, &tmp.meta, cp->tap_arg);
		enum cp_action a = CP_PASS;
		if (cp->filter)
			a = cp->filter(cp, side, l->sent, tmp.data, tmp.len, cp->filter_arg);
		l->sent++;
		switch (a) {
		case CP_PASS:
			link_push(l, &tmp);
			break;
		case CP_DROP:
			break;
		case CP_DUP:
			link_push(l, &tmp);
			link_push(l, &tmp);
			break;
		case CP_DELAY:
			if (l->has_held)
				link_push(l, &l->held);
			l->held = tmp;
			l->has_held = true;
			continue;
		}
		if (l->has_held && a != CP_DELAY) {
			link_push(l, &l->held);
			l->has_held = false;
		}
	}
	return n;
}

static uint64_t deliver(struct cp_pair *cp, int side)
{
	static struct cp_pkt tmp;
	struct cp_link *l = &cp->link[side];
	uint64_t n = 0;
	while (l->n) {
		tmp = l->q[l->head];
		l->head = (l->head + 1) % cp_qcap;
		l->n--;
		if (cp->mark_ce[side])
			tmp.meta.ecn = 3;
		srn_dev_recv(cp->dev[1 - side], tmp.data, tmp.len, &tmp.meta, cp->now);
		cp->delivered[side]++;
		n++;
		/* interleave: the receiver may answer at once */
		drain_dev(cp, 1 - side);
	}
	return n;
}

uint64_t cp_pump(struct cp_pair *cp)
{
	uint64_t total = 0;
	for (int guard = 0; guard < 10000000; guard++) {
		uint64_t moved = 0;
		moved += drain_dev(cp, 0);
		moved += drain_dev(cp, 1);
		moved += deliver(cp, 0);
		moved += deliver(cp, 1);
		total += moved;
		if (!moved) {
			/* a held (delayed) packet with nothing after it: release it */
			bool rel = false;
			for (int s = 0; s < 2; s++)
				if (cp->link[s].has_held) {
					link_push(&cp->link[s], &cp->link[s].held);
					cp->link[s].has_held = false;
					rel = true;
				}
			if (!rel)
				break;
		}
	}
	return total;
}

static void fire(struct cp_pair *cp)
{
	for (int i = 0; i < 2; i++)
		if (srn_dev_expiry(cp->dev[i]) <= cp->now)
			srn_dev_handle_expiry(cp->dev[i], cp->now);
}

void cp_advance(struct cp_pair *cp, srn_ts ns)
{
	cp->now += ns;
	fire(cp);
	cp_pump(cp);
}

int cp_run_n(struct cp_pair *cp, int max_jumps)
{
	int jumps = 0;
	cp_pump(cp);
	while (jumps < max_jumps) {
		srn_ts e0 = srn_dev_expiry(cp->dev[0]), e1 = srn_dev_expiry(cp->dev[1]);
		srn_ts e = e0 < e1 ? e0 : e1;
		if (e == SRN_TS_NEVER)
			break;
		if (e > cp->now)
			cp->now = e;
		fire(cp);
		cp_pump(cp);
		jumps++;
	}
	return jumps;
}

int cp_run(struct cp_pair *cp) { return cp_run_n(cp, 100000); }

void cp_qp_opts_default(struct cp_qp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_send_wr = 64;
	o->max_recv_wr = 64;
	o->max_sge = 4;
	o->max_inline = 64;
	o->path_mtu = 3;
	o->sq_psn[0] = 0x100;
	o->sq_psn[1] = 0x5000;
	o->timeout = 14;       /* 67 ms */
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;  /* 10 us */
	o->max_rd_atomic = 4;
	o->access = SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_READ |
		    SRN_ACCESS_REMOTE_ATOMIC;
	o->qkey = 0x11111111;
}

void cp_ah(struct cp_pair *cp, int to_side, struct srn_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->dgid, cp->cfg[to_side].gid, 16);
	ah->hop_limit = 64;
	ah->port_num = 1;
}

static int make_qp(struct cp_pair *cp, int side, enum srn_qp_type type, struct cp_qp *q,
		   const struct cp_qp_opts *o)
{
	memset(q, 0, sizeof(*q));
	q->side = side;
	int rc = srn_cq_new(cp->dev[side], 1024, NULL, &q->scq);
	if (rc)
		return rc;
	rc = srn_cq_new(cp->dev[side], 1024, NULL, &q->rcq);
	if (rc)
		return rc;
	struct srn_qp_init init = {
		.type = type, .pdn = cp->pd[side], .send_cq = q->scq, .recv_cq = q->rcq,
		.srq = o->srq[side], .max_send_wr = o->max_send_wr, .max_recv_wr = o->max_recv_wr,
		.max_send_sge = o->max_sge, .max_recv_sge = o->max_sge,
		.max_inline_data = o->max_inline, .sq_sig_all = o->sq_sig_all,
	};
	return srn_qp_new(cp->dev[side], &init, &q->qp);
}

int cp_connect(struct cp_pair *cp, enum srn_qp_type type, struct cp_qp *a, struct cp_qp *b,
	       const struct cp_qp_opts *opts)
{
	struct cp_qp_opts def;
	if (!opts) {
		cp_qp_opts_default(&def);
		opts = &def;
	}
	struct cp_qp *q[2] = { a, b };
	for (int i = 0; i < 2; i++) {
		int rc = make_qp(cp, i, type, q[i], opts);
		if (rc)
			return rc;
	}
	for (int i = 0; i < 2; i++) {
		struct srn_qp_attr at;
		memset(&at, 0, sizeof(at));
		at.qp_state = SRN_QPS_INIT;
		at.pkey_index = 0;
		at.port_num = 1;
		at.qp_access_flags = opts->access;
		at.qkey = opts->qkey;
		uint32_t mask = SRN_QP_STATE | SRN_QP_PKEY_INDEX | SRN_QP_PORT |
				(type == SRN_QPT_UD ? SRN_QP_QKEY : SRN_QP_ACCESS_FLAGS);
		int rc = srn_qp_modify(q[i]->qp, &at, mask, cp->now);
		if (rc)
			return rc;
		memset(&at, 0, sizeof(at));
		at.qp_state = SRN_QPS_RTR;
		mask = SRN_QP_STATE;
		if (type != SRN_QPT_UD) {
			at.path_mtu = opts->path_mtu;
			at.dest_qp_num = srn_qp_num(q[1 - i]->qp);
			at.rq_psn = opts->sq_psn[1 - i];
			at.max_dest_rd_atomic = opts->max_rd_atomic;
			at.min_rnr_timer = opts->min_rnr_timer;
			cp_ah(cp, 1 - i, &at.ah);
			mask |= SRN_QP_AV | SRN_QP_PATH_MTU | SRN_QP_DEST_QPN | SRN_QP_RQ_PSN;
			if (type == SRN_QPT_RC)
				mask |= SRN_QP_MAX_DEST_RD_ATOMIC | SRN_QP_MIN_RNR_TIMER;
		}
		rc = srn_qp_modify(q[i]->qp, &at, mask, cp->now);
		if (rc)
			return rc;
		memset(&at, 0, sizeof(at));
		at.qp_state = SRN_QPS_RTS;
		at.sq_psn = opts->sq_psn[i];
		at.timeout = opts->timeout;
		at.retry_cnt = opts->retry_cnt;
		at.rnr_retry = opts->rnr_retry;
		at.max_rd_atomic = opts->max_rd_atomic;
		mask = SRN_QP_STATE | SRN_QP_SQ_PSN;
		if (type == SRN_QPT_RC)
			mask |= SRN_QP_TIMEOUT | SRN_QP_RETRY_CNT | SRN_QP_RNR_RETRY | SRN_QP_MAX_QP_RD_ATOMIC;
		rc = srn_qp_modify(q[i]->qp, &at, mask, cp->now);
		if (rc)
			return rc;
	}
	return 0;
}

void cp_qp_destroy(struct cp_pair *cp, struct cp_qp *q)
{
	srn_qp_del(q->qp, cp->now);
	srn_cq_del(q->scq);
	srn_cq_del(q->rcq);
	memset(q, 0, sizeof(*q));
}

struct srn_mr *cp_reg(struct cp_pair *cp, int side, void *buf, size_t len, uint32_t access)
{
	struct srn_mr *mr = NULL;
	if (srn_mr_reg(cp->dev[side], cp->pd[side], buf, (uint64_t)(uintptr_t)buf, len, access, &mr))
		return NULL;
	return mr;
}

void cp_fill(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

int cp_post_send(struct cp_pair *cp, struct cp_qp *q, uint8_t opcode, uint64_t wr_id,
		 void *buf, uint32_t len, struct srn_mr *mr, uint64_t raddr, uint32_t rkey,
		 uint32_t flags)
{
	struct srn_mr_info mi;
	memset(&mi, 0, sizeof(mi));
	if (mr)
		srn_mr_info(mr, &mi);
	struct srn_sge sge = { (uint64_t)(uintptr_t)buf, len, mi.lkey };
	struct srn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = flags;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	wr.sg_list = &sge;
	wr.num_sge = buf ? 1 : 0;
	return srn_qp_post_send(q->qp, &wr, cp->now);
}

int cp_post_recv(struct cp_qp *q, uint64_t wr_id, void *buf, uint32_t len, struct srn_mr *mr)
{
	struct srn_mr_info mi;
	memset(&mi, 0, sizeof(mi));
	if (mr)
		srn_mr_info(mr, &mi);
	struct srn_sge sge = { (uint64_t)(uintptr_t)buf, len, mi.lkey };
	struct srn_recv_wr wr = { wr_id, &sge, buf ? 1u : 0u };
	return srn_qp_post_recv(q->qp, &wr);
}

int cp_poll1(struct srn_cq *cq, struct srn_cqe *out)
{
	return srn_cq_poll(cq, out, 1);
}
