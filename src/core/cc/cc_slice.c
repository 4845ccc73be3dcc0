/*
 * cc_slice.c - the CCQ slice state machine of source 004 fig. 9 (CC-06).
 *
 *   IDLE        --event-->        ARB          a new event needs a processor
 *   ARB         --grant-->        BUSY         the arbiter gave it the processor
 *   BUSY        --done-->         IDLE         processor finished, nothing new
 *   BUSY        --event-->        MORE_WORK_A  merged while the processor runs
 *   MORE_WORK_A --done-->         ARB          re-arbitrate for the merged work
 *   IDLE, BUSY  --fw_override-->  FW           firmware takes over the slice
 *   FW          --fw_release-->   IDLE
 *   FW          --event-->        MORE_WORK_B  merged while firmware holds it
 *   MORE_WORK_B --fw_release-->   ARB
 *
 * Self-loops: events in ARB, MORE_WORK_A and MORE_WORK_B are merged and
 * the state stays. A processor completion (done) that finds the slice in
 * FW or MORE_WORK_B (firmware overrode while it ran) changes nothing: the
 * source moves to IDLE only "if the FSM is still BUSY". Anything else is
 * not an edge of fig. 9 and is refused.
 */
#include "cc_int.h"

const char *const srn_cc_slice_state_names[SRN_CC_SLICE_NSTATES] = {
	"IDLE", "ARB", "BUSY", "MORE_WORK_A", "FW", "MORE_WORK_B",
};

const char *const srn_cc_slice_input_names[SRN_CC_IN_N] = {
	"event", "grant", "done", "fw_override", "fw_release",
};

#define X SRN_CC_SLICE_NSTATES   /* no edge */
static const uint8_t next_tab[SRN_CC_SLICE_NSTATES][SRN_CC_IN_N] = {
	/*                 EVENT                      GRANT                DONE                       FW_OVERRIDE        FW_RELEASE */
	[SRN_CC_SLICE_IDLE]        = { SRN_CC_SLICE_ARB,         X,                  X,                         SRN_CC_SLICE_FW,   X },
	[SRN_CC_SLICE_ARB]         = { SRN_CC_SLICE_ARB,         SRN_CC_SLICE_BUSY,  X,                         X,                 X },
	[SRN_CC_SLICE_BUSY]        = { SRN_CC_SLICE_MORE_WORK_A, X,                  SRN_CC_SLICE_IDLE,         SRN_CC_SLICE_FW,   X },
	[SRN_CC_SLICE_MORE_WORK_A] = { SRN_CC_SLICE_MORE_WORK_A, X,                  SRN_CC_SLICE_ARB,          X,                 X },
	[SRN_CC_SLICE_FW]          = { SRN_CC_SLICE_MORE_WORK_B, X,                  SRN_CC_SLICE_FW,           X,                 SRN_CC_SLICE_IDLE },
	[SRN_CC_SLICE_MORE_WORK_B] = { SRN_CC_SLICE_MORE_WORK_B, X,                  SRN_CC_SLICE_MORE_WORK_B,  X,                 SRN_CC_SLICE_ARB },
};
#undef X

enum srn_cc_slice_state srn_cc_slice_next(enum srn_cc_slice_state s, enum srn_cc_slice_input in)
{
	if ((unsigned)s >= SRN_CC_SLICE_NSTATES || (unsigned)in >= SRN_CC_IN_N)
		return SRN_CC_SLICE_NSTATES;
	return (enum srn_cc_slice_state)next_tab[s][in];
}
