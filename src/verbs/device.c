/*
 * device.c - the device list and device contexts.
 *
 * ibv_get_device_list -> devices from srn_rt_config_load (once per process)
 * ibv_open_device     -> struct srn_context { struct verbs_context vctx; ... }
 *                        + srn_rt_dev_open (UDP socket, progress thread)
 * ibv_close_device    -> srn_rt_dev_close
 * cmd_fd, ibv_import_device: share.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <endian.h>
#include <stdatomic.h>

#include "srn_verbs.h"

static struct srn_vdev g_vdevs[SRN_RT_MAX_DEVS];
static int g_nvdevs;
static int g_load_err;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

int srn_verbs_errno(int e)
{
	switch (e) {
	case SRN_OK:      return 0;
	case SRN_ENOMEM:  return ENOMEM;
	case SRN_EBUSY:   return EBUSY;
	case SRN_ENOENT:  return ENOENT;
	case SRN_EAGAIN:  return EAGAIN;
	case SRN_EINVAL:
	case SRN_ESTATE:
	case SRN_ERANGE:
	default:          return EINVAL;
	}
}

uint64_t srn_verbs_new_id(void)
{
	static atomic_uint_fast64_t next = 1;
	return atomic_fetch_add(&next, 1);
}

static void load_devices(void)
{
	struct srn_rt_devcfg cfg[SRN_RT_MAX_DEVS];
	int n = srn_rt_config_load(cfg, SRN_RT_MAX_DEVS);

	if (n < 0) {
		g_load_err = EINVAL;
		return;
	}
	for (int i = 0; i < n && i < SRN_RT_MAX_DEVS; i++) {
		struct srn_vdev *v = &g_vdevs[i];
		struct ibv_device *d = &v->ibdev;

		memset(v, 0, sizeof(*v));
		v->cfg = cfg[i];
		v->index = i;
		pthread_mutex_init(&v->ctx_lock, NULL);
		/* rxe reports the same: an IB-transport CA with an Ethernet port */
		d->node_type = IBV_NODE_CA;
		d->transport_type = IBV_TRANSPORT_IB;
		size_t nl = strnlen(cfg[i].name, sizeof(cfg[i].name) - 1);

		if (nl >= sizeof(d->name))
			nl = sizeof(d->name) - 1;
		memcpy(d->name, cfg[i].name, nl);
		d->name[nl] = '\0';
		snprintf(d->dev_name, sizeof(d->dev_name), "uverbs%d", i);
		snprintf(d->dev_path, sizeof(d->dev_path),
			 "/sys/class/infiniband_verbs/uverbs%d", i);
		snprintf(d->ibdev_path, sizeof(d->ibdev_path),
			 "/sys/class/infiniband/%.*s", (int)nl, cfg[i].name);
	}
	g_nvdevs = n < SRN_RT_MAX_DEVS ? n : SRN_RT_MAX_DEVS;
}

struct srn_vdev *srn_verbs_vdev_of(struct ibv_device *dev)
{
	for (int i = 0; i < g_nvdevs; i++)
		if (dev == &g_vdevs[i].ibdev)
			return &g_vdevs[i];
	return NULL;
}

SRN_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;

	pthread_once(&g_once, load_devices);
	if (num_devices)
		*num_devices = 0;
	if (g_load_err) {
		errno = g_load_err;
		return NULL;
	}
	list = calloc((size_t)g_nvdevs + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < g_nvdevs; i++)
		list[i] = &g_vdevs[i].ibdev;
	if (num_devices)
		*num_devices = g_nvdevs;
	return list;
}

SRN_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	/* devices themselves live for the process (open contexts keep using them) */
	free(list);
}

SRN_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

SRN_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	struct srn_vdev *v = srn_verbs_vdev_of(device);

	return v ? v->index : -1;
}

SRN_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct srn_vdev *v = srn_verbs_vdev_of(device);

	return v ? htobe64(v->cfg.guid) : 0;
}

static const struct ibv_context_ops srn_ctx_ops = {
	._compat_query_device = srn_verbs_query_device_compat,
	._compat_query_port = srn_verbs_query_port_compat,
	.poll_cq = srn_verbs_poll_cq,
	.req_notify_cq = srn_verbs_req_notify_cq,
	.post_srq_recv = srn_verbs_post_srq_recv,
	.post_send = srn_verbs_post_send,
	.post_recv = srn_verbs_post_recv,
	.alloc_mw = srn_verbs_alloc_mw,
	.dealloc_mw = srn_verbs_dealloc_mw,
	.bind_mw = srn_verbs_bind_mw,
};

