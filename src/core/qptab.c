/*
 * qptab.c - the QPN table: slot -> QP, QPN = slot + 2 (QPN 0 and 1 are the
 * IB special QPs). A destroyed QP's slot enters time-wait (PSN-19) so a
 * stale packet of it cannot reach a new QP with the same number; new QPNs
 * are handed out round robin from the last one.
 */
#include "core_int.h"

uint32_t srn_qptab_find_slot(struct srn_dev *dev)
{
	const struct srn_dev_cfg *cfg = &dev->cfg;
	for (uint32_t i = 0; i < cfg->max_qp; i++) {
		uint32_t s = (dev->qpn_cursor + i) % cfg->max_qp;
		if (dev->qpt[s])
			continue;
		if (dev->qpn_used[s] && dev->now < dev->qpn_free_at[s])
			continue;
		return s;
	}
	return UINT32_MAX;
}

void srn_qptab_insert(struct srn_dev *dev, struct srn_qp *qp, uint32_t slot)
{
	qp->slot = slot;
	qp->qpn = slot + 2;
	dev->qpt[slot] = qp;
	dev->qpn_used[slot] = true;
	dev->qpn_cursor = (slot + 1) % dev->cfg.max_qp;
}

void srn_qptab_remove(struct srn_dev *dev, struct srn_qp *qp)
{
	dev->qpt[qp->slot] = NULL;
	dev->qpn_free_at[qp->slot] = dev->now + dev->cfg.qpn_timewait;   /* PSN-19 */
}

struct srn_qp *srn_qp_lookup(struct srn_dev *dev, uint32_t qpn)
{
	if (qpn < 2 || qpn - 2 >= dev->cfg.max_qp)
		return NULL;
	struct srn_qp *qp = dev->qpt[qpn - 2];
	return (qp && qp->qpn == qpn) ? qp : NULL;
}
