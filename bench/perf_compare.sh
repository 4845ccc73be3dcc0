#!/bin/bash
# perf_compare.sh - softrnic against UCX-over-TCP and the kernel, side by side
# on this machine over loopback (issue 5), repeated so that a ratio means
# something on a shared host (issue 11).
#
#   bench/perf_compare.sh [BUILD_DIR]      (default: build)
#
# softrnic: Debian's unmodified perftest under `softrnic run` (server
# softrnic0 on 127.0.0.1, client softrnic1 on 127.0.0.2). Peers: ucx_perftest
# with UCX_TLS=tcp (ucp_put_bw, ucp_get, ucp_am_bw, ucp_put_lat, ucp_am_lat,
# ucp_fadd) and iperf3 (TCP, UDP with 4 KiB datagrams - the RoCE MTU).
#
# PERF_ROUNDS rounds (default 5). In each round every figure is measured
# softrnic first, then its peer right after (interleaved, so a noisy minute
# hits both sides of a ratio). The table gives per figure the median and the
# min-max spread over the rounds of softrnic and of the peer, the ratio of
# the two medians (softrnic/peer; for latencies lower is better, so < 1
# means softrnic is faster) and the min-max of the per-round ratios. Every
# sample is also written to $PERF_OUT/samples.csv; raw tool outputs stay in
# $PERF_OUT/rN/ (default a temporary directory, printed at the end).
#
# Environment: PERF_ROUNDS (default 5), PERF_NETNS (default 1), PERF_SECS
# (seconds per bandwidth run, default 4), PERF_LAT_ITERS (default 20000).
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
ROUNDS=${PERF_ROUNDS:-5}
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
		"$prog" -p $PORT "$@" >"$RD/$name.s" 2>&1 &
	local sp=$!
	sleep 0.5
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		timeout 120 "$SOFTRNIC" run --name softrnic1 --ip 127.0.0.2 -- \
			"$prog" -p $PORT "$@" 127.0.0.1 >"$RD/$name.c" 2>&1 && break
		grep -q "Couldn't connect" "$RD/$name.c" || break
		sleep 0.3
	done
	wait $sp
}
# ucx NAME ARGS... : an ucx_perftest pair over TCP; CSV result in $OUT/NAME.c
ucx() {
	local name=$1; shift
	PORT=$((PORT + 1))
	UCX_TLS=tcp timeout 120 ucx_perftest -p $PORT >"$RD/$name.s" 2>&1 &
	local sp=$!
	sleep 0.7
	UCX_TLS=tcp timeout 120 ucx_perftest 127.0.0.1 -p $PORT -f -v "$@" >"$RD/$name.c" 2>&1
	wait $sp
}
ip3() {
	local name=$1; shift
	PORT=$((PORT + 1))
	timeout 60 iperf3 -s -1 -p $PORT >"$RD/$name.s" 2>&1 &
	local sp=$!
	sleep 0.5
	timeout 60 iperf3 -c 127.0.0.1 -p $PORT -t "$SECS" -J "$@" >"$RD/$name.c" 2>&1
	wait $sp
}

# one round: each softrnic figure, then the peer figure(s) it is compared with
round() {
	pt write64k ib_write_bw -s 65536 -D "$SECS"
	ucx put64k  -t ucp_put_bw -s 65536 -n 40000
	pt write64  ib_write_bw -s 64 -D "$SECS"
	ucx put64   -t ucp_put_bw -s 64 -n 1000000
	pt read64k  ib_read_bw -s 65536 -D "$SECS"
	ucx get64k  -t ucp_get -s 65536 -n 4000
	pt send64k  ib_send_bw -s 65536 -D "$SECS"
	ucx am64k   -t ucp_am_bw -s 65536 -n 40000
	pt write4q  ib_write_bw -s 65536 -q 4 -D "$SECS"
	pt wlat8    ib_write_lat -s 8 -n "$LITERS"
	ucx putlat8 -t ucp_put_lat -s 8 -n "$LITERS"
	ucx amlat8  -t ucp_am_lat -s 8 -n "$LITERS"
	pt slat8    ib_send_lat -s 8 -n "$LITERS"
	pt rlat8    ib_read_lat -s 8 -n "$LITERS"
	ucx getlat8 -t ucp_get -s 8 -n "$LITERS" -O 1
	pt alat     ib_atomic_lat -n "$LITERS"
	ucx faddlat -t ucp_fadd -s 8 -n "$LITERS" -O 1
	ip3 tcp
	ip3 udp -u -b 0 -l 4096
}
for r in $(seq 1 "$ROUNDS"); do
	RD=$OUT/r$r
	mkdir -p "$RD"
	echo "round $r of $ROUNDS ($(date +%T)) ..." >&2
	round
done

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, os, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rd(r, n):
    try:
        return open(os.path.join(out, "r%d" % r, n)).read()
    except OSError:
        return ""
def pt_row(r, n):
    rows = [l.split() for l in rd(r, n + ".c").splitlines()
            if re.match(r"^\s*\d+\s+\d+\s", l)]
    return [float(x) for x in rows[-1]] if rows else None
def bw(r, n):        # MB/s (perftest's MB = 2^20 bytes)
    x = pt_row(r, n); return x[3] * 1048576 / 1e6 if x else None
def mr(r, n):        # Mmsg/s
    x = pt_row(r, n); return x[4] if x else None
