#!/bin/bash
# test_install.sh - softrnic installed with `cmake --install` works without
# the build tree (issue 18).
#   1. cmake --install BUILD --prefix TMP/prefix; the layout: tool in bin,
#      every drop-in library of the build (build/lib/lib*.so.N) in the private
#      lib/softrnic (none in lib/ itself), headers, softrnic.pc, man pages,
#      examples, scenarios; no RPATH into the build tree
#   2. from /, with an environment that names only the prefix (env -i,
#      PATH=PREFIX/bin:/usr/bin:/bin): softrnic run sets LD_LIBRARY_PATH to
#      PREFIX/lib/softrnic, ldd resolves libibverbs.so.1 there, ibv_devinfo
#      lists the device, and an ibv_rc_pingpong pair runs; the server's
#      /proc/PID/maps shows the installed libibverbs and nothing of BUILD
#   3. pkg-config --cflags --libs softrnic builds the installed example
#      (counters.c) against the installed header; it runs through its rpath
#      and under softrnic run, and rdma-core's library refuses it
#      (SOFTRNIC_1.0); softrnic cc build finds the installed cc_algo.h;
#      softrnic sim runs an installed scenario
#   4. every installed man page renders with man -l and is found by name
#      (MANPATH=PREFIX/share/man)
#   5. the installed tree moved elsewhere still runs ibv_devinfo; without
#      its lib/softrnic, softrnic run warns and still runs the program
# Usage: bash tests/integration/test_install.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/../.." && pwd)
P="$TMP/prefix"
PRIV="$P/lib/softrnic"
export LC_ALL=C MANWIDTH=80
for t in cmake pkg-config man cc readelf ibv_devinfo ibv_rc_pingpong; do
	command -v $t >/dev/null || { fail "$t not installed (debian-packages.txt)"; finish; }
done
DEVINFO=$(command -v ibv_devinfo)

# ---- 1. install ------------------------------------------------------------------
cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1
rc=$?
check "cmake --install --prefix TMP exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || { tail -20 "$TMP/install.log"; finish; }
check "bin/softrnic installed, executable" [ -x "$P/bin/softrnic" ]
check "lib/softrnic/libibverbs.so.1 installed (-> $(readlink "$PRIV/libibverbs.so.1"))" [ -f "$PRIV/libibverbs.so.1" ]
check "lib/softrnic/libibverbs.so (pkg-config links against it)" [ -e "$PRIV/libibverbs.so" ]
check "no libibverbs directly in PREFIX/lib (rdma-core not shadowed)" \
	bash -c '! ls "$1"/lib/libibverbs* >/dev/null 2>&1' _ "$P"
n=0
for so in "$BUILD"/lib/lib*.so.[0-9]; do
	[ -e "$so" ] || continue
	n=$((n + 1))
	check "drop-in $(basename "$so") of the build is in lib/softrnic" [ -e "$PRIV/$(basename "$so")" ]
done
check "the build has drop-in libraries ($n)" [ $n -ge 1 ]
check "include/softrnic/softrnic.h" [ -f "$P/include/softrnic/softrnic.h" ]
check "include/softrnic/cc_algo.h" [ -f "$P/include/softrnic/cc_algo.h" ]
check "lib/pkgconfig/softrnic.pc" [ -f "$P/lib/pkgconfig/softrnic.pc" ]
check "softrnic.pc has the install-time prefix" grep -qx "prefix=$P" "$P/lib/pkgconfig/softrnic.pc"
check "7 man pages in man1, softrnic.7 in man7" \
	bash -c '[ $(ls "$1"/share/man/man1/softrnic*.1.gz | wc -l) -eq 7 ] && [ -f "$1"/share/man/man7/softrnic.7.gz ]' _ "$P"
check "examples/counters.c" [ -f "$P/share/softrnic/examples/counters.c" ]
check "examples/cc/fixed_rate.c" [ -f "$P/share/softrnic/examples/cc/fixed_rate.c" ]
check "every scenario of sim/scenarios installed" \
	bash -c '[ $(ls "$1"/share/softrnic/scenarios/*.sim | wc -l) -eq $(ls "$2"/sim/scenarios/*.sim | wc -l) ]' _ "$P" "$SRC"
check "no RPATH/RUNPATH in the installed tool and library" \
	bash -c '! readelf -d "$1/bin/softrnic" "$2/libibverbs.so.1" | grep -Eq "R(UN)?PATH"' _ "$P" "$PRIV"

# ---- 2. run from the prefix only ----------------------------------------------------
E=(env -i PATH="$P/bin:/usr/bin:/bin" HOME="$TMP" LC_ALL=C)
cd /
check "PATH finds the installed softrnic" \
	bash -c '[ "$("$@" sh -c "command -v softrnic")" = "$0" ]' "$P/bin/softrnic" "${E[@]}"
