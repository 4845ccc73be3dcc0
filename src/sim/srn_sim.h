/*
 * srn_sim.h - softrnic's discrete-event simulator (CC-16).
 *
 * The simulator runs the REAL transport: every host is a struct srn_dev of
 * src/core with real RC QPs, MRs and CQs; flows are QP pairs posting RDMA
 * WRITEs; the packets they send are the core's own RoCEv2 packets, wrapped
 * in IPv4+UDP and switched by the fabric emulator's switch model
 * (src/fabric). Nothing here reads a clock: time is a simulated uint64 of
 * nanoseconds advanced by an event scheduler, so a run is a function of the
 * scenario and the seed only (same seed => identical CSV bytes).
 *
 *   host i --[uplink: fabric IN link of port i]--> switch
 *          switch --[fabric OUT link of port j: queue, drop-tail, ECN]-->
 *          --[wire: propagation delay, src/sim/wire.c]--> host j
 *
 * Driving it:
 *
 *     struct srn_sim_scen sc;
 *     srn_sim_scen_init(&sc);
 *     if (srn_sim_scen_parse(&sc, text, len, err, sizeof err)) ... report err
 *     struct srn_sim *sim;
 *     srn_sim_new(&sim, &sc, err, sizeof err);
 *     srn_sim_set_csv(sim, file);                    // optional time series
 *     while (srn_sim_now(sim) < sc.duration)
 *             srn_sim_run_until(sim, srn_sim_now(sim) + step);
 *     srn_sim_metrics(sim, &m);                      // summary numbers
 *     srn_sim_del(sim); srn_sim_scen_free(&sc);
 *
 * Errors: functions returning int return 0 or a negative enum srn_err.
 */
#ifndef SRN_SIM_H
#define SRN_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/srn_core.h"

/* ------------------------------------------------------------------------ */
/* Scenario (scen.c; the text format is in docs/sim.md).                    */

enum srn_sim_dir { SRN_SIM_IN = 0, SRN_SIM_OUT = 1 }; /* = enum srn_fabric_dir */

/* One direction of a host's link to the switch. IN: host -> switch (the
 * host's uplink; the host NIC sends at this rate). OUT: switch -> host (the
 * switch's output port: buffer, drop-tail, ECN marking; then the delay). */
struct srn_sim_link_cfg {
	uint64_t rate_bps;      /* > 0 */
	srn_ts   delay;         /* propagation delay */
	uint32_t buffer;        /* output queue bytes; 0 = unlimited */
	uint32_t kmin, kmax;    /* ECN marking thresholds (bytes); kmax 0 = off */
	double   pmax;          /* marking probability at kmax */
	double   loss;          /* random loss probability */
};

enum srn_sim_knob {
	SRN_SIM_K_RATE, SRN_SIM_K_DELAY, SRN_SIM_K_BUFFER, SRN_SIM_K_KMIN,
	SRN_SIM_K_KMAX, SRN_SIM_K_PMAX, SRN_SIM_K_LOSS, SRN_SIM_K_MAX
};

struct srn_sim_host_cfg {
	struct srn_sim_link_cfg link[2];   /* [SRN_SIM_IN], [SRN_SIM_OUT] */
	uint32_t set[2];                   /* bit per enum srn_sim_knob set here */
};

#define SRN_SIM_SIZE_INF 0ull           /* flow size: infinite */

struct srn_sim_flow_cfg {
	uint32_t src, dst;      /* host indices */
	srn_ts   start;
	uint64_t size;          /* bytes; SRN_SIM_SIZE_INF = until the end */
	uint32_t msg;           /* bytes per RDMA WRITE */
	uint32_t depth;         /* WRITEs kept outstanding */
	uint32_t line;          /* scenario line (for messages) */
};

/* congestion control of every host's device (srn_dev_cfg.cc) */
enum srn_sim_cc {
	SRN_SIM_CC_NONE = 0,
	SRN_SIM_CC_DCQCN,          /* DCQCN, ConnectX default parameters */
	SRN_SIM_CC_DCQCN_PAPER,    /* DCQCN, SIGCOMM'15 parameters */
	SRN_SIM_CC_DCQCN_SW,       /* DCQCN, timers scaled to a software datapath */
	SRN_SIM_CC_TIMELY,         /* TIMELY, SIGCOMM'15 parameters, RTT probes */
	SRN_SIM_CC_TIMELY_SEG,     /* the same, one RTT sample per 64 KB sent */
	SRN_SIM_CC_N
};
extern const char *const srn_sim_cc_names[SRN_SIM_CC_N];

