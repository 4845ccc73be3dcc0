/*
 * srn_verbs.h - internal header of softrnic's libibverbs.so.1 (src/verbs).
 *
 * This library *is* libibverbs: the application's ibv_* calls land here
 * directly, there is no provider indirection. Every verbs object is embedded
 * in our own struct (rdma-core provider style) and recovered with
 * container_of. Convention at the ABI edge only: verbs returning int return
 * a positive errno, verbs returning a pointer return NULL and set errno.
 * Inside, the core's negative enum srn_err is used and converted by
 * srn_verbs_errno().
 *
 * Locking order (outer to inner):
 *   ctx->reg_lock / channel->lock  ->  runtime device lock (srn_rt_lock)
 *   -> object mutex (ibv_cq.mutex ...).
 * The runtime hooks (cq_event, async_event) run with the runtime device lock
 * held; they only write() to non-blocking pipes and take no other lock than
 * vdev->ctx_lock (which is never held while taking the runtime lock).
 *
 * Events are carried through pipes as object *ids* (never raw pointers): an
 * event still in a pipe when its object is destroyed is simply skipped when
 * read, as the kernel drops events of destroyed uverbs objects.
 */
#ifndef SRN_VERBS_H
#define SRN_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <errno.h>
#include <pthread.h>
#include <infiniband/verbs.h>

#include "core/srn_core.h"
#include "runtime/srn_rt.h"

/* The device clock (completion timestamps, ibv_query_rt_values_ex): the
 * runtime's CLOCK_MONOTONIC in nanoseconds, so hca_core_clock is 1 GHz. */
#define SRN_VERBS_CORE_CLOCK_KHZ 1000000ull

/* the application-visible names (rdma-core wraps some of them in macros) */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
#undef ibv_query_port

#define SRN_EXPORT __attribute__((visibility("default")))

#define srn_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define SRN_VERBS_PORT 1           /* the one port of a softrnic device */
#define SRN_VERBS_GRH_LEN 40       /* GRH area at the start of UD receive buffers */

/* ibv_query_device identity: no IEEE OUI (as Soft-RoCE), part "SR", version 1 */
#define SRN_VERBS_VENDOR_ID      0xFFFFFFu
#define SRN_VERBS_VENDOR_PART_ID 0x5352u
#define SRN_VERBS_HW_VER         1u

/* ------------------------------------------------------------------------ */
struct srn_context;

/* One per configured device; lives for the whole process. */
struct srn_vdev {
	struct ibv_device ibdev;          /* handed out by ibv_get_device_list */
	struct srn_rt_devcfg cfg;
	int index;
	pthread_mutex_t ctx_lock;         /* protects ctxs */
	struct srn_context *ctxs;         /* open contexts (device-wide async events) */
	/* QPN -> QP lookup for completions (UD receive GRH); under the runtime lock */
#define SRN_VERBS_QP_HASH 256
	struct srn_vqp *qp_hash[SRN_VERBS_QP_HASH];
};

/* What the async pipe carries. */
enum srn_obj_kind { SRN_OBJ_NONE, SRN_OBJ_QP, SRN_OBJ_CQ, SRN_OBJ_SRQ };
struct srn_async_msg {
	uint32_t type;                    /* enum ibv_event_type */
	uint32_t kind;                    /* enum srn_obj_kind */
	uint64_t id;                      /* object id, 0 for device events */
};

struct srn_context {
	struct verbs_context vctx;        /* vctx.context is what the app sees */
	struct srn_vdev *vdev;
	struct srn_rt_dev *rd;
	struct srn_dev *core;
	struct srn_dev_cfg limits;        /* the core's limits (query_device) */
	int async_wfd;                    /* write end; read end is context.async_fd */
	pthread_mutex_t reg_lock;         /* protects the object lists below */
	struct srn_vqp *qps;
	struct srn_vcq *cqs;
	struct srn_vsrq *srqs;
	struct srn_vpd *pds;              /* ibv_import_pd finds them by handle */
	struct srn_vmr *mrs;              /* ibv_import_mr finds them by handle */
	struct srn_context *next;         /* in vdev->ctxs */
	/* sharing (share.c): cmd_fd is one end of a socketpair whose other end
	 * (cmd_srv) the process's share server answers; token names this
	 * context to importers. An ibv_import_device in this process gives a
	 * context with owner_token set (it imports this one's PDs/MRs); in
	 * another process a remote context (remote != NULL: no device of its
	 * own, every verb an RPC to the owner). */
	uint64_t token;
	int cmd_srv;
	uint64_t owner_token;
	struct srn_remote *remote;
};

