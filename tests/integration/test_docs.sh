#!/bin/bash
# test_docs.sh - --help, man pages and README say the same thing (issue 18).
#   - every man page of the build renders with `man -l` and has its key
#     sections; each section-1 page has exactly the words of the matching
#     `softrnic ... --help`, in the same order (both come from man/*.txt);
#     `softrnic help CMD` prints CMD --help
#   - the README's synopsis is the SYNOPSIS of `softrnic --help`, and each
#     subcommand's SYNOPSIS names the options the main synopsis gives it
#   - every SOFTRNIC_* variable the code reads is documented in softrnic(7),
#     whose ENVIRONMENT lists the same variables as the README's table
#   - every function of include/softrnic/softrnic.h and every symbol of the
#     SOFTRNIC_1.0 version is documented in softrnic(7)
#   - the generator refuses a malformed source (tab, no NAME)
# No network, no devices. Usage: bash tests/integration/test_docs.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/../.." && pwd)
S=$SOFTRNIC
MAN="$BUILD/man"
export LC_ALL=C MANWIDTH=80
unset MANOPT MAN_KEEP_FORMATTING

command -v man >/dev/null || { fail "man not installed (man-db, debian-packages.txt)"; finish; }

# rendered text of a page without its header and footer lines
render() { man -l "$1" 2>"$TMP/man.err" | sed -e '1d' -e '$d'; }
words() { tr -s '[:space:]' '\n' | sed '/^$/d'; }

