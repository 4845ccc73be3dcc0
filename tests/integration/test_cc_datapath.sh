#!/bin/bash
# test_cc_datapath.sh - issue 6 item 6: congestion control on the real
# datapath. Two sender processes (softrnic1 127.0.60.2, softrnic2
# 127.0.60.3) WRITE into ONE receiver process (softrnic0 127.0.60.1,
# tests/integration/cc_flows.c serving one RC QP per sender) through a
# `softrnic fabric` daemon (127.0.60.250:4960) whose port 127.0.60.1 is the
# single bottleneck queue: out.rate=1g, buffer 512k, ECN marking kmin 10k /
# kmax 50k / pmax 0.5. The senders' links into the switch run at 1g too
# (in.rate=1g), their NICs' line rate (SOFTRNIC_CC_RATE=1g): a 2:1 incast.
# Each sender keeps 8 WRITEs of 64 KiB (512 KiB) in flight: together twice
# the buffer. Run once with DCQCN in the senders (dcqcn-sw: the paper's
# algorithm with its timers scaled to this datapath's control loop,
# docs/cc.md) and once without CC.
#   CC-13: the receiver turns ECN-CE into CNPs (tx_cnps), the senders get them
#          (rx_cnps);
#   CC-15: DCQCN cuts the senders' rates (cc_rate_updates);
#   CC-10: the pacer holds the QPs (cc_pace_waits);
#   the queue: with DCQCN no tail drop, the peak below the buffer, the queue
#   sampled every millisecond (the fabric's counter prints) has p50 <= kmax
#   and p99 < Q99_MAX, and after the first WARM_MS its largest sample is at
#   most PEAK_MAX; fewer than MARKED_MAX % of the packets are marked (but
#   some are: the queue reaches kmin); without CC its p99 is above half the
#   buffer and most packets are marked;
#   Jain fairness of the two goodputs >= 0.9 with DCQCN; fewer tail drops and
#   retransmissions than without CC.
# The fabric takes each packet's arrival time from the kernel's receive time
# stamp, so the daemon's own stalls (it is preempted, or its vCPU is) no
# longer put what came meanwhile into the queue as one burst. The whole
# run's peak is printed and held below the buffer only: at the start both
# senders send at line rate until the receiver's first CNPs, and on this
# 2-core VM the receiver now and then answers nothing for 6-10 ms (the
# queue then grows until the senders' windows are used up: 265-468 KB at
# the start in 6 of 47 runs, 215 and 286 KB later in 2). After WARM_MS the
# largest sample was 41-182 KB in 45 of those runs and 215-286 KB in the
# other 2; the bound, 3/4 of the buffer, keeps a margin over that
# (docs/cc.md "On the real datapath").
# Setup choices (docs/cc.md has the measurements):
#   - the senders wait for completions on a completion channel (cc_flows -e):
#     two busy-polling senders take both cores of a 2-core machine and the
#     fabric and the receiver then run milliseconds late;
#   - SOFTRNIC_CC_BURST=16k: a pacer bucket of 4 packets, so that a late
#     wake-up of a sender's progress thread does not lose rate;
#   - the fabric runs SCHED_FIFO when the system allows it (--rt; it warns
#     and runs at normal priority where refused): it stands for switch
#     hardware; descheduled, it sends late.
. "$(dirname "$0")/lib.sh"

FAB=127.0.60.250:4960
RIP=127.0.60.1
PROG="$BUILD/tests/cc_flows"
SECS=4
Q99_MAX=$((128 * 1024))      # a quarter of the buffer, 2.5 kmax
MARKED_MAX=5                 # % of the bottleneck's packets marked CE
WARM_MS=200                  # the start, when both senders begin at line rate
PEAK_MAX=$((384 * 1024))     # 3/4 of the buffer: the queue's bound after WARM_MS
export SOFTRNIC_STATS_DIR="$TMP" SOFTRNIC_CC_RATE=1g SOFTRNIC_CC_BURST=16k

