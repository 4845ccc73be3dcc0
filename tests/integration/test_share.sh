#!/bin/bash
# test_share.sh BUILD_DIR - a context's cmd_fd shared between contexts and
# processes (issue 11 item 4; V-01, V-03): tests/share_check imports its
# own cmd_fd in-process, in a forked child (shared memory) and in a fresh
# process that got the fd with SCM_RIGHTS, each doing RDMA through the
# imported device, PD and MRs; every byte and completion is checked.
. "$(dirname "$0")/lib.sh"
OUT=$TMP/share.log
timeout -k 5 120 "$SOFTRNIC" run --name softrnic0 --ip "$SIP" -- "$BUILD/tests/share_check" softrnic0 >"$OUT" 2>&1
rc=$?
cat "$OUT"
check "share_check exits 0" [ $rc -eq 0 ]
check "same-process import checks passed" grep -Eq "^same process: [1-9][0-9]* passed, 0 failed" "$OUT"
check "forked child's checks passed" grep -Eq "^child: [1-9][0-9]* passed, 0 failed" "$OUT"
check "SCM_RIGHTS process's checks passed" grep -Eq "^scm: [1-9][0-9]* passed, 0 failed" "$OUT"
check "owner's checks passed" grep -Eq "^owner: [1-9][0-9]* passed, 0 failed" "$OUT"
finish