struct srn_vtd {
	struct ibv_td td;
	int users;                        /* parent domains (atomic) */
};

struct srn_vpd {
	struct ibv_pd pd;
	uint32_t pdn;
	struct srn_vpd *next_in_ctx;      /* in ctx->pds (ordinary PDs only) */
	struct srn_vpd *imported;         /* ibv_import_pd: the owner's PD */
	uint32_t rh;                      /* a remote context's PD: its handle */
	int users;                        /* MRs, MWs, QPs, SRQs, AHs, parent domains (atomic) */
	/* a parent domain (ibv_alloc_parent_domain): the PD it extends (its
	 * pdn is that PD's), its thread domain, its allocators */
	struct srn_vpd *base;
	struct srn_vtd *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
};

struct srn_vmr {
	struct ibv_mr mr;
	struct srn_mr *core;
	int access;
	struct srn_vmr *next_in_ctx;      /* in ctx->mrs (ordinary MRs only) */
	struct srn_vmr *imported;         /* ibv_import_mr: the owner's MR */
	int imports;                      /* imports of this MR (atomic): dereg EBUSY */
	uint32_t rh;                      /* a remote context's MR: its handle */
};

struct srn_vmw {
	struct ibv_mw mw;                 /* rkey: current; handle: the core's */
	struct srn_mw *core;
	struct srn_vpd *pd;
};

struct srn_channel {
	struct ibv_comp_channel ch;       /* ch.fd is the read end */
	int wfd;
	pthread_mutex_t lock;             /* protects cqs, ch.refcnt */
	struct srn_vcq *cqs;
};

/* The extended-CQ poller keeps a small batch of polled CQEs. */
#define SRN_VERBS_CQ_BATCH 16

struct srn_vcq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;   /* same prefix as ibv_cq */
	};
	struct srn_context *ctx;
	struct srn_cq *core;
	struct srn_channel *channel;
	uint64_t id;
	uint32_t comp_events_reported;    /* under cq.mutex */
	uint32_t async_events_reported;
	bool is_ex;
	uint64_t wc_flags;                /* create_cq_ex wc_flags */
	/* extended polling state (start_poll .. end_poll) */
	struct srn_cqe batch[SRN_VERBS_CQ_BATCH];
	int batch_n, batch_i;
	uint32_t cur_wc_flags;
	int64_t wall_off;                 /* CLOCK_REALTIME - device clock, at the batch's poll */
	struct srn_vpd *pdom;             /* the parent domain it was created with, or NULL */
	bool mem_custom;                  /* allocated by pdom's allocator */
	uint32_t rh;                      /* a remote context's CQ: its handle */
	struct srn_vcq *ch_next;          /* in channel->cqs */
	struct srn_vcq *next;             /* in ctx->cqs */
};

struct srn_vsrq {
	struct ibv_srq srq;
	struct srn_context *ctx;
	struct srn_srq *core;
	struct srn_vpd *pd;
	uint64_t id;
	uint32_t events_reported;
	uint32_t max_sge;
	struct srn_vsrq *next;
};

/* Builder state of the ibv_qp_ex "new post send" API. */
struct srn_wrbuf {
	struct srn_send_wr wr;
	struct srn_ah_attr ah;
	uint32_t nsge;
};

