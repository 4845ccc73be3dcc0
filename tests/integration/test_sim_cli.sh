#!/bin/bash
# test_sim_cli.sh - CC-16: `softrnic sim` end to end.
#   - --help documents every option and output file
#   - the dumbbell and incast scenarios run with exit 0 and write the CSV,
#     the summary and two SVG plots; python3's XML parser accepts the plots
#   - the same seed gives byte-identical CSV; the seed can be overridden
#   - bad scenarios exit 2 with a message naming the line and the token;
#     'cc cubic' is refused naming the algorithms there are; 'cc dcqcn' runs;
#     'cc dcqcn-sw' runs (sim/scenarios/cc_dcqcn_sw_2to1_1g.sim) and CNPs flow
# Usage: bash tests/integration/test_sim_cli.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

S=$SOFTRNIC
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SC="$SRC/sim/scenarios"

if ! "$S" sim --help >/dev/null 2>&1; then
	fail "softrnic does not dispatch 'sim': tools/softrnic/main.c needs" \
	     "'if (strcmp(c, \"sim\") == 0) return srn_cmd_sim(argc - 1, argv + 1);'"
	finish
fi

h=$("$S" sim --help); rc=$?
check "softrnic sim --help exits 0" [ $rc -eq 0 ]
for w in --out --seed --quiet timeseries.csv summary.txt rate.svg queue.svg "EXIT STATUS" \
	 "cc none" kmin kmax; do
	check "softrnic sim --help mentions $w" grep -q -- "$w" <<<"$h"
done

# ---- runs and outputs ----------------------------------------------------------
out=$("$S" sim "$SC/dumbbell.sim" --out "$TMP/db" 2>"$TMP/db.err"); rc=$?
check "dumbbell runs" [ $rc -eq 0 ]
for f in timeseries.csv summary.txt rate.svg queue.svg; do
	check "dumbbell writes $f" test -s "$TMP/db/$f"
done
check "summary printed: fairness" grep -q "Jain index" <<<"$out"
check "summary printed: queue p50/p99" grep -q "p50 .* p99" <<<"$out"
check "summary printed: utilisation" grep -q "utilisation" <<<"$out"
check "summary file = printed summary (minus speed/output lines)" \
	bash -c "diff <(grep -v -e '^speed:' -e '^output:' <<<\"\$1\") <(grep -v '^speed:' '$TMP/db/summary.txt')" _ "$out"
check "csv header" bash -c "head -1 '$TMP/db/timeseries.csv' | grep -qx 'time_us,flow0_gbps,flow1_gbps,host0_queue_bytes,host0_ecn_marks,host0_drops,host0_out_gbps'"
check "csv has one row per sample (10ms / 10us)" [ "$(wc -l <"$TMP/db/timeseries.csv")" -eq 1001 ]
check "dumbbell: 40 Gbit/s link fully used" grep -Eq "utilisation (99|100)\." "$TMP/db/summary.txt"
for f in rate queue; do
	check "$f.svg parses as XML with an <svg> root" python3 -c "
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1]); r = d.documentElement
assert r.tagName == 'svg' and r.getElementsByTagName('polyline'), 'no data'
assert len(r.getElementsByTagName('text')) > 10, 'no labels'" "$TMP/db/$f.svg"
done

# ---- determinism -------------------------------------------------------------------
"$S" sim "$SC/incast8.sim" --out "$TMP/a" --quiet; ra=$?
"$S" sim "$SC/incast8.sim" --out "$TMP/b" --quiet; rb=$?
check "incast8 runs twice" [ $ra -eq 0 ] && [ $rb -eq 0 ]
check "same seed => identical CSV bytes" cmp -s "$TMP/a/timeseries.csv" "$TMP/b/timeseries.csv"
"$S" sim "$SC/incast8.sim" --out "$TMP/c" --quiet --seed 99
check "--seed overrides the scenario's seed" grep -q "seed 99," "$TMP/c/summary.txt"
check "--quiet prints nothing" bash -c "[ -z \"\$('$S' sim '$SC/incast2.sim' --out '$TMP/q' --quiet 2>&1)\" ]"

# ---- errors -------------------------------------------------------------------------
printf 'hosts 3\nlink default rate=fast\nflow 1 -> 0\n' >"$TMP/bad1.sim"
err=$("$S" sim "$TMP/bad1.sim" --out "$TMP/x" 2>&1); rc=$?
check "bad value: exit 2" [ $rc -eq 2 ]
check "bad value: names line and token" grep -q "bad1.sim: line 2: 'rate=fast'" <<<"$err"
printf 'hosts 3\nflow 1 -> 0\ncc cubic\n' >"$TMP/bad2.sim"
err=$("$S" sim "$TMP/bad2.sim" --out "$TMP/x" 2>&1); rc=$?
check "cc cubic: exit 2" [ $rc -eq 2 ]
check "cc cubic: names line, token and the algorithms there are" \
	grep -q "line 3: 'cubic': unknown algorithm (none, dcqcn, dcqcn-paper, dcqcn-sw, timely, timely-seg)" <<<"$err"
printf 'hosts 3\nflow 1 -> 0\ncc dcqcn\nduration 2ms\n' >"$TMP/dcqcn.sim"
"$S" sim "$TMP/dcqcn.sim" --out "$TMP/d" --quiet; rc=$?
check "cc dcqcn: runs (exit 0) and the summary names it" \
	bash -c "[ $rc -eq 0 ] && grep -q 'cc dcqcn,' '$TMP/d/summary.txt'"
"$S" sim "$SC/cc_dcqcn_sw_2to1_1g.sim" --out "$TMP/sw" --quiet; rc=$?
check "cc dcqcn-sw: sim/scenarios/cc_dcqcn_sw_2to1_1g.sim runs (exit 0), the summary names it" \
	bash -c "[ $rc -eq 0 ] && grep -q 'cc dcqcn-sw,' '$TMP/sw/summary.txt'"
check "cc dcqcn-sw: the receiver sent CNPs, no drops" \
	grep -Eq 'events: +ecn marks [1-9][0-9]*, drops 0, cnps [1-9]' "$TMP/sw/summary.txt"
"$S" sim "$TMP/missing.sim" 2>/dev/null; rc=$?
check "missing scenario file: exit 2" [ $rc -eq 2 ]
"$S" sim --bogus 2>/dev/null; rc=$?
check "unknown option: exit 2" [ $rc -eq 2 ]
finish
