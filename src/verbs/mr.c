/*
 * mr.c - memory regions: ibv_reg_mr / _iova / _iova2, ibv_dereg_mr,
 * ibv_rereg_mr (the registration changes in place: lkey and rkey stay the
 * same, as with every Linux provider, so a peer holding the rkey keeps its
 * access; a failure leaves the MR as it was; the struct ibv_mr is kept).
 *
 * Access rules (as the kernel's ib_check_mr_access): REMOTE_WRITE or
 * REMOTE_ATOMIC without LOCAL_WRITE -> EINVAL; unknown flags -> EINVAL;
 * ON_DEMAND -> EOPNOTSUPP (ODP is not advertised); bits of
 * IBV_ACCESS_OPTIONAL_RANGE are hints and are ignored. MW_BIND lets memory
 * windows be bound to the MR; while windows are bound, ibv_dereg_mr and
 * ibv_rereg_mr fail with EINVAL (as Soft-RoCE; ibv_alloc_mw(3)).
 */
#include <stdlib.h>
#include <string.h>

#include "srn_verbs.h"

#define SRN_MR_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			  IBV_ACCESS_MW_BIND | IBV_ACCESS_HUGETLB)

static int check_access(unsigned int access)
{
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	if (access & IBV_ACCESS_ON_DEMAND)
		return EOPNOTSUPP;
	if (access & ~(unsigned int)SRN_MR_ACCESS_OK)
		return EINVAL;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

static uint32_t core_access(unsigned int access)
{
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			 IBV_ACCESS_MW_BIND);
}

/* the core's EBUSY "memory windows are bound to it" is EINVAL at the verbs
 * edge, as Soft-RoCE returns it (IBA 10.6.7.2.6) */
static int mr_errno(int rc)
{
	return rc == SRN_EBUSY ? EINVAL : srn_verbs_errno(rc);
}

static int check_range(const void *addr, size_t length, uint64_t iova)
{
	if (length == 0)
		return EINVAL;
	if ((uintptr_t)addr + length < (uintptr_t)addr || iova + length < iova)
		return EINVAL;
	return 0;
}

static int do_reg(struct srn_context *sctx, struct srn_vpd *vpd, void *addr, size_t length,
		  uint64_t iova, unsigned int access, struct srn_mr **out)
{
	int rc;

	srn_rt_lock(sctx->rd);
	rc = srn_mr_reg(sctx->core, vpd->pdn, addr, iova, length, core_access(access), out);
	srn_rt_unlock(sctx->rd);
	return rc ? srn_verbs_errno(rc) : 0;
}

static void publish(struct srn_vmr *vmr, struct ibv_pd *pd, void *addr, size_t length)
{
	struct srn_mr_info info;

	srn_mr_info(vmr->core, &info);
	vmr->mr.pd = pd;
	vmr->mr.addr = addr;
	vmr->mr.length = length;
	vmr->mr.lkey = info.lkey;
	vmr->mr.rkey = info.rkey;
	vmr->mr.handle = info.lkey;
}

SRN_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					   uint64_t iova, unsigned int access)
{
	struct srn_context *sctx = to_sctx(pd->context);
	struct srn_vpd *vpd = to_spd(pd);
	struct srn_vmr *vmr;
	int rc;

	rc = check_access(access);
	if (!rc)
		rc = check_range(addr, length, iova);
	if (rc) {
		errno = rc;
		return NULL;
	}
	if (sctx->remote)
		return srn_remote_reg_mr(vpd, addr, length, iova, access);
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	rc = do_reg(sctx, vpd, addr, length, iova, access, &vmr->core);
	if (rc) {
		free(vmr);
		errno = rc;
		return NULL;
	}
	vmr->mr.context = pd->context;
	vmr->access = (int)access;
	publish(vmr, pd, addr, length);
	__atomic_add_fetch(&vpd->users, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&sctx->reg_lock);     /* ibv_import_mr finds it by handle */
	vmr->next_in_ctx = sctx->mrs;
	sctx->mrs = vmr;
	pthread_mutex_unlock(&sctx->reg_lock);
	return &vmr->mr;
}

SRN_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					  uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

SRN_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

SRN_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct srn_context *sctx = to_sctx(mr->context);
	struct srn_vmr *vmr = to_smr(mr);
	int rc;

	if (sctx->remote)
		return srn_remote_dereg_mr(vmr);
	if (vmr->imported) {              /* an import: only the import goes */
		ibv_unimport_mr(mr);
		return 0;
	}
	if (__atomic_load_n(&vmr->imports, __ATOMIC_ACQUIRE) > 0)
		return EBUSY;             /* imported by another context */
	srn_rt_lock(sctx->rd);
	rc = srn_mr_dereg(sctx->core, vmr->core);
	srn_rt_unlock(sctx->rd);
	if (rc)
		return mr_errno(rc);
	pthread_mutex_lock(&sctx->reg_lock);
	for (struct srn_vmr **pp = &sctx->mrs; *pp; pp = &(*pp)->next_in_ctx)
		if (*pp == vmr) {
			*pp = vmr->next_in_ctx;
			break;
		}
	pthread_mutex_unlock(&sctx->reg_lock);
	__atomic_sub_fetch(&to_spd(mr->pd)->users, 1, __ATOMIC_ACQ_REL);
	free(vmr);
	return 0;
}

