#!/bin/bash
# Fault matrix: 1% random loss on every link (each direction of every port),
# 4 RC QPs of WRITE/READ/SEND/FETCH_ADD/CMP_SWP from 1 byte to 1 MiB for 6 s
# through `softrnic fabric`: every byte right, every WR completes exactly once
# with SUCCESS, the atomic counter exact (fault_mix.c); the fabric really
# dropped packets and the devices retransmitted.
. "$(dirname "$0")/fault_lib.sh"
fault_id 2
fault_rc loss_1 90 "default loss=1%" -- -q 4 -D 6
check "fabric dropped packets ($(fab_ctr drop_loss))" [ "$(fab_ctr drop_loss)" -gt 0 ]
check "devices retransmitted" [ $(( $(dev_ctr "$TMP/loss_1.client.log" retransmit_pkts) + $(dev_ctr "$TMP/loss_1.server.log" retransmit_pkts) )) -gt 0 ]
finish
