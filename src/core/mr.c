/*
 * mr.c - protection table. lkey == rkey == index << 8 | 8-bit generation;
 * the generation changes on every deregistration so stale keys fail.
 */
#include "core_int.h"

struct srn_mr *srn_mr_lookup(struct srn_dev *dev, uint32_t key)
{
	uint32_t idx = key >> 8;
	if (idx >= dev->cfg.max_mr)
		return NULL;
	struct srn_mr *mr = dev->mrt[idx];
	if (!mr || mr->key != key)
		return NULL;
	return mr;
}

uint8_t *srn_mr_xlate(struct srn_dev *dev, uint32_t key, uint32_t pdn, uint64_t va,
		      uint64_t len, uint32_t access)
{
	struct srn_mr *mr = srn_mr_lookup(dev, key);
	if (!mr || mr->pdn != pdn)
		return NULL;
	if ((mr->access & access) != access)
		return NULL;
	if (va < mr->iova || len > mr->length || va - mr->iova > mr->length - len)
		return NULL;
	return mr->addr + (va - mr->iova);
}

/* the checks shared by reg and rereg */
static int mr_args_ok(uint32_t pdn, const void *addr, uint64_t iova, uint64_t length,
		      uint32_t access)
{
	if (pdn == 0 || (!addr && length))
		return SRN_EINVAL;
	if (access & ~(uint32_t)(SRN_ACCESS_LOCAL_WRITE | SRN_ACCESS_REMOTE_WRITE |
				 SRN_ACCESS_REMOTE_READ | SRN_ACCESS_REMOTE_ATOMIC |
				 SRN_ACCESS_MW_BIND))
		return SRN_EINVAL;
	/* verbs rule: remote write/atomic require local write */
	if ((access & (SRN_ACCESS_REMOTE_WRITE | SRN_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & SRN_ACCESS_LOCAL_WRITE))
		return SRN_EINVAL;
	if (iova + length < iova)
		return SRN_ERANGE;
	return SRN_OK;
}

int srn_mr_reg(struct srn_dev *dev, uint32_t pdn, void *addr, uint64_t iova,
	       uint64_t length, uint32_t access, struct srn_mr **out)
{
	if (!dev || !out)
		return SRN_EINVAL;
	int rc = mr_args_ok(pdn, addr, iova, length, access);
	if (rc)
		return rc;
	uint32_t idx;
	/* index 0 is never used so that key 0 is always invalid */
	for (idx = 1; idx < dev->cfg.max_mr; idx++)
		if (!dev->mrt[idx])
			break;
	if (idx >= dev->cfg.max_mr)
		return SRN_ENOMEM;
	struct srn_mr *mr = srn_mem_calloc(dev, 1, sizeof(*mr));
	if (!mr)
		return SRN_ENOMEM;
	mr->dev = dev;
	mr->idx = idx;
	mr->key = idx << 8 | dev->mr_gen[idx];
	mr->pdn = pdn;
	mr->access = access;
	mr->addr = addr;
	mr->iova = iova;
	mr->length = length;
	dev->mrt[idx] = mr;
	*out = mr;
	return SRN_OK;
}

int srn_mr_rereg(struct srn_dev *dev, struct srn_mr *mr, uint32_t pdn, void *addr,
		 uint64_t iova, uint64_t length, uint32_t access)
{
	if (!dev || !mr || mr->dev != dev || mr->idx >= dev->cfg.max_mr || dev->mrt[mr->idx] != mr)
		return SRN_EINVAL;
	int rc = mr_args_ok(pdn, addr, iova, length, access);
	if (rc)
		return rc;
	if (mr->n_mw)
		return SRN_EBUSY;       /* windows are bound to it */
	/* in place: the key (and so every lkey/rkey handed out) stays valid */
	mr->pdn = pdn;
	mr->access = access;
	mr->addr = addr;
	mr->iova = iova;
	mr->length = length;
	return SRN_OK;
}

void srn_mr_info(const struct srn_mr *mr, struct srn_mr_info *info)
{
	info->lkey = mr->key;
	info->rkey = mr->key;
	info->pdn = mr->pdn;
	info->access = mr->access;
	info->addr = mr->addr;
	info->iova = mr->iova;
	info->length = mr->length;
}

int srn_mr_dereg(struct srn_dev *dev, struct srn_mr *mr)
{
	if (!dev || !mr || mr->dev != dev || mr->idx >= dev->cfg.max_mr || dev->mrt[mr->idx] != mr)
		return SRN_EINVAL;
	if (mr->n_mw)
		return SRN_EBUSY;       /* IBA 10.6.7.2.6: windows are bound to it */
	dev->mrt[mr->idx] = NULL;
	dev->mr_gen[mr->idx]++;
	srn_mem_free(dev, mr);
	return SRN_OK;
}
