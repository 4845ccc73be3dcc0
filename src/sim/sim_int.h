/*
 * sim_int.h - internals of the simulator: scheduler, PRNG, packet framing,
 * wire delay lines, hosts, flows, series, SVG writer. src/sim only.
 */
#ifndef SRN_SIM_INT_H
#define SRN_SIM_INT_H

#include "srn_sim.h"
#include "fabric/srn_fabric.h"

/* ---- sched.c: indexed binary min-heap of event sources -------------------
 * Every source (the switch, a wire, a host's timer, a host's transmitter, a
 * flow's start, the sampler) has at most one pending time. Order is by
 * (time, key) where key = (kind << 32) | index: events at the same time run
 * in kind order, then index order - deterministic, whatever the order in
 * which they were scheduled. No allocation after srn_sim_sched_init.     */
enum srn_sim_ev {
	SRN_SIM_EV_FABRIC = 0,  /* a packet departs a link of the switch */
	SRN_SIM_EV_WIRE   = 1,  /* a packet arrives at a host (index: host) */
	SRN_SIM_EV_TIMER  = 2,  /* a host's core timer (index: host) */
	SRN_SIM_EV_TX     = 3,  /* a host's uplink is free (index: host) */
	SRN_SIM_EV_START  = 4,  /* a flow starts (index: flow) */
	SRN_SIM_EV_SAMPLE = 5,  /* the sampler */
};
struct srn_sim_sched {
	srn_ts   *time;         /* [nsrc] pending time, SRN_TS_NEVER = none */
	uint64_t *key;          /* [nsrc] */
	uint32_t *heap;         /* [nsrc] source ids */
	uint32_t *pos;          /* [nsrc] position in heap, UINT32_MAX = absent */
	uint32_t n, nsrc;
};
int  srn_sim_sched_init(struct srn_sim_sched *s, uint32_t nsrc);
void srn_sim_sched_free(struct srn_sim_sched *s);
/* key of source id (kind, index): set once per source */
void srn_sim_sched_key(struct srn_sim_sched *s, uint32_t id, enum srn_sim_ev kind, uint32_t index);
/* (re)schedule source id at t; t == SRN_TS_NEVER removes it */
void srn_sim_sched_set(struct srn_sim_sched *s, uint32_t id, srn_ts t);
static inline srn_ts srn_sim_sched_get(const struct srn_sim_sched *s, uint32_t id) { return s->time[id]; }
/* earliest pending time (SRN_TS_NEVER if none) and its source */
static inline srn_ts srn_sim_sched_top(const struct srn_sim_sched *s, uint32_t *id)
{
	if (!s->n)
		return SRN_TS_NEVER;
	*id = s->heap[0];
	return s->time[s->heap[0]];
}

/* ---- rng.c: draws of the simulator itself (initial PSNs, QPN seeds) on the
 * fabric's generator (xoshiro256**), seeded from the scenario's seed ----- */
#include "fabric/srn_fabric_rng.h"
/* uniform in [0, n) (n > 0), by rejection: unbiased, platform independent */
uint64_t srn_sim_rng_below(struct srn_fabric_rng *r, uint64_t n);

/* ---- frame.c: core UDP payload + meta <-> whole IPv4 packet -------------- */
#define SRN_SIM_HDR 28u   /* IPv4 (IHL 5) + UDP */
/* Write the IPv4 and UDP headers for a payload of len bytes that already
 * sits at pkt + SRN_SIM_HDR. Returns the IPv4 packet length. */
size_t srn_sim_frame_wrap(uint8_t *pkt, size_t len, const struct srn_pkt_meta *meta);
/* Parse an IPv4+UDP packet: fills meta, *payload, *plen. false if it is
 * not IPv4/UDP or lengths are inconsistent. */
bool   srn_sim_frame_unwrap(const uint8_t *pkt, size_t len, struct srn_pkt_meta *meta,
			    const uint8_t **payload, size_t *plen);
