#!/bin/bash
# sim_speed.sh - speed of the simulator (CC-16): simulated seconds per
# wall-clock second for a 64-host 63:1 incast at 40 Gbit/s, path MTU 4096
# (bench/sim_incast63.sim: 1 MiB drop-tail buffer, flows lose packets and
# some die of retry exhaustion without congestion control) and its lossless
# variant (bench/sim_incast63_deep.sim: all 63 flows run for the whole
# second). The requirement is better than 1 simulated s per 60 wall s.
# Usage: bash bench/sim_speed.sh BUILD_DIR [DURATION]   (default 1s)
set -eu
BUILD=${1:?usage: $0 BUILD_DIR [DURATION]}
DUR=${2:-1s}
SOFTRNIC="$BUILD/bin/softrnic"
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/srn-simspeed.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
for s in sim_incast63 sim_incast63_deep; do
	sed "s/^duration .*/duration $DUR/" "$HERE/$s.sim" >"$TMP/$s.sim"
	t0=$(date +%s.%N)
	"$SOFTRNIC" sim "$TMP/$s.sim" --out "$TMP/$s" --quiet
	t1=$(date +%s.%N)
	ev=$(sed -n 's/^sim: *\([0-9]*\) events/\1/p' "$TMP/$s/summary.txt")
	python3 - "$s" "$DUR" "$t0" "$t1" "$ev" "$TMP/$s/summary.txt" <<'PY'
import sys, re
name, dur, t0, t1, ev, summ = sys.argv[1:]
m = re.match(r'([0-9.]+)(ns|us|ms|s)$', dur)
sim_s = float(m.group(1)) * {'ns': 1e-9, 'us': 1e-6, 'ms': 1e-3, 's': 1.0}[m.group(2)]
wall = float(t1) - float(t0)
text = open(summ).read()
failed = re.search(r'FAILED: +(\d+)', text)
print(f"{name}: {sim_s:g} simulated s in {wall:.2f} wall s = {sim_s / wall:.4f} simulated s "
      f"per wall s ({wall / sim_s:.1f} wall s per simulated s; requirement < 60), "
      f"{int(ev) / wall / 1e6:.2f} M events/s, flows failed: {failed.group(1) if failed else 0}")
PY
done