# run_flows NAME CC [FABRIC OPTION...]: fabric + receiver + two senders;
# logs in $TMP/NAME.*
run_flows() {
	local name=$1 cc=$2 p rc=0
	shift 2
	"$SOFTRNIC" fabric --listen "$FAB" --seed 60 --rt "$@" port "$RIP" rate=1g buffer=512k \
		kmin=10k kmax=50k pmax=0.5 port 127.0.60.2 in.rate=1g port 127.0.60.3 in.rate=1g \
		>"$TMP/$name.fabric.log" 2>&1 &
	local fp=$!
	for _ in $(seq 50); do grep -qs "listening on" "$TMP/$name.fabric.log" && break; sleep 0.1; done
	grep -qs "warning: --rt" "$TMP/$name.fabric.log" &&
		echo "note: $name: the system refused the fabric SCHED_FIFO (--rt): it runs at normal priority"
	p=$(port)
	SOFTRNIC_CC=none timeout -k 5 60 "$SOFTRNIC" run --name softrnic0 --ip "$RIP" --fabric "$FAB" -- \
		"$PROG" -d softrnic0 -p "$p" -n 2 >"$TMP/$name.rx.log" 2>&1 &
	local rp=$!
	SOFTRNIC_CC=$cc timeout -k 5 60 "$SOFTRNIC" run --name softrnic1 --ip 127.0.60.2 --fabric "$FAB" -- \
		"$PROG" -d softrnic1 -p "$p" -t "$SECS" -q 8 -e "$RIP" >"$TMP/$name.tx1.log" 2>&1 &
	local p1=$!
	SOFTRNIC_CC=$cc timeout -k 5 60 "$SOFTRNIC" run --name softrnic2 --ip 127.0.60.3 --fabric "$FAB" -- \
		"$PROG" -d softrnic2 -p "$p" -t "$SECS" -q 8 -e "$RIP" >"$TMP/$name.tx2.log" 2>&1 &
	local p2=$!
	wait $p1 || rc=1
	wait $p2 || rc=1
	wait $rp || rc=1
	kill -INT $fp; wait $fp || rc=1
	cat "$TMP/$name.rx.log" "$TMP/$name.tx1.log" "$TMP/$name.tx2.log" | sed "s/^/$name: /"
	lastblk "$TMP/$name.fabric.log" | grep -A2 "port $RIP " | sed "s/^/$name: /"
	return $rc
}
# lastblk FABRIC_LOG: the fabric's counters at its exit (its last print)
lastblk() { awk '/^fabric counters/ {b = ""} {b = b $0 "\n"} END {printf "%s", b}' "$1"; }
# ctr NAME LOG: a counter from a cc_flows "counters:" line
ctr() { grep -o " $1=[0-9]*" "$2" | tail -n 1 | cut -d= -f2; }
# fctr NAME RUN: a counter of the bottleneck (port $RIP, out) at the fabric's exit
fctr() { lastblk "$TMP/$2.fabric.log" | grep -A2 "port $RIP " | grep "out:" | grep -o " $1=[0-9]*" | cut -d= -f2 | awk '{print $1 + 0} END {if (!NR) print 0}'; }
# dctr NAME RUN: a counter of the fabric daemon's own at its exit ("daemon rx:")
dctr() { lastblk "$TMP/$2.fabric.log" | grep "daemon rx:" | grep -o " $1=[0-9]*" | cut -d= -f2 | awk '{print $1 + 0} END {if (!NR) print 0}'; }
jain() { awk '/^jain/ {print $2}' "$TMP/$1.rx.log"; }
# qdist RUN: the bottleneck's queue over time, from the fabric's counter
# prints (--stats 0.001, one per millisecond): at each print the modelled
# queue holds bytes_in - bytes_out of the out link, less what was tail-dropped
# (counted in packets; taken at the mean packet size); milliseconds in which
# nothing arrived and the queue is empty are left out. Prints "SAMPLES P50 P99
# P999 MAX STALLS MAXW": percentiles of the samples in bytes, how often the
# daemon printed more than 2.5 ms late (it was not running), and the largest
# sample after the first WARM_MS of traffic.
qdist() {
	awk -v port="$RIP" -v warm="$WARM_MS" '
	/^fabric counters at/ { t = $4 + 0; next }
	$1 == "port" { inport = ($2 == port); next }
	inport && $1 == "out:" {
		delete c
		for (i = 2; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] + 0 }
		if (!c["pkts_in"]) next
		q = c["bytes_in"] - c["bytes_out"] - c["drop_tail"] * c["bytes_in"] / c["pkts_in"]
		if (q < 0) q = 0
		idle = c["pkts_in"] == lp && q == 0
		lp = c["pkts_in"]
		if (idle) next              # before the flows start, after they end
		if (!n) t0 = t
		if ((t - t0) * 1000 >= warm && q > mw) mw = q
		s[n++] = q
		if (n > 1 && (t - lt) * 1000 > 2.5) st++
		lt = t
	}
	function pct(p) { return s[int((n - 1) * p)] }
	END {
		if (!n) { print "0 0 0 0 0 0 0"; exit }
		# insertion sort is too slow for 4000 samples: a counting pass per 1 KiB bucket
		for (i = 0; i < n; i++) { b = int(s[i] / 1024); h[b]++; if (b > mb) mb = b }
		k = 0
		for (b = 0; b <= mb; b++) for (j = 0; j < h[b]; j++) s[k++] = b * 1024
		printf "%d %d %d %d %d %d %d\n", n, pct(0.5), pct(0.99), pct(0.999), s[n - 1], st, mw
	}' "$TMP/$1.fabric.log"
}
goodput() { awk '/^flow / {s += $(NF-1)} END {printf "%.3f", s}' "$TMP/$1.rx.log"; }

