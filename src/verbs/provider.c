/*
 * provider.c - rdma-core's provider interface (symbol node IBVERBS_PRIVATE_34).
 *
 * Other rdma-core providers and librdmacm link against libibverbs and bind
 * to these symbols (libmlx5.so.1, libefa.so.1; perftest links all three), so
 * the dynamic loader refuses to start such a program unless every one exists.
 * rdma-core's <infiniband/driver.h> is not installed by Debian; the
 * prototypes below are copied from rdma-core 44's driver.h / cmd_ioctl.h
 * (argument types that are only passed through stay incomplete structs).
 *
 * What they do here:
 *  - verbs_register_driver_34: a real registry. Each provider's constructor
 *    calls it when its library is loaded; softrnic records the ops (name and
 *    table) - see srn_verbs_provider_count/name. softrnic enumerates no
 *    kernel uverbs devices (its devices come from SOFTRNIC_DEVICES), so no
 *    registered provider is ever matched to a device or asked to
 *    alloc_context.
 *  - the context/CQ helpers (verbs_init_and_alloc_context, verbs_set_ops,
 *    verbs_uninit_context, verbs_init_cq, verbs_open_device) and __verbs_log,
 *    __ioctl_final_num_attrs, ibv_read_ibdev_sysfs_file do what rdma-core's
 *    do, on softrnic's structures.
 *  - ibv_cmd_* and execute_ioctl are the kernel command channel (write() and
 *    ioctl() on /dev/infiniband/uverbsN). A provider reaches them only while
 *    driving a kernel device, which cannot exist in a softrnic process (a
 *    context's cmd_fd is softrnic's sharing socket, share.c, not a uverbs
 *    file). They fail as rdma-core does when the kernel
 *    command channel cannot carry the command: execute_ioctl returns ENOTTY
 *    (the kernel's answer when the uverbs ioctl framework is absent) and each
 *    ibv_cmd_* returns EOPNOTSUPP with errno set (rdma-core's
 *    _check_legacy() result when neither ioctl nor write can carry it). This
 *    is the true behaviour, not a missing implementation; see docs/verbs.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "srn_verbs.h"

/* ---- types of rdma-core's driver.h (only what is dereferenced here) ---- */

/* struct verbs_device_ops starts with its name (driver.h) */
struct verbs_device_ops {
	const char *name;
};

/* the prefix of struct verbs_sysfs_dev up to ibdev_path (rdma-core 44) */
struct verbs_sysfs_dev {
	void *entry_next, *entry_prev;     /* struct list_node */
	void *provider_data;
	const void *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
};

/* struct ibv_command_buffer (cmd_ioctl.h): only next and the attribute
 * cursor are read, by __ioctl_final_num_attrs */
struct ib_uverbs_attr_s { uint16_t attr_id, len, flags; uint8_t rsvd[2]; uint64_t data; };
struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr_s *next_attr;
	struct ib_uverbs_attr_s *last_attr;
	uint8_t uhw_in_idx, uhw_out_idx, uhw_in_headroom_dwords, uhw_out_headroom_dwords;
	uint8_t buffer_error:1, fallback_require_ex:1, fallback_ioctl_only:1;
	struct {                           /* struct ib_uverbs_ioctl_hdr */
		uint16_t length, object_id, method_id, num_attrs;
		uint64_t reserved1;
		uint32_t driver_id, reserved2;
		struct ib_uverbs_attr_s attrs[];
	} hdr;
};

