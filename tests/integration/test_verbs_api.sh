#!/bin/bash
# test_verbs_api.sh BUILD_DIR - the verbs ABI (V-01..V-05) through softrnic's
# libibverbs.so.1: runs BUILD_DIR/tests/verbs_api_check (built against
# Debian's <infiniband/verbs.h>) with softrnic's library first on the
# library path, one device softrnic0 on 127.0.19.1 (an address of its own, so it can run beside the other tests).
set -u
BUILD_DIR=${1:?usage: test_verbs_api.sh BUILD_DIR}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
PROG=$BUILD_DIR/tests/verbs_api_check
if [ ! -x "$PROG" ]; then
	echo "missing $PROG (build the verbs_api_check target)"
	exit 1
fi
export LD_LIBRARY_PATH=$BUILD_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SOFTRNIC_DEVICES=softrnic0=127.0.19.1
# V-01: the program must bind to softrnic's library, not rdma-core's
if ! ldd "$PROG" | grep -q "libibverbs.so.1 => $BUILD_DIR/lib/"; then
	echo "verbs_api_check does not resolve libibverbs.so.1 to $BUILD_DIR/lib"
	ldd "$PROG"
	exit 1
fi
timeout 300 "$PROG"
