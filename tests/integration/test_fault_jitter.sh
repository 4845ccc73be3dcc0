#!/bin/bash
# Fault matrix, profile "jitter": 20 us delay plus 0-200 us uniform jitter on every link (jitter larger than packet spacing reorders).
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 90 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 9
fault_rc jitter 90 "default delay=20us jitter=200us" -- -q 4 -D 5
check "packets reached the devices ($(fab_ctr pkts_out))" [ "$(fab_ctr pkts_out)" -gt 1000 ]
finish
