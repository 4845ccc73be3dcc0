/*
 * ctr.c - names: counters (as `softrnic stats` prints them), QP and
 * state-machine states, and the core's error codes.
 */
#include "core_int.h"

const char *const srn_ctr_names[SRN_CTR_MAX] = {
	"tx_pkts", "tx_bytes", "rx_pkts", "rx_bytes",
	"tx_req_pkts", "tx_resp_pkts", "tx_acks", "tx_cnps",
	"retransmit_pkts", "retry_timeouts", "rnr_retries",
	"tx_nak_seq", "tx_nak_rnr", "tx_nak_inv_req", "tx_nak_rem_access",
	"tx_nak_rem_op", "rx_nak_seq", "rx_nak_rnr", "rx_nak_other",
	"dup_requests", "dup_read_reexec", "dup_atomic_replay", "oos_req_dropped",
	"dup_acks", "ghost_acks", "rx_ecn_ce", "rx_cnps",
	"retry_exc_err", "rnr_retry_exc_err", "completions", "completion_errors",
	"uc_msg_dropped", "ud_dropped_no_recv", "rd_atomic_wait",
	"drop_malformed", "drop_bad_icrc", "drop_unknown_qpn", "drop_bad_src",
	"drop_bad_state", "drop_bad_opcode", "drop_bad_qkey", "drop_bad_pkey",
	"drop_bad_length", "drop_cq_overflow", "drop_resp_queue_full",
	"tx_nak_rd_atomic_exc",
	"cc_events", "cc_event_drops", "cc_rate_updates", "cc_rate_stale",
	"cc_pace_waits", "cc_rate_kbps_last", "cc_algo_swaps",
	"tx_rtt_probes", "rx_rtt_probes", "tx_rtt_responses", "rx_rtt_responses",
	"drop_rtt_probe", "rx_nak_seq_repeat", "rx_icrc_other_id", "acks_delayed",
};
_Static_assert(sizeof(srn_ctr_names) / sizeof(srn_ctr_names[0]) == SRN_CTR_MAX, "counter names");

const char *const srn_qp_state_names[7] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
const char *const srn_req_state_names[SRN_REQ_ST_NSTATES] = { "IDLE", "RNR_WAIT", "ERROR" };
const char *const srn_resp_seq_names[SRN_RESP_SEQ_N] = { "IDLE", "SEND", "WRITE", "UC_DROP", "ERROR" };

const char *srn_strerror(int err)
{
	switch (err) {
	case SRN_OK: return "ok";
	case SRN_EINVAL: return "invalid argument";
	case SRN_ENOMEM: return "out of memory or queue full";
	case SRN_ESTATE: return "wrong object state";
	case SRN_EBUSY: return "object in use";
	case SRN_ENOENT: return "no such object";
	case SRN_EAGAIN: return "nothing available";
	case SRN_ERANGE: return "value out of range";
	case SRN_EDROP: return "packet dropped";
	default: return "unknown error";
	}
}