out=$("${E[@]}" softrnic run --name inst0 --ip "$SIP" -- env 2>&1)
check "run: LD_LIBRARY_PATH is PREFIX/lib/softrnic" grep -qx "LD_LIBRARY_PATH=$PRIV" <<<"$out"
check "run: nothing in the program's environment names the build tree" bash -c '! grep -qF "$1" <<<"$2"' _ "$BUILD" "$out"
out=$("${E[@]}" softrnic run -- ldd "$DEVINFO" 2>&1)
check "run: ldd resolves libibverbs.so.1 in PREFIX/lib/softrnic" \
	grep -Eq "libibverbs\.so\.1 => $PRIV/libibverbs\.so\.1 " <<<"$out"
out=$("${E[@]}" softrnic run --name inst0 --ip "$SIP" -- ibv_devinfo 2>&1); rc=$?
check "run: ibv_devinfo exits 0" [ $rc -eq 0 ]
check "run: ibv_devinfo lists inst0, port active" \
	bash -c 'grep -q "hca_id:.*inst0" <<<"$1" && grep -q PORT_ACTIVE <<<"$1"' _ "$out"

# an ibv_rc_pingpong pair through the installed tool; env -i and softrnic run
# exec, so $! is the pid of the server's ibv_rc_pingpong
pp=$(port)
"${E[@]}" softrnic run --name softrnic0 --ip "$SIP" -- \
	ibv_rc_pingpong -d softrnic0 -g 0 -p "$pp" -n 500 >"$TMP/srv.log" 2>&1 &
spid=$!
# watchdog: kills the server after 60 s; killed itself (with its sleep, so
# no process keeps ctest's output pipe open) once the server is done
( sleep 60 & s=$!; trap 'kill $s; exit 0' TERM; wait $s; kill "$spid" ) >/dev/null 2>&1 &
wdog=$!
maps=""
for _ in $(seq 100); do
	maps=$(grep libibverbs "/proc/$spid/maps" 2>/dev/null | awk '{print $6}' | sort -u)
	[ -n "$maps" ] && break
	sleep 0.05
done
check "pingpong server maps PREFIX/lib/softrnic's libibverbs ($maps)" \
	[ "$maps" = "$(readlink -f "$PRIV/libibverbs.so.1")" ]
check "pingpong server maps nothing of the build tree" \
	bash -c '! grep -qF "$1" "/proc/$2/maps"' _ "$BUILD" "$spid"
tries=0
while :; do
	timeout -k 5 60 "${E[@]}" softrnic run --name softrnic1 --ip "$CIP" -- \
		ibv_rc_pingpong -d softrnic1 -g 0 -p "$pp" -n 500 "$SIP" >"$TMP/cli.log" 2>&1
	crc=$?
	if [ $crc -ne 0 ] && [ $tries -lt 20 ] && grep -q "Couldn't connect" "$TMP/cli.log"; then
		tries=$((tries + 1)); sleep 0.2; continue
	fi
	break
done
wait "$spid"; src=$?
kill "$wdog" 2>/dev/null
if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -q "500 iters" "$TMP/cli.log"; then
	ok "ibv_rc_pingpong pair through the installed softrnic run: $(grep iters "$TMP/cli.log")"
else
	fail "ibv_rc_pingpong pair (server $src, client $crc)"
	tail -5 "$TMP/srv.log" "$TMP/cli.log"
fi

# ---- 3. build against the installed header ----------------------------------------
PC=(env PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config)
flags=$("${PC[@]}" --cflags --libs softrnic 2>&1); rc=$?
check "pkg-config --cflags --libs softrnic ($flags)" [ $rc -eq 0 ]
check "pkg-config: -I PREFIX/include, -L and rpath PREFIX/lib/softrnic, -libverbs" \
	bash -c 'grep -qF -- "-I$1/include" <<<"$3" && grep -qF -- "-L$2 " <<<"$3" &&
		 grep -qF -- "-Wl,-rpath,$2 " <<<"$3" && grep -q -- "-libverbs" <<<"$3"' _ "$P" "$PRIV" "$flags"
check "pkg-config --modversion = softrnic --version" \
	[ "softrnic $("${PC[@]}" --modversion softrnic)" = "$("$P/bin/softrnic" --version)" ]
# shellcheck disable=SC2046
cc $("${PC[@]}" --cflags softrnic) -o "$TMP/counters" "$P/share/softrnic/examples/counters.c" \
	$("${PC[@]}" --libs softrnic) 2>"$TMP/cc.log"
