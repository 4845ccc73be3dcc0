#!/bin/bash
# check_layers.sh BUILD_DIR - checks the architecture rules of docs/architecture.md
# on a build's object files (nm) and on the sources:
#   1. src/core and src/wire call no clock, socket, thread, sleep or C
#      allocator (the core is sans-I/O; memory comes from srn_mem hooks);
#   2. no layer includes a higher one: wire <- core <- {runtime <- verbs,
#      fabric, sim} <- tools;
#   3. no call loop between the files of src/core (or of src/runtime): the
#      file -> file graph of defined/used symbols has no cycle;
#   4. transports are chosen in one place: SRN_QPT_ appears in src/core only
#      in the transport modules and qp.c's transport_of.
# Prints what it finds and exits 1 on any violation.
set -u
build=${1:?usage: check_layers.sh BUILD_DIR}
cd "$(dirname "$0")/.."
status=0
fail() { echo "FAIL $*"; status=1; }

# 1. forbidden calls in the sans-I/O layers
forbidden='^(clock_gettime|gettimeofday|time|nanosleep|usleep|sleep|socket|bind|connect|send|sendto|sendmsg|sendmmsg|recv|recvfrom|recvmsg|recvmmsg|poll|ppoll|epoll_wait|select|read|write|open|pthread_[a-z_]+|malloc|calloc|realloc|free|aligned_alloc|posix_memalign|fork|signal|sigaction)$'
for lib in srn_wire srn_core srn_cc; do
	dir=$(find "$build" -type d -name "$lib.dir" | head -n 1)
	[ -n "$dir" ] || { fail "no objects of $lib in $build"; continue; }
	bad=$(find "$dir" -name '*.o' -exec nm -u {} + 2>/dev/null | awk '{print $2}' | sed 's/@.*//' |
	      grep -E "$forbidden" | sort -u | tr '\n' ' ')
	if [ -n "$bad" ]; then fail "$lib calls $bad"; else echo "ok   $lib calls no clock, socket, thread or allocator"; fi
done

# 2. includes point down
check_inc() {   # folder, forbidden include pattern
	local hits
	hits=$(grep -rnE "#include \"[./]*($2)/" "src/$1" --include=*.c --include=*.h || true)
	if [ -n "$hits" ]; then fail "src/$1 includes a higher layer:"; echo "$hits"; else echo "ok   src/$1 includes no higher layer"; fi
}
check_inc wire 'core|runtime|verbs|fabric|sim'
check_inc core 'runtime|verbs|fabric|sim'
check_inc fabric 'runtime|verbs|sim'
check_inc sim 'runtime|verbs'
check_inc runtime 'verbs|sim'
hits=$(grep -rnE 'include "runtime/(rt_internal|rt_dev)\.h"' tools/softrnic || true)
if [ -n "$hits" ]; then fail "tools use runtime internals:"; echo "$hits"; else echo "ok   tools use only the runtime's public headers"; fi

# 3. no call loop between the files of a folder
for lib in srn_core srn_rt; do
	dir=$(find "$build" -type d -name "$lib.dir" | head -n 1)
	[ -n "$dir" ] || continue
	python3 - "$dir" "$lib" <<'PY' || status=1
import subprocess, sys, glob, os
d, lib = sys.argv[1], sys.argv[2]
objs = sorted(glob.glob(os.path.join(d, '**', '*.o'), recursive=True))
defs, uses = {}, {}
for o in objs:
    f = os.path.basename(o).replace('.c.o', '.c')
    out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == 'U':
            uses.setdefault(f, set()).add(p[1])
        elif len(p) == 3 and p[1] in 'TDRB':
            defs[p[2]] = f
edges = {f: set() for f in [os.path.basename(o).replace('.c.o', '.c') for o in objs]}
for f, us in uses.items():
    for s in us:
        g = defs.get(s)
        if g and g != f:
            edges[f].add(g)
# Tarjan's strongly connected components
idx, low, on, st, comps, n = {}, {}, set(), [], [], [0]
def sc(v):
    idx[v] = low[v] = n[0]; n[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx:
            sc(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        c = []
        while True:
            w = st.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: comps.append(sorted(c))
sys.setrecursionlimit(10000)
for v in edges:
    if v not in idx: sc(v)
if comps:
    for c in comps:
        print('FAIL %s: call loop between %s' % (lib, ', '.join(c)))
    sys.exit(1)
print('ok   %s: %d files, %d file->file call edges, no loop' % (lib, len(edges), sum(len(e) for e in edges.values())))
PY
done

# 4. transport dispatch only in the modules and at creation
hits=$(grep -n 'SRN_QPT_' src/core/*.c | grep -vE '^src/core/(rc|uc|ud)\.c:|^src/core/qp\.c:[0-9]+:	case SRN_QPT_' || true)
if [ -n "$hits" ]; then fail "transport dispatch outside the modules:"; echo "$hits"; else echo "ok   SRN_QPT_ only in rc.c, uc.c, ud.c and transport_of"; fi

exit $status
