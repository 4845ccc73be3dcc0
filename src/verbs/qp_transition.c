/*
 * qp_transition.c - which ibv_modify_qp() calls are legal: the table of the
 * Linux kernel's ib_modify_qp_is_ok() (drivers/infiniband/core/verbs.c),
 * restricted to RC, UC and UD, and the value checks of the attributes.
 *
 * For each (current state, next state): valid or not, and per QP type the
 * attribute mask bits that are required and those that are optional. A call
 * is legal iff the transition is valid, every required bit is present and no
 * bit outside required|optional|IBV_QP_STATE is present. IBV_QP_CUR_STATE is
 * only accepted from RTR, RTS, SQD and SQE.
 */
#include "srn_verbs.h"

struct qp_trans {
	bool valid;
	uint32_t req[IBV_QPT_UD + 1];
	uint32_t opt[IBV_QPT_UD + 1];
};

#define RC IBV_QPT_RC
#define UC IBV_QPT_UC
#define UD IBV_QPT_UD

static const struct qp_trans qp_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.req = {
				[UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
				[UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			},
		},
		[IBV_QPS_ERR] = { .valid = true },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.opt = {
				[UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
				[UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			},
		},
		[IBV_QPS_RTR] = {
			.valid = true,
			.req = {
				[UC] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
				[RC] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
			},
			.opt = {
				[UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[UC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				[RC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
			},
		},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.req = {
				[UD] = IBV_QP_SQ_PSN,
				[UC] = IBV_QP_SQ_PSN,
				[RC] = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
			},
			.opt = {
				[UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				       IBV_QP_PATH_MIG_STATE,
				[RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				       IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
			},
		},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
				       IBV_QP_PATH_MIG_STATE,
				[RC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
				       IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[UD] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[UC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[RC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
			},
		},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				       IBV_QP_PATH_MIG_STATE,
				[RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				       IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[UC] = IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				       IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE,
				[RC] = IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
				       IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
				       IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
			},
		},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
			},
		},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
	},
};

bool srn_verbs_modify_qp_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			       enum ibv_qp_type type, uint32_t mask)
{
	uint32_t req, opt;

	if ((unsigned)cur > IBV_QPS_ERR || (unsigned)next > IBV_QPS_ERR)
		return false;
	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD)
		return false;
	if ((mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return false;
	if (!qp_table[cur][next].valid)
		return false;
	req = qp_table[cur][next].req[type];
	opt = qp_table[cur][next].opt[type];
	if ((mask & req) != req)
		return false;
	if (mask & ~(req | opt | IBV_QP_STATE))
		return false;
	return true;
}

/* Value checks of the attributes present in mask (EINVAL or 0). */
int srn_verbs_qp_attr_check(struct srn_context *sctx, const struct ibv_qp_attr *a, int mask)
{
	const struct srn_dev_cfg *l = &sctx->limits;

	if ((mask & IBV_QP_STATE) && (unsigned)a->qp_state > IBV_QPS_ERR)
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && (unsigned)a->cur_qp_state > IBV_QPS_ERR)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))   /* port max: 4096 */
		return EINVAL;
	if ((mask & IBV_QP_PORT) && a->port_num != SRN_VERBS_PORT)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)          /* pkey_tbl_len 1 */
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout >= 32)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer >= 32)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > l->max_rd_atomic)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > l->max_rd_atomic)
		return EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff)
		return EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(unsigned)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
		return EINVAL;
	/* Automatic path migration is not offered (no IBV_DEVICE_AUTO_PATH_MIG):
	 * no alternate path can be loaded; "migrated" (no alternate armed) is
	 * the only valid migration state. */
	if (mask & IBV_QP_ALT_PATH)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MIG_STATE) && a->path_mig_state != IBV_MIG_MIGRATED)
		return EINVAL;
	if (mask & IBV_QP_AV) {
		struct srn_ah_attr tmp;
		int rc = srn_verbs_ah_convert(&sctx->vctx.context, &a->ah_attr, &tmp);
		if (rc)
			return rc;
	}
	/* IBV_QP_CAP is never in the table: ib_modify_qp_is_ok rejects it */
	return 0;
}
