#!/bin/sh
# Open MPI across hosts (docs/partition.md, "On a cluster"; docs/sweeps.md):
# three hosts made of network namespaces joined by a bridge, each with its
# own address and no path between them but TCP over the veths. mpirun starts
# a rank in each through an rsh agent (`ip netns exec`, standing in for ssh)
# and the ranks use Open MPI's TCP transport only. A partitioned run at K = 2
# and 3 gives the JSON of one process byte for byte; a sweep spread over the
# three hosts gives the table of one process byte for byte; the ranks'
# traffic crossed the veths; a rank killed on one host ends the whole run
# with a line naming it, within a bound. Needs root, the ip command, mpirun
# and an arbor built with MPI; skipped (and shown as skipped) otherwise.
. "$(dirname "$0")/lib.sh"
A="$ARBOR"

[ "$(id -u)" -eq 0 ] || skip_all "not root: network namespaces need it"
command -v ip >/dev/null 2>&1 || skip_all "the ip command (iproute2) is missing"
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun is not installed (Debian: openmpi-bin)"
"$A" sweep --help | grep -q "built with MPI" || skip_all "this arbor was built without MPI"

# names and a subnet of this run's own (the release and sanitizer suites may
# run at once)
NS="arbm$$"
NET="10.$((64 + $$ % 64)).$((($$ / 64) % 250))"
HOSTS="2 3 4"
cleanup() {
    for h in $HOSTS; do ip netns del "$NS$h" 2>/dev/null; done
    ip link del "b$NS" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
if ! ip link add "b$NS" type bridge 2>"$TMP/br.err"; then
    skip_all "cannot create a bridge: $(head -1 "$TMP/br.err")"
fi
ip addr add "$NET.1/24" dev "b$NS"
ip link set "b$NS" up
for h in $HOSTS; do
    ip netns add "$NS$h" 2>"$TMP/ns.err" || skip_all "cannot create a network namespace: $(head -1 "$TMP/ns.err")"
    ip -n "$NS$h" link set lo up
    ip link add "v$NS$h" type veth peer name "w$NS$h" || skip_all "cannot create a veth pair"
    ip link set "v$NS$h" master "b$NS" up
    ip link set "w$NS$h" netns "$NS$h" name eth0
    ip -n "$NS$h" addr add "$NET.$h/24" dev eth0
    ip -n "$NS$h" link set eth0 up
done

# the rsh agent: mpirun calls it as ssh would ("[options] HOST COMMAND...");
# host $NET.N is namespace $NS N, with a temporary directory of its own
# (Open MPI's session directories are named by host name, which the
# namespaces share)
cat >"$TMP/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
h=\${1##*.}
shift
mkdir -p "$TMP/host\$h"
exec ip netns exec "$NS\$h" env TMPDIR="$TMP/host\$h" sh -c "\$*"
EOF
chmod +x "$TMP/agent"

# Root may run Open MPI only when told so; the sanitizer build's ranks run
# without the leak check (test_sweep.sh says why). Every host has one slot
# and ranks spin while they wait: on a machine whose hosts share its cores a
# spinning rank keeps the veths' packet processing off the core for a timer
# tick (about 4 ms a message), hence mpi_yield_when_idle.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# mpi K: mpirun over the first K hosts, a rank on each, TCP between them
mpi() {
    k=$1
    shift
    list=""
    for h in $HOSTS; do
        [ "$(echo "$list" | tr ',' '\n' | grep -c .)" -lt "$k" ] || break
        list="${list:+$list,}$NET.$h:1"
    done
    timeout 120 mpirun --mca plm_rsh_agent "$TMP/agent" --host "$list" -np "$k" \
        --mca btl tcp,self --mca btl_tcp_if_include "$NET.0/24" --mca oob_tcp_if_include "$NET.0/24" \
        --mca mpi_yield_when_idle 1 -x ASAN_OPTIONS ${UBSAN_OPTIONS:+-x UBSAN_OPTIONS} "$@"
}
# the bytes the hosts' veths received (their bridge ends), summed
veth_bytes() {
    t=0
    for h in $HOSTS; do
        b=$(cat "/sys/class/net/v$NS$h/statistics/rx_bytes")
        t=$((t + b))
    done
    echo $t
}

# the launch itself: each rank in its own namespace, at its own address
mpi 3 sh -c 'ip -o -4 addr show eth0 | awk "{ print \$4 }"' >"$TMP/where" 2>"$TMP/where.err"
rc=$?
if [ $rc -ne 0 ]; then
    skip_all "mpirun cannot start ranks in namespaces here: $(head -2 "$TMP/where.err" | tr '\n' ' ')"
fi
want=$(for h in $HOSTS; do echo "$NET.$h/24"; done)
if [ "$(sort "$TMP/where")" = "$want" ]; then
    pass "mpirun starts a rank on each of three hosts"
else
    fail "one rank a host" "$(cat "$TMP/where")"
fi

figures() { sed 's/,"host":{[^}]*}//' "$1"; }
cat >"$TMP/irn.ini" <<'EOF'
[fabric]
topology = kary:4,3
delay = 1us
[transport]
kind = irn
[workload]
kind = perm
size = 300KB
seed = 3
EOF
cat >"$TMP/pfc.ini" <<'EOF'
[fabric]
topology = leafspine:4,4,2
delay = 500ns
[transport]
kind = gbn
dcqcn = on
[switch]
pfc = on
queue = 600KB
xoff = 80KB
xon = 40KB
[workload]
kind = perm
size = 400KB
seed = 5
EOF
for case in irn pfc; do
    "$A" sim "$TMP/$case.ini" --json -q -s run.order=local >"$TMP/$case.seq" 2>"$TMP/err"
    for k in 2 3; do
        before=$(veth_bytes)
        mpi $k "$A" sim "$TMP/$case.ini" --json --partition $k >"$TMP/$case.$k" 2>"$TMP/$case.$k.err"
        rc=$?
        moved=$(($(veth_bytes) - before))
        # the cut's packets cross as MPI messages: some tens of kilobytes at least
        if [ $rc -eq 0 ] && figures "$TMP/$case.seq" >"$TMP/a" && figures "$TMP/$case.$k" >"$TMP/b" &&
            cmp -s "$TMP/a" "$TMP/b" && [ "$moved" -gt 50000 ]; then
            pass "$case: --partition $k over $k hosts: the one-process JSON ($moved B over the veths)"
        else
            fail "$case: --partition $k over hosts" "status $rc, $moved B over the veths" \
                "$(cmp "$TMP/a" "$TMP/b")" "$(head -5 "$TMP/$case.$k.err")"
        fi
    done
done

# a sweep spread over the three hosts: the table of one process
cat >"$TMP/s.ini" <<'EOF'
[fabric]
topology = star:8
loss = ${loss=0,0.001}
[workload]
kind = perm
size = 200KB
[run]
seed = ${seed=1..3}
EOF
"$A" sweep "$TMP/s.ini" -q -n 1 --csv "$TMP/one.csv" --json "$TMP/one.json" >/dev/null 2>"$TMP/err"
mpi 3 "$A" sweep "$TMP/s.ini" -q --csv "$TMP/m.csv" --json "$TMP/m.json" >"$TMP/m.out" 2>"$TMP/m.err"
rc=$?
if [ $rc -eq 0 ] && cmp -s "$TMP/one.csv" "$TMP/m.csv" && cmp -s "$TMP/one.json" "$TMP/m.json" &&
    grep -q "3 MPI rank" "$TMP/m.out"; then
    pass "a sweep over three hosts: the one-process table"
else
    fail "a sweep over three hosts" "status $rc" "$(diff "$TMP/one.csv" "$TMP/m.csv" | head -5)" \
        "$(head -5 "$TMP/m.err")"
fi

# a rank killed on its host: the run ends, not zero, naming it, within a bound
cat >"$TMP/long.ini" <<'EOF'
[fabric]
topology = kary:4,3
[transport]
kind = irn
[workload]
kind = perm
size = 200MB
EOF
start=$(date +%s)
mpi 2 "$A" sim "$TMP/long.ini" --partition 2 -q >"$TMP/k.out" 2>"$TMP/k.err" &
pid=$!
victim=""
i=0
while [ $i -lt 200 ] && [ -z "$victim" ]; do
    victim=$(ip netns pids "${NS}3" 2>/dev/null | while read -r p; do
        grep -q "partition" "/proc/$p/cmdline" 2>/dev/null && tr '\0' ' ' <"/proc/$p/cmdline" |
            grep -q '^[^ ]*arbor' && echo "$p"
    done | head -1)
    sleep 0.1
    i=$((i + 1))
done
if [ -n "$victim" ]; then
    sleep 1
    kill -KILL "$victim"
    wait_bounded $pid 60
    rc=$?
    took=$(($(date +%s) - start))
    # named by mpirun ("rank 1 ... exited on signal 9") or, when the other
    # rank's call failed first, by that rank ("lost rank 1")
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
        grep -Eq "rank 1 .*(exited|killed|signal)|rank 0: lost rank 1 " "$TMP/k.err"; then
        pass "a rank killed on its host ends the run (status $rc, $took s)"
    else
        fail "a killed rank" "status $rc after $took s" "$(head -5 "$TMP/k.err")"
    fi
else
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    fail "a killed rank" "no rank found in ${NS}3" "$(head -5 "$TMP/k.err")"
fi
finish