/* only passed through */
struct verbs_context_ops;
struct verbs_mr; struct verbs_xrcd; struct verbs_cq; struct verbs_srq; struct verbs_qp;
struct verbs_flow_action; struct verbs_counters; struct verbs_dm;
struct ibv_get_context; struct ib_uverbs_get_context_resp;
struct ib_uverbs_ex_query_device_resp; struct ibv_query_port;
struct ibv_alloc_pd; struct ib_uverbs_alloc_pd_resp;
struct ibv_open_xrcd; struct ib_uverbs_open_xrcd_resp;
struct ibv_reg_mr; struct ib_uverbs_reg_mr_resp;
struct ibv_rereg_mr; struct ib_uverbs_rereg_mr_resp;
struct ibv_alloc_mw; struct ib_uverbs_alloc_mw_resp;
struct ibv_create_cq; struct ib_uverbs_create_cq_resp;
struct ibv_create_cq_ex; struct ib_uverbs_ex_create_cq_resp;
struct ibv_resize_cq; struct ib_uverbs_resize_cq_resp; struct ibv_modify_cq;
struct ibv_create_srq; struct ib_uverbs_create_srq_resp; struct ibv_create_xsrq;
struct ibv_modify_srq; struct ibv_query_srq;
struct ibv_create_qp; struct ib_uverbs_create_qp_resp;
struct ibv_create_qp_ex; struct ib_uverbs_ex_create_qp_resp;
struct ibv_open_qp; struct ibv_query_qp; struct ibv_modify_qp;
struct ibv_modify_qp_ex; struct ib_uverbs_ex_modify_qp_resp;
struct ib_uverbs_create_ah_resp;
struct ibv_create_wq; struct ib_uverbs_ex_create_wq_resp; struct ibv_modify_wq;
struct ib_uverbs_ex_create_rwq_ind_table_resp;

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

/* ---- the provider registry ------------------------------------------- */

#define SRN_MAX_PROVIDERS 32

static pthread_mutex_t prov_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct verbs_device_ops *prov[SRN_MAX_PROVIDERS];
static int nprov;

SRN_EXPORT void verbs_register_driver_34(const struct verbs_device_ops *ops);
/* Called by each provider library's constructor. Records the provider (a
 * second registration of the same ops is ignored; past SRN_MAX_PROVIDERS a
 * registration is dropped with a message). No softrnic device is ever
 * matched to it: there are no kernel uverbs devices to match. */
void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	if (!ops)
		return;
	pthread_mutex_lock(&prov_lock);
	bool dup = false;
	for (int i = 0; i < nprov; i++)
		dup |= prov[i] == ops;
	if (!dup) {
		if (nprov < SRN_MAX_PROVIDERS)
			prov[nprov++] = ops;
		else
			fprintf(stderr, "softrnic: provider %s not recorded (table full)\n",
				ops->name ? ops->name : "?");
	}
	pthread_mutex_unlock(&prov_lock);
}

int srn_verbs_provider_count(void)
{
	pthread_mutex_lock(&prov_lock);
	int n = nprov;
	pthread_mutex_unlock(&prov_lock);
	return n;
}

const char *srn_verbs_provider_name(int i)
{
	const char *s = NULL;
	pthread_mutex_lock(&prov_lock);
	if (i >= 0 && i < nprov)
		s = prov[i]->name;
	pthread_mutex_unlock(&prov_lock);
	return s;
}

/* ---- context and CQ helpers ------------------------------------------- */

SRN_EXPORT bool verbs_allow_disassociate_destroy;

/* rdma-core: libibverbs' dummy ops make every unset op fail with
 * EOPNOTSUPP; a freshly initialised context here has NULL ops, for which the
 * inline wrappers of verbs.h report the same. */
static int init_context(struct verbs_context *vctx, struct ibv_device *device, int cmd_fd)
{
	struct ibv_context *ctx = &vctx->context;

	ctx->device = device;
	ctx->cmd_fd = cmd_fd;
	ctx->async_fd = -1;
	ctx->num_comp_vectors = 1;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	vctx->sz = sizeof(*vctx);
	return pthread_mutex_init(&ctx->mutex, NULL);
}

SRN_EXPORT void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
					       size_t alloc_size,
					       struct verbs_context *context_offset,
					       uint32_t driver_id);
/* Allocate a provider's context struct of alloc_size bytes with its
 * verbs_context at offset (size_t)context_offset, and initialise it.
 * The provider owns cmd_fd (rdma-core closes it on failure). */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size, struct verbs_context *context_offset,
				    uint32_t driver_id)
{
	(void)driver_id;
	size_t off = (size_t)(uintptr_t)context_offset;
	if (off + sizeof(struct verbs_context) > alloc_size) {
		errno = EINVAL;
		return NULL;
	}
	uint8_t *p = calloc(1, alloc_size);
	if (!p) {
		errno = ENOMEM;
		if (cmd_fd >= 0)
			close(cmd_fd);
		return NULL;
	}
	int r = init_context((struct verbs_context *)(p + off), device, cmd_fd);
	if (r) {
		free(p);
		errno = r;
		if (cmd_fd >= 0)
			close(cmd_fd);
		return NULL;
	}
	return p;
}