check "with DCQCN: receiver and both senders exit 0, every WRITE completed" run_flows cc dcqcn-sw --stats 0.001
check "without CC: receiver and both senders exit 0" run_flows nocc none --stats 0.001

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
qc=$(fctr queue_peak_bytes cc); qn=$(fctr queue_peak_bytes nocc)
read -r nq q50 q99 q999 qmax nst qw < <(qdist cc)
read -r nqn q50n q99n q999n qmaxn nstn qwn < <(qdist nocc)
echo "bottleneck queue with DCQCN, sampled every ms ($nq samples): p50 $q50 B, p99 $q99 B, p99.9 $q999 B," \
	"max $qmax B, max after the first $WARM_MS ms $qw B; peak $qc B (fabric counter); the daemon ran > 2.5 ms late $nst times;" \
	"it read datagrams $(dctr rx_late_avg_ns cc) ns after the kernel got them on average," \
	"$(dctr rx_late_max_ns cc) ns at most, $(dctr rx_late_over_1ms cc) more than 1 ms late" \
	"($(dctr rx_behind_over_100us cc) entered the model more than 100 us late, by $(dctr rx_behind_max_ns cc) ns at most);" \
	"without CC: p50 $q50n B, p99 $q99n B, peak $qn B"
check "with DCQCN no tail drop at the bottleneck ($dc; without CC $dn)" test "$dc" = 0
check "DCQCN cuts the bottleneck's tail drops: $dc with, $dn without (less than half)" \
	test $((2 * dc)) -lt "$dn"
check "with DCQCN the queue stays near the marking thresholds: p50 $q50 B <= kmax 51200, p99 $q99 B < $Q99_MAX ($nq samples)" \
	test "$nq" -gt 1000 -a "$q50" -le 51200 -a "$q99" -lt "$Q99_MAX"
check "with DCQCN the queue peak stays below the buffer: $qc B < 524288 (without CC $qn B)" \
	test "$qc" -gt 0 -a "$qc" -lt 524288
check "with DCQCN, after the first $WARM_MS ms, the queue stays well below the buffer: max $qw B <= $PEAK_MAX (1 ms samples; without CC $qwn B)" \
	test "$qw" -gt 0 -a "$qw" -le "$PEAK_MAX"
check "without CC the queue sits near the buffer: p50 $q50n B, p99 $q99n B > 256 KiB ($nqn samples)" \
	test "$nqn" -gt 1000 -a "$q99n" -gt 262144
mc=$(fctr ecn_marks cc); pc=$(fctr pkts_in cc); mn=$(fctr ecn_marks nocc); pn=$(fctr pkts_in nocc)
fc=$(awk -v m="$mc" -v p="$pc" 'BEGIN { printf "%.2f", p ? 100 * m / p : 100 }')
fn=$(awk -v m="$mn" -v p="$pn" 'BEGIN { printf "%.2f", p ? 100 * m / p : 0 }')
check "with DCQCN the queue sits at the marking thresholds: $mc of $pc packets marked ($fc % < $MARKED_MAX %; without CC $fn %)" \
	awk -v f="$fc" -v mx="$MARKED_MAX" -v m="$mc" 'BEGIN { exit !(m > 0 && f < mx) }'
check "without CC the queue sits above the thresholds: $fn % of the packets marked (> 50 %)" \
	awk -v f="$fn" 'BEGIN { exit !(f > 50) }'
rc=$(( $(ctr retransmit_pkts "$TMP/cc.tx1.log") + $(ctr retransmit_pkts "$TMP/cc.tx2.log") ))
rn=$(( $(ctr retransmit_pkts "$TMP/nocc.tx1.log") + $(ctr retransmit_pkts "$TMP/nocc.tx2.log") ))
check "fewer retransmitted packets with DCQCN ($rc) than without ($rn)" test "$rc" -lt "$rn"
echo "summary: DCQCN: queue p50 $q50 B, p99 $q99 B, peak $qc B, tail drops $dc, marked $fc %, Jain $jc, retransmitted $rc," \
	"goodput $(goodput cc) Gbit/s, CNPs $cnp; no CC: queue peak $qn B, tail drops $dn, marked $fn %," \
	"queue p50 $q50n B, p99 $q99n B, Jain $jn, retransmitted $rn, goodput $(goodput nocc) Gbit/s"
finish