static inline uint32_t srn_sim_host_ipv4(uint32_t h) { return 0x0a000001u + h; } /* 10.0.0.1 + h */
/* serialisation time of len bytes at rate bits/s, rounded up (as the fabric) */
static inline srn_ts srn_sim_ser_time(uint64_t rate, uint64_t len)
{
	return (len * 8u * 1000000000ull + rate - 1) / rate;
}

/* ---- wire.c: a FIFO delay line of packets (switch -> host propagation) --
 * A byte ring sized at creation for rate * delay plus two packets: never
 * full, because packets enter it no faster than the line rate. */
struct srn_sim_wire {
	uint8_t *buf;
	size_t   cap, head, used;   /* bytes */
	srn_ts   delay;
	uint64_t overflows;         /* would-be overflows (never expected) */
};
int  srn_sim_wire_init(struct srn_sim_wire *w, uint64_t rate_bps, srn_ts delay, size_t max_pkt);
void srn_sim_wire_free(struct srn_sim_wire *w);
/* enqueue a packet leaving the switch at now; false if no room (counted) */
bool srn_sim_wire_push(struct srn_sim_wire *w, srn_ts now, const uint8_t *pkt, size_t len);
/* arrival time of the head packet, SRN_TS_NEVER if empty */
srn_ts srn_sim_wire_head(const struct srn_sim_wire *w);
/* pointer to the head packet (valid until the next push/pop) */
const uint8_t *srn_sim_wire_peek(const struct srn_sim_wire *w, size_t *len);
void srn_sim_wire_pop(struct srn_sim_wire *w);

/* ---- host.c / flow.c ------------------------------------------------------ */
struct srn_sim_flow {
	const struct srn_sim_flow_cfg *cfg;
	struct srn_qp *sqp, *rqp;
	uint32_t rqpn;              /* receiver QPN */
	uint32_t rx_epsn;           /* next in-order PSN at the receiver */
	uint64_t rx_bytes;          /* in-order payload at the receiver */
	uint64_t posted_bytes, acked_bytes;
	uint64_t wrs_posted, wrs_done, wrs_total;  /* total 0 = infinite */
	uint32_t outstanding;
	bool     started, done, failed;
	uint8_t  fail_status;
	srn_ts   end;
};

struct srn_sim_host {
	uint32_t idx, ipv4;
	struct srn_dev *dev;
	uint32_t pd;
	struct srn_cq *cq;          /* send CQ of every QP of this host */
	struct srn_cq *rcq;         /* receive CQ (WRITEs post none) */
	uint8_t *src_buf, *sink_buf;
	size_t   src_len, sink_len;
	struct srn_mr *src_mr, *sink_mr;
	uint32_t src_lkey, sink_rkey;
	uint64_t up_rate;           /* uplink bit rate */
	srn_ts   tx_free_at;        /* uplink busy until */
	struct srn_l4 l4[8];        /* UDP source ports of the host's flows */
	/* receiver QPN -> flow index: open addressing, power-of-two size */
	uint32_t *qtab_qpn, *qtab_flow;
	uint32_t qtab_mask;
	uint32_t nflows_in;         /* flows terminating here */
};

/* ---- series.c: the recorded time series ------------------------------------ */
struct srn_sim_series {
	uint32_t nflows, nq, n, cap;  /* samples recorded / allocated */
	srn_ts   dt;
	uint64_t *flow_bytes;         /* [cap][nflows] payload per interval */
	uint64_t *q_bytes;            /* [cap][nq] queue at sample time */
	uint64_t *q_out;              /* [cap][nq] wire bytes out per interval */
	uint64_t *q_marks, *q_drops;  /* [cap][nq] per interval */
};
int  srn_sim_series_init(struct srn_sim_series *s, uint32_t nflows, uint32_t nq,
			 uint32_t cap, srn_ts dt);
void srn_sim_series_free(struct srn_sim_series *s);