# ---- man pages: render, key sections, same words as --help ------------------
pages1="softrnic softrnic-run softrnic-devices softrnic-stats softrnic-fabric softrnic-sim softrnic-cc"
for p in $pages1; do
	f="$MAN/man1/$p.1.gz"
	if [ ! -f "$f" ]; then fail "$p.1 generated"; continue; fi
	txt=$(render "$f")
	check "$p(1) renders without warnings" bash -c '[ -n "$1" ] && [ ! -s "$2" ]' _ "$txt" "$TMP/man.err"
	for sec in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "EXIT STATUS" "SEE ALSO"; do
		check "$p(1) has section $sec" grep -qx "$sec" <<<"$txt"
	done
	cmd=${p#softrnic}; cmd=${cmd#-}
	if [ -z "$cmd" ]; then help=$("$S" --help); else help=$("$S" "$cmd" --help); fi
	# the man page's NAME is softrnic-CMD where --help says "softrnic CMD"
	[ -n "$cmd" ] && help=$(sed "0,/^    softrnic $cmd - /s//    softrnic-$cmd - /" <<<"$help")
	if diff <(words <<<"$help") <(words <<<"$txt") >"$TMP/$p.diff"; then
		ok "$p(1) has the words of --help, in order ($(words <<<"$txt" | wc -l) words)"
	else
		fail "$p(1) differs from --help:"; head -n 20 "$TMP/$p.diff"
	fi
	if [ -n "$cmd" ]; then
		check "softrnic help $cmd = softrnic $cmd --help" \
			bash -c 'diff <("$1" help "$2") <("$1" "$2" --help) >/dev/null' _ "$S" "$cmd"
		check "$p(1) NAME is '$p - ...'" grep -Eq "^ +$p - [a-z]" <<<"$txt"
	fi
done
"$S" help frobnicate >/dev/null 2>&1
check "softrnic help UNKNOWN exits 2" [ $? -eq 2 ]

f7="$MAN/man7/softrnic.7.gz"
man7=$(render "$f7")
check "softrnic(7) renders without warnings" bash -c '[ -n "$1" ] && [ ! -s "$2" ]' _ "$man7" "$TMP/man.err"
for sec in NAME SYNOPSIS DESCRIPTION FUNCTIONS "CONGESTION CONTROL" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
	check "softrnic(7) has section $sec" grep -qx "$sec" <<<"$man7"
done

# ---- README synopsis = softrnic --help SYNOPSIS -------------------------------
help_syn=$("$S" --help | sed -n '/^SYNOPSIS$/,/^[A-Z]/{/^    /s/^    //p}')
readme_syn=$(sed -n '/^## Synopsis/,/^## /p' "$SRC/README.md" | sed -n '/^```$/,/^```$/{/^```$/d;p}')
if [ -n "$help_syn" ] && [ "$help_syn" = "$readme_syn" ]; then
	ok "README synopsis = softrnic --help SYNOPSIS ($(wc -l <<<"$help_syn") lines)"
else
	fail "README synopsis differs from softrnic --help SYNOPSIS:"
	diff <(echo "$help_syn") <(echo "$readme_syn") | head -20
fi
opts() { grep -oE -- '(^|[ [|])--?[a-zA-Z][a-zA-Z-]*' | sed 's/^[ [|]//' | sort -u; }
for cmd in run devices stats fabric sim cc; do
	main_opts=$(grep -E "^softrnic $cmd( |$)" <<<"$help_syn" | opts)
	sub_opts=$("$S" "$cmd" --help | sed -n '/^SYNOPSIS$/,/^[A-Z]/p' | grep -v -- "$cmd --help" | opts)
	if [ "$main_opts" = "$sub_opts" ]; then
		ok "softrnic $cmd: same options in both synopses ($(echo $sub_opts))"
	else
		fail "softrnic $cmd: synopsis options differ: main [$(echo $main_opts)] vs $cmd --help [$(echo $sub_opts)]"
	fi
done

# ---- environment variables: code <= softrnic(7) = README ---------------------
env7=$(sed -n '/^ENVIRONMENT$/,/^[A-Z]/p' <<<"$man7" | grep -oE '^ +SOFTRNIC_[A-Z0-9_]+' | tr -d ' ' | sort -u)
code_env=$(grep -rhoE '"SOFTRNIC_[A-Z0-9_]+"' "$SRC/src" "$SRC/tools" | tr -d '"' | sort -u)
readme_env=$(sed -n '/^## Environment/,/^## /p' "$SRC/README.md" | grep -oE '^\| `SOFTRNIC_[A-Z0-9_]+`' | tr -d '|` ' | sort -u)
check "softrnic(7) documents variables ($(echo $env7 | wc -w))" [ -n "$env7" ]
missing=$(comm -23 <(echo "$code_env") <(echo "$env7"))
check "every SOFTRNIC_* variable the code reads is in softrnic(7) ENVIRONMENT${missing:+ (missing: $missing)}" [ -z "$missing" ]
check "README's environment table = softrnic(7) ENVIRONMENT$(diff <(echo "$readme_env") <(echo "$env7") | grep '^[<>]' | tr '\n' ' ')" \
	[ "$readme_env" = "$env7" ]

# ---- the extension API --------------------------------------------------------
funcs=$(grep -oE '^[a-z].*[ *](softrnic_[a-z_]+)\(' "$SRC/include/softrnic/softrnic.h" | grep -oE 'softrnic_[a-z_]+' | sort -u)
syms=$(sed -n '/^SOFTRNIC_1.0/,/}/p' "$SRC/src/verbs/libibverbs.map" | grep -oE 'softrnic_[a-z_]+' | sort -u)
check "softrnic.h declares functions ($(echo $funcs | wc -w))" [ -n "$funcs" ]
check "the header's functions are the SOFTRNIC_1.0 symbols" [ "$funcs" = "$syms" ]
for fn in $funcs; do
	check "softrnic(7) documents $fn() (SYNOPSIS and FUNCTIONS)" \
		bash -c 'grep -q " $2(" <<<"$1" && sed -n "/^FUNCTIONS$/,/^[A-Z]/p" <<<"$1" | grep -q "^ *$2()"' _ "$man7" "$fn"
done
for w in cc_algo.h softrnic_cc_algo SOFTRNIC_CC_ABI_VERSION on_event pkg-config; do
	check "softrnic(7) mentions $w" grep -q -- "$w" <<<"$man7"
done

# ---- the generator refuses what would render differently ---------------------
GEN="$BUILD/gen/srn_mangen"
printf 'NAME\n    x - y\n\nDESCRIPTION\n\tTabbed.\n' >"$TMP/tab.txt"
"$GEN" man "$TMP/tab.txt" "$TMP/tab.1" x 1 0 d 2>"$TMP/gen.err"
check "srn_mangen refuses a tab (exit 1, names the line)" \
	bash -c '[ $1 -eq 1 ] && grep -q "tab.txt:5: tab" "$2"' _ $? "$TMP/gen.err"
printf 'DESCRIPTION\n    no name\n' >"$TMP/noname.txt"
"$GEN" c "$TMP/x.c" "sym=$TMP/noname.txt" 2>"$TMP/gen.err"
check "srn_mangen refuses a page without NAME" bash -c '[ $1 -eq 1 ] && grep -q NAME "$2"' _ $? "$TMP/gen.err"

finish