struct srn_vqp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;   /* starts with struct ibv_qp */
	};
	struct srn_context *ctx;
	struct srn_qp *core;
	struct srn_vpd *pd;
	struct srn_vcq *scq, *rcq;
	struct srn_vsrq *srq;
	uint64_t id;
	uint32_t events_reported;
	bool sq_sig_all;
	bool has_qp_ex;
	uint64_t send_ops_flags;
	uint32_t cap_send_wr, cap_recv_wr, cap_send_sge, cap_recv_sge, cap_inline;
	/* qp_ex builder: preallocated at creation, post_send never allocates */
	struct srn_wrbuf *wrb;            /* cap_send_wr entries */
	struct srn_sge *wrb_sge;          /* cap_send_wr * cap_send_sge */
	uint8_t *wrb_inl;                 /* cap_send_wr * cap_inline */
	bool mem_custom, wrb_custom[3];   /* from the parent domain's allocator */
	uint32_t rh;                      /* a remote context's QP: its handle */
	uint32_t wrb_n;
	int wrb_err;
	struct srn_vqp *hnext;            /* in vdev->qp_hash */
	struct srn_vqp *next;             /* in ctx->qps */
};

struct srn_vah {
	struct ibv_ah ah;
	struct srn_vpd *pd;
	struct srn_ah_attr attr;
};

/* ------------------------------------------------------------------------ */
static inline struct srn_context *to_sctx(struct ibv_context *c)
{ return srn_container_of(c, struct srn_context, vctx.context); }
static inline struct srn_vpd *to_spd(struct ibv_pd *p)
{ return srn_container_of(p, struct srn_vpd, pd); }
static inline struct srn_vmr *to_smr(struct ibv_mr *m)
{ return srn_container_of(m, struct srn_vmr, mr); }
static inline struct srn_vmw *to_smw(struct ibv_mw *m)
{ return srn_container_of(m, struct srn_vmw, mw); }
static inline struct srn_vcq *to_scq(struct ibv_cq *c)
{ return srn_container_of(c, struct srn_vcq, cq); }
static inline struct srn_vcq *to_scq_ex(struct ibv_cq_ex *c)
{ return srn_container_of(c, struct srn_vcq, cq_ex); }
static inline struct srn_vqp *to_sqp(struct ibv_qp *q)
{ return srn_container_of(q, struct srn_vqp, qp); }
static inline struct srn_vqp *to_sqp_ex(struct ibv_qp_ex *q)
{ return srn_container_of(q, struct srn_vqp, qp_ex); }
static inline struct srn_vsrq *to_ssrq(struct ibv_srq *s)
{ return srn_container_of(s, struct srn_vsrq, srq); }
static inline struct srn_vah *to_sah(struct ibv_ah *a)
{ return srn_container_of(a, struct srn_vah, ah); }
static inline struct srn_channel *to_sch(struct ibv_comp_channel *c)
{ return srn_container_of(c, struct srn_channel, ch); }

/* enum srn_err -> positive errno */
int srn_verbs_errno(int srn_err);

/* pd.c: the memory of an object created with pd: the parent domain's
 * allocator if it has one (*custom = true), else zeroed libc memory; freed
 * with srn_verbs_obj_free and the same custom flag */
void *srn_verbs_obj_alloc(struct srn_vpd *pd, size_t size, uint64_t type, bool *custom);
void  srn_verbs_obj_free(struct srn_vpd *pd, void *p, uint64_t type, bool custom);
struct ibv_pd *srn_verbs_alloc_parent_domain(struct ibv_context *ctx,
					     struct ibv_parent_domain_init_attr *attr);
struct ibv_td *srn_verbs_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr);
int  srn_verbs_dealloc_td(struct ibv_td *td);

/* unique, never reused object ids (events carry ids, not pointers) */
uint64_t srn_verbs_new_id(void);

/* device.c */
struct srn_vdev *srn_verbs_vdev_of(struct ibv_device *dev); /* NULL if not ours */

/* query.c */
void srn_verbs_fill_device_attr(struct srn_context *sctx, struct ibv_device_attr *a);
void srn_verbs_gid(const struct srn_vdev *vdev, uint8_t gid[16]);
int  srn_verbs_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa, size_t len);
int  srn_verbs_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
int  srn_verbs_query_device_compat(struct ibv_context *ctx, struct ibv_device_attr *a);
int  srn_verbs_query_port_compat(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *pa);

