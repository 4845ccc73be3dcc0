#!/bin/bash
# test.sh - the whole test suite (the README's second command; .ci/run runs it).
#
#   1. installs missing Debian packages (tools/install-deps.sh)
#   2. release build in build/ (-Wall -Wextra -Werror) and every ctest:
#      unit tests, packet-level core tests, integration tests with real
#      processes and Debian's unmodified verbs programs
#   3. ASan+UBSan build in build-asan/ and its unit tests plus the integration
#      tests whose programs are our own (instrumented) binaries
#   4. a bounded run of every fuzz target (clang libFuzzer, ASan+UBSan)
#
# Environment: SRN_FUZZ_SECONDS (default 30 per target), SRN_SKIP_ASAN=1,
# SRN_SKIP_FUZZ=1, SRN_PINGPONG_ITERS (default 10000).
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
status=0
step() { echo; echo "=== $*"; }

step "dependencies"
tools/install-deps.sh || exit 1

step "release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 || exit 1

step "tests (release build)"
ctest --test-dir build --output-on-failure || status=1

if [ "${SRN_SKIP_ASAN:-0}" != 1 ]; then
	step "ASan+UBSan build"
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSRN_SANITIZE=ON >/dev/null &&
		cmake --build build-asan -j2 || exit 1
	step "tests (ASan+UBSan build)"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir build-asan --output-on-failure -L unit || status=1
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir build-asan --output-on-failure -R 'test_rdma_ops|test_verbs_api|test_share' || status=1
fi

if [ "${SRN_SKIP_FUZZ:-0}" != 1 ]; then
	step "fuzz targets (bounded)"
	# only the fuzz targets: the instrumented shared library is not needed
	targets=$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done)
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DSRN_FUZZ=ON >/dev/null &&
		cmake --build build-fuzz -j2 --target $targets || exit 1
	for f in build-fuzz/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f" | sed 's/^fuzz_//')
		corpus="$root/tests/fuzz/corpus/$name"
		work=$(mktemp -d)
		[ -d "$corpus" ] && cp -r "$corpus/." "$work/"
		echo "--- $f (${SRN_FUZZ_SECONDS:-30}s)"
		if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$f" -max_total_time="${SRN_FUZZ_SECONDS:-30}" -print_final_stats=0 "$work" >"$work.log" 2>&1; then
			echo "ok   $(basename "$f"): $(grep -o 'Done [0-9]* runs' "$work.log")"
		else
			echo "FAIL $(basename "$f")"; tail -n 40 "$work.log"; status=1
		fi
		rm -rf "$work" "$work.log"
	done
fi

step "result"
if [ $status -eq 0 ]; then echo "all test stages passed"; else echo "SOME TEST STAGES FAILED"; fi
exit $status