def lat(r, n):       # typical (median) one-way latency, us
    x = pt_row(r, n); return x[4] if x else None
def ucx(r, n, col):
    lines = rd(r, n + ".c").strip().splitlines()
    for i, l in enumerate(lines):
        if l.startswith("iterations,") and i + 1 < len(lines):
            d = dict(zip(l.split(","), lines[i + 1].split(",")))
            try:
                return float(d[col])
            except (KeyError, ValueError):
                return None
    return None
def ucx_bw(r, n):    # ucx reports MB/s with MB = 2^20
    v = ucx(r, n, "overall_bw"); return v * 1048576 / 1e6 if v is not None else None
def ucx_mr(r, n):
    v = ucx(r, n, "overall_mr"); return v / 1e6 if v is not None else None
def ucx_lat(r, n):
    return ucx(r, n, "50.0_percentile_lat")
def ip3(r, n):       # Gbit/s received
    try:
        e = json.loads(rd(r, n + ".c"))["end"]
        s = e.get("sum_received") or e.get("sum")
        return s["bits_per_second"] / 1e9
    except Exception:
        return None
gb = lambda v: v * 8 / 1000 if v is not None else None   # MB/s -> Gbit/s
# figure, softrnic sample(r), peer name, peer sample(r)
rows = [
  ("write BW 64 KiB, MB/s", lambda r: bw(r, "write64k"), "ucp_put_bw 64 KiB", lambda r: ucx_bw(r, "put64k")),
  ("write msg rate 64 B, Mmsg/s", lambda r: mr(r, "write64"), "ucp_put_bw 64 B", lambda r: ucx_mr(r, "put64")),
  ("read BW 64 KiB, MB/s", lambda r: bw(r, "read64k"), "ucp_get 64 KiB", lambda r: ucx_bw(r, "get64k")),
  ("send BW 64 KiB, MB/s", lambda r: bw(r, "send64k"), "ucp_am_bw 64 KiB", lambda r: ucx_bw(r, "am64k")),
  ("write BW 64 KiB 4 QPs, MB/s", lambda r: bw(r, "write4q"), "ucp_put_bw 64 KiB", lambda r: ucx_bw(r, "put64k")),
  ("write lat 8 B, us (lower=better)", lambda r: lat(r, "wlat8"), "ucp_put_lat 8 B", lambda r: ucx_lat(r, "putlat8")),
  ("write lat 8 B, us (lower=better)", lambda r: lat(r, "wlat8"), "ucp_am_lat 8 B", lambda r: ucx_lat(r, "amlat8")),
  ("send lat 8 B, us (lower=better)", lambda r: lat(r, "slat8"), "ucp_am_lat 8 B", lambda r: ucx_lat(r, "amlat8")),
  ("read lat 8 B, us (lower=better)", lambda r: lat(r, "rlat8"), "ucp_get 8 B -O 1", lambda r: ucx_lat(r, "getlat8")),
  ("atomic lat, us (lower=better)", lambda r: lat(r, "alat"), "ucp_fadd -O 1", lambda r: ucx_lat(r, "faddlat")),
  ("write BW 64 KiB, Gbit/s", lambda r: gb(bw(r, "write64k")), "iperf3 TCP", lambda r: ip3(r, "tcp")),
  ("write BW 64 KiB, Gbit/s", lambda r: gb(bw(r, "write64k")), "iperf3 UDP 4 KiB", lambda r: ip3(r, "udp")),
  ("read BW / write BW", lambda r: bw(r, "read64k"), "ib_write_bw 64 KiB", lambda r: bw(r, "write64k")),
  ("send BW / write BW", lambda r: bw(r, "send64k"), "ib_write_bw 64 KiB", lambda r: bw(r, "write64k")),
]
f = lambda v: "-" if v is None else ("%.3f" % v if v < 10 else "%.1f" % v)
def summary(vals):
    v = [x for x in vals if x is not None]
    if not v:
        return None, "-"
    return statistics.median(v), "%s (%s-%s)" % (f(statistics.median(v)), f(min(v)), f(max(v)))
with open(os.path.join(out, "samples.csv"), "w") as csv:
    csv.write("figure,peer,round,softrnic,peer_value\n")
    print("%d rounds; median (min-max) per figure; ratio of the medians, and the min-max of the per-round ratios" % rounds)
    print()
    print("| figure | softrnic | peer | peer value | ratio of medians | per-round ratios |")
    print("|---|---:|---|---:|---:|---:|")
    for name, sf, pname, pf in rows:
        s = [sf(r) for r in range(1, rounds + 1)]
        p = [pf(r) for r in range(1, rounds + 1)]
        for r in range(rounds):
            csv.write('"%s","%s",%d,%s,%s\n' % (name, pname, r + 1, "" if s[r] is None else s[r],
                                              "" if p[r] is None else p[r]))
        sm, st = summary(s)
        pm, ptx = summary(p)
        ratio = "-" if sm is None or not pm else "%.2f" % (sm / pm)
        rr = [a / b for a, b in zip(s, p) if a is not None and b]
        rrs = "-" if not rr else "%.2f-%.2f" % (min(rr), max(rr))
        print("| %s | %s | %s | %s | %s | %s |" % (name, st, pname, ptx, ratio, rrs))
PY
echo "raw outputs: $OUT (samples.csv, r1..r$ROUNDS)" >&2
