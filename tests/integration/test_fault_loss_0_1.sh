#!/bin/bash
# Fault matrix, profile "loss_0_1": 0.1% random loss on every link.
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 60 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 1
fault_rc loss_0_1 60 "default loss=0.1%" -- -q 4 -D 5
check "fabric dropped packets ($(fab_ctr drop_loss))" [ "$(fab_ctr drop_loss)" -gt 0 ]
finish
