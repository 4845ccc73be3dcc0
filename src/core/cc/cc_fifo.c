/*
 * cc_fifo.c - the bounded TX and RX event FIFOs (source 004 fig. 6, 602/604).
 * WRED in front of them (cc_engine.c) keeps them from ever filling.
 */
#include "cc_int.h"

int srn_cc_fifo_push(struct srn_cc_fifo *f, const struct srn_cc_ev *ev, srn_ts t_in)
{
	if (f->count == f->cap)
		return SRN_ENOMEM;
	uint32_t tail = f->head + f->count;
	if (tail >= f->cap)
		tail -= f->cap;
	f->ring[tail].ev = *ev;
	f->ring[tail].t_in = t_in;
	f->count++;
	return 0;
}

const struct srn_cc_fifo_ent *srn_cc_fifo_peek(const struct srn_cc_fifo *f)
{
	return f->count ? &f->ring[f->head] : NULL;
}

void srn_cc_fifo_pop(struct srn_cc_fifo *f)
{
	if (!f->count)
		return;
	if (++f->head == f->cap)
		f->head = 0;
	f->count--;
}
