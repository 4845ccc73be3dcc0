/*
 * fabric.c - the switch: creation, ports, packet slots, input, the event
 * loop (srn_fabric_poll) and counters.
 *
 * Every packet inside the switch is one slot in one event heap, keyed by
 * (time, seq). A slot in stage IN leaves its port's IN link at `time` and
 * is then routed (by destination IPv4 address) into the OUT link of the
 * destination port; a slot in stage OUT departs to the device at `time`.
 * srn_fabric_poll pops events in that order, so each link sees its packets
 * at their exact model times whatever the caller's polling cadence.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"

const char *const srn_fabric_dir_names[2] = { "in", "out" };

const char *const srn_fabric_ctr_names[SRN_FABRIC_CTR_MAX] = {
	"pkts_in", "bytes_in", "pkts_out", "bytes_out",
	"drop_down", "drop_loss", "drop_burst", "drop_tail",
	"drop_noslot", "drop_malformed", "drop_oversize", "drop_noroute",
	"ecn_marks", "ecn_ce_in", "dups", "corrupts",
	"reorders", "ge_bursts", "queue_peak_bytes",
};

static void *libc_calloc(size_t n, size_t size, void *user)
{
	(void)user;
	return calloc(n, size);
}

static void libc_free(void *p, void *user)
{
	(void)user;
	free(p);
}

void srn_fabric_cfg_default(struct srn_fabric_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->max_ports = 64;
	cfg->nslots = 4096;
	cfg->slot_size = 9216;
}

void srn_fabric_del(struct srn_fabric *fab)
{
	if (!fab)
		return;
	struct srn_mem m = fab->mem;
	if (fab->ports) {
		for (uint32_t i = 0; i < fab->nports; i++)
			for (int d = 0; d < 2; d++)
				m.free(fab->ports[i].link[d].q, m.user);
		m.free(fab->ports, m.user);
	}
	m.free(fab->slots, m.user);
	m.free(fab->slot_mem, m.user);
	m.free(fab->free, m.user);
	m.free(fab->heap.idx, m.user);
	m.free(fab, m.user);
}

int srn_fabric_new(struct srn_fabric **out, const struct srn_fabric_cfg *cfg,
		   const struct srn_mem *mem)
{
	struct srn_mem m = { libc_calloc, libc_free, NULL };
	*out = NULL;
	if (mem)
		m = *mem;
	if (!m.calloc || !m.free || !cfg || cfg->max_ports == 0 || cfg->max_ports > 65535 ||
	    cfg->nslots == 0 || cfg->nslots >= UINT32_MAX / 2 || cfg->slot_size < 20 ||
	    cfg->slot_size > 65535)
		return SRN_EINVAL;
	struct srn_fabric *fab = m.calloc(1, sizeof(*fab), m.user);
	if (!fab)
		return SRN_ENOMEM;
	fab->cfg = *cfg;
	fab->mem = m;
	fab->ports = m.calloc(cfg->max_ports, sizeof(*fab->ports), m.user);
	fab->slots = m.calloc(cfg->nslots, sizeof(*fab->slots), m.user);
	fab->slot_mem = m.calloc(cfg->nslots, cfg->slot_size, m.user);
	fab->free = m.calloc(cfg->nslots, sizeof(*fab->free), m.user);
	fab->heap.idx = m.calloc(cfg->nslots, sizeof(*fab->heap.idx), m.user);
	if (!fab->ports || !fab->slots || !fab->slot_mem || !fab->free || !fab->heap.idx) {
		srn_fabric_del(fab);
		return SRN_ENOMEM;
	}
	fab->heap.slots = fab->slots;
	/* the stack pops slot 0 first */
	for (uint32_t i = 0; i < cfg->nslots; i++) {
		fab->slots[i].data = fab->slot_mem + (size_t)i * cfg->slot_size;
		fab->free[i] = cfg->nslots - 1 - i;
	}
	fab->nfree = cfg->nslots;
	*out = fab;
	return 0;
}

/* seed of a link: from the run's seed, the port address and the direction */
static uint64_t link_seed(uint64_t seed, uint32_t ipv4, int dir)
{
	uint64_t st = seed;
	uint64_t a = srn_fabric_splitmix64(&st);
	st = a ^ ((uint64_t)ipv4 << 1) ^ (uint64_t)dir;
	return srn_fabric_splitmix64(&st);
}