/* ---- the simulation ---------------------------------------------------------- */
struct srn_sim {
	const struct srn_sim_scen *sc;
	struct srn_sim_sched sched;
	struct srn_fabric_rng rng;
	struct srn_fabric *fab;
	struct srn_sim_host *host;
	struct srn_sim_flow *flow;
	struct srn_sim_wire *wire;     /* [nhosts]: switch -> host */
	uint32_t nhosts, nflows;
	srn_ts   now;
	uint64_t events;
	uint8_t *txbuf;                /* SRN_SIM_HDR headroom + SRN_MAX_PKT */
	uint8_t *rxbuf;                /* slot_size */
	size_t   rxcap;
	/* per port: bytes dropped on its OUT link (from the fabric tap) */
	uint64_t *out_drop_bytes;
	/* sampling */
	uint32_t *qport;               /* [nq] hosts that are flow destinations */
	uint32_t nq;
	uint64_t *prev_flow_bytes;     /* [nflows] */
	uint64_t *prev_q;              /* [nq][3]: bytes_out, marks, drops */
	struct srn_sim_series ser;
	FILE    *csv;
	srn_ts   next_sample;
	/* source ids in the scheduler */
	uint32_t id_wire0, id_timer0, id_tx0, id_start0, id_sample;
};

/* host.c */
int  srn_sim_host_init(struct srn_sim *sim, uint32_t h, char *err, size_t errlen);
void srn_sim_host_free(struct srn_sim_host *hs);
/* after anything touched the device: completions, timer, uplink */
void srn_sim_host_after(struct srn_sim *sim, uint32_t h);
/* the uplink is free: send one packet into the switch */
void srn_sim_host_tx(struct srn_sim *sim, uint32_t h);
/* a packet (whole IPv4) arrives at host h */
void srn_sim_host_rx(struct srn_sim *sim, uint32_t h, const uint8_t *pkt, size_t len);
/* QPN -> flow index of a host's QPs (top bit set: the receiver QP);
 * UINT32_MAX if none */
#define SRN_SIM_QTAB_RECV 0x80000000u
int      srn_sim_host_register_qp(struct srn_sim_host *hs, uint32_t qpn, uint32_t flow, bool recv);
uint32_t srn_sim_host_flow_of(const struct srn_sim_host *hs, uint32_t qpn);

/* flow.c */
int  srn_sim_flow_connect(struct srn_sim *sim, uint32_t f, char *err, size_t errlen);
void srn_sim_flow_start(struct srn_sim *sim, uint32_t f);
/* post WRITEs until depth are outstanding or the size is posted */
void srn_sim_flow_post(struct srn_sim *sim, uint32_t f);
/* a send completion of flow f */
void srn_sim_flow_complete(struct srn_sim *sim, uint32_t f, const struct srn_cqe *cqe);
/* payload per data packet (the MTU) over the IPv4 bytes of a full packet */
double srn_sim_payload_efficiency(uint32_t mtu);

/* sample.c */
void srn_sim_sample(struct srn_sim *sim);
void srn_sim_csv_header(struct srn_sim *sim);
/* queue bytes of host h's output port now */
uint64_t srn_sim_queue_bytes(const struct srn_sim *sim, uint32_t h);

/* ---- svg.c: a small SVG line-plot writer --------------------------------- */
struct srn_sim_svg_series {
	const char *name;
	const double *x, *y;
	size_t n;
};
struct srn_sim_svg_hline { const char *name; double y; };
struct srn_sim_svg_plot {
	const char *title, *xlabel, *ylabel;
	const struct srn_sim_svg_series *s;
	size_t ns;
	const struct srn_sim_svg_hline *hl;   /* dashed reference lines */
	size_t nhl;
	double ymin_hint;                     /* y axis starts here (or lower) */
};
/* Returns 0, or SRN_EINVAL on a write error. */
int  srn_sim_svg_write(FILE *f, const struct srn_sim_svg_plot *p);
/* "nice" tick step for a range split in about n parts (1, 2, 5 x 10^k) */
double srn_sim_svg_tick_step(double range, int n);

#endif /* SRN_SIM_INT_H */
