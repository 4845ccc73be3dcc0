#!/bin/bash
# Issue 10: the architecture of docs/architecture.md holds on this build
# (tools/check_layers.sh): the sans-I/O layers call no clock, socket, thread
# or allocator; includes point down; no call loop between the files of
# src/core or src/runtime; transports chosen only in their modules.
. "$(dirname "$0")/lib.sh"

out=$(bash "$(dirname "$0")/../../tools/check_layers.sh" "$BUILD" 2>&1)
rc=$?
echo "$out"
check "check_layers.sh finds no violation" [ $rc -eq 0 ]
check "no call loop in src/core" grep -q "ok   srn_core: .* no loop" <<<"$out"
check "no call loop in src/runtime" grep -q "ok   srn_rt: .* no loop" <<<"$out"
check "the core calls no clock, socket, thread or allocator" grep -q "ok   srn_core calls no" <<<"$out"
finish
