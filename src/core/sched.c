/*
 * sched.c - the output scheduler's ready list: QPs that have something to
 * send, served round robin by srn_dev_send (send.c). Whether a QP has
 * output is its transport's answer (ops->has_output).
 */
#include "core_int.h"

bool srn_qp_has_output(const struct srn_qp *qp)
{
	return qp->ops->has_output(qp);
}

void srn_qp_sched(struct srn_qp *qp)
{
	if (srn_list_linked(&qp->ready))
		return;
	if (!srn_qp_has_output(qp))
		return;
	srn_list_add_tail(&qp->dev->ready, &qp->ready);
}

void srn_qp_unsched(struct srn_qp *qp)
{
	if (srn_list_linked(&qp->ready))
		srn_list_del(&qp->ready);
}

/* a pace or delayed-ACK timer: the QP may send again */
void srn_sched_timer_fn(struct srn_timer *t, srn_ts now)
{
	(void)now;
	srn_qp_sched(t->owner);
}
