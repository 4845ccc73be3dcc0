#!/bin/bash
# test_deb.sh - the Debian package built from the tree (issue 18).
#   1. cpack -G DEB builds softrnic_VERSION_ARCH.deb from BUILD
#   2. dpkg-deb -I: package name, version (= softrnic --version),
#      architecture, Depends computed by dpkg-shlibdeps (libc6, libisal2,
#      libpcap0.8, libssl3; each installed here), Recommends ibverbs-utils
#   3. dpkg-deb -c: the files of an installation under /usr (tool, private
#      /usr/lib/softrnic with every drop-in library, headers, softrnic.pc,
#      8 man pages, examples, scenarios, README) and nothing else: no
#      libibverbs in /usr/lib itself, no /usr/local, no test programs, no
#      static archives; all owned by root
#   4. dpkg -x into a scratch root: the unpacked tool runs ibv_devinfo on the
#      unpacked library (relocated), its softrnic.pc says prefix=/usr
#   5. as root, when no softrnic package is installed already and
#      SRN_TEST_DEB_INSTALL is not 0: apt-get install ./softrnic_*.deb for
#      real, then from / with PATH=/usr/bin:/bin `softrnic run --
#      ibv_devinfo`, `man softrnic-run`, pkg-config, and that a program
#      started without it still gets rdma-core (ldd, ldconfig cache; CPack's
#      postinst runs ldconfig); then apt-get purge
#      (also if the test is interrupted) and check that nothing is left.
#      Otherwise this step prints SKIP and counts nothing.
# Usage: bash tests/integration/test_deb.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/../.." && pwd)
export LC_ALL=C MANWIDTH=80
for t in cpack dpkg-deb dpkg-shlibdeps ibv_devinfo; do
	command -v $t >/dev/null || { fail "$t not installed (debian-packages.txt)"; finish; }
done
DEVINFO=$(command -v ibv_devinfo)
VER=$("$SOFTRNIC" --version | awk '{print $2}')
ARCH=$(dpkg --print-architecture)

