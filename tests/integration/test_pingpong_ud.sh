#!/bin/bash
# Issue 2 "done when": Debian's unmodified ibv_ud_pingpong completes between two
# processes on loopback, 10,000 iterations, 1 B up to the MTU, polling and -e.
# Requirements: V-01, V-02, V-03 (AH), PSN-14 (UD: no PSN check), W-01.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pingpong.sh"
ITERS=${SRN_PINGPONG_ITERS:-10000}
for size in 1 2048 4096; do
	pingpong ibv_ud_pingpong $ITERS $size
	pingpong ibv_ud_pingpong $ITERS $size -e
done
finish