SRN_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct srn_vdev *vdev = srn_verbs_vdev_of(device);
	struct srn_context *sctx;
	struct ibv_context *ctx;
	int p[2];

	if (!vdev) {
		errno = ENODEV;
		return NULL;
	}
	sctx = calloc(1, sizeof(*sctx));
	if (!sctx) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC)) {
		int e = errno;
		free(sctx);
		errno = e;
		return NULL;
	}
	/* the hook side never blocks; the reader side stays blocking unless the
	 * application sets O_NONBLOCK on async_fd */
	fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);

	struct srn_rt_hooks hooks = {
		.cq_event = srn_verbs_cq_event_hook,
		.async_event = srn_verbs_async_hook,
		.arg = vdev,
	};
	sctx->rd = srn_rt_dev_open(&vdev->cfg, &hooks);
	if (!sctx->rd) {
		int e = errno ? errno : ENODEV;
		close(p[0]);
		close(p[1]);
		free(sctx);
		errno = e;
		return NULL;
	}
	sctx->vdev = vdev;
	sctx->core = srn_rt_core(sctx->rd);
	srn_dev_cfg_default(&sctx->limits);
	sctx->async_wfd = p[1];
	pthread_mutex_init(&sctx->reg_lock, NULL);

	sctx->vctx.sz = sizeof(struct verbs_context);
	sctx->vctx.query_port = srn_verbs_query_port;
	sctx->vctx.query_device_ex = srn_verbs_query_device_ex;
	sctx->vctx.create_cq_ex = srn_verbs_create_cq_ex;
	sctx->vctx.create_qp_ex = srn_verbs_create_qp_ex;
	sctx->vctx.query_rt_values = srn_verbs_query_rt_values;
	sctx->vctx.alloc_td = srn_verbs_alloc_td;
	sctx->vctx.dealloc_td = srn_verbs_dealloc_td;
	sctx->vctx.alloc_parent_domain = srn_verbs_alloc_parent_domain;

	ctx = &sctx->vctx.context;
	ctx->device = device;
	ctx->ops = srn_ctx_ops;
	ctx->async_fd = p[0];
	sctx->token = srn_verbs_new_id();
	{
		int e = srn_share_ctx_open(sctx);   /* cmd_fd */

		if (e) {
			srn_rt_dev_close(sctx->rd);
			close(p[0]);
			close(p[1]);
			pthread_mutex_destroy(&sctx->reg_lock);
			free(sctx);
			errno = e;
			return NULL;
		}
	}
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;

	pthread_mutex_lock(&vdev->ctx_lock);
	sctx->next = vdev->ctxs;
	vdev->ctxs = sctx;
	pthread_mutex_unlock(&vdev->ctx_lock);
	return ctx;
}

SRN_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct srn_context *sctx = to_sctx(context);
	struct srn_vdev *vdev = sctx->vdev;

	if (sctx->remote)
		return srn_remote_close(sctx);
	pthread_mutex_lock(&vdev->ctx_lock);
	for (struct srn_context **pp = &vdev->ctxs; *pp; pp = &(*pp)->next) {
		if (*pp == sctx) {
			*pp = sctx->next;
			break;
		}
	}
	pthread_mutex_unlock(&vdev->ctx_lock);

	srn_share_ctx_close(sctx);
	srn_rt_dev_close(sctx->rd);
	close(context->async_fd);
	close(sctx->async_wfd);
	pthread_mutex_destroy(&context->mutex);
	pthread_mutex_destroy(&sctx->reg_lock);
	free(sctx);
	return 0;
}

/* the open context of this process that token names (share.c), or NULL */
struct srn_context *srn_share_owner(uint64_t token)
{
	struct srn_context *found = NULL;

	pthread_once(&g_once, load_devices);
	for (int i = 0; i < g_nvdevs && !found; i++) {
		struct srn_vdev *v = &g_vdevs[i];

		pthread_mutex_lock(&v->ctx_lock);
		for (struct srn_context *c = v->ctxs; c; c = c->next)
			if (c->token == token) {
				found = c;
				break;
			}
		pthread_mutex_unlock(&v->ctx_lock);
	}
	return found;
}
