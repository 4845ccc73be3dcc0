#!/bin/bash
# Fault matrix, profile "loss_bursty": bursty loss, Gilbert-Elliott: good->bad 0.5%, bad->good 25% per packet, every packet lost in bad (mean burst 4 packets, about 2% loss).
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 90 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 4
fault_rc loss_bursty 90 "default ge=0.005,0.25" -- -q 4 -D 6
check "Gilbert-Elliott bursts ($(fab_ctr ge_bursts)) and drops ($(fab_ctr drop_burst))" [ "$(fab_ctr drop_burst)" -gt "$(fab_ctr ge_bursts)" ]
finish