check "cc with pkg-config builds examples/counters.c" [ $? -eq 0 ]
check "counters has RUNPATH PREFIX/lib/softrnic" \
	bash -c 'readelf -d "$1" | grep -E "R(UN)?PATH" | grep -qF "[$2]"' _ "$TMP/counters" "$PRIV"
out=$("${E[@]}" SOFTRNIC_DEVICES="cnt0=$SIP" "$TMP/counters" 2>&1); rc=$?
check "counters runs through its rpath: cnt0 at $SIP" \
	bash -c '[ $1 -eq 0 ] && grep -q "^cnt0: softrnic device, address $2, [0-9]* counters" <<<"$3"' _ $rc "$SIP" "$out"
out=$("${E[@]}" softrnic run --name cnt1 --ip "$CIP" -- "$TMP/counters" 2>&1); rc=$?
check "counters under softrnic run: cnt1 at $CIP" \
	bash -c '[ $1 -eq 0 ] && grep -q "^cnt1: softrnic device, address $2" <<<"$3"' _ $rc "$CIP" "$out"
sysverbs=$(ldconfig -p | awk '/libibverbs\.so\.1 /{print $NF; exit}')
if [ -n "$sysverbs" ]; then
	out=$("${E[@]}" LD_LIBRARY_PATH="$(dirname "$sysverbs")" "$TMP/counters" 2>&1); rc=$?
	check "rdma-core's libibverbs refuses it (SOFTRNIC_1.0 not found, exit $rc)" \
		bash -c '[ $1 -ne 0 ] && grep -q SOFTRNIC_1.0 <<<"$2"' _ $rc "$out"
fi

printf '#!/bin/sh\necho "$@" >>"%s"\nexec cc "$@"\n' "$TMP/cc.args" >"$TMP/cc-log"
chmod +x "$TMP/cc-log"
"${E[@]}" softrnic cc keygen "$TMP/k" >/dev/null
out=$("${E[@]}" CC="$TMP/cc-log" softrnic cc build "$P/share/softrnic/examples/cc/fixed_rate.c" \
	--key "$TMP/k" -o "$TMP/fixed.so" 2>&1); rc=$?
check "cc build of the installed example, signed" \
	bash -c '[ $1 -eq 0 ] && [ -s "$2.sig" ] && [ -s "$2" ]' _ $rc "$TMP/fixed.so"
check "cc build compiled with -I PREFIX/include (installed cc_algo.h)" grep -qF -- "-I$P/include " "$TMP/cc.args"
"${E[@]}" softrnic sim "$P/share/softrnic/scenarios/incast2.sim" --out "$TMP/sim" --quiet
check "sim runs an installed scenario (summary.txt)" bash -c '[ $1 -eq 0 ] && [ -s "$2" ]' _ $? "$TMP/sim/summary.txt"

# ---- 4. man pages ----------------------------------------------------------------------
for f in "$P"/share/man/man1/*.1.gz "$P"/share/man/man7/*.7.gz; do
	b=$(basename "$f" .gz); page=${b%.*}; sec=${b##*.}
	txt=$(man -l "$f" 2>"$TMP/man.err")
	check "man -l $b renders NAME, SYNOPSIS, DESCRIPTION, SEE ALSO" \
		bash -c 'for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do grep -qx "$s" <<<"$1" || exit 1; done; [ ! -s "$2" ]' _ "$txt" "$TMP/man.err"
	check "man $sec $page finds PREFIX's page by name" \
		[ "$("${E[@]}" MANPATH="$P/share/man" man -w "$sec" "$page" 2>/dev/null)" = "$f" ]
done
man -l "$P/share/man/man1/softrnic-run.1.gz" | head -n 12 | sed 's/^/  | /'

# ---- 5. the installed tree, moved -----------------------------------------------------------
M="$TMP/moved"
mv "$P" "$M"
out=$("${E[@]}" PATH="$M/bin:/usr/bin:/bin" softrnic run --name mv0 --ip "$SIP" -- ibv_devinfo 2>&1); rc=$?
check "moved tree: ibv_devinfo lists mv0" bash -c '[ $1 -eq 0 ] && grep -q "hca_id:.*mv0" <<<"$2"' _ $rc "$out"
check "moved tree: ldd resolves the moved library" \
	bash -c '"$@" | grep -q "libibverbs.so.1 => $0/lib/softrnic/"' "$M" "${E[@]}" "$M/bin/softrnic" run -- ldd "$DEVINFO"
rm -rf "$M/lib/softrnic"
err=$("${E[@]}" "$M/bin/softrnic" run -- true 2>&1); rc=$?
check "without lib/softrnic: run warns and still runs the program" \
	bash -c '[ $1 -eq 0 ] && grep -q "warning: softrnic.s library directory" <<<"$2"' _ $rc "$err"

finish
