# pingpong.sh - runs one of Debian's unmodified ibv_*_pingpong programs
# between two softrnic devices on loopback (sourced by test_pingpong_*.sh).
# V-01: the binaries are rdma-core's own, linked against libibverbs.so.1.

# pingpong PROGRAM ITERS SIZE [extra args...]
pingpong() {
	local prog=$1 iters=$2 size=$3; shift 3
	local p; p=$(port)
	local tag="$prog-s$size$(printf '%s' "$*" | tr -d ' ')"
	if run_pair "$tag" 300 \
		"$prog" -d softrnic0 -g 0 -p "$p" -n "$iters" -s "$size" "$@" -- \
		"$prog" -d softrnic1 -g 0 -p "$p" -n "$iters" -s "$size" "$@" "$SIP"; then
		# both sides report the exchange; check the iteration count they print
		if grep -q "$iters iters in" "$TMP/$tag.server.log" && grep -q "$iters iters in" "$TMP/$tag.client.log"; then
			ok "$tag: both sides completed $iters iterations ($(grep -o '[0-9.]* Mbit/sec' "$TMP/$tag.client.log"))"
		else
			fail "$tag: iteration report missing"
			tail -n 5 "$TMP/$tag.client.log"
		fi
	else
		fail "$tag"
	fi
}
