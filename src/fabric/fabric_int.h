/*
 * fabric_int.h - internals of the fabric switch model: PRNG, packet slots,
 * event heap, links and ports. Not installed; src/fabric only.
 */
#ifndef SRN_FABRIC_INT_H
#define SRN_FABRIC_INT_H

#include "srn_fabric.h"

/* ---- rng.c: xoshiro256** seeded with splitmix64 ------------------------ */
#include "srn_fabric_rng.h"

/* Probabilities are fixed point with 2^63 = 1, so p = 1 is exact and draws
 * are integer comparisons (identical on every platform). */
#define SRN_FABRIC_P_ONE (1ull << 63)
uint64_t srn_fabric_prob_fixed(double p);   /* p clamped to [0, 1] */
/* true with probability p (fixed point); draws nothing when p is 0 or 1 */
bool     srn_fabric_rng_chance(struct srn_fabric_rng *r, uint64_t p);

/* ---- ipv4.c -------------------------------------------------------------- */
static inline uint32_t srn_fabric_ipv4_ihl(const uint8_t *pkt) { return (pkt[0] & 0x0fu) * 4u; }
static inline uint32_t srn_fabric_ipv4_dst(const uint8_t *pkt) { return srn_get32(pkt + 16); }
static inline uint32_t srn_fabric_ipv4_src(const uint8_t *pkt) { return srn_get32(pkt + 12); }
static inline uint8_t  srn_fabric_ipv4_ecn(const uint8_t *pkt) { return pkt[1] & 3u; }
/* set ECN to CE (11) and rewrite the header checksum */
void srn_fabric_ipv4_mark_ce(uint8_t *pkt);
/* Bit positions that corruption may flip: [*off, *off + *n) bytes of the UDP
 * payload; *skip is an offset inside it that must be left alone (RoCEv2 BTH
 * byte 4, FECN/BECN/resv6, which the ICRC masks) or UINT32_MAX. Returns
 * false if the packet has no UDP payload. */
bool srn_fabric_ipv4_udp_payload(const uint8_t *pkt, size_t len, uint32_t *off,
				 uint32_t *n, uint32_t *skip);

/* ---- packet slots ---------------------------------------------------------- */
enum srn_fabric_stage { SRN_FABRIC_STAGE_IN, SRN_FABRIC_STAGE_OUT };
struct srn_fabric_slot {
	srn_ts   time;     /* when the packet leaves its current link */
	uint64_t seq;      /* tie-break: order of queueing */
	uint32_t len;
	uint16_t port;     /* port of the current link */
	uint8_t  stage;    /* enum srn_fabric_stage: which link of the port */
	uint8_t *data;
};

/* ---- heap.c: min-heap of slot indices by (time, seq) ---------------------- */
struct srn_fabric_heap {
	uint32_t *idx;
	uint32_t n;
	const struct srn_fabric_slot *slots;
};
void     srn_fabric_heap_push(struct srn_fabric_heap *h, uint32_t slot);
uint32_t srn_fabric_heap_pop(struct srn_fabric_heap *h);     /* n > 0 */
static inline uint32_t srn_fabric_heap_top(const struct srn_fabric_heap *h) { return h->idx[0]; }

/* ---- link.c: one port, one direction -------------------------------------- */
struct srn_fabric_qent { srn_ts done; uint32_t len; };
struct srn_fabric_link {
	struct srn_fabric_link_cfg cfg;
	/* fixed-point probabilities of cfg */
	uint64_t p_loss, p_dup, p_corrupt, p_reorder, p_gb, p_bg, p_lg, p_lb, p_pmax;
	bool     ge_bad;
	srn_ts   ge_last;            /* time of the chain's last step */
	struct srn_fabric_rng rng;
	/* output queue: packets admitted and not yet fully serialised */
	srn_ts   busy_until;
	uint64_t q_bytes;
	struct srn_fabric_qent *q;   /* ring of q_cap */
	uint32_t q_head, q_cnt, q_cap;
	uint64_t ctr[SRN_FABRIC_CTR_MAX];
};

struct srn_fabric_port {
	uint32_t ipv4;
	struct srn_fabric_port_cfg cfg;
	struct srn_fabric_link link[2];
};

struct srn_fabric {
	struct srn_fabric_cfg cfg;
	struct srn_mem mem;
	struct srn_fabric_port *ports;
	uint32_t nports;
	struct srn_fabric_slot *slots;
	uint8_t  *slot_mem;
	uint32_t *free;      /* stack of free slot indices */
	uint32_t nfree;
	struct srn_fabric_heap heap;
	uint64_t seq;
	srn_ts   now;        /* latest time given to input or poll */
};

/* link.c */
void srn_fabric_link_init(struct srn_fabric_link *l, const struct srn_fabric_link_cfg *cfg,
			  uint64_t seed);
bool srn_fabric_link_is_down(const struct srn_fabric_link *l, srn_ts epoch, srn_ts t);
/* Admit the packet in slot s to link dir of port at time t: applies the
 * impairments and queues it (in the heap) or drops it (freeing the slot). */
void srn_fabric_link_admit(struct srn_fabric *fab, uint32_t port, enum srn_fabric_dir dir,
			   uint32_t s, srn_ts t);

/* fabric.c, for link.c */
uint32_t srn_fabric_slot_alloc(struct srn_fabric *fab);    /* UINT32_MAX if none */
void     srn_fabric_slot_free(struct srn_fabric *fab, uint32_t s);
void     srn_fabric_drop(struct srn_fabric *fab, uint32_t port, enum srn_fabric_dir dir,
			 uint32_t s, enum srn_fabric_ctr why, srn_ts t);
void     srn_fabric_schedule(struct srn_fabric *fab, uint32_t s);

#endif