SRN_EXPORT void verbs_uninit_context(struct verbs_context *context);
/* Undo _verbs_init_and_alloc_context's initialisation (the provider frees
 * its struct): closes the command and async fds it owns. */
void verbs_uninit_context(struct verbs_context *context)
{
	struct ibv_context *ctx = &context->context;

	if (ctx->cmd_fd >= 0)
		close(ctx->cmd_fd);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	ctx->cmd_fd = ctx->async_fd = -1;
	pthread_mutex_destroy(&ctx->mutex);
}

/* The ops of rdma-core's struct verbs_context_ops that land in public
 * struct fields (verbs.h); driver.h keeps the members sorted by name. Only
 * the prefix up to the last member used here is declared. */
struct srn_vops {
	void *advise_mr, *alloc_dm, *alloc_mw, *alloc_null_mr, *alloc_parent_domain,
	     *alloc_pd, *alloc_td, *async_event, *attach_counters_point_flow,
	     *attach_mcast, *bind_mw, *close_xrcd, *cq_event, *create_ah,
	     *create_counters, *create_cq, *create_cq_ex, *create_flow,
	     *create_flow_action_esp, *create_qp, *create_qp_ex,
	     *create_rwq_ind_table, *create_srq, *create_srq_ex, *create_wq,
	     *dealloc_mw, *dealloc_pd, *dealloc_td, *dereg_mr, *destroy_ah,
	     *destroy_counters, *destroy_cq, *destroy_flow, *destroy_flow_action,
	     *destroy_qp, *destroy_rwq_ind_table, *destroy_srq, *destroy_wq,
	     *detach_mcast, *free_context, *free_dm, *get_srq_num, *import_dm,
	     *import_mr, *import_pd, *modify_cq, *modify_flow_action_esp,
	     *modify_qp, *modify_qp_rate_limit, *modify_srq, *modify_wq, *open_qp,
	     *open_xrcd, *poll_cq, *post_recv, *post_send, *post_srq_ops,
	     *post_srq_recv, *query_device_ex, *query_ece, *query_port, *query_qp,
	     *query_qp_data_in_order, *query_rt_values, *query_srq, *read_counters,
	     *reg_dm_mr, *reg_dmabuf_mr, *reg_mr, *req_notify_cq, *rereg_mr,
	     *resize_cq, *set_ece, *unimport_dm, *unimport_mr, *unimport_pd;
};

#define SET_OP(dst, name) do { if (o->name) memcpy(&(dst), &o->name, sizeof(void *)); } while (0)

SRN_EXPORT void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);
/* Install a provider's ops into the public fields of its context (the
 * ibv_context_ops and verbs_context members that verbs.h's inline functions
 * call). NULL members leave the field as it was. */
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
	const struct srn_vops *o = (const struct srn_vops *)(const void *)ops;
	struct ibv_context_ops *c = &vctx->context.ops;

	if (!o)
		return;
	SET_OP(c->poll_cq, poll_cq);
	SET_OP(c->req_notify_cq, req_notify_cq);
	SET_OP(c->post_send, post_send);
	SET_OP(c->post_recv, post_recv);
	SET_OP(c->post_srq_recv, post_srq_recv);
	SET_OP(c->alloc_mw, alloc_mw);
	SET_OP(c->bind_mw, bind_mw);
	SET_OP(c->dealloc_mw, dealloc_mw);
	/* query_port is not copied: the provider op lacks the verbs_context
	 * member's length argument (rdma-core installs its own wrapper) */
	SET_OP(vctx->query_device_ex, query_device_ex);
	SET_OP(vctx->advise_mr, advise_mr);
	SET_OP(vctx->alloc_null_mr, alloc_null_mr);
	SET_OP(vctx->read_counters, read_counters);
	SET_OP(vctx->attach_counters_point_flow, attach_counters_point_flow);
	SET_OP(vctx->create_counters, create_counters);
	SET_OP(vctx->destroy_counters, destroy_counters);
	SET_OP(vctx->reg_dm_mr, reg_dm_mr);
	SET_OP(vctx->alloc_dm, alloc_dm);
	SET_OP(vctx->free_dm, free_dm);
	SET_OP(vctx->modify_flow_action_esp, modify_flow_action_esp);
	SET_OP(vctx->destroy_flow_action, destroy_flow_action);
	SET_OP(vctx->create_flow_action_esp, create_flow_action_esp);
	SET_OP(vctx->modify_qp_rate_limit, modify_qp_rate_limit);
	SET_OP(vctx->alloc_parent_domain, alloc_parent_domain);
	SET_OP(vctx->dealloc_td, dealloc_td);
	SET_OP(vctx->alloc_td, alloc_td);
	SET_OP(vctx->modify_cq, modify_cq);
	SET_OP(vctx->post_srq_ops, post_srq_ops);
	SET_OP(vctx->query_rt_values, query_rt_values);
	SET_OP(vctx->ibv_destroy_flow, destroy_flow);
	SET_OP(vctx->ibv_create_flow, create_flow);
	SET_OP(vctx->create_cq_ex, create_cq_ex);
	SET_OP(vctx->create_qp_ex, create_qp_ex);
	SET_OP(vctx->create_srq_ex, create_srq_ex);
	SET_OP(vctx->open_xrcd, open_xrcd);
	SET_OP(vctx->close_xrcd, close_xrcd);
	SET_OP(vctx->open_qp, open_qp);
	SET_OP(vctx->get_srq_num, get_srq_num);
	SET_OP(vctx->create_wq, create_wq);
	SET_OP(vctx->modify_wq, modify_wq);
	SET_OP(vctx->destroy_wq, destroy_wq);
	SET_OP(vctx->create_rwq_ind_table, create_rwq_ind_table);
	SET_OP(vctx->destroy_rwq_ind_table, destroy_rwq_ind_table);
}