/* cq.c */
int  srn_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int  srn_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *srn_verbs_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
void srn_verbs_cq_event_hook(struct srn_cq *cq, void *arg);
/* writes the GRH area of a completed UD receive (under the runtime lock) */

/* polls up to n CQEs (UD receive GRHs written); device lock held */
int  srn_verbs_cq_poll_locked(struct srn_vcq *vcq, struct srn_cqe *out, int n);

/* cq_ex.c */
void srn_verbs_cq_ex_init_ops(struct srn_vcq *vcq);
int  srn_verbs_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values);

/* mw.c: memory windows */
struct ibv_mw *srn_verbs_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int  srn_verbs_dealloc_mw(struct ibv_mw *mw);
int  srn_verbs_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
/* fills the bind part of a core WR from a type 2 window's bind; errno */
int  srn_verbs_mw_bind_wr(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey,
			  const struct ibv_mw_bind_info *bi, struct srn_send_wr *s);

/* qp.c / post.c / qp_ex.c */
struct ibv_qp *srn_verbs_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
int  srn_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int  srn_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
struct srn_vqp *srn_verbs_qp_lookup(struct srn_vdev *vdev, uint32_t qpn);
void srn_verbs_qp_ex_init_ops(struct srn_vqp *vqp);
int  srn_verbs_ah_convert(struct ibv_context *ctx, const struct ibv_ah_attr *in, struct srn_ah_attr *out);

/* qp_transition.c */
bool srn_verbs_modify_qp_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			       enum ibv_qp_type type, uint32_t mask);
int  srn_verbs_qp_attr_check(struct srn_context *sctx, const struct ibv_qp_attr *attr, int mask);

/* srq.c */
int  srn_verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
struct srn_vsrq *srn_verbs_srq_of_core(struct srn_srq *s);

/* share.c: cmd_fd, ibv_import_device/pd/mr, remote contexts */
int  srn_share_ctx_open(struct srn_context *sctx);    /* cmd_fd + serve it */
void srn_share_ctx_close(struct srn_context *sctx);
struct srn_context *srn_share_owner(uint64_t token); /* a context of this process */
/* a remote context's verbs (RPCs to the owner); errno values */
int  srn_remote_close(struct srn_context *sctx);
struct ibv_pd *srn_remote_alloc_pd(struct srn_context *sctx);
int  srn_remote_dealloc_pd(struct srn_vpd *pd);
struct ibv_pd *srn_remote_import_pd(struct srn_context *sctx, uint32_t handle);
struct ibv_mr *srn_remote_reg_mr(struct srn_vpd *pd, void *addr, size_t len, uint64_t iova,
				 unsigned int access);
int  srn_remote_dereg_mr(struct srn_vmr *mr);
struct ibv_mr *srn_remote_import_mr(struct srn_vpd *pd, uint32_t handle);
struct ibv_cq *srn_remote_create_cq(struct srn_context *sctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *ch, int vector);
int  srn_remote_destroy_cq(struct srn_vcq *cq);
struct ibv_qp *srn_remote_create_qp(struct srn_context *sctx, struct ibv_qp_init_attr_ex *a);
int  srn_remote_modify_qp(struct srn_vqp *q, struct ibv_qp_attr *attr, int mask);
int  srn_remote_query_qp(struct srn_vqp *q, struct ibv_qp_attr *attr, int mask,
			 struct ibv_qp_init_attr *init);
int  srn_remote_destroy_qp(struct srn_vqp *q);
void srn_remote_device_attr(struct srn_context *sctx, struct ibv_device_attr *a);

/* provider.c: providers registered through verbs_register_driver_34 */
int  srn_verbs_provider_count(void);
const char *srn_verbs_provider_name(int i);

/* async.c */
void srn_verbs_async_hook(const struct srn_async_event *ev, void *arg);

#endif /* SRN_VERBS_H */
