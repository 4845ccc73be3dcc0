#!/bin/bash
# Issue 2 "done when": Debian's unmodified ibv_rc_pingpong completes between two
# processes on loopback, 10,000 iterations, 1 B .. 64 KiB, polling and with -e.
# Requirements: V-01 (drop-in libibverbs), V-02 (RoCEv2 GID 0), V-04, W-01.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pingpong.sh"
ITERS=${SRN_PINGPONG_ITERS:-10000}
for size in 1 4096 65536; do
	pingpong ibv_rc_pingpong $ITERS $size -c
	pingpong ibv_rc_pingpong $ITERS $size -e -c
done
finish
