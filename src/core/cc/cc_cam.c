/*
 * cc_cam.c - the flow → processor CAM of CCP control (source 004 fig. 8,
 * 800; CC-05). One entry per processor; the entry's index is the processor
 * ID. Search by flow ID (hit: processor ID; miss), and direct read/write by
 * processor ID. Choosing the random idle processor on a miss is the
 * caller's job (cc_step.c), because only it knows which slices are idle.
 */
#include "cc_int.h"

int srn_cc_cam_lookup(const struct srn_cc_cam *c, uint32_t flow_id, uint32_t *proc)
{
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->valid[i] && c->flow[i] == flow_id) {
			*proc = i;
			return 0;
		}
	}
	return SRN_ENOENT;
}

void srn_cc_cam_write(struct srn_cc_cam *c, uint32_t proc, uint32_t flow_id)
{
	c->flow[proc] = flow_id;
	c->valid[proc] = 1;
}

void srn_cc_cam_clear(struct srn_cc_cam *c, uint32_t proc)
{
	c->valid[proc] = 0;
	c->flow[proc] = 0;
}