int srn_fabric_add_port(struct srn_fabric *fab, uint32_t ipv4,
			const struct srn_fabric_port_cfg *cfg)
{
	if (srn_fabric_port_cfg_check(cfg, NULL, 0) < 0)
		return SRN_EINVAL;
	if (srn_fabric_port_find(fab, ipv4) >= 0)
		return SRN_EBUSY;
	if (fab->nports >= fab->cfg.max_ports)
		return SRN_ENOMEM;
	struct srn_fabric_port *p = &fab->ports[fab->nports];
	uint32_t qcap = fab->cfg.nslots + 1;
	for (int d = 0; d < 2; d++) {
		p->link[d].q = fab->mem.calloc(qcap, sizeof(struct srn_fabric_qent), fab->mem.user);
		if (!p->link[d].q) {
			fab->mem.free(p->link[0].q, fab->mem.user);
			p->link[0].q = NULL;
			return SRN_ENOMEM;
		}
	}
	p->ipv4 = ipv4;
	p->cfg = *cfg;
	for (int d = 0; d < 2; d++) {
		srn_fabric_link_init(&p->link[d], &cfg->link[d], link_seed(fab->cfg.seed, ipv4, d));
		p->link[d].q_cap = qcap;
	}
	return (int)fab->nports++;
}

int srn_fabric_port_find(const struct srn_fabric *fab, uint32_t ipv4)
{
	for (uint32_t i = 0; i < fab->nports; i++)
		if (fab->ports[i].ipv4 == ipv4)
			return (int)i;
	return SRN_ENOENT;
}

uint32_t srn_fabric_port_count(const struct srn_fabric *fab) { return fab->nports; }

uint32_t srn_fabric_port_ipv4(const struct srn_fabric *fab, uint32_t port)
{
	return port < fab->nports ? fab->ports[port].ipv4 : 0;
}

const struct srn_fabric_port_cfg *srn_fabric_port_cfg(const struct srn_fabric *fab, uint32_t port)
{
	return port < fab->nports ? &fab->ports[port].cfg : NULL;
}

const uint64_t *srn_fabric_counters(const struct srn_fabric *fab, uint32_t port,
				    enum srn_fabric_dir dir)
{
	if (port >= fab->nports || (dir != SRN_FABRIC_IN && dir != SRN_FABRIC_OUT))
		return NULL;
	return fab->ports[port].link[dir].ctr;
}

uint32_t srn_fabric_slots_used(const struct srn_fabric *fab)
{
	return fab->cfg.nslots - fab->nfree;
}

uint32_t srn_fabric_slot_alloc(struct srn_fabric *fab)
{
	return fab->nfree ? fab->free[--fab->nfree] : UINT32_MAX;
}

void srn_fabric_slot_free(struct srn_fabric *fab, uint32_t s)
{
	fab->free[fab->nfree++] = s;
}

static void tap(struct srn_fabric *fab, uint32_t s, uint32_t port, enum srn_fabric_tap_dir tdir,
		enum srn_fabric_dir link, int why, srn_ts t)
{
	if (!fab->cfg.tap || (tdir == SRN_FABRIC_TAP_DROP && !fab->cfg.tap_drops))
		return;
	struct srn_fabric_tap_info ti = { .ts = t, .port = port, .dir = tdir, .link = link,
					  .drop_ctr = why };
	fab->cfg.tap(fab->cfg.tap_user, &ti, fab->slots[s].data, fab->slots[s].len);
}

void srn_fabric_drop(struct srn_fabric *fab, uint32_t port, enum srn_fabric_dir dir,
		     uint32_t s, enum srn_fabric_ctr why, srn_ts t)
{
	fab->ports[port].link[dir].ctr[why]++;
	tap(fab, s, port, SRN_FABRIC_TAP_DROP, dir, (int)why, t);
	srn_fabric_slot_free(fab, s);
}

void srn_fabric_schedule(struct srn_fabric *fab, uint32_t s)
{
	fab->slots[s].seq = fab->seq++;
	srn_fabric_heap_push(&fab->heap, s);
}

