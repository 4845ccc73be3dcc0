#!/bin/bash
# Fault matrix, profile "spray_4": spraying over 4 paths of 0, 30, 60 and 120 us (per-packet reordering).
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 90 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 6
fault_rc spray_4 90 "default paths=4:0us,30us,60us,120us" -- -q 4 -D 5
check "packets reached the devices ($(fab_ctr pkts_out))" [ "$(fab_ctr pkts_out)" -gt 1000 ]
finish