/*
 * rdma-core's contract: IBV_REREG_MR_ERR_INPUT (-1) with errno for bad input
 * (the old MR is still valid), IBV_REREG_MR_ERR_CMD (-4) if the device
 * refused. Here a refused re-registration also leaves the old MR valid
 * (the core checks everything before it changes anything), but -4 is what
 * callers expect for it. The keys never change.
 */
SRN_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			    size_t length, int access)
{
	struct srn_context *sctx = to_sctx(mr->context);
	struct srn_vmr *vmr = to_smr(mr);
	struct ibv_pd *new_pd = mr->pd;
	void *new_addr = mr->addr;
	size_t new_len = mr->length;
	unsigned int new_access = (unsigned int)vmr->access;
	struct srn_mr_info info;
	uint64_t iova;
	int rc;

	if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (sctx->remote || vmr->imported) {
		errno = EOPNOTSUPP;       /* re-registered by its owner only */
		return IBV_REREG_MR_ERR_INPUT;
	}
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!pd || pd->context != mr->context) {
			errno = EINVAL;
			return IBV_REREG_MR_ERR_INPUT;
		}
		new_pd = pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		rc = check_access((unsigned int)access);
		if (rc) {
			errno = rc;
			return IBV_REREG_MR_ERR_INPUT;
		}
		new_access = (unsigned int)access;
	}
	/* keep the iova offset of the old registration unless the translation
	 * changes (then iova = the new address, as ibv_reg_mr does) */
	srn_mr_info(vmr->core, &info);
	iova = info.iova;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		new_addr = addr;
		new_len = length;
		iova = (uintptr_t)addr;
		rc = check_range(addr, length, iova);
		if (rc) {
			errno = rc;
			return IBV_REREG_MR_ERR_INPUT;
		}
	}
	if (!flags)
		return 0;

	/* in place: lkey and rkey stay what they were */
	srn_rt_lock(sctx->rd);
	rc = srn_mr_rereg(sctx->core, vmr->core, to_spd(new_pd)->pdn, new_addr, iova, new_len,
			  core_access(new_access));
	srn_rt_unlock(sctx->rd);
	if (rc) {
		errno = mr_errno(rc);
		return IBV_REREG_MR_ERR_CMD;
	}
	vmr->access = (int)new_access;
	if (new_pd != mr->pd) {
		__atomic_add_fetch(&to_spd(new_pd)->users, 1, __ATOMIC_ACQ_REL);
		__atomic_sub_fetch(&to_spd(mr->pd)->users, 1, __ATOMIC_ACQ_REL);
	}
	publish(vmr, new_pd, new_addr, new_len);
	return 0;
}

/* Not offered: dma-buf export needs a kernel driver's device memory. */
SRN_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					    uint64_t iova, int fd, int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd; (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * ibv_import_mr: the MR whose handle is mr_handle in the context pd's context
 * imports (or in pd's context itself), registered in pd's PD. The import
 * has the MR's keys and length; its addr is NULL (ibv_import_mr(3)). It
 * holds the owner's MR (ibv_dereg_mr there is EBUSY until the import goes);
 * ibv_dereg_mr of an import releases the import only, like ibv_unimport_mr.
 */
SRN_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct srn_context *sctx = to_sctx(pd->context);
	struct srn_vpd *vpd = to_spd(pd);
	struct srn_context *owner;
	struct srn_vmr *src, *a;
	struct srn_mr_info info;

	if (sctx->remote)
		return srn_remote_import_mr(vpd, mr_handle);
	owner = sctx->owner_token ? srn_share_owner(sctx->owner_token) : sctx;
	if (!owner) {
		errno = ENODEV;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&owner->reg_lock);
	for (src = owner->mrs; src; src = src->next_in_ctx)
		if (src->mr.handle == mr_handle)
			break;
	if (src) {
		srn_mr_info(src->core, &info);
		if (info.pdn != vpd->pdn)
			src = NULL;       /* registered in another PD */
		else
			__atomic_add_fetch(&src->imports, 1, __ATOMIC_ACQ_REL);
	}
	pthread_mutex_unlock(&owner->reg_lock);
	if (!src) {
		free(a);
		errno = EINVAL;
		return NULL;
	}
	a->core = src->core;
	a->access = src->access;
	a->imported = src;
	a->mr.context = pd->context;
	a->mr.pd = pd;
	a->mr.addr = NULL;
	a->mr.length = src->mr.length;
	a->mr.lkey = src->mr.lkey;
	a->mr.rkey = src->mr.rkey;
	a->mr.handle = mr_handle;
	__atomic_add_fetch(&vpd->users, 1, __ATOMIC_ACQ_REL);
	return &a->mr;
}

SRN_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	struct srn_vmr *a = to_smr(mr);

	if (to_sctx(mr->context)->remote) {
		srn_remote_dereg_mr(a);    /* the owner lets its side of the import go */
		return;
	}
	if (!a->imported)
		return;                   /* not an import: nothing to undo */
	__atomic_sub_fetch(&a->imported->imports, 1, __ATOMIC_ACQ_REL);
	__atomic_sub_fetch(&to_spd(mr->pd)->users, 1, __ATOMIC_ACQ_REL);
	free(a);
}

SRN_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context; (void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

SRN_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}
