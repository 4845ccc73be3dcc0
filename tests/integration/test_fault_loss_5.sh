#!/bin/bash
# Fault matrix, profile "loss_5": 5% random loss on every link.
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 120 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 3
fault_rc loss_5 120 "default loss=5%" -- -q 4 -D 6
check "fabric dropped packets ($(fab_ctr drop_loss))" [ "$(fab_ctr drop_loss)" -gt 0 ]
check "devices retransmitted" [ $(( $(dev_ctr "$TMP/loss_5.client.log" retransmit_pkts) + $(dev_ctr "$TMP/loss_5.server.log" retransmit_pkts) )) -gt 0 ]
finish
