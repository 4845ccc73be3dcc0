#!/bin/bash
# Issue 2 "done when": a capture of a run dissects in tshark as InfiniBand
# (RoCEv2) with the expected opcodes and no malformed packets, and every
# packet's ICRC is checked by an implementation that is not softrnic's own
# (scapy's RoCE layer, tests/tools/icrc_check.py).
# Two captures: the kernel's view (tshark on lo: the datagrams exactly as the
# kernel put them on the wire) and softrnic's own pcap (SOFTRNIC_PCAP).
# Requirements: W-01 (byte-exact headers, ICRC), W-02 (source port entropy).
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v tshark >/dev/null; then fail "tshark is not installed"; finish; fi

tshark -i lo -B 64 -f "udp port 4791" -w "$TMP/lo.pcap" >"$TMP/tshark.log" 2>&1 &
tpid=$!
for _ in $(seq 50); do grep -q "Capturing on" "$TMP/tshark.log" && break; sleep 0.1; done
p=$(port)
run_pair rdma_ops 120 \
	env SOFTRNIC_PCAP="$TMP/own.pcap" "$BUILD/tests/rdma_ops" -d softrnic0 -p "$p" -- \
	"$BUILD/tests/rdma_ops" -d softrnic1 -p "$p" "$SIP"
check "traffic run succeeded" [ $? -eq 0 ]
sleep 1
kill -INT $tpid; wait $tpid

for f in lo own; do
	pc="$TMP/$f.pcap"
	n=$(tshark -r "$pc" -Y infiniband 2>/dev/null | wc -l)
	check "$f.pcap: tshark decodes InfiniBand packets ($n)" [ "$n" -gt 100 ]
	mal=$(tshark -r "$pc" -Y "_ws.malformed || _ws.expert.severity >= error" 2>/dev/null | wc -l)
	check "$f.pcap: no malformed packets ($mal)" [ "$mal" -eq 0 ]
	ops=$(tshark -r "$pc" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null | sort -u | tr '\n' ' ')
	echo "$f.pcap opcodes: $ops"
	# expected opcodes: send only imm(5), write first/middle/last/only (6,7,8,10),
	# write last imm (9), send only (4), read request (12), read response first/middle/last/only
	# (13..16), ack (17), atomic ack (18), cmp swap (19), fetch add (20)
	for op in 4 5 6 7 8 9 10 12 13 14 15 16 17 18 19 20; do
		check "$f.pcap: opcode $op present" grep -qw "$op" <<<"$ops"
	done
	check "$f.pcap: every ICRC correct (scapy)" /usr/bin/python3 "$HERE/../tools/icrc_check.py" "$pc"
done
# W-02: the UDP source port varies with the flow (3 QPs each way)
sp=$(tshark -r "$TMP/lo.pcap" -T fields -e udp.srcport 2>/dev/null | sort -u | wc -l)
check "W-02 several UDP source ports used ($sp)" [ "$sp" -ge 2 ]
finish
