/*
 * srn_fabric.h - the fabric emulator's switch model (sans-I/O) and its
 * configuration language.
 *
 * A switch with ports. Devices attach to ports; each port has an IPv4
 * address, and a packet (a whole IPv4 packet: IPv4 header + UDP + RoCEv2)
 * is forwarded to the port whose address is the packet's destination.
 * Each port has two directions, each a "link" with its own impairments and
 * its own seeded PRNG:
 *
 *     device A --[A.in]--> switch --[B.out]--> device B
 *
 *   in   device -> switch (the device's uplink)
 *   out  switch -> device (the switch's output port: where a real switch
 *        queues, drops at the tail and marks ECN)
 *
 * Per link, in this order (docs/fabric.md has the full model):
 *   link down window -> random loss -> Gilbert-Elliott loss -> duplication
 *   -> (each copy) drop-tail at the buffer limit -> ECN marking by queue depth
 *   -> corruption -> serialisation at the line rate -> fixed delay + jitter
 *   + path delay (spraying) + reordering hold-back -> (at departure) link down.
 *
 * Sans-I/O: no clock, no sockets, no threads. Time is a uint64 of
 * nanoseconds passed in by the caller and must never go backwards.
 * Memory comes from struct srn_mem hooks, only in srn_fabric_new and
 * srn_fabric_add_port: packets are copied into preallocated slots.
 *
 * Driving loop (the daemon, the tests, the simulator):
 *
 *     srn_fabric_input(fab, port, pkt, len, now);        // packets from devices
 *     while ((n = srn_fabric_poll(fab, now, &p, buf, cap)) > 0)
 *             deliver(p, buf, n);                        // packets to devices
 *     sleep until srn_fabric_expiry(fab);                // next departure
 *
 * Determinism: the output sequence (packets, their bytes, ports and
 * departure times) is a function of the seed, the configuration and the
 * timed input sequence only - not of how often the caller polls.
 *
 * Errors: functions returning int return >= 0 or a negative enum srn_err
 * (core/srn_core.h).
 */
#ifndef SRN_FABRIC_H
#define SRN_FABRIC_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "core/srn_core.h"

#define SRN_FABRIC_MAX_PATHS 16u

enum srn_fabric_dir {
	SRN_FABRIC_IN  = 0,  /* device -> switch */
	SRN_FABRIC_OUT = 1,  /* switch -> device */
};
extern const char *const srn_fabric_dir_names[2]; /* "in", "out" */

/* ------------------------------------------------------------------------ */
/* Link (one port, one direction) configuration. All zero = a perfect link:
 * infinite rate, no delay, no impairment. Probabilities are in [0, 1].      */
struct srn_fabric_ge {         /* Gilbert-Elliott two-state loss */
	double p_gb;           /* P(good -> bad), drawn once per packet in good */
	double p_bg;           /* P(bad -> good), drawn once per packet in bad */
	double loss_good;      /* loss probability while good */
	double loss_bad;       /* loss probability while bad */
	/* silence on the link also moves the chain: every idle_step of time
	 * since the previous packet counts as one more step (0: packets only,
	 * as netem's gemodel). The configuration language's default is
	 * SRN_FABRIC_GE_IDLE_STEP, so a burst does not outlive a quiet link. */
	srn_ts idle_step;
};
#define SRN_FABRIC_GE_IDLE_STEP (10 * 1000)   /* 10 us */
struct srn_fabric_reorder {
	double p;              /* fraction of packets held back */
	srn_ts delay;          /* extra delay of a held-back packet */
};
struct srn_fabric_paths {
	uint32_t n;            /* 0 or 1: one path; up to SRN_FABRIC_MAX_PATHS */
	srn_ts delay[SRN_FABRIC_MAX_PATHS]; /* extra delay of each path */
};
struct srn_fabric_down {
	srn_ts start;          /* first down window starts at epoch + start */
	srn_ts len;            /* length of a window; 0 = never down */
	srn_ts period;         /* 0 = once; else windows repeat every period */
};

struct srn_fabric_link_cfg {
	uint64_t rate_bps;     /* line rate in bits/s; 0 = infinite (no queue) */
	uint32_t buffer;       /* output queue size in bytes; 0 = unlimited */
	uint32_t kmin, kmax;   /* ECN marking thresholds in bytes; kmax 0 = off */
	double   pmax;         /* marking probability at kmax */
	double   loss;         /* independent random loss */
	struct srn_fabric_ge ge;
	double   dup;          /* duplication probability */
	double   corrupt;      /* corruption probability */
	srn_ts   delay;        /* fixed one-way delay */
	srn_ts   jitter;       /* extra delay uniform in [0, jitter] */
	struct srn_fabric_reorder reorder;
	struct srn_fabric_paths paths;
	struct srn_fabric_down down;
};

struct srn_fabric_port_cfg {
	struct srn_fabric_link_cfg link[2]; /* [SRN_FABRIC_IN], [SRN_FABRIC_OUT] */
};

/* Check a port configuration; on error writes a message naming the knob
 * into err (if errlen > 0) and returns SRN_EINVAL. */
