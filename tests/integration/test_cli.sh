#!/bin/bash
# test_cli.sh - the `softrnic` command-line tool, end to end.
#   - every subcommand's --help exits 0 and documents every option
#   - `softrnic devices` lists configured devices (SOFTRNIC_DEVICES, SOFTRNIC_CONFIG)
#   - `softrnic run -- env` shows the environment it sets; exit status passes through
#   - a process holding a device open (tests/rt_hold under `softrnic run`):
#     `devices` lists it, `stats` (text, --all, --json, --watch) reads its live
#     counters, its idle CPU is measured, its stats file goes away on close and
#     is ignored after a crash
# Usage: bash tests/integration/test_cli.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

S=$SOFTRNIC
HOLD="$BUILD/tests/rt_hold"
IP=127.0.98.1          # away from the 127.0.0.x devices of the other tests
DEV=clitest$$

# ---- help and version -------------------------------------------------------
out=$("$S" --help); rc=$?
check "softrnic --help exits 0" [ $rc -eq 0 ]
for w in run devices stats --version SOFTRNIC_DEVICES SOFTRNIC_CONFIG SOFTRNIC_PCAP EXAMPLES; do
	check "softrnic --help mentions $w" grep -q -- "$w" <<<"$out"
done
check "softrnic --version" bash -c "'$S' --version | grep -Eq '^softrnic [0-9]+\.[0-9]+'"
help_opts() { # help_opts CMD OPTIONS...
	local c=$1; shift
	local h; h=$("$S" "$c" --help); local rc=$?
	check "softrnic $c --help exits 0" [ $rc -eq 0 ]
	check "softrnic $c -h exits 0" bash -c "'$S' $c -h >/dev/null"
	for o in "$@"; do check "softrnic $c --help mentions $o" grep -q -- "$o" <<<"$h"; done
	check "softrnic $c --help has EXAMPLES" grep -q EXAMPLES <<<"$h"
}
help_opts run --name --ip --pcap -- --help LD_LIBRARY_PATH SOFTRNIC_DEVICES SOFTRNIC_PCAP
help_opts devices --json --help SOFTRNIC_CONFIG
help_opts stats --name --watch --all --json --help
"$S" frobnicate >/dev/null 2>&1
check "unknown command exits 2" [ $? -eq 2 ]
"$S" stats --watch abc >/dev/null 2>&1
check "stats --watch abc is a usage error" [ $? -eq 2 ]

# ---- devices: configured -----------------------------------------------------
out=$(SOFTRNIC_DEVICES="" SOFTRNIC_CONFIG="" "$S" devices)
check "devices: default softrnic0 127.0.0.1" grep -Eq "softrnic0 +127\.0\.0\.1 +0000:0000:0000:0000:0000:ffff:7f00:0001" <<<"$out"
out=$(SOFTRNIC_DEVICES="cfga=127.0.98.7,cfgb=127.0.98.8" "$S" devices)
check "devices: SOFTRNIC_DEVICES listed" bash -c 'grep -Eq "cfga +127\.0\.98\.7 +0000:0000:0000:0000:0000:ffff:7f00:6207" <<<"$1" && grep -q "cfgb " <<<"$1"' _ "$out"
printf '# test\ndevice filedev 127.0.98.9\n' >"$TMP/conf"
out=$(SOFTRNIC_CONFIG="$TMP/conf" "$S" devices)
check "devices: SOFTRNIC_CONFIG listed" grep -Eq "filedev +127\.0\.98\.9" <<<"$out"
err=$(SOFTRNIC_DEVICES="bad=1.2.3" "$S" devices 2>&1 >/dev/null); rc=$?
check "devices: malformed config exits 1 with a message" bash -c '[ "$1" -eq 1 ] && grep -q "not an IPv4 address" <<<"$2"' _ $rc "$err"
check "devices --json is JSON" bash -c "SOFTRNIC_DEVICES=j=127.0.98.10 '$S' devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"configured\"][0][\"name\"]==\"j\"'"

# ---- run ---------------------------------------------------------------------
out=$(cd "$TMP" && "$S" run --name runx --ip 127.0.98.2 --pcap cap.pcap -- env 2>/dev/null)
check "run sets SOFTRNIC_DEVICES" grep -qx "SOFTRNIC_DEVICES=runx=127.0.98.2" <<<"$out"
check "run sets SOFTRNIC_PCAP (absolute)" grep -qx "SOFTRNIC_PCAP=$TMP/cap.pcap" <<<"$out"
check "run puts BUILD/lib first on LD_LIBRARY_PATH" grep -Eq "^LD_LIBRARY_PATH=$BUILD/lib(:|$)" <<<"$out"
out=$(LD_LIBRARY_PATH=/opt/x "$S" run -- env 2>/dev/null)
check "run keeps the old LD_LIBRARY_PATH after its own" grep -qx "LD_LIBRARY_PATH=$BUILD/lib:/opt/x" <<<"$out"
check "run defaults to softrnic0=127.0.0.1" grep -qx "SOFTRNIC_DEVICES=softrnic0=127.0.0.1" <<<"$out"
check "run --name=X --ip=Y form" bash -c "'$S' run --name=eqx --ip=127.0.98.3 env 2>/dev/null | grep -qx SOFTRNIC_DEVICES=eqx=127.0.98.3"
"$S" run -- sh -c 'exit 7' 2>/dev/null
check "run passes the program's exit status (7)" [ $? -eq 7 ]
"$S" run -- /nonexistent/program 2>/dev/null
check "run: missing program exits 127" [ $? -eq 127 ]
"$S" run --ip 999.1.1.1 -- true 2>/dev/null
check "run: bad --ip is a usage error" [ $? -eq 2 ]
"$S" run --name 'a b' -- true 2>/dev/null
check "run: bad --name is a usage error" [ $? -eq 2 ]
"$S" run 2>/dev/null
check "run: no program is a usage error" [ $? -eq 2 ]

