#!/bin/bash
# test_cc_datapath.sh - issue 6 item 6: congestion control on the real
# datapath. Two sender processes (softrnic1 127.0.60.2, softrnic2
# 127.0.60.3) WRITE into ONE receiver process (softrnic0 127.0.60.1,
# tests/integration/cc_flows.c serving one RC QP per sender) through a
# `softrnic fabric` daemon (127.0.60.250:4960) whose port 127.0.60.1 is the
# single bottleneck queue: out.rate=1g, buffer 512k, ECN marking kmin 10k /
# kmax 50k / pmax 0.5. Run once with DCQCN (dcqcn-paper, NIC line rate 1g =
# the bottleneck's, a 2:1 incast) in the senders and once without CC.
#   CC-13: the receiver turns ECN-CE into CNPs (tx_cnps), the senders get them
#          (rx_cnps);
#   CC-15: DCQCN cuts the senders' rates (cc_rate_updates, rate below line);
#   CC-10: the pacer holds the QPs (cc_pace_waits);
#   with CC: Jain fairness of the two goodputs >= 0.9, fewer tail drops and
#   retransmissions than without CC.
# Not asserted (not achieved yet on this 2-core machine, see docs/cc.md):
# the queue held near kmax without tail drops; queue_peak_bytes is printed.
. "$(dirname "$0")/lib.sh"

FAB=127.0.60.250:4960
RIP=127.0.60.1
PROG="$BUILD/tests/cc_flows"
SECS=4
export SOFTRNIC_STATS_DIR="$TMP" SOFTRNIC_CC_RATE=1g

# run_flows NAME CC: fabric + receiver + two senders; logs in $TMP/NAME.*
run_flows() {
	local name=$1 cc=$2 p rc=0
	"$SOFTRNIC" fabric --listen "$FAB" --seed 60 port "$RIP" rate=1g buffer=512k \
		kmin=10k kmax=50k pmax=0.5 >"$TMP/$name.fabric.log" 2>&1 &
	local fp=$!
	for _ in $(seq 50); do grep -q "listening on" "$TMP/$name.fabric.log" && break; sleep 0.1; done
	p=$(port)
	SOFTRNIC_CC=none timeout -k 5 60 "$SOFTRNIC" run --name softrnic0 --ip "$RIP" --fabric "$FAB" -- \
		"$PROG" -d softrnic0 -p "$p" -n 2 >"$TMP/$name.rx.log" 2>&1 &
	local rp=$!
	SOFTRNIC_CC=$cc timeout -k 5 60 "$SOFTRNIC" run --name softrnic1 --ip 127.0.60.2 --fabric "$FAB" -- \
		"$PROG" -d softrnic1 -p "$p" -t "$SECS" -q 8 "$RIP" >"$TMP/$name.tx1.log" 2>&1 &
	local p1=$!
	SOFTRNIC_CC=$cc timeout -k 5 60 "$SOFTRNIC" run --name softrnic2 --ip 127.0.60.3 --fabric "$FAB" -- \
		"$PROG" -d softrnic2 -p "$p" -t "$SECS" -q 8 "$RIP" >"$TMP/$name.tx2.log" 2>&1 &
	local p2=$!
	wait $p1 || rc=1
	wait $p2 || rc=1
	wait $rp || rc=1
	kill -INT $fp; wait $fp || rc=1
	cat "$TMP/$name.rx.log" "$TMP/$name.tx1.log" "$TMP/$name.tx2.log" | sed "s/^/$name: /"
	sed -n '/^fabric counters/,$p' "$TMP/$name.fabric.log" | grep -A2 "port $RIP " | sed "s/^/$name: /"
	return $rc
}
# ctr NAME LOG: a counter from a cc_flows "counters:" line
ctr() { grep -o " $1=[0-9]*" "$2" | tail -n 1 | cut -d= -f2; }
# fctr NAME RUN: a counter of the bottleneck (port $RIP, out) at the fabric's exit
fctr() { sed -n '/^fabric counters/,$p' "$TMP/$2.fabric.log" | grep -A2 "port $RIP " | grep "out:" | grep -o " $1=[0-9]*" | cut -d= -f2 | awk '{print $1 + 0} END {if (!NR) print 0}'; }
jain() { awk '/^jain/ {print $2}' "$TMP/$1.rx.log"; }

check "with DCQCN: receiver and both senders exit 0, every WRITE completed" run_flows cc dcqcn-paper
check "without CC: receiver and both senders exit 0" run_flows nocc none

ce=$(ctr rx_ecn_ce "$TMP/cc.rx.log"); cnp=$(ctr tx_cnps "$TMP/cc.rx.log")
check "CC-13: the fabric marked (ecn_marks $(fctr ecn_marks cc)) and the receiver saw CE (rx_ecn_ce $ce)" \
	test "${ce:-0}" -gt 100
check "CC-13: the receiver sent CNPs (tx_cnps $cnp), at most one per CE" \
	test "${cnp:-0}" -gt 100 -a "${cnp:-0}" -le "${ce:-0}"
for s in 1 2; do
	L="$TMP/cc.tx$s.log"
	check "CC-13: sender $s received CNPs (rx_cnps $(ctr rx_cnps "$L"))" test "$(ctr rx_cnps "$L")" -gt 50
	check "CC-15: DCQCN updated sender $s's rate (cc_rate_updates $(ctr cc_rate_updates "$L"))" \
		test "$(ctr cc_rate_updates "$L")" -gt 50
	check "CC-10: the pacer held sender $s (cc_pace_waits $(ctr cc_pace_waits "$L"))" \
		test "$(ctr cc_pace_waits "$L")" -gt 50
	check "without CC sender $s is never paced (cc_pace_waits $(ctr cc_pace_waits "$TMP/nocc.tx$s.log"))" \
		test "$(ctr cc_pace_waits "$TMP/nocc.tx$s.log")" = 0
done
jc=$(jain cc); jn=$(jain nocc)
check "with DCQCN the two senders share fairly: Jain $jc >= 0.9 (without CC: $jn)" \
	awk -v j="$jc" 'BEGIN { exit !(j >= 0.9) }'
dc=$(fctr drop_tail cc); dn=$(fctr drop_tail nocc)
check "DCQCN cuts the bottleneck's tail drops: $dc with, $dn without (less than half)" \
	test $((2 * dc)) -lt "$dn"
rc=$(( $(ctr retransmit_pkts "$TMP/cc.tx1.log") + $(ctr retransmit_pkts "$TMP/cc.tx2.log") ))
rn=$(( $(ctr retransmit_pkts "$TMP/nocc.tx1.log") + $(ctr retransmit_pkts "$TMP/nocc.tx2.log") ))
check "fewer retransmitted packets with DCQCN ($rc) than without ($rn)" test "$rc" -lt "$rn"
echo "bottleneck queue_peak_bytes: $(fctr queue_peak_bytes cc) with DCQCN, $(fctr queue_peak_bytes nocc) without (buffer 524288, kmax 51200)"
finish
