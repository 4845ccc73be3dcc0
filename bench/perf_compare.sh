#!/bin/bash
# perf_compare.sh - softrnic against UCX-over-TCP and the kernel, side by side
# in one run on this machine over loopback (issue 5).
#
#   bench/perf_compare.sh [BUILD_DIR]      (default: build)
#
# softrnic: Debian's unmodified perftest under `softrnic run` (server
# softrnic0 on 127.0.0.1, client softrnic1 on 127.0.0.2). Peers: ucx_perftest
# with UCX_TLS=tcp (ucp_put_bw, ucp_get, ucp_am_bw, ucp_put_lat, ucp_am_lat)
# and iperf3 (TCP, UDP with 4 KiB datagrams - the RoCE MTU). Prints one
# table: figure, softrnic, peer, ratio softrnic/peer (for latencies lower is
# better, so a ratio < 1 means softrnic is faster). Raw outputs stay in
# $PERF_OUT (default a temporary directory, printed at the end).
#
# Environment: PERF_NETNS (default 1), PERF_SECS (seconds per bandwidth run, default 4),
# PERF_LAT_ITERS (default 20000).
set -u
# Run in a private network namespace (its own loopback) when possible, so
# that other softrnic processes on this host (tests bound to 127.0.0.1/2
# :4791) neither collide with nor disturb the measurement. PERF_NETNS=0 to
# measure on the host's loopback instead.
if [ "${PERF_NETNS:-1}" = 1 ] && [ -z "${SRN_PERF_IN_NS:-}" ] &&
   unshare -rn true 2>/dev/null; then
	export SRN_PERF_IN_NS=1
	exec unshare -rn sh -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$here/build}
BUILD=$(cd "$BUILD" && pwd)
SOFTRNIC=$BUILD/bin/softrnic
SECS=${PERF_SECS:-4}
LITERS=${PERF_LAT_ITERS:-20000}
OUT=${PERF_OUT:-$(mktemp -d /tmp/srn-perf.XXXXXX)}
mkdir -p "$OUT"
PORT=$(( 21000 + (RANDOM % 20000) ))
for t in ib_write_bw ucx_perftest iperf3 python3; do
	command -v $t >/dev/null || { echo "perf_compare: $t not found" >&2; exit 2; }
done
[ -x "$SOFTRNIC" ] || { echo "perf_compare: $SOFTRNIC not built" >&2; exit 2; }

# pt NAME PROGRAM ARGS... : a perftest pair; client output in $OUT/NAME.c
pt() {
	local name=$1 prog=$2; shift 2
	PORT=$((PORT + 1))
	timeout 120 "$SOFTRNIC" run --name softrnic0 --ip 127.0.0.1 -- \
		"$prog" -p $PORT "$@" >"$OUT/$name.s" 2>&1 &
	local sp=$!
	sleep 0.5
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		timeout 120 "$SOFTRNIC" run --name softrnic1 --ip 127.0.0.2 -- \
			"$prog" -p $PORT "$@" 127.0.0.1 >"$OUT/$name.c" 2>&1 && break
		grep -q "Couldn't connect" "$OUT/$name.c" || break
		sleep 0.3
	done
	wait $sp
}
# ucx NAME ARGS... : an ucx_perftest pair over TCP; CSV result in $OUT/NAME.c
ucx() {
	local name=$1; shift
	PORT=$((PORT + 1))
	UCX_TLS=tcp timeout 120 ucx_perftest -p $PORT >"$OUT/$name.s" 2>&1 &
	local sp=$!
	sleep 0.7
	UCX_TLS=tcp timeout 120 ucx_perftest 127.0.0.1 -p $PORT -f -v "$@" >"$OUT/$name.c" 2>&1
	wait $sp
}
ip3() {
	local name=$1; shift
	PORT=$((PORT + 1))
	timeout 60 iperf3 -s -1 -p $PORT >"$OUT/$name.s" 2>&1 &
	local sp=$!
	sleep 0.5
	timeout 60 iperf3 -c 127.0.0.1 -p $PORT -t "$SECS" -J "$@" >"$OUT/$name.c" 2>&1
	wait $sp
}

echo "softrnic perftest runs ..." >&2
pt write64k ib_write_bw -s 65536 -D "$SECS"
pt write64  ib_write_bw -s 64 -D "$SECS"
pt read64k  ib_read_bw -s 65536 -D "$SECS"
pt send64k  ib_send_bw -s 65536 -D "$SECS"
pt write4q  ib_write_bw -s 65536 -q 4 -D "$SECS"
pt wlat8    ib_write_lat -s 8 -n "$LITERS"
pt slat8    ib_send_lat -s 8 -n "$LITERS"
pt rlat8    ib_read_lat -s 8 -n "$LITERS"
pt alat     ib_atomic_lat -n "$LITERS"
echo "ucx_perftest (UCX_TLS=tcp) runs ..." >&2
ucx put64k  -t ucp_put_bw -s 65536 -n 40000
ucx put64   -t ucp_put_bw -s 64 -n 1000000
ucx get64k  -t ucp_get -s 65536 -n 4000
ucx am64k   -t ucp_am_bw -s 65536 -n 40000
ucx putlat8 -t ucp_put_lat -s 8 -n "$LITERS"
ucx amlat8  -t ucp_am_lat -s 8 -n "$LITERS"
ucx getlat8 -t ucp_get -s 8 -n "$LITERS" -O 1
ucx faddlat -t ucp_fadd -s 8 -n "$LITERS" -O 1
echo "iperf3 runs ..." >&2
ip3 tcp
ip3 udp -u -b 0 -l 4096

