#!/bin/bash
# Issue 2 "done when": a capture of a run dissects in tshark as InfiniBand
# (RoCEv2) with the expected opcodes and no malformed packets, and every
# packet's ICRC is checked by an implementation that is not softrnic's own
# (scapy's RoCE layer, tests/tools/icrc_check.py).
# Two captures: the kernel's view (tshark on lo: the datagrams exactly as the
# kernel put them on the wire) and softrnic's own pcap (SOFTRNIC_PCAP).
# Requirements: W-01 (byte-exact headers, ICRC), W-02 (source port entropy).
#
# softrnic sends runs of equal-size packets as one UDP GSO send. On a real
# NIC the kernel (or the NIC) cuts such a send into datagrams with IPv4 IDs
# 0, 1, 2, ... before they reach the wire; loopback passes the uncut send to
# the receiver, so a capture on lo would show one giant datagram. To see what
# a wire carries, the test runs in its own network namespace whose lo has UDP
# segmentation offload off: the kernel then cuts every GSO send in software
# before the capture tap, and scapy checks each datagram's ICRC against its
# real ID. Without root (no namespace), offload is turned off instead.
if [ -z "$SRN_CAPTURE_NS" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare -n true 2>/dev/null; then
	exec env SRN_CAPTURE_NS=1 unshare -n bash "$0" "$@"
fi
if [ -n "$SRN_CAPTURE_NS" ]; then
	ip link set lo up
	ethtool -K lo tx-udp-segmentation off >/dev/null 2>&1 ||
		{ echo "ethtool: cannot turn off UDP segmentation on lo; testing without offload"; export SOFTRNIC_OFFLOAD=0; }
else
	echo "no private network namespace (needs root): testing without offload"
	export SOFTRNIC_OFFLOAD=0
fi
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
# GSO: some datagrams on the wire were segments of one send (IPv4 ID > 0),
# and scapy accepted their ICRCs above
if [ -z "${SOFTRNIC_OFFLOAD:-}" ]; then
	ids=$(tshark -r "$TMP/lo.pcap" -T fields -e ip.id 2>/dev/null | sort -u | wc -l)
	check "GSO segments on the wire carry IPv4 IDs 0,1,2,... ($ids distinct IDs)" [ "$ids" -ge 8 ]
fi
# W-02: the UDP source port varies with the flow (3 QPs each way)
sp=$(tshark -r "$TMP/lo.pcap" -T fields -e udp.srcport 2>/dev/null | sort -u | wc -l)
check "W-02 several UDP source ports used ($sp)" [ "$sp" -ge 2 ]
finish