#define SRN_SIM_MAX_HOSTS 1024u
#define SRN_SIM_MAX_FLOWS 4096u

struct srn_sim_scen {
	uint32_t nhosts;                   /* 0 = not given yet */
	struct srn_sim_host_cfg dflt;      /* "link default ..." */
	struct srn_sim_host_cfg *host;     /* [nhosts]: "link H ..." */
	struct srn_sim_flow_cfg *flow;
	uint32_t nflows, flow_cap;
	enum srn_sim_cc cc;
	uint32_t mtu;                      /* 256..4096, power of two */
	srn_ts   duration, sample;
	srn_ts   win_start, win_end;       /* metrics window; win_end 0 = not set */
	uint64_t seed;
	/* QP and device knobs ("qp ...") */
	uint8_t  qp_timeout, qp_retry;
	uint32_t inflight;                 /* srn_dev_cfg.max_inflight_pkts */
	uint32_t ack_coalesce;             /* srn_dev_cfg.ack_coalesce */
};

void srn_sim_scen_init(struct srn_sim_scen *sc);
void srn_sim_scen_free(struct srn_sim_scen *sc);
/* Parse a whole scenario text. On error returns SRN_EINVAL (or SRN_ENOMEM)
 * and writes "line N: ..." naming the bad token into err. Checks the
 * result (srn_sim_scen_check) at the end. Lines accumulate: a scenario may
 * be parsed from several texts (e.g. a file, then overrides). */
int  srn_sim_scen_parse(struct srn_sim_scen *sc, const char *text, size_t len,
			char *err, size_t errlen);
/* Parse one statement (no newline). line is used in messages only. */
int  srn_sim_scen_parse_line(struct srn_sim_scen *sc, const char *s, size_t len,
			     uint32_t line, char *err, size_t errlen);
/* Whole-scenario checks (hosts given, a flow, links valid, ...). */
int  srn_sim_scen_check(const struct srn_sim_scen *sc, char *err, size_t errlen);
/* Resolved link of host h in direction dir (default overlaid by its own). */
void srn_sim_scen_link(const struct srn_sim_scen *sc, uint32_t h, enum srn_sim_dir dir,
		       struct srn_sim_link_cfg *out);
/* Metrics window actually used: [win_start, win_end), default the second
 * half of the run. */
void srn_sim_scen_window(const struct srn_sim_scen *sc, srn_ts *t0, srn_ts *t1);

/* Value parsers (units.c). Return 0 or SRN_EINVAL. s need not be
 * NUL-terminated. Time: NUMBER{ns,us,ms,s} ("0" alone is allowed). Rate:
 * NUMBER{k,m,g,t} bits/s, optional "bps". Bytes: INTEGER[k,m,g] with
 * k = 1024. Probability: a decimal in [0, 1]. */
int srn_sim_parse_time(const char *s, size_t len, srn_ts *out);
int srn_sim_parse_rate(const char *s, size_t len, uint64_t *out);
int srn_sim_parse_bytes(const char *s, size_t len, uint64_t *out);
int srn_sim_parse_prob(const char *s, size_t len, double *out);
int srn_sim_parse_u64(const char *s, size_t len, uint64_t *out);

/* ------------------------------------------------------------------------ */
/* The simulation (sim.c).                                                    */
struct srn_sim;

/* Builds hosts, QPs, MRs and the switch from the scenario (which must stay
 * alive and unchanged until srn_sim_del). SRN_EINVAL/SRN_ENOMEM with a
 * message in err. */
int  srn_sim_new(struct srn_sim **out, const struct srn_sim_scen *sc, char *err, size_t errlen);
void srn_sim_del(struct srn_sim *sim);

/* Write the time series as CSV to f (header at once, a row per sample).
 * Call before running. f stays the caller's. */
void srn_sim_set_csv(struct srn_sim *sim, FILE *f);

/* Process every event up to and including time t (t <= duration is not
 * required; sampling stops at the duration). */
