#!/bin/bash
# goodput.sh - goodput of softrnic under each fault profile of the fault
# matrix, as a fraction of the clean run, with the retransmitted packets.
#
#   bash bench/goodput.sh BUILD_DIR [OUT.md]      (default OUT: docs/goodput.md)
#
# Each profile runs the same fixed work through `softrnic fabric` (fault_mix:
# 4 RC QPs, ROUNDS rounds of WRITE + READ + SEND of 1 byte .. 1 MiB plus two
# atomics per QP, every byte checked) and the time it takes is measured;
# goodput = bytes moved by WRITE + READ + SEND / wall time of the transfer
# (fault_mix's own clock, from the first round to the last completion).
# retransmit_pkts is the sum of both devices' counter (softrnic_query_counters,
# the same as `softrnic stats`); drops are the fabric's. Seed: SRN_FAULT_SEED
# (default 4242), the same for every profile. ROUNDS: SRN_GOODPUT_ROUNDS (150).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${2:-$ROOT/docs/goodput.md}
export SRN_FAULT_SEED=${SRN_FAULT_SEED:-4242}
ROUNDS=${SRN_GOODPUT_ROUNDS:-150}
. "$ROOT/tests/integration/fault_lib.sh" "$1"
fault_id 30

profiles=(
	"clean|"
	"loss 0.1%|default loss=0.1%"
	"loss 1%|default loss=1%"
	"loss 5%|default loss=5%"
	"bursty loss (GE 0.5%/25%)|default ge=0.005,0.25"
	"reorder 2% by 200 us|default reorder=0.02,200us"
	"spray 4 paths 0/30/60/120 us|default paths=4:0us,30us,60us,120us"
	"duplication 1%|default dup=1%"
	"corruption 0.5%|default corrupt=0.5%"
	"delay 20 us + jitter 200 us|default delay=20us jitter=200us"
	"link down 150 ms every 1 s|default down=1500ms+150ms/1s"
)
rows=()
clean=0
for p in "${profiles[@]}"; do
	name=${p%%|*}
	stmts=${p#*|}
	# shellcheck disable=SC2086
	fab_start $stmts >/dev/null
	run_mix gp 300 -q 4 -R "$ROUNDS" -D 1000 -W 280 -- -q 4 -R "$ROUNDS" -D 1000 -W 280 >/dev/null 2>&1
	rc=$?
	fab_stop >/dev/null
	c="$TMP/gp.client.log" s="$TMP/gp.server.log"
	drops=$(( $(fab_ctr drop_loss) + $(fab_ctr drop_burst) + $(fab_ctr drop_down) ))
	corr=$(fab_ctr corrupts) dups=$(fab_ctr dups)
	rtx=$(( $(dev_ctr "$c" retransmit_pkts) + $(dev_ctr "$s" retransmit_pkts) ))
	txp=$(( $(dev_ctr "$c" tx_pkts) + $(dev_ctr "$s" tx_pkts) ))
	to=$(dev_ctr "$c" retry_timeouts)
	nak=$(dev_ctr "$c" rx_nak_seq)
	if [ $rc -eq 0 ] && grep -q "goodput_bytes=" "$c"; then
		bytes=$(grep -o "goodput_bytes=[0-9]*" "$c" | cut -d= -f2)
		secs=$(grep -o "seconds=[0-9.]*" "$c" | cut -d= -f2)
		mbs=$(echo "scale=1; $bytes / $secs / 1000000" | bc)
		[ "$name" = clean ] && clean=$mbs
		frac=$(echo "scale=3; $mbs / $clean" | bc)
		rows+=("| $name | $secs | $mbs | $frac | $txp | $rtx | $to | $nak | $drops | $corr | $dups |")
	else
		why="exit $rc"
		grep -q "retry counter exceeded" "$c" && why="RETRY_EXC_ERR"
		rows+=("| $name | - | FAILED ($why) | - | $txp | $rtx | $to | $nak | $drops | $corr | $dups |")
		echo "profile '$name' failed: $why" >&2
	fi
	echo "${rows[-1]}"
done

{
cat <<HDR
# Goodput under faults

Produced by \`bash bench/goodput.sh BUILD_DIR\` (this file is its output) on
$(date -u +%Y-%m-%d), commit $(git -C "$ROOT" rev-parse --short HEAD), seed $SRN_FAULT_SEED, on
$(nproc) cores of "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')", $(uname -sr),
release build (RelWithDebInfo).

Each row is the same work: two processes (\`softrnic run --fabric\`) behind
\`softrnic fabric --seed $SRN_FAULT_SEED default PROFILE\` (every knob on the \`out\` link of both
ports, so both directions are impaired), \`fault_mix -q 4 -R $ROUNDS\`: 4 RC QPs, $ROUNDS rounds of
RDMA WRITE + RDMA READ + SEND (1 byte .. 1 MiB, cycling) plus a FETCH_ADD and a
CMP_SWP per QP and round, MTU 4096, timeout 14 (67 ms), retry_cnt 7; every
byte and every completion is verified (the same program as the fault matrix).

* **goodput**: bytes moved by WRITE + READ + SEND / seconds of the transfer;
  **fraction** = goodput / goodput of the clean run;
* **tx pkts**, **retransmitted**: both devices' \`tx_pkts\` and
  \`retransmit_pkts\` (\`softrnic_query_counters\`, as \`softrnic stats\` shows them);
* **timeouts**, **NAK-seq**: the client's \`retry_timeouts\` and \`rx_nak_seq\`;
* **dropped**, **corrupted**, **duplicated**: the fabric's counters.

All of 2 cores are shared by the fabric daemon, both processes and their
progress threads, so absolute numbers are low; the fractions are the point.
The machine was shared with other work while this ran: repeated runs of the
same row differ by up to about 15% (a fraction above 1 is such noise).

| profile | seconds | goodput MB/s | fraction | tx pkts | retransmitted | timeouts | NAK-seq | dropped | corrupted | duplicated |
|---|---|---|---|---|---|---|---|---|---|---|
HDR
printf '%s\n' "${rows[@]}"
cat <<'TAIL'

## Reading the table

* The requester is go-back-N (IBA): a NAK-sequence or a timeout resends
  everything from the first missing PSN. With up to 1 MiB WRs and 4 QPs in
  flight, one lost packet costs up to a window of retransmissions, so
  retransmitted packets grow much faster than the loss rate.
* FAILED rows (if any): the transfer ended with IBV_WC_RETRY_EXC_ERR; the
  counters are those at the failure.

## Reordering (2% held back, jitter, spraying)

These profiles used to fail with RETRY_EXC_ERR: the responder NAKs the same
PSN again when packets sent before the requester's go-back arrive late, and
the completer spent a retry and went back again for every such NAK. Since
commit "core: a repeated sequence NAK without progress does not restart the
go-back..." a sequence NAK for the PSN a go-back already started from is
counted (`rx_nak_seq_repeat`) and ignored until progress or a timeout
(`test_psn_15_repeated_sequence_nak_without_progress_not_retried`). Every
byte is kept; goodput is low because go-back-N resends a whole window per
reordering episode - the case out-of-order placement (OOO-08) is for.
TAIL
} >"$OUT"
echo "wrote $OUT"

