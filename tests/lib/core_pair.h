/*
 * core_pair.h - two srn_dev in one process joined by an in-memory link.
 *
 * A queue of packets each way, a fake clock advanced by hand, hooks that
 * drop / duplicate / delay the i-th packet of a direction, and helpers to
 * create connected RC/UC/UD QP pairs and registered buffers. The allocator
 * hooks count allocations so a test can assert that srn_dev_del freed all.
 *
 *   struct cp_pair *cp = cp_new(NULL);
 *   struct cp_qp a, b; cp_connect(cp, SRN_QPT_RC, &a, &b, NULL);
 *   ... srn_qp_post_send(a.qp, &wr, cp->now) ...
 *   cp_run(cp);                    // deliver until quiet (timers fire too)
 *   cp_free(cp); CHECK_EQ(cp_live_allocs(), 0);
 */
#ifndef SRN_CORE_PAIR_H
#define SRN_CORE_PAIR_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "core/srn_core.h"

#define CP_QCAP 8192
/* packets each direction of a link holds (default CP_QCAP); a test or fuzz
 * target may lower it before cp_new to make pairs cheap to create */
extern uint32_t cp_qcap;
/* false (default): a full link aborts the test; true: it drops the packet */
extern bool cp_qdrop;

/* what the filter decides for one packet */
enum cp_action { CP_PASS, CP_DROP, CP_DUP, CP_DELAY /* deliver after the next one */ };

struct cp_pkt {
	uint8_t data[SRN_MAX_PKT];
	size_t len;
	struct srn_pkt_meta meta;
};

struct cp_pair;
/* dir 0: dev[0] -> dev[1], 1: dev[1] -> dev[0]; idx counts packets per direction from 0 */
typedef enum cp_action (*cp_filter_fn)(struct cp_pair *cp, int dir, uint64_t idx,
				       const uint8_t *pkt, size_t len, void *arg);

struct cp_link {
	struct cp_pkt *q;         /* ring */
	uint32_t head, n;
	uint64_t sent;            /* packets that left the sender */
	struct cp_pkt held;       /* CP_DELAY */
	bool has_held;
};

struct cp_pair {
	struct srn_dev *dev[2];
	struct srn_dev_cfg cfg[2];
	srn_ts now;
	struct cp_link link[2];
	cp_filter_fn filter;
	void *filter_arg;
	/* optional: every packet is also offered here (capture for tests) */
	void (*tap)(struct cp_pair *cp, int dir, const uint8_t *pkt, size_t len,
		    const struct srn_pkt_meta *meta, void *arg);
	void *tap_arg;
	uint32_t pd[2];
	uint64_t delivered[2];
	bool mark_ce[2];          /* deliver direction's packets with ECN = CE */
};

/* allocation accounting (all pairs of the process) */
long cp_live_allocs(void);
long cp_total_allocs(void);

/* tune: called with each device's config before creation (may be NULL) */
typedef void (*cp_cfg_fn)(struct srn_dev_cfg *cfg, int which);
struct cp_pair *cp_new(cp_cfg_fn tune);
void cp_free(struct cp_pair *cp);

/* move packets until both directions are empty; returns packets delivered.
 * Does not advance the clock. */
uint64_t cp_pump(struct cp_pair *cp);
/* advance the clock by ns, fire timers, pump */
void cp_advance(struct cp_pair *cp, srn_ts ns);
/* pump; while idle but timers pending, jump the clock to the next deadline
 * (at most max_jumps times); returns number of jumps made */
int cp_run(struct cp_pair *cp);
int cp_run_n(struct cp_pair *cp, int max_jumps);

/* a QP with its CQs */
struct cp_qp {
	struct srn_qp *qp;
	struct srn_cq *scq, *rcq;
	int side;
};

struct cp_qp_opts {
	uint32_t max_send_wr, max_recv_wr, max_sge, max_inline;
	uint8_t path_mtu;           /* 1..5, default 3 (1024) */
	uint32_t sq_psn[2];         /* start PSN of side 0 / side 1 */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic;
	uint32_t access;            /* qp_access_flags; default all remote */
	uint32_t qkey;
	struct srn_srq *srq[2];
	bool sq_sig_all;
};
void cp_qp_opts_default(struct cp_qp_opts *o);
/* create a connected pair (RC/UC: RESET->INIT->RTR->RTS on both sides; UD: to RTS) */
int cp_connect(struct cp_pair *cp, enum srn_qp_type type, struct cp_qp *a, struct cp_qp *b,
	       const struct cp_qp_opts *opts);
void cp_qp_destroy(struct cp_pair *cp, struct cp_qp *q);

/* register a buffer on a side's PD */
struct srn_mr *cp_reg(struct cp_pair *cp, int side, void *buf, size_t len, uint32_t access);

/* fill pattern / check helpers */
void cp_fill(uint8_t *buf, size_t len, uint32_t seed);

/* simple WR helpers */
int cp_post_send(struct cp_pair *cp, struct cp_qp *q, uint8_t opcode, uint64_t wr_id,
		 void *buf, uint32_t len, struct srn_mr *mr, uint64_t raddr, uint32_t rkey,
		 uint32_t flags);
int cp_post_recv(struct cp_qp *q, uint64_t wr_id, void *buf, uint32_t len, struct srn_mr *mr);
/* poll one CQE; 1 if got one */
int cp_poll1(struct srn_cq *cq, struct srn_cqe *out);

/* the AH of the other side */
void cp_ah(struct cp_pair *cp, int to_side, struct srn_ah_attr *ah);

#endif