# ---- 1. build ---------------------------------------------------------------------
(cd "$TMP" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$TMP/pkg") >"$TMP/cpack.log" 2>&1
rc=$?
DEB="$TMP/pkg/softrnic_${VER}_${ARCH}.deb"
check "cpack -G DEB exits 0" [ $rc -eq 0 ]
check "package file softrnic_${VER}_${ARCH}.deb ($(stat -c %s "$DEB" 2>/dev/null) bytes)" [ -s "$DEB" ]
[ -s "$DEB" ] || { tail -20 "$TMP/cpack.log"; finish; }

# ---- 2. control ----------------------------------------------------------------------
info=$(dpkg-deb -I "$DEB")
field() { dpkg-deb -f "$DEB" "$1"; }
check "Package: softrnic" [ "$(field Package)" = softrnic ]
check "Version: $VER (softrnic --version)" [ "$(field Version)" = "$VER" ]
check "Architecture: $ARCH" [ "$(field Architecture)" = "$ARCH" ]
dep=$(field Depends)
for p in libc6 libisal2 libpcap0.8 libssl3; do
	check "Depends names $p" grep -Eq "(^|, )$p( |,|$)" <<<"$dep"
done
for p in $(tr ',' '\n' <<<"$dep" | awk '{print $1}'); do
	check "dependency $p is installed here" bash -c 'dpkg -s "$1" 2>/dev/null | grep -q "^Status: install ok installed"' _ "$p"
done
check "Recommends: ibverbs-utils" [ "$(field Recommends)" = ibverbs-utils ]
check "Maintainer and Description set" bash -c '[ -n "$1" ] && grep -q "softrnic is an RDMA NIC" <<<"$2"' _ "$(field Maintainer)" "$info"
echo "$info" | sed -n '/Package:/,$p' | grep -v '^  ' | sed 's/^/  | /'

# ---- 3. files ------------------------------------------------------------------------
list=$(dpkg-deb -c "$DEB")
files=$(awk '{print $6}' <<<"$list" | sed 's#^\./#/#')
for f in /usr/bin/softrnic /usr/lib/softrnic/libibverbs.so.1 /usr/lib/softrnic/libibverbs.so \
	 /usr/include/softrnic/softrnic.h /usr/include/softrnic/cc_algo.h \
	 /usr/lib/pkgconfig/softrnic.pc /usr/share/man/man7/softrnic.7.gz \
	 /usr/share/softrnic/examples/counters.c /usr/share/softrnic/examples/cc/fixed_rate.c \
	 /usr/share/doc/softrnic/README.md; do
	check "package holds $f" grep -qx "$f" <<<"$files"
done
for so in "$BUILD"/lib/lib*.so.[0-9]; do
	[ -e "$so" ] || continue
	check "package holds drop-in /usr/lib/softrnic/$(basename "$so")" grep -qx "/usr/lib/softrnic/$(basename "$so")" <<<"$files"
done
for p in softrnic softrnic-run softrnic-devices softrnic-stats softrnic-fabric softrnic-sim softrnic-cc; do
	check "package holds man page $p.1.gz" grep -qx "/usr/share/man/man1/$p.1.gz" <<<"$files"
done
check "package holds every scenario" \
	[ "$(grep -c '^/usr/share/softrnic/scenarios/.*\.sim$' <<<"$files")" -eq "$(ls "$SRC"/sim/scenarios/*.sim | wc -l)" ]
check "nothing outside /usr" bash -c '! grep -v "^/usr/" <<<"$1" | grep -qv "^/$"' _ "$files"
check "no libibverbs in /usr/lib itself or the multiarch dir" bash -c '! grep -Eq "^/usr/lib/([^/]*-linux-gnu/)?libibverbs" <<<"$1"' _ "$files"
check "no /usr/local" bash -c '! grep -q "^/usr/local" <<<"$1"' _ "$files"
check "no test programs, fuzzers or static archives" bash -c '! grep -Eq "rt_hold|verbs_api_check|/fuzz_|test_|\.a$" <<<"$1"' _ "$files"
check "every file owned by root/root" bash -c '[ -z "$(awk "\$2 != \"root/root\"" <<<"$1")" ]' _ "$list"
echo "  package files: $(grep -vc '/$' <<<"$files") files, $(field Installed-Size) KiB installed"

# ---- 4. unpacked, relocated -----------------------------------------------------------------
R="$TMP/root"
dpkg -x "$DEB" "$R"
E=(env -i PATH="$R/usr/bin:/usr/bin:/bin" HOME="$TMP" LC_ALL=C)
out=$(cd / && "${E[@]}" softrnic run -- ldd "$DEVINFO" 2>&1)
check "dpkg -x: softrnic run resolves libibverbs.so.1 in the unpacked /usr/lib/softrnic" \
	grep -q "libibverbs.so.1 => $R/usr/lib/softrnic/libibverbs.so.1 " <<<"$out"
out=$(cd / && "${E[@]}" softrnic run --name deb0 --ip "$SIP" -- ibv_devinfo 2>&1); rc=$?
check "dpkg -x: ibv_devinfo lists deb0" bash -c '[ $1 -eq 0 ] && grep -q "hca_id:.*deb0" <<<"$2"' _ $rc "$out"
check "dpkg -x: softrnic.pc says prefix=/usr" grep -qx "prefix=/usr" "$R/usr/lib/pkgconfig/softrnic.pc"
check "dpkg -x: man -l renders softrnic-run.1.gz" \
	bash -c 'man -l "$1" 2>/dev/null | grep -q "^ *softrnic-run - run a program"' _ "$R/usr/share/man/man1/softrnic-run.1.gz"

# ---- 5. apt-get install for real ------------------------------------------------------------
installed=0
purge() {
	if [ $installed -eq 1 ]; then
		apt-get purge -y -o DPkg::Lock::Timeout=120 softrnic >"$TMP/purge.log" 2>&1
		installed=2
	fi
}
trap 'purge; kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
st=$(dpkg-query -W -f='${db:Status-Status}' softrnic 2>/dev/null)   # "" if unknown
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
	echo "SKIP apt-get install: needs root and apt-get (step 4 tested the unpacked package)"
elif [ -n "$st" ] && [ "$st" != not-installed ] && [ "$st" != config-files ]; then
	echo "SKIP apt-get install: a softrnic package is on this machine already ($st); not touching it"
elif [ "${SRN_TEST_DEB_INSTALL:-1}" = 0 ]; then
	echo "SKIP apt-get install: SRN_TEST_DEB_INSTALL=0"
else
	installed=1
	(cd "$TMP/pkg" && DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=120 \
		"./$(basename "$DEB")") >"$TMP/apt.log" 2>&1
	rc=$?
	check "apt-get install ./$(basename "$DEB") exits 0" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || tail -5 "$TMP/apt.log"
	grep -E "^(Unpacking|Setting up|Processing)" "$TMP/apt.log" | sed 's/^/  | /'
	S=(env -i PATH=/usr/bin:/bin HOME="$TMP" LC_ALL=C MANWIDTH=80)
	check "installed: softrnic is /usr/bin/softrnic" [ "$(cd / && "${S[@]}" sh -c 'command -v softrnic')" = /usr/bin/softrnic ]
	out=$(cd / && "${S[@]}" softrnic run --name apt0 --ip "$CIP" -- ibv_devinfo 2>&1); rc=$?
	check "installed: softrnic run -- ibv_devinfo from / lists apt0" \
		bash -c '[ $1 -eq 0 ] && grep -q "hca_id:.*apt0" <<<"$2"' _ $rc "$out"
	sed -n '1,4p' <<<"$out" | sed 's/^/  | /'
	check "installed: programs not started through softrnic run keep rdma-core's libibverbs" \
		bash -c '"$@" ldd "$0" | grep -Eq "libibverbs\.so\.1 => /(usr/)?lib/[^/]*-linux-gnu/libibverbs" &&
			 ! ldconfig -p | grep -q /usr/lib/softrnic' "$DEVINFO" "${S[@]}"
	check "installed: LD_LIBRARY_PATH=/usr/lib/softrnic" \
		bash -c 'cd / && "$@" softrnic run -- env | grep -qx LD_LIBRARY_PATH=/usr/lib/softrnic' _ "${S[@]}"
	check "installed: man softrnic-run" \
		bash -c '"$@" man softrnic-run 2>/dev/null | grep -q "^ *softrnic-run - run a program"' _ "${S[@]}"
	check "installed: man 7 softrnic" \
		bash -c '"$@" man 7 softrnic 2>/dev/null | grep -q "^ *softrnic - software RDMA NIC"' _ "${S[@]}"
	check "installed: pkg-config --libs softrnic" \
		[ "$("${S[@]}" pkg-config --libs softrnic | sed 's/ *$//')" = "-L/usr/lib/softrnic -Wl,-rpath,/usr/lib/softrnic -libverbs" ]
	purge
	check "apt-get purge softrnic leaves nothing" \
		bash -c '! dpkg -s softrnic >/dev/null 2>&1 && [ ! -e /usr/bin/softrnic ] && [ ! -e /usr/lib/softrnic ] &&
			 [ ! -e /usr/share/man/man1/softrnic-run.1.gz ]'
fi

finish
