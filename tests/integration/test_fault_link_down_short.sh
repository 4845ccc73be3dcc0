#!/bin/bash
# Fault matrix, profile "link_down_short": every link down for 150 ms every second from 1.5 s on, shorter than the retry budget (timeout 14 = 67 ms x 8 tries = 537 ms): the transfer recovers.
# 4 RC QPs carrying RDMA WRITE, RDMA READ, SEND, FETCH_ADD and CMP_SWP from
# 1 byte to 1 MiB through `softrnic fabric` (fault_mix.c): every byte of
# every buffer right, every WR completes exactly once with SUCCESS, in order,
# the shared FETCH_ADD counter ends at the exact sum and every CMP_SWP chain
# is intact (each atomic executed exactly once). Bounded: fault_mix's own
# 30 s per-completion limit and the 90 s timeout of each process.
. "$(dirname "$0")/fault_lib.sh"
fault_id 10
fault_rc link_down_short 90 "default down=1500ms+150ms/1s" -- -q 4 -D 6
check "packets dropped while down ($(fab_ctr drop_down))" [ "$(fab_ctr drop_down)" -gt 0 ]
check "devices timed out and recovered" [ $(( $(dev_ctr "$TMP/link_down_short.client.log" retry_timeouts) )) -gt 0 ]
finish
