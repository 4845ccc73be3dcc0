/*
 * softrnic_ext.c - the functions of include/softrnic/softrnic.h (V-05),
 * exported under SOFTRNIC_1.0.
 */
#include <string.h>

#include "softrnic/softrnic.h"
#include "srn_verbs.h"

static struct srn_context *our_ctx(struct ibv_context *context)
{
	if (!context || !srn_verbs_vdev_of(context->device))
		return NULL;
	return to_sctx(context);
}

SRN_EXPORT bool softrnic_is_device(struct ibv_device *device)
{
	return device && srn_verbs_vdev_of(device) != NULL;
}

SRN_EXPORT unsigned softrnic_num_counters(void)
{
	return SRN_CTR_MAX;
}

SRN_EXPORT const char *softrnic_counter_name(unsigned i)
{
	return i < SRN_CTR_MAX ? srn_ctr_names[i] : NULL;
}

SRN_EXPORT int softrnic_query_counters(struct ibv_context *context, uint64_t *values, unsigned n)
{
	struct srn_context *sctx = our_ctx(context);

	if (!sctx)
		return ENODEV;
	if (!n)
		return 0;
	if (!values)
		return EINVAL;
	if (n > SRN_CTR_MAX)
		n = SRN_CTR_MAX;
	srn_rt_lock(sctx->rd);
	memcpy(values, srn_dev_counters(sctx->core), n * sizeof(*values));
	srn_rt_unlock(sctx->rd);
	return 0;
}

SRN_EXPORT int softrnic_device_ip(struct ibv_context *context, struct in_addr *ip)
{
	struct srn_context *sctx = our_ctx(context);

	if (!sctx)
		return ENODEV;
	*ip = sctx->vdev->cfg.ip;
	return 0;
}
