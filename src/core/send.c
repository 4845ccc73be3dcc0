/*
 * send.c - srn_dev_send: the device's next packet. RTT probe answers jump
 * the queue (CC-12); then the ready QPs round robin, each giving at most
 * one packet per turn (its transport's ops->emit) and going to the back
 * of the list while it has more.
 */
#include "core_int.h"

static void count_tx(struct srn_dev *dev, ssize_t n)
{
	srn_ctr_inc(dev, SRN_CTR_TX_PKTS);
	dev->ctr[SRN_CTR_TX_BYTES] += (uint64_t)n;
}

ssize_t srn_dev_send(struct srn_dev *dev, uint8_t *buf, size_t cap,
		     struct srn_pkt_meta *meta, srn_ts now)
{
	srn_dev_tick(dev, now);
	if (!buf || !meta || cap < SRN_BTH_LEN + SRN_ICRC_LEN)
		return SRN_EINVAL;
	if (dev->cc && dev->cc->ans_n) {
		memset(meta, 0, sizeof(*meta));
		ssize_t n = srn_cong_emit_answer(dev, buf, cap, meta, now);
		if (n > 0) {
			count_tx(dev, n);
			return n;
		}
	}
	while (!srn_list_empty(&dev->ready)) {
		struct srn_qp *qp = srn_container_of(dev->ready.next, struct srn_qp, ready);
		srn_list_del(&qp->ready);
		memset(meta, 0, sizeof(*meta));
		ssize_t n = qp->ops->emit(qp, buf, cap, meta, now);
		if (n > 0) {
			srn_qp_sched(qp);
			count_tx(dev, n);
			return n;
		}
	}
	return 0;
}

bool srn_dev_has_output(const struct srn_dev *dev)
{
	if (dev->cc && dev->cc->ans_n)
		return true;
	for (const struct srn_list *l = dev->ready.next; l != &dev->ready; l = l->next)
		if (srn_qp_has_output(srn_container_of(l, const struct srn_qp, ready)))
			return true;
	return false;
}