# ---- a running device --------------------------------------------------------
if [ ! -x "$HOLD" ] || [ ! -e "$BUILD/lib/libibverbs.so.1" ]; then
	fail "rt_hold or libibverbs.so.1 not built"
	finish
fi
"$S" run --name "$DEV" --ip $IP -- "$HOLD" 60 >"$TMP/hold.log" 2>&1 &
hpid=$!
for _ in $(seq 100); do grep -q ready "$TMP/hold.log" && break; sleep 0.05; done
check "holder opened the device" grep -q "ready $DEV" "$TMP/hold.log"
shm="/dev/shm/softrnic.$DEV.$hpid"
check "stats file $shm exists" [ -f "$shm" ]

out=$("$S" devices)
check "devices lists the running instance with its pid" grep -Eq "^  $DEV +$IP +0000:0000:0000:0000:0000:ffff:7f00:6201 +[0-9a-f:]+ +$hpid " <<<"$out"
out=$("$S" stats --name "$DEV" --all); rc=$?
check "stats --all exits 0" [ $rc -eq 0 ]
check "stats shows the device header" grep -Eq "^$DEV  $IP  pid $hpid" <<<"$out"
for c in tx_pkts rx_pkts drop_bad_icrc retransmit_pkts rt_wakeups rt_rx_batches; do
	check "stats --all lists $c" grep -Eq "^  $c +[0-9]+$" <<<"$out"
done
out=$("$S" stats --name "$DEV")
check "stats (default) hides zero counters" bash -c '! grep -Eq "^  tx_pkts +0$" <<<"$1"' _ "$out"
check "stats --json parses and has the device" bash -c "'$S' stats --name $DEV --json --all | python3 -c 'import json,sys; d=json.load(sys.stdin)[\"devices\"]; assert len(d)==1 and d[0][\"pid\"]==$hpid and \"tx_pkts\" in d[0][\"counters\"]'"
n=$(timeout -s INT 1.3 "$S" stats --name "$DEV" --all --watch 0.25 | grep -c "^$DEV ")
check "stats --watch 0.25 refreshes ($n prints in 1.3 s)" [ "$n" -ge 3 ]
check "stats --watch shows rates" bash -c "timeout -s INT 0.8 '$S' stats --name $DEV --all --watch 0.3 | grep -Eq '/s$'"
"$S" stats --name nosuchdev$$ >/dev/null 2>&1
check "stats of an unknown device exits 1" [ $? -eq 1 ]

# idle CPU of a process with an open device (utime+stime from /proc over 3 s)
tck=$(getconf CLK_TCK)
t0=$(awk '{print $14+$15}' /proc/$hpid/stat); sleep 3; t1=$(awk '{print $14+$15}' /proc/$hpid/stat)
pct=$(awk -v a="$t0" -v b="$t1" -v t="$tck" 'BEGIN{printf "%.2f", (b-a)/t/3*100}')
echo "idle CPU of a process with an open softrnic device: $pct% of one core (3 s, /proc/$hpid/stat)"
check "idle device costs < 2% CPU ($pct%)" awk -v p="$pct" 'BEGIN{exit !(p < 2.0)}'
wk=$("$S" stats --name "$DEV" --all | awk '$1=="rt_wakeups"{print $2}')
check "idle progress thread sleeps (rt_wakeups=$wk)" [ "${wk:-999}" -lt 50 ]

kill -TERM $hpid; wait $hpid
check "holder exits 0 after SIGTERM" [ $? -eq 0 ]
check "stats file removed on close" [ ! -e "$shm" ]

# a crashed process leaves its file; readers ignore it
"$S" run --name "$DEV" --ip $IP -- "$HOLD" 60 >"$TMP/hold2.log" 2>&1 &
hpid=$!
for _ in $(seq 100); do grep -q ready "$TMP/hold2.log" && break; sleep 0.05; done
kill -KILL $hpid; wait $hpid 2>/dev/null
shm="/dev/shm/softrnic.$DEV.$hpid"
check "killed holder left $shm" [ -f "$shm" ]
"$S" stats --name "$DEV" >/dev/null 2>&1
check "stats ignores the dead process (exit 1)" [ $? -eq 1 ]
check "devices does not list the dead process" bash -c "! '$S' devices | grep -q ' $hpid '"
rm -f "$shm"
finish
