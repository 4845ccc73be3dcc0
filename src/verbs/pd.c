/*
 * pd.c - protection domains. A PD is a number to the core (srn_pd_alloc);
 * dealloc fails with EBUSY while MRs, QPs, SRQs or AHs still use it, as the
 * kernel's uverbs does.
 */
#include <stdlib.h>
#include <stdatomic.h>

#include "srn_verbs.h"

SRN_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct srn_context *sctx = to_sctx(context);
	struct srn_vpd *vpd = calloc(1, sizeof(*vpd));

	if (!vpd) {
		errno = ENOMEM;
		return NULL;
	}
	srn_rt_lock(sctx->rd);
	vpd->pdn = srn_pd_alloc(sctx->core);
	srn_rt_unlock(sctx->rd);
	vpd->pd.context = context;
	vpd->pd.handle = vpd->pdn;
	return &vpd->pd;
}

SRN_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct srn_vpd *vpd = to_spd(pd);

	if (__atomic_load_n(&vpd->users, __ATOMIC_ACQUIRE) > 0)
		return EBUSY;
	free(vpd);
	return 0;
}

/* Not offered: PDs cannot be shared with another process's context. */
SRN_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context; (void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SRN_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;   /* nothing can have been imported */
}