SRN_EXPORT void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
			      struct ibv_comp_channel *channel, void *cq_context);
/* rdma-core's common initialisation of a provider's CQ. */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context)
{
	cq->context = context;
	cq->channel = channel;
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
}

SRN_EXPORT struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data);
/* Open a device with provider private data. softrnic devices take none; any
 * other ibv_device cannot come from this library's device list. */
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data)
{
	(void)private_data;
	return ibv_open_device(device);
}

/* ---- logging (rdma-core's VERBS_LOG_LEVEL / VERBS_LOG_FILE) ------------ */

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static uint32_t log_level;
static FILE *log_fp;

static void log_init(void)
{
	const char *l = getenv("VERBS_LOG_LEVEL");
	const char *f = getenv("VERBS_LOG_FILE");

	log_level = l ? (uint32_t)strtoul(l, NULL, 0) : 0;
	log_fp = stderr;
	if (f && *f) {
		FILE *fp = fopen(f, "aeb");
		if (fp)
			log_fp = fp;
	}
}

SRN_EXPORT void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Providers' verbs_err()/verbs_debug(): printed when level <= VERBS_LOG_LEVEL. */
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	(void)ctx;
	pthread_once(&log_once, log_init);
	if (level > log_level)
		return;
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(log_fp, fmt, ap);
	va_end(ap);
	errno = e;
}

/* ---- ioctl command buffers --------------------------------------------- */

SRN_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
						struct ibv_command_buffer *link);
/* Number of attributes in this and all the linked command buffers. */
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, struct ibv_command_buffer *link)
{
	for (; link; link = link->next)
		num_attrs += (unsigned int)(link->next_attr - link->hdr.attrs);
	return num_attrs;
}

SRN_EXPORT int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);
/* The uverbs ioctl on context->cmd_fd. Not-supported is the true behaviour:
 * a softrnic process has no /dev/infiniband/uverbs device, so the answer is
 * ENOTTY, the kernel's reply when the uverbs ioctl framework is absent. */
int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd)
{
	(void)context;
	(void)cmd;
	errno = ENOTTY;
	return ENOTTY;
}

SRN_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size, struct verbs_sysfs_dev *sysfs_dev,
					 const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Read the file fnfmt (printf format) below the device's sysfs directory;
 * returns the length read (trailing newline removed) or -1 with errno. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
{
	char rel[256];
	va_list ap;

	va_start(ap, fnfmt);
	int n = vsnprintf(rel, sizeof rel, fnfmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof rel || !sysfs_dev) {
		errno = EINVAL;
		return -1;
	}
	return ibv_read_sysfs_file(sysfs_dev->ibdev_path, rel, buf, size);
}