void   srn_sim_run_until(struct srn_sim *sim, srn_ts t);
srn_ts srn_sim_now(const struct srn_sim *sim);
uint64_t srn_sim_events(const struct srn_sim *sim);  /* events processed */

/* ------------------------------------------------------------------------ */
/* Results.                                                                   */
struct srn_sim_flow_result {
	uint32_t src, dst;
	srn_ts   start;
	uint64_t size;            /* as configured (0 = infinite) */
	uint64_t rx_bytes;        /* payload delivered in order at the receiver */
	uint64_t acked_bytes;     /* bytes of completed WRITEs at the sender */
	uint64_t wrs_posted, wrs_done;
	bool     done;            /* finite flow: every WRITE completed */
	srn_ts   fct;             /* completion time - start (done only) */
	bool     failed;          /* a completion with an error status */
	uint8_t  fail_status;     /* enum srn_wc_status */
	double   win_gbps;        /* mean goodput in the metrics window */
};

struct srn_sim_metrics {
	srn_ts   t0, t1;          /* metrics window */
	uint32_t nflows;
	double   jain;            /* over flows active in the whole window; -1 n/a */
	uint32_t jain_n;          /* flows in it */
	bool     converged;
	srn_ts   converge_time;   /* after the reference time */
	srn_ts   converge_ref;    /* last flow start */
	srn_ts   converge_group;  /* length of the samples it was judged on */
	uint32_t bottleneck;      /* host whose output port has the most flows */
	uint64_t q_p50, q_p99, q_max;   /* its queue (bytes) over the window */
	double   util;            /* its output link: wire bytes / capacity (window) */
	double   goodput_util;    /* flow payload into it / capacity (window) */
	uint64_t ecn_marks, drops;      /* all output ports, whole run */
	uint64_t cnps, retransmits, timeouts, nak_seq; /* all devices, whole run */
	uint32_t flows_done, flows_failed;
	srn_ts   fct_mean, fct_p99, fct_max;    /* over finished finite flows */
	uint64_t events;
};

void srn_sim_metrics(const struct srn_sim *sim, struct srn_sim_metrics *m);
/* result of flow i (0 <= i < nflows) */
void srn_sim_flow_result(const struct srn_sim *sim, uint32_t i, struct srn_sim_flow_result *r);

/* Human-readable summary (also the summary file). */
void srn_sim_summary_write(const struct srn_sim *sim, const struct srn_sim_metrics *m, FILE *f);

/* SVG plots of the recorded series: per-flow rate vs time and bottleneck
 * queue vs time. Return 0, or SRN_EINVAL if a file cannot be written. */
int  srn_sim_plot_rate(const struct srn_sim *sim, FILE *f);
int  srn_sim_plot_queue(const struct srn_sim *sim, FILE *f);

/* ------------------------------------------------------------------------ */
/* Arithmetic used by the metrics (metrics.c), exposed for tests.            */
/* Jain's fairness index (sum x)^2 / (n * sum x^2); 1 for n == 0 or all 0. */
double srn_sim_jain(const double *x, size_t n);
/* q-quantile (0..1) of v[0..n) by nearest rank; sorts v in place. */
uint64_t srn_sim_quantile(uint64_t *v, size_t n, double q);
/* Time to converge, in samples. rate[k * nflows + f] is flow f's goodput in
 * sample k, share[k * nflows + f] its max-min fair share then (< 0: flow not
 * active in sample k, ignored). Looking at samples first..nsamples-1, a
 * sample is "in" when at least one flow is active and every active flow is
 * within +-10% of its share, else "out". The series converges at the first
 * sample of a run of 5 consecutive "in" samples and stays converged until a
 * run of 5 consecutive "out" samples (a lockout, a lasting unfair split, a
 * new fair share not yet reached), after which it must converge again.
 * Returns the first sample of the 5 "in" samples that made it converged for
 * the last time, if it is converged at the end of the series; else -1
 * ("never"). A fair transient that does not last (two windows sharing a FIFO
 * until the buffer overflows) is not convergence. */
int64_t srn_sim_converge_sample(const double *rate, const double *share, uint32_t nsamples,
				uint32_t nflows, uint32_t first);

#endif /* SRN_SIM_H */
