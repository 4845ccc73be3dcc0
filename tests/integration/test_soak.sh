#!/bin/bash
# Soak: 32 RC QPs of WRITE/READ/SEND/FETCH_ADD/CMP_SWP (1 byte .. 64 KiB)
# under 1% loss on every link of `softrnic fabric` for SRN_SOAK_SECONDS
# (default 120; longer by setting it), every byte and every completion
# checked (fault_mix.c). Memory afterwards: each side's RSS must not grow by
# more than 8 MiB after the first quarter (warm-up), every verbs object is
# destroyed without error and ibv_close_device returns 0 (fault_mix -L);
# with valgrind installed, a 15 s soak of the same traffic runs under
# valgrind --leak-check=full and must report no definitely/indirectly lost
# bytes and no errors.
. "$(dirname "$0")/fault_lib.sh"
fault_id 14
secs=${SRN_SOAK_SECONDS:-120}
check "fabric started" fab_start default loss=1%
to=$((secs * 2 + 120))
if run_mix soak "$to" -q 32 -M 65536 -D "$secs" -L -W "$to" -- -q 32 -M 65536 -D "$secs" -L -W "$to"; then
	ok "soak ($secs s): server and client exit 0"
else
	fail "soak ($secs s): run"
fi
check "soak: fabric exits cleanly" fab_stop
check "soak: server: every check passed" grep -q "server: [1-9][0-9]* passed, 0 failed" "$TMP/soak.server.log"
check "soak: client: every check passed" grep -q "client: [1-9][0-9]* passed, 0 failed" "$TMP/soak.client.log"
check "soak: atomic counter exact" grep -q "FETCH_ADD counter [0-9]* = sum of" "$TMP/soak.server.log"
check "soak: RSS reported on both sides" grep -q "rss after warm-up" "$TMP/soak.server.log"
check "soak: fabric dropped packets ($(fab_ctr drop_loss))" [ "$(fab_ctr drop_loss)" -gt 0 ]

if command -v valgrind >/dev/null; then
	check "fabric started (valgrind run)" fab_start default loss=1%
	p=$(port)
	timeout -k 5 300 "$SOFTRNIC" run --name softrnic0 --ip "$SIP" --fabric "$FAB_IP:$FPORT" -- \
		valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		--log-file="$TMP/vg.server.log" "$BUILD/tests/fault_mix" -d softrnic0 -p "$p" -q 8 -M 16384 -D 15 -W 280 \
		>"$TMP/vgs.log" 2>&1 &
	vpid=$!
	timeout -k 5 300 "$SOFTRNIC" run --name softrnic1 --ip "$CIP" --fabric "$FAB_IP:$FPORT" -- \
		valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		--log-file="$TMP/vg.client.log" "$BUILD/tests/fault_mix" -d softrnic1 -p "$p" -q 8 -M 16384 -D 15 -W 280 "$SIP" \
		>"$TMP/vgc.log" 2>&1
	crc=$?
	wait $vpid; src=$?
	fab_stop >/dev/null
	cat "$TMP/vgs.log" "$TMP/vgc.log"
	grep -h "definitely lost\|indirectly lost\|ERROR SUMMARY" "$TMP/vg.server.log" "$TMP/vg.client.log"
	check "valgrind soak: server exit 0 (no leak, no error) ($src)" [ "$src" -eq 0 ]
	check "valgrind soak: client exit 0 (no leak, no error) ($crc)" [ "$crc" -eq 0 ]
	check "valgrind: server: 0 errors" grep -q "ERROR SUMMARY: 0 errors" "$TMP/vg.server.log"
	check "valgrind: client: 0 errors" grep -q "ERROR SUMMARY: 0 errors" "$TMP/vg.client.log"
else
	echo "(valgrind not installed: the leak check is the RSS and teardown check above)"
fi
finish
