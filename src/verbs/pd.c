/*
 * pd.c - protection domains. A PD is a number to the core (srn_pd_alloc);
 * dealloc fails with EBUSY while MRs, MWs, QPs, SRQs, AHs or parent domains
 * still use it, as the kernel's uverbs does.
 *
 * Thread domains (ibv_alloc_td) and parent domains (ibv_alloc_parent_domain):
 * a parent domain is a PD (same pdn as the PD it extends, usable wherever a
 * PD is) with an optional thread domain, a pd_context and optional
 * allocators. softrnic's objects stay thread safe whatever the thread
 * domain says (it is a hint a provider may use; one device lock serialises
 * the NIC anyway). With IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS, the memory
 * the library allocates per QP and per CQ created with the parent domain
 * comes from its alloc/free callbacks (resource types SOFTRNIC_RES_TYPE_* of
 * <softrnic/softrnic.h>; IBV_ALLOCATOR_USE_DEFAULT falls back to the
 * library's own allocation); the queues' rings live in the device.
 * Errnos as rdma-core's providers (mlx5): a NULL or foreign PD, a parent
 * domain as the base, unknown comp_mask bits, allocators without both
 * callbacks, a foreign TD -> EINVAL; ibv_alloc_td with comp_mask -> EINVAL;
 * ibv_dealloc_td while a parent domain uses it -> EBUSY.
 */
#include <stdlib.h>
#include <stdatomic.h>

#include "srn_verbs.h"

SRN_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct srn_context *sctx = to_sctx(context);
	struct srn_vpd *vpd;

	if (sctx->remote)
		return srn_remote_alloc_pd(sctx);
	vpd = calloc(1, sizeof(*vpd));
	if (!vpd) {
		errno = ENOMEM;
		return NULL;
	}
	srn_rt_lock(sctx->rd);
	vpd->pdn = srn_pd_alloc(sctx->core);
	srn_rt_unlock(sctx->rd);
	vpd->pd.context = context;
	vpd->pd.handle = vpd->pdn;
	pthread_mutex_lock(&sctx->reg_lock);     /* ibv_import_pd finds it by handle */
	vpd->next_in_ctx = sctx->pds;
	sctx->pds = vpd;
	pthread_mutex_unlock(&sctx->reg_lock);
	return &vpd->pd;
}

SRN_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct srn_vpd *vpd = to_spd(pd);
	struct srn_context *sctx = to_sctx(pd->context);

	if (sctx->remote)
		return srn_remote_dealloc_pd(vpd);
	if (__atomic_load_n(&vpd->users, __ATOMIC_ACQUIRE) > 0)
		return EBUSY;
	if (vpd->imported) {              /* an import: only the import goes */
		ibv_unimport_pd(pd);
		return 0;
	}
	if (!vpd->base) {
		pthread_mutex_lock(&sctx->reg_lock);
		for (struct srn_vpd **pp = &sctx->pds; *pp; pp = &(*pp)->next_in_ctx)
			if (*pp == vpd) {
				*pp = vpd->next_in_ctx;
				break;
			}
		pthread_mutex_unlock(&sctx->reg_lock);
	}
	if (vpd->base)                    /* a parent domain lets its PD and TD go */
		__atomic_sub_fetch(&vpd->base->users, 1, __ATOMIC_ACQ_REL);
	if (vpd->td)
		__atomic_sub_fetch(&vpd->td->users, 1, __ATOMIC_ACQ_REL);
	free(vpd);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* thread domains and parent domains                                         */

struct ibv_td *srn_verbs_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr)
{
	struct srn_vtd *t;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->td.context = ctx;
	return &t->td;
}

int srn_verbs_dealloc_td(struct ibv_td *td)
{
	struct srn_vtd *t = srn_container_of(td, struct srn_vtd, td);

	if (__atomic_load_n(&t->users, __ATOMIC_ACQUIRE) > 0)
		return EBUSY;
	free(t);
	return 0;
}

struct ibv_pd *srn_verbs_alloc_parent_domain(struct ibv_context *ctx,
					     struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct srn_vpd *base, *p;

	if (!attr || !attr->pd || attr->pd->context != ctx || (attr->comp_mask & ~known) ||
	    (attr->td && attr->td->context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	base = to_spd(attr->pd);
	if (base->base) {                 /* a parent domain extends a plain PD */
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->pd.context = ctx;
	p->pd.handle = base->pd.handle;
	p->pdn = base->pdn;
	p->base = base;
	if (attr->td) {
		p->td = srn_container_of(attr->td, struct srn_vtd, td);
		__atomic_add_fetch(&p->td->users, 1, __ATOMIC_ACQ_REL);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		p->alloc = attr->alloc;
		p->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		p->pd_context = attr->pd_context;
	__atomic_add_fetch(&base->users, 1, __ATOMIC_ACQ_REL);
	return &p->pd;
}

void *srn_verbs_obj_alloc(struct srn_vpd *pd, size_t size, uint64_t type, bool *custom)
{
	*custom = false;
	if (pd && pd->alloc) {
		void *m = pd->alloc(&pd->pd, pd->pd_context, size, 64, type);

		if (m != IBV_ALLOCATOR_USE_DEFAULT) {
			*custom = true;   /* NULL: the allocator refused (ENOMEM) */
			return m;
		}
	}
	return calloc(1, size);
}

void srn_verbs_obj_free(struct srn_vpd *pd, void *p, uint64_t type, bool custom)
{
	if (!p)
		return;
	if (custom)
		pd->free(&pd->pd, pd->pd_context, p, type);
	else
		free(p);
}

/*
 * ibv_import_pd: the PD of the context this one imports (ibv_import_device;
 * or of this context itself) whose handle is pd_handle. In the owner's
 * process the import is a PD of the same device with the same pdn; it holds
 * the owner's PD (whose ibv_dealloc_pd is EBUSY until the import goes).
 * ibv_dealloc_pd of an import releases the import only, like
 * ibv_unimport_pd (docs/verbs.md). A remote context asks the owner.
 */
SRN_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct srn_context *sctx = to_sctx(context);
	struct srn_context *owner;
	struct srn_vpd *src = NULL, *a;

	if (sctx->remote)
		return srn_remote_import_pd(sctx, pd_handle);
	owner = sctx->owner_token ? srn_share_owner(sctx->owner_token) : sctx;
	if (!owner) {
		errno = ENODEV;           /* the context it imported is closed */
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&owner->reg_lock);
	for (src = owner->pds; src; src = src->next_in_ctx)
		if (src->pd.handle == pd_handle)
			break;
	if (src)
		__atomic_add_fetch(&src->users, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&owner->reg_lock);
	if (!src) {
		free(a);
		errno = EINVAL;           /* no such PD in that context */
		return NULL;
	}
	a->pd.context = context;
	a->pd.handle = pd_handle;
	a->pdn = src->pdn;
	a->imported = src;
	return &a->pd;
}

SRN_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	struct srn_vpd *a = to_spd(pd);

	if (to_sctx(pd->context)->remote) {
		srn_remote_dealloc_pd(a);  /* the owner lets its side of the import go */
		return;
	}
	if (!a->imported)
		return;                   /* not an import: nothing to undo */
	__atomic_sub_fetch(&a->imported->users, 1, __ATOMIC_ACQ_REL);
	free(a);
}
