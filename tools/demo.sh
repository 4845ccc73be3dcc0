#!/bin/bash
# demo.sh - softrnic's main job, end to end on loopback, for a person to read.
#
# Two software RNICs (softrnic0 on 127.0.0.1, softrnic1 on 127.0.0.2) in two
# processes; unmodified verbs programs run on them; the traffic is real RoCEv2
# that tshark decodes. Usage: tools/demo.sh [BUILD_DIR]   (default: build)
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
S="$B/bin/softrnic"
T=$(mktemp -d /tmp/softrnic-demo.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "1. The device, as Debian's unmodified ibv_devinfo sees it"
"$S" run --name softrnic0 --ip 127.0.0.1 -- ibv_devinfo -v | grep -E "hca_id|transport|node_guid|port:|state|active_mtu|link_layer|GID\["

say "2. RDMA operations between two processes (WRITE, READ, SEND+IMM, ATOMICs, error paths)"
"$S" run --name softrnic0 --ip 127.0.0.1 --pcap "$T/demo.pcap" -- "$B/tests/rdma_ops" -d softrnic0 -p 18777 >"$T/srv.log" 2>&1 &
sleep 0.3
"$S" run --name softrnic1 --ip 127.0.0.2 -- "$B/tests/rdma_ops" -d softrnic1 -p 18777 127.0.0.1 >"$T/cli.log" 2>&1
wait
cat "$T/srv.log" "$T/cli.log"

say "3. Debian's ibv_rc_pingpong, 64 KiB messages, 3000 round trips"
"$S" run --name softrnic0 --ip 127.0.0.1 -- ibv_rc_pingpong -d softrnic0 -g 0 -p 18778 -s 65536 -n 3000 >"$T/pp.srv" 2>&1 &
sleep 0.3
"$S" run --name softrnic1 --ip 127.0.0.2 -- ibv_rc_pingpong -d softrnic1 -g 0 -p 18778 -s 65536 -n 3000 127.0.0.1 >"$T/pp.cli" 2>&1 &
sleep 1
say "4. Live counters of the running devices (softrnic stats)"
"$S" stats
wait
grep -E "bytes in|iters in" "$T/pp.cli"

say "5. The wire: softrnic0's capture decoded by tshark (first 12 packets of $(tshark -r "$T/demo.pcap" 2>/dev/null | wc -l))"
tshark -r "$T/demo.pcap" 2>/dev/null | head -n 12
echo
echo "opcodes seen: $(tshark -r "$T/demo.pcap" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null | sort -n | uniq -c | awk '{printf "%s x%s  ", $2, $1}')"