int srn_fabric_port_cfg_check(const struct srn_fabric_port_cfg *cfg, char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* Counters: one array per port and direction, with a name table.
 *   pkts_in/bytes_in    packets that entered the link (in: from the device;
 *                       out: forwarded by the switch to this port)
 *   pkts_out/bytes_out  packets that left it (in: into the switch; out: to
 *                       the device)
 *   drop_*              dropped, by reason (each packet counted once)
 *   ecn_marks           ECT packets set to CE; ecn_ce_in: already CE
 *   dups, corrupts, reorders   packets duplicated / corrupted / held back
 *                       (a duplicate with no free slot counts in dups and
 *                       drop_noslot)
 *   ge_bursts           good -> bad transitions of the Gilbert-Elliott chain
 *   queue_peak_bytes    high-water mark of the queue (a gauge, not a count) */
#define SRN_FABRIC_COUNTERS(X) \
	X(PKTS_IN)        X(BYTES_IN)        X(PKTS_OUT)       X(BYTES_OUT) \
	X(DROP_DOWN)      X(DROP_LOSS)       X(DROP_BURST)     X(DROP_TAIL) \
	X(DROP_NOSLOT)    X(DROP_MALFORMED)  X(DROP_OVERSIZE)  X(DROP_NOROUTE) \
	X(ECN_MARKS)      X(ECN_CE_IN)       X(DUPS)           X(CORRUPTS) \
	X(REORDERS)       X(GE_BURSTS)       X(QUEUE_PEAK_BYTES)

enum srn_fabric_ctr {
#define SRN_FABRIC_CTR_ENUM(n) SRN_FABRIC_CTR_##n,
	SRN_FABRIC_COUNTERS(SRN_FABRIC_CTR_ENUM)
#undef SRN_FABRIC_CTR_ENUM
	SRN_FABRIC_CTR_MAX
};
extern const char *const srn_fabric_ctr_names[SRN_FABRIC_CTR_MAX]; /* "pkts_in", ... */

/* ------------------------------------------------------------------------ */
/* Tap: called for every packet entering the switch (IN, at input time),
 * leaving it (OUT, at its departure time) and, if tap_drops is set, for
 * every dropped packet (DROP, drop_ctr names the reason). The packet is the
 * whole IPv4 packet as it is at that point (OUT: after marking/corruption).
 * The caller writes pcap (or anything else); the model does no I/O.       */
enum srn_fabric_tap_dir { SRN_FABRIC_TAP_IN, SRN_FABRIC_TAP_OUT, SRN_FABRIC_TAP_DROP };
struct srn_fabric_tap_info {
	srn_ts   ts;
	uint32_t port;          /* port index */
	enum srn_fabric_tap_dir dir;
	enum srn_fabric_dir link; /* link the packet was in (DROP) */
	int      drop_ctr;      /* DROP: enum srn_fabric_ctr of the reason; else -1 */
};
typedef void (*srn_fabric_tap_fn)(void *user, const struct srn_fabric_tap_info *ti,
				  const uint8_t *pkt, size_t len);

/* ------------------------------------------------------------------------ */
/* The switch.                                                                */
struct srn_fabric;

struct srn_fabric_cfg {
	uint64_t seed;          /* PRNG seed of the run */
	uint32_t max_ports;     /* port table size (default 64) */
	uint32_t nslots;        /* packets in flight in the whole switch (default 4096) */
	uint32_t slot_size;     /* largest packet in bytes (default 9216) */
	srn_ts   epoch;         /* time 0 of link-down windows */
	srn_fabric_tap_fn tap;  /* optional */
	void    *tap_user;
	bool     tap_drops;     /* also tap dropped packets */
};
void srn_fabric_cfg_default(struct srn_fabric_cfg *cfg);

/* mem may be NULL: libc calloc/free. Errors: SRN_EINVAL (bad cfg),
 * SRN_ENOMEM. */
int  srn_fabric_new(struct srn_fabric **out, const struct srn_fabric_cfg *cfg,
		    const struct srn_mem *mem);
void srn_fabric_del(struct srn_fabric *fab);

/* Add a port with IPv4 address ipv4 (host byte order, 127.0.0.1 =
 * 0x7f000001). Returns the port index (0, 1, ...), SRN_EINVAL for a bad
 * configuration, SRN_EBUSY if the address already has a port, SRN_ENOMEM
 * if the port table is full or allocation fails. The PRNG of each link is
 * seeded from (seed, ipv4, direction): adding ports in another order does
 * not change any port's random stream. */
int  srn_fabric_add_port(struct srn_fabric *fab, uint32_t ipv4,
			 const struct srn_fabric_port_cfg *cfg);
/* Index of the port with address ipv4, or SRN_ENOENT. */
int  srn_fabric_port_find(const struct srn_fabric *fab, uint32_t ipv4);
uint32_t srn_fabric_port_count(const struct srn_fabric *fab);
uint32_t srn_fabric_port_ipv4(const struct srn_fabric *fab, uint32_t port);
const struct srn_fabric_port_cfg *srn_fabric_port_cfg(const struct srn_fabric *fab, uint32_t port);

/* A packet (whole IPv4 packet) from the device at in_port at time now.
 * Copied; the caller keeps pkt. A now earlier than the latest time given to
 * srn_fabric_input or srn_fabric_poll is taken as that time. Returns 0 if the packet is in the switch,
 * SRN_EDROP if it was dropped at once (counted on in_port's IN link),
 * SRN_EINVAL for a bad port index. */
int  srn_fabric_input(struct srn_fabric *fab, uint32_t in_port, const uint8_t *pkt,
		      size_t len, srn_ts now);

/* Time of the next event (a departure); SRN_TS_NEVER if the switch is empty.
 * Call srn_fabric_poll at that time. */
srn_ts srn_fabric_expiry(const struct srn_fabric *fab);

/* Run the switch up to now and return the next packet whose departure time
 * has come: copies it into buf, sets *out_port, returns its length. Returns
 * 0 if no packet departs by now, SRN_ERANGE if cap is smaller than the
 * packet (it stays; a buffer of slot_size bytes always suffices). Packets
 * come out in departure-time order (ties: in the order they were queued). */
int  srn_fabric_poll(struct srn_fabric *fab, srn_ts now, uint32_t *out_port,
		     uint8_t *buf, size_t cap);

/* Counters of one port and direction (array of SRN_FABRIC_CTR_MAX), or NULL
 * for a bad port index. */
const uint64_t *srn_fabric_counters(const struct srn_fabric *fab, uint32_t port,
				    enum srn_fabric_dir dir);
/* Packet slots in use (packets inside the switch). */
uint32_t srn_fabric_slots_used(const struct srn_fabric *fab);

/* ------------------------------------------------------------------------ */
/* IPv4 helpers (whole packets).                                              */
/* (the header checksum is srn_ipv4_csum of src/wire) */
/* true if pkt[0..len) is an IPv4 packet the switch forwards: version 4,
 * IHL >= 5, total length == len, valid header checksum. */
bool srn_fabric_ipv4_valid(const uint8_t *pkt, size_t len);

/* ------------------------------------------------------------------------ */
/* Configuration language (docs/fabric.md; the same for a file and for the
 * command line). One statement per line, '#' starts a comment:
 *
 *   seed N                          (or: seed=N)
 *   switch [ports=N] [slots=N] [slotsize=BYTES]
 *   default KNOB=VALUE ...          knobs of every port
 *   port A.B.C.D KNOB=VALUE ...     knobs of one port (override default)
 *
 * A knob applies to the port's OUT link; "in.KNOB" to its IN link,
 * "out.KNOB" to OUT, "both.KNOB" to both. "down" without prefix means both.
 * Knobs: rate buffer kmin kmax pmax loss ge dup corrupt delay jitter reorder
 * paths down. A port takes each knob from its own lines if set there, else
 * from the default lines, whatever the order of the lines.                  */
#define SRN_FABRIC_CONF_MAX_PORTS 64u

struct srn_fabric_conf_port {
	uint32_t ipv4;                      /* host order */
	struct srn_fabric_port_cfg cfg;
	uint32_t set[2];                    /* knobs set on this port, per dir */
};

struct srn_fabric_conf {
	uint64_t seed;
	bool     seed_set;
	uint32_t max_ports, nslots, slot_size; /* 0 = not set */
	struct srn_fabric_port_cfg dflt;
	uint32_t dflt_set[2];
	uint32_t nports;
	struct srn_fabric_conf_port port[SRN_FABRIC_CONF_MAX_PORTS];
};

void srn_fabric_conf_init(struct srn_fabric_conf *conf);
/* Parse one statement (no newline needed; a comment or blank is fine).
 * Returns 0 or SRN_EINVAL with a message naming the bad token in err. */
int  srn_fabric_conf_parse_line(struct srn_fabric_conf *conf, const char *line,
				size_t len, char *err, size_t errlen);
/* Parse a text of lines; messages start with "line N: ". Then checks every
 * configured port (srn_fabric_conf_check). */
int  srn_fabric_conf_parse(struct srn_fabric_conf *conf, const char *text,
			   size_t len, char *err, size_t errlen);
/* Check every port of the configuration as it resolves (default overlaid
 * with its own knobs); messages name the port. */
int  srn_fabric_conf_check(const struct srn_fabric_conf *conf, char *err, size_t errlen);
/* The configuration of the port with address ipv4: the default knobs
 * overlaid with the port's own (just the default for an unlisted address). */
void srn_fabric_conf_port_cfg(const struct srn_fabric_conf *conf, uint32_t ipv4,
			      struct srn_fabric_port_cfg *out);
/* Fill a switch configuration's seed/ports/slots from conf (others kept). */
void srn_fabric_conf_switch_cfg(const struct srn_fabric_conf *conf, struct srn_fabric_cfg *cfg);

/* "a.b.c.d" -> host-order address; 0 on success, SRN_EINVAL otherwise */
int  srn_fabric_parse_ipv4(const char *s, size_t len, uint32_t *out);
/* host-order address -> "a.b.c.d" */
void srn_fabric_fmt_ipv4(char out[16], uint32_t ipv4);

#endif /* SRN_FABRIC_H */
