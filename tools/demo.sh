#!/bin/bash
# demo.sh - softrnic's main job, end to end on loopback, for a person to read.
#
# Two software RNICs (softrnic0 on 127.0.0.1, softrnic1 on 127.0.0.2) in two
# processes; unmodified verbs programs run on them; the traffic is real RoCEv2
# that tshark decodes. Usage: tools/demo.sh [BUILD_DIR]   (default: build)
# DEMO_IP0/DEMO_IP1, DEMO_DEV0/DEMO_DEV1 and DEMO_PORT (TCP, two ports from
# it) change the addresses, device names and ports (tests/integration/
# test_demo.sh runs it beside the other tests that way).
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
S="$B/bin/softrnic"
IP0=${DEMO_IP0:-127.0.0.1} IP1=${DEMO_IP1:-127.0.0.2}
D0=${DEMO_DEV0:-softrnic0} D1=${DEMO_DEV1:-softrnic1}
P0=${DEMO_PORT:-18777} P1=$(( ${DEMO_PORT:-18777} + 1 ))
T=$(mktemp -d /tmp/softrnic-demo.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "1. The device, as Debian's unmodified ibv_devinfo sees it"
"$S" run --name $D0 --ip $IP0 -- ibv_devinfo -v | grep -E "hca_id|transport|node_guid|port:|state|active_mtu|link_layer|GID\["

say "2. RDMA operations between two processes (WRITE, READ, SEND+IMM, ATOMICs, error paths)"
"$S" run --name $D0 --ip $IP0 --pcap "$T/demo.pcap" -- "$B/tests/rdma_ops" -d $D0 -p $P0 >"$T/srv.log" 2>&1 &
sleep 0.3
"$S" run --name $D1 --ip $IP1 -- "$B/tests/rdma_ops" -d $D1 -p $P0 $IP0 >"$T/cli.log" 2>&1
wait
cat "$T/srv.log" "$T/cli.log"

say "3. Debian's ibv_rc_pingpong, 64 KiB messages, 20000 round trips (a few seconds)"
"$S" run --name $D0 --ip $IP0 -- ibv_rc_pingpong -d $D0 -g 0 -p $P1 -s 65536 -n 20000 >"$T/pp.srv" 2>&1 &
sleep 0.3
"$S" run --name $D1 --ip $IP1 -- ibv_rc_pingpong -d $D1 -g 0 -p $P1 -s 65536 -n 20000 $IP0 >"$T/pp.cli" 2>&1 &
PP=$!
# wait until both devices publish their counters (the programs are connected)
for _ in $(seq 100); do
	"$S" stats --name $D0 >/dev/null 2>&1 && "$S" stats --name $D1 >/dev/null 2>&1 && break
	sleep 0.1
done
say "4. Live counters of the running devices while the ping-pong runs (softrnic stats --watch 1)"
# softrnic0: three prints one second apart, each with the rate since the
# previous one; then softrnic1 once
LIVE='^[^ ]| (tx_pkts|rx_pkts|tx_bytes|rx_bytes|tx_acks|completions) '
timeout -s INT 2.5 "$S" stats --name $D0 --watch 1 | grep -E "$LIVE"
"$S" stats --name $D1 | grep -E "$LIVE"
wait $PP
wait
grep -E "bytes in|iters in" "$T/pp.cli"

say "5. The wire: $D0's capture decoded by tshark (first 12 packets of $(tshark -r "$T/demo.pcap" 2>/dev/null | wc -l))"
tshark -r "$T/demo.pcap" 2>/dev/null | head -n 12
echo
echo "opcodes seen: $(tshark -r "$T/demo.pcap" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null | sort -n | uniq -c | awk '{printf "%s x%s  ", $2, $1}')"