/* ---- the kernel command channel ------------------------------------------
 * Each ibv_cmd_* below is a uverbs command written to context->cmd_fd. A
 * provider calls one only while driving a kernel uverbs device; there is
 * none in a softrnic process, so the command channel is absent and every
 * command fails as rdma-core's fallback fails when neither ioctl nor write
 * can carry it: return EOPNOTSUPP and set errno. Not-supported is the true
 * behaviour here (docs/verbs.md, "The provider interface"). */
static int no_kernel_channel(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

#define CMD(proto) SRN_EXPORT int proto; int proto { return no_kernel_channel(); }
#define U __attribute__((unused))

CMD(ibv_cmd_get_context(U struct verbs_context *context, U struct ibv_get_context *cmd,
	U size_t cmd_size, U struct ib_uverbs_get_context_resp *resp, U size_t resp_size))
CMD(ibv_cmd_query_context(U struct ibv_context *ctx, U struct ibv_command_buffer *driver))
CMD(ibv_cmd_create_flow_action_esp(U struct ibv_context *ctx, U struct ibv_flow_action_esp_attr *attr,
	U struct verbs_flow_action *flow_action, U struct ibv_command_buffer *driver))
CMD(ibv_cmd_modify_flow_action_esp(U struct verbs_flow_action *flow_action,
	U struct ibv_flow_action_esp_attr *attr, U struct ibv_command_buffer *driver))
CMD(ibv_cmd_query_device_any(U struct ibv_context *context,
	U const struct ibv_query_device_ex_input *input, U struct ibv_device_attr_ex *attr,
	U size_t attr_size, U struct ib_uverbs_ex_query_device_resp *resp, U size_t *resp_size))
CMD(ibv_cmd_query_port(U struct ibv_context *context, U uint8_t port_num,
	U struct ibv_port_attr *port_attr, U struct ibv_query_port *cmd, U size_t cmd_size))
CMD(ibv_cmd_alloc_pd(U struct ibv_context *context, U struct ibv_pd *pd, U struct ibv_alloc_pd *cmd,
	U size_t cmd_size, U struct ib_uverbs_alloc_pd_resp *resp, U size_t resp_size))
CMD(ibv_cmd_dealloc_pd(U struct ibv_pd *pd))
CMD(ibv_cmd_open_xrcd(U struct ibv_context *context, U struct verbs_xrcd *xrcd, U int vxrcd_size,
	U struct ibv_xrcd_init_attr *attr, U struct ibv_open_xrcd *cmd, U size_t cmd_size,
	U struct ib_uverbs_open_xrcd_resp *resp, U size_t resp_size))
CMD(ibv_cmd_close_xrcd(U struct verbs_xrcd *xrcd))
CMD(ibv_cmd_reg_mr(U struct ibv_pd *pd, U void *addr, U size_t length, U uint64_t hca_va,
	U int access, U struct verbs_mr *vmr, U struct ibv_reg_mr *cmd, U size_t cmd_size,
	U struct ib_uverbs_reg_mr_resp *resp, U size_t resp_size))
CMD(ibv_cmd_rereg_mr(U struct verbs_mr *vmr, U uint32_t flags, U void *addr, U size_t length,
	U uint64_t hca_va, U int access, U struct ibv_pd *pd, U struct ibv_rereg_mr *cmd,
	U size_t cmd_sz, U struct ib_uverbs_rereg_mr_resp *resp, U size_t resp_sz))
CMD(ibv_cmd_dereg_mr(U struct verbs_mr *vmr))
CMD(ibv_cmd_query_mr(U struct ibv_pd *pd, U struct verbs_mr *vmr, U uint32_t mr_handle))
CMD(ibv_cmd_advise_mr(U struct ibv_pd *pd, U enum ibv_advise_mr_advice advice, U uint32_t flags,
	U struct ibv_sge *sg_list, U uint32_t num_sge))
CMD(ibv_cmd_reg_dmabuf_mr(U struct ibv_pd *pd, U uint64_t offset, U size_t length, U uint64_t iova,
	U int fd, U int access, U struct verbs_mr *vmr))
CMD(ibv_cmd_alloc_mw(U struct ibv_pd *pd, U enum ibv_mw_type type, U struct ibv_mw *mw,
	U struct ibv_alloc_mw *cmd, U size_t cmd_size, U struct ib_uverbs_alloc_mw_resp *resp,
	U size_t resp_size))
CMD(ibv_cmd_dealloc_mw(U struct ibv_mw *mw))
CMD(ibv_cmd_create_cq(U struct ibv_context *context, U int cqe, U struct ibv_comp_channel *channel,
	U int comp_vector, U struct ibv_cq *cq, U struct ibv_create_cq *cmd, U size_t cmd_size,
	U struct ib_uverbs_create_cq_resp *resp, U size_t resp_size))
CMD(ibv_cmd_create_cq_ex(U struct ibv_context *context, U const struct ibv_cq_init_attr_ex *cq_attr,
	U struct verbs_cq *cq, U struct ibv_create_cq_ex *cmd, U size_t cmd_size,
	U struct ib_uverbs_ex_create_cq_resp *resp, U size_t resp_size, U uint32_t cmd_flags))
CMD(ibv_cmd_poll_cq(U struct ibv_cq *cq, U int ne, U struct ibv_wc *wc))
CMD(ibv_cmd_req_notify_cq(U struct ibv_cq *cq, U int solicited_only))
CMD(ibv_cmd_resize_cq(U struct ibv_cq *cq, U int cqe, U struct ibv_resize_cq *cmd, U size_t cmd_size,
	U struct ib_uverbs_resize_cq_resp *resp, U size_t resp_size))
CMD(ibv_cmd_destroy_cq(U struct ibv_cq *cq))
CMD(ibv_cmd_modify_cq(U struct ibv_cq *cq, U struct ibv_modify_cq_attr *attr,
	U struct ibv_modify_cq *cmd, U size_t cmd_size))
CMD(ibv_cmd_create_srq(U struct ibv_pd *pd, U struct ibv_srq *srq, U struct ibv_srq_init_attr *attr,
	U struct ibv_create_srq *cmd, U size_t cmd_size, U struct ib_uverbs_create_srq_resp *resp,
	U size_t resp_size))
CMD(ibv_cmd_create_srq_ex(U struct ibv_context *context, U struct verbs_srq *srq,
	U struct ibv_srq_init_attr_ex *attr_ex, U struct ibv_create_xsrq *cmd, U size_t cmd_size,
	U struct ib_uverbs_create_srq_resp *resp, U size_t resp_size))
CMD(ibv_cmd_modify_srq(U struct ibv_srq *srq, U struct ibv_srq_attr *srq_attr, U int srq_attr_mask,
	U struct ibv_modify_srq *cmd, U size_t cmd_size))
CMD(ibv_cmd_query_srq(U struct ibv_srq *srq, U struct ibv_srq_attr *srq_attr,
	U struct ibv_query_srq *cmd, U size_t cmd_size))
CMD(ibv_cmd_destroy_srq(U struct ibv_srq *srq))
CMD(ibv_cmd_create_qp(U struct ibv_pd *pd, U struct ibv_qp *qp, U struct ibv_qp_init_attr *attr,
	U struct ibv_create_qp *cmd, U size_t cmd_size, U struct ib_uverbs_create_qp_resp *resp,
	U size_t resp_size))
CMD(ibv_cmd_create_qp_ex(U struct ibv_context *context, U struct verbs_qp *qp,
	U struct ibv_qp_init_attr_ex *attr_ex, U struct ibv_create_qp *cmd, U size_t cmd_size,
	U struct ib_uverbs_create_qp_resp *resp, U size_t resp_size))
CMD(ibv_cmd_create_qp_ex2(U struct ibv_context *context, U struct verbs_qp *qp,
	U struct ibv_qp_init_attr_ex *qp_attr, U struct ibv_create_qp_ex *cmd, U size_t cmd_size,
	U struct ib_uverbs_ex_create_qp_resp *resp, U size_t resp_size))
CMD(ibv_cmd_open_qp(U struct ibv_context *context, U struct verbs_qp *qp, U int vqp_sz,
	U struct ibv_qp_open_attr *attr, U struct ibv_open_qp *cmd, U size_t cmd_size,
	U struct ib_uverbs_create_qp_resp *resp, U size_t resp_size))
CMD(ibv_cmd_query_qp(U struct ibv_qp *qp, U struct ibv_qp_attr *qp_attr, U int attr_mask,
	U struct ibv_qp_init_attr *qp_init_attr, U struct ibv_query_qp *cmd, U size_t cmd_size))
CMD(ibv_cmd_modify_qp(U struct ibv_qp *qp, U struct ibv_qp_attr *attr, U int attr_mask,
	U struct ibv_modify_qp *cmd, U size_t cmd_size))
CMD(ibv_cmd_modify_qp_ex(U struct ibv_qp *qp, U struct ibv_qp_attr *attr, U int attr_mask,
	U struct ibv_modify_qp_ex *cmd, U size_t cmd_size,
	U struct ib_uverbs_ex_modify_qp_resp *resp, U size_t resp_size))
CMD(ibv_cmd_destroy_qp(U struct ibv_qp *qp))
CMD(ibv_cmd_post_send(U struct ibv_qp *ibqp, U struct ibv_send_wr *wr, U struct ibv_send_wr **bad_wr))
CMD(ibv_cmd_post_recv(U struct ibv_qp *ibqp, U struct ibv_recv_wr *wr, U struct ibv_recv_wr **bad_wr))
CMD(ibv_cmd_post_srq_recv(U struct ibv_srq *srq, U struct ibv_recv_wr *wr,
	U struct ibv_recv_wr **bad_wr))
CMD(ibv_cmd_create_ah(U struct ibv_pd *pd, U struct ibv_ah *ah, U struct ibv_ah_attr *attr,
	U struct ib_uverbs_create_ah_resp *resp, U size_t resp_size))
CMD(ibv_cmd_destroy_ah(U struct ibv_ah *ah))
CMD(ibv_cmd_attach_mcast(U struct ibv_qp *qp, U const union ibv_gid *gid, U uint16_t lid))
CMD(ibv_cmd_detach_mcast(U struct ibv_qp *qp, U const union ibv_gid *gid, U uint16_t lid))
CMD(ibv_cmd_create_flow(U struct ibv_qp *qp, U struct ibv_flow *flow_id,
	U struct ibv_flow_attr *flow_attr, U void *ucmd, U size_t ucmd_size))
CMD(ibv_cmd_destroy_flow(U struct ibv_flow *flow_id))
CMD(ibv_cmd_create_wq(U struct ibv_context *context, U struct ibv_wq_init_attr *wq_init_attr,
	U struct ibv_wq *wq, U struct ibv_create_wq *cmd, U size_t cmd_size,
	U struct ib_uverbs_ex_create_wq_resp *resp, U size_t resp_size))
CMD(ibv_cmd_destroy_flow_action(U struct verbs_flow_action *action))
CMD(ibv_cmd_modify_wq(U struct ibv_wq *wq, U struct ibv_wq_attr *attr, U struct ibv_modify_wq *cmd,
	U size_t cmd_size))
CMD(ibv_cmd_destroy_wq(U struct ibv_wq *wq))
CMD(ibv_cmd_create_rwq_ind_table(U struct ibv_context *context,
	U struct ibv_rwq_ind_table_init_attr *init_attr, U struct ibv_rwq_ind_table *rwq_ind_table,
	U struct ib_uverbs_ex_create_rwq_ind_table_resp *resp, U size_t resp_size))
CMD(ibv_cmd_destroy_rwq_ind_table(U struct ibv_rwq_ind_table *rwq_ind_table))
CMD(ibv_cmd_create_counters(U struct ibv_context *context, U struct ibv_counters_init_attr *init_attr,
	U struct verbs_counters *vcounters, U struct ibv_command_buffer *link))
CMD(ibv_cmd_destroy_counters(U struct verbs_counters *vcounters))
CMD(ibv_cmd_read_counters(U struct verbs_counters *vcounters, U uint64_t *counters_value,
	U uint32_t ncounters, U uint32_t flags, U struct ibv_command_buffer *link))
CMD(ibv_cmd_alloc_dm(U struct ibv_context *ctx, U const struct ibv_alloc_dm_attr *dm_attr,
	U struct verbs_dm *dm, U struct ibv_command_buffer *link))
CMD(ibv_cmd_free_dm(U struct verbs_dm *dm))
CMD(ibv_cmd_reg_dm_mr(U struct ibv_pd *pd, U struct verbs_dm *dm, U uint64_t offset, U size_t length,
	U unsigned int access, U struct verbs_mr *vmr, U struct ibv_command_buffer *link))