python3 - "$OUT" <<'PY'
import json, os, re, sys
out = sys.argv[1]
def rd(n):
    try:
        return open(os.path.join(out, n)).read()
    except OSError:
        return ""
def pt_row(n):
    rows = [l.split() for l in rd(n + ".c").splitlines()
            if re.match(r"^\s*\d+\s+\d+\s", l)]
    return [float(x) for x in rows[-1]] if rows else None
def bw(n):        # MB/s (perftest's MB = 2^20 bytes)
    r = pt_row(n); return r[3] * 1048576 / 1e6 if r else None
def mr(n):        # Mmsg/s
    r = pt_row(n); return r[4] if r else None
def lat(n):       # typical (median) one-way latency, us
    r = pt_row(n); return r[4] if r else None
def ucx(n, col):
    lines = rd(n + ".c").strip().splitlines()
    for i, l in enumerate(lines):
        if l.startswith("iterations,") and i + 1 < len(lines):
            d = dict(zip(l.split(","), lines[i + 1].split(",")))
            return float(d[col])
    return None
def ucx_bw(n):    # ucx reports MB/s with MB = 2^20
    v = ucx(n, "overall_bw"); return v * 1048576 / 1e6 if v is not None else None
def ucx_mr(n):
    v = ucx(n, "overall_mr"); return v / 1e6 if v is not None else None
def ucx_lat(n):
    return ucx(n, "50.0_percentile_lat")
def ip3(n):       # Gbit/s received
    try:
        j = json.loads(rd(n + ".c"))
        e = j["end"]
        s = e.get("sum_received") or e.get("sum")
        return s["bits_per_second"] / 1e9
    except Exception:
        return None
gb = lambda v: v * 8 / 1000 if v is not None else None   # MB/s -> Gbit/s
rows = [
  ("write BW 64 KiB, MB/s", bw("write64k"), "ucp_put_bw 64 KiB", ucx_bw("put64k")),
  ("write msg rate 64 B, Mmsg/s", mr("write64"), "ucp_put_bw 64 B", ucx_mr("put64")),
  ("read BW 64 KiB, MB/s", bw("read64k"), "ucp_get 64 KiB", ucx_bw("get64k")),
  ("send BW 64 KiB, MB/s", bw("send64k"), "ucp_am_bw 64 KiB", ucx_bw("am64k")),
  ("write BW 64 KiB 4 QPs, MB/s", bw("write4q"), "ucp_put_bw 64 KiB", ucx_bw("put64k")),
  ("write lat 8 B, us (lower=better)", lat("wlat8"), "ucp_put_lat 8 B", ucx_lat("putlat8")),
  ("write lat 8 B, us (lower=better)", lat("wlat8"), "ucp_am_lat 8 B", ucx_lat("amlat8")),
  ("send lat 8 B, us (lower=better)", lat("slat8"), "ucp_am_lat 8 B", ucx_lat("amlat8")),
  ("read lat 8 B, us (lower=better)", lat("rlat8"), "ucp_get 8 B -O 1", ucx_lat("getlat8")),
  ("atomic lat, us (lower=better)", lat("alat"), "ucp_fadd -O 1", ucx_lat("faddlat")),
  ("write BW 64 KiB, Gbit/s", gb(bw("write64k")), "iperf3 TCP", ip3("tcp")),
  ("write BW 64 KiB, Gbit/s", gb(bw("write64k")), "iperf3 UDP 4 KiB", ip3("udp")),
  ("read BW / write BW", bw("read64k"), "ib_write_bw 64 KiB", bw("write64k")),
  ("send BW / write BW", bw("send64k"), "ib_write_bw 64 KiB", bw("write64k")),
]
f = lambda v: "-" if v is None else ("%.3f" % v if v < 10 else "%.1f" % v)
print("| figure | softrnic | peer | peer value | ratio softrnic/peer |")
print("|---|---:|---|---:|---:|")
for name, s, pname, p in rows:
    r = "-" if s is None or not p else "%.2f" % (s / p)
    print("| %s | %s | %s | %s | %s |" % (name, f(s), pname, f(p), r))
PY
echo "raw outputs: $OUT" >&2