int srn_fabric_input(struct srn_fabric *fab, uint32_t in_port, const uint8_t *pkt,
		     size_t len, srn_ts now)
{
	if (in_port >= fab->nports)
		return SRN_EINVAL;
	if (now < fab->now)
		now = fab->now; /* time never goes backwards */
	fab->now = now;
	struct srn_fabric_link *l = &fab->ports[in_port].link[SRN_FABRIC_IN];
	enum srn_fabric_ctr why;
	if (len > fab->cfg.slot_size)
		why = SRN_FABRIC_CTR_DROP_OVERSIZE;
	else if (!srn_fabric_ipv4_valid(pkt, len))
		why = SRN_FABRIC_CTR_DROP_MALFORMED;
	else
		why = SRN_FABRIC_CTR_MAX;
	uint32_t s = UINT32_MAX;
	if (why == SRN_FABRIC_CTR_MAX) {
		s = srn_fabric_slot_alloc(fab);
		if (s == UINT32_MAX)
			why = SRN_FABRIC_CTR_DROP_NOSLOT;
	}
	if (why != SRN_FABRIC_CTR_MAX) {
		/* never entered a slot: counted, not tapped */
		l->ctr[SRN_FABRIC_CTR_PKTS_IN]++;
		l->ctr[SRN_FABRIC_CTR_BYTES_IN] += len;
		l->ctr[why]++;
		return SRN_EDROP;
	}
	struct srn_fabric_slot *sl = &fab->slots[s];
	memcpy(sl->data, pkt, len);
	sl->len = (uint32_t)len;
	tap(fab, s, in_port, SRN_FABRIC_TAP_IN, SRN_FABRIC_IN, -1, now);
	uint64_t before = fab->seq;
	srn_fabric_link_admit(fab, in_port, SRN_FABRIC_IN, s, now);
	return fab->seq != before ? 0 : SRN_EDROP;
}

srn_ts srn_fabric_expiry(const struct srn_fabric *fab)
{
	return fab->heap.n ? fab->slots[srn_fabric_heap_top(&fab->heap)].time : SRN_TS_NEVER;
}

/* a packet leaves port's IN link at t: into the switch, to its OUT link */
static void transfer(struct srn_fabric *fab, uint32_t s, srn_ts t)
{
	struct srn_fabric_slot *sl = &fab->slots[s];
	uint32_t port = sl->port;
	struct srn_fabric_link *l = &fab->ports[port].link[SRN_FABRIC_IN];
	if (srn_fabric_link_is_down(l, fab->cfg.epoch, t)) {
		srn_fabric_drop(fab, port, SRN_FABRIC_IN, s, SRN_FABRIC_CTR_DROP_DOWN, t);
		return;
	}
	int to = srn_fabric_port_find(fab, srn_fabric_ipv4_dst(sl->data));
	if (to < 0) {
		srn_fabric_drop(fab, port, SRN_FABRIC_IN, s, SRN_FABRIC_CTR_DROP_NOROUTE, t);
		return;
	}
	l->ctr[SRN_FABRIC_CTR_PKTS_OUT]++;
	l->ctr[SRN_FABRIC_CTR_BYTES_OUT] += sl->len;
	srn_fabric_link_admit(fab, (uint32_t)to, SRN_FABRIC_OUT, s, t);
}

int srn_fabric_poll(struct srn_fabric *fab, srn_ts now, uint32_t *out_port,
		    uint8_t *buf, size_t cap)
{
	if (now > fab->now)
		fab->now = now;
	while (fab->heap.n) {
		uint32_t s = srn_fabric_heap_top(&fab->heap);
		struct srn_fabric_slot *sl = &fab->slots[s];
		srn_ts t = sl->time;
		if (t > now)
			return 0;
		if (sl->stage == SRN_FABRIC_STAGE_IN) {
			srn_fabric_heap_pop(&fab->heap);
			transfer(fab, s, t);
			continue;
		}
		uint32_t port = sl->port;
		struct srn_fabric_link *l = &fab->ports[port].link[SRN_FABRIC_OUT];
		if (srn_fabric_link_is_down(l, fab->cfg.epoch, t)) {
			srn_fabric_heap_pop(&fab->heap);
			srn_fabric_drop(fab, port, SRN_FABRIC_OUT, s, SRN_FABRIC_CTR_DROP_DOWN, t);
			continue;
		}
		if (cap < sl->len)
			return SRN_ERANGE;
		srn_fabric_heap_pop(&fab->heap);
		memcpy(buf, sl->data, sl->len);
		l->ctr[SRN_FABRIC_CTR_PKTS_OUT]++;
		l->ctr[SRN_FABRIC_CTR_BYTES_OUT] += sl->len;
		tap(fab, s, port, SRN_FABRIC_TAP_OUT, SRN_FABRIC_OUT, -1, t);
		*out_port = port;
		int n = (int)sl->len;
		srn_fabric_slot_free(fab, s);
		return n;
	}
	return 0;
}
