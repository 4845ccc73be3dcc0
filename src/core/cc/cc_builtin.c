/*
 * cc_builtin.c - descriptors of the built-in algorithms (CC-15).
 */
#include "srn_cc.h"
#include "cc_algos.h"

const struct softrnic_cc_algo srn_cc_algo_dcqcn = {
	.abi_version = SOFTRNIC_CC_ABI_VERSION,
	.ctx_size = sizeof(struct srn_cc_dcqcn_ctx),
	.name = "dcqcn",
	.init = srn_cc_dcqcn_init,
	.on_event = srn_cc_dcqcn_event,
	.params = &srn_cc_dcqcn_params_connectx,
};

const struct softrnic_cc_algo srn_cc_algo_dcqcn_paper = {
	.abi_version = SOFTRNIC_CC_ABI_VERSION,
	.ctx_size = sizeof(struct srn_cc_dcqcn_ctx),
	.name = "dcqcn-paper",
	.init = srn_cc_dcqcn_init,
	.on_event = srn_cc_dcqcn_event,
	.params = &srn_cc_dcqcn_params_paper,
};

const struct softrnic_cc_algo srn_cc_algo_dcqcn_sw = {
	.abi_version = SOFTRNIC_CC_ABI_VERSION,
	.ctx_size = sizeof(struct srn_cc_dcqcn_ctx),
	.name = "dcqcn-sw",
	.init = srn_cc_dcqcn_init,
	.on_event = srn_cc_dcqcn_event,
	.params = &srn_cc_dcqcn_params_sw,
};

const struct softrnic_cc_algo srn_cc_algo_timely = {
	.abi_version = SOFTRNIC_CC_ABI_VERSION,
	.ctx_size = sizeof(struct srn_cc_timely_ctx),
	.name = "timely",
	.init = srn_cc_timely_init,
	.on_event = srn_cc_timely_event,
	.params = &srn_cc_timely_params_paper,
};

const struct softrnic_cc_algo srn_cc_algo_timely_seg = {
	.abi_version = SOFTRNIC_CC_ABI_VERSION,
	.ctx_size = sizeof(struct srn_cc_timely_ctx),
	.name = "timely-seg",
	.init = srn_cc_timely_init,
	.on_event = srn_cc_timely_event,
	.params = &srn_cc_timely_params_seg,
};
