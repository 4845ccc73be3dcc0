#!/bin/bash
# test_demo.sh BUILD_DIR - the README's main job (tools/demo.sh) runs end to
# end, and its step 4 shows the live counters of both devices while the
# ping-pong runs (issue 11 item 7: it used to print "no running softrnic
# device" because it looked after the programs had ended).
. "$(dirname "$0")/lib.sh"
export DEMO_IP0=$SIP DEMO_IP1=$CIP DEMO_DEV0=demo11s DEMO_DEV1=demo11c DEMO_PORT=$(port)
port >/dev/null
OUT=$TMP/demo.out
timeout 120 "$(dirname "$0")/../../tools/demo.sh" "$BUILD" >"$OUT" 2>&1
check "demo.sh exits 0" [ $? -eq 0 ]
STEP4=$TMP/step4
sed -n '/== 4\./,/== 5\./p' "$OUT" >"$STEP4"
no_dev() { ! grep -q "no running softrnic device" "$1"; }
check "step 4 finds running devices" no_dev "$STEP4"
check "step 4 shows $DEMO_DEV0 live" grep -q "^demo11s  $SIP" "$STEP4"
check "step 4 shows $DEMO_DEV1 live" grep -q "^demo11c  $CIP" "$STEP4"
# rates (per second since the previous print) exist only while counters move
check "step 4 shows tx_pkts rising (a rate per second)" grep -Eq "tx_pkts +[0-9]+ +[0-9.]+/s" "$STEP4"
check "the ping-pong finished" grep -q "20000 iters in" "$OUT"
check "RDMA operations step: client and server without failures" [ "$(grep -Ec "^(client|server): [0-9]+ passed, 0 failed" "$OUT")" -eq 2 ]
[ "$FAILED" -eq 0 ] || sed 's/^/demo: /' "$OUT" | tail -60
finish
