# arbor lab: a scenario's fabric built from network namespaces on this
# machine, the real switches and ranks inside, everything removed after.
# Usage errors first (no namespace needed); then, as root with `ip netns`,
# a star of 4 hosts (exact AllReduce, the goodput within the shaped link's
# bound; 1% loss on every link, still exact, nftables counting drops), a
# leaf-spine of two leaves under a spine (its --csv drawn by arbor plot,
# alone and over arbor sim's), a two-level k-ary tree (two
# spines, each a root), and runs stopped by SIGTERM and
# SIGINT mid-collective. After every run: no namespace, veth, qdisc or
# process of it is left (every namespace the run made is gone: no process
# of the machine holds it, and no interface of this namespace names it as
# its peer's). Skipped (counted) where `ip netns` cannot be used.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/star.ini" <<'EOF'
[fabric]
topology = star:4
link_rate = 100G
[workload]
kind = arbor
size = 1MiB
[arbor]
collective = allreduce
[lab]
iters = 3
warmup = 1
deadline = 100s
EOF

# ---- usage, before anything is made -------------------------------------------
expect_err "no file" 2 "give a scenario file" "$ARBOR" lab
expect_err "a [lab] key out of range" 2 "lab.scale '2': want auto or a factor in \(0, 1\]" \
    "$ARBOR" lab "$TMP/star.ini" -s lab.scale=2
expect_err "a spin above 10 ms" 2 "lab.spin: '20ms': must be at most 10ms" \
    "$ARBOR" lab "$TMP/star.ini" -s lab.spin=20ms
printf '[lab]\nspin = 2\n' >"$TMP/spin.ini"
expect_err "a spin that is no time, in the file, with its line" 2 "spin.ini:2: lab.spin: '2' is not a time" \
    "$ARBOR" lab "$TMP/spin.ini"
expect_err "arbor sim checks a [lab] key's syntax too" 2 "lab.spin: 'abc' is not a time" \
    "$ARBOR" sim "$TMP/star.ini" -s lab.spin=abc
expect_err "an unknown [lab] key" 2 "lab.speed: unknown key" "$ARBOR" lab "$TMP/star.ini" -s lab.speed=1
printf '[lab]\niters = 0\n' >"$TMP/bad.ini"
expect_err "a [lab] key in the file, with its line" 2 "bad.ini:2: lab.iters: '0' is not in 1..100000" \
    "$ARBOR" lab "$TMP/bad.ini"
expect_out "arbor sim reads a lab file, [lab] and all" "arbor" \
    sh -c '"$0" sim "$1" --json -q -s workload.size=64K | /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)[\"workload\"][\"kind\"])"' \
    "$ARBOR" "$TMP/star.ini"
expect_err "a workload that is not Arbor's" 2 "workload.kind = perm: the lab runs an Arbor" \
    "$ARBOR" lab "$TMP/star.ini" -s workload.kind=perm
expect_err "a scenario key's own error" 2 "fabric.topology" \
    "$ARBOR" lab "$TMP/star.ini" -s fabric.topology=star:x
# the lab's switches re-credit as the runtime's (include/arbor/rt.h): other values refused
rt_ms() { sed -n "s/^#define ARB_RT_SWITCH_RECREDIT_$1 (\([0-9]*\) \* ARB_PS_PER_MS).*/\1ms/p" include/arbor/rt.h; }
RC_MIN=$(rt_ms MIN) RC_MAX=$(rt_ms MAX)
[ -n "$RC_MIN" ] && [ -n "$RC_MAX" ] || fail "the runtime's re-credit timers in include/arbor/rt.h" "'$RC_MIN' '$RC_MAX'"
expect_err "a re-credit floor other than the runtime's" 2 \
    "arbor.recredit_min = 20us: the lab's switches use the runtime's $RC_MIN" \
    "$ARBOR" lab "$TMP/star.ini" -s arbor.recredit_min=20us
expect_err "a re-credit ceiling other than the runtime's" 2 \
    "arbor.recredit_max = 1ms: the lab's switches use the runtime's $RC_MAX" \
    "$ARBOR" lab "$TMP/star.ini" -s arbor.recredit_max=1ms
expect_err "re-credit by port order" 2 "arbor.recredit_order = on: the lab's switches re-credit by the timer only" \
    "$ARBOR" lab "$TMP/star.ini" -s arbor.recredit_order=on
expect_err "the runtime's re-credit timers pass (to the next check)" 2 "lab.scale '2'" \
    "$ARBOR" lab "$TMP/star.ini" -s arbor.recredit_min="$RC_MIN" -s arbor.recredit_max="$RC_MAX" \
    -s arbor.recredit_order=off -s lab.scale=2
expect_err "--csv where no file can be made" 2 "csv $TMP/none/x: cannot write in $TMP/none" \
    "$ARBOR" lab "$TMP/star.ini" --csv "$TMP/none/x"

if [ "$(id -u)" -ne 0 ]; then
    expect_err "not root: one line, exit 2" 2 "needs root" "$ARBOR" lab "$TMP/star.ini"
    skip_all "not root: network namespaces need it"
fi
command -v ip >/dev/null 2>&1 || skip_all "the ip command (iproute2) is missing"
probe="arbprobe$$"
if ! ip netns add "$probe" 2>"$TMP/ns.err"; then
    skip_all "ip netns cannot make a namespace here: $(head -1 "$TMP/ns.err")"
fi
ip netns del "$probe"

# inodes of the namespaces of lab run PID (while it runs), one a line
ns_inodes() {
    for n in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep "^arblab$1-"); do
        stat -L -c %i "/run/netns/$n" 2>/dev/null
    done
}
# wait (at most 20 s) until lab run PID has its ranks running; its
# namespaces' inodes into $TMP/inodes.PID
wait_ranks() {
    i=0
    while [ $i -lt 200 ]; do
        h0=$(ip netns list 2>/dev/null | awk '{ print $1 }' | grep "^arblab$1-.*-h0$")
        if [ -n "$h0" ] && ip netns pids "$h0" 2>/dev/null | grep -q .; then
            ns_inodes "$1" >"$TMP/inodes.$1"
            return 0
        fi
        ns_inodes "$1" >"$TMP/inodes.$1"
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# left_behind PID: what of lab run PID is still here (empty: nothing)
left_behind() {
    ip netns list 2>/dev/null | awk '{ print $1 }' | grep "^arblab$1-"
    ip -o link show 2>/dev/null | grep "link-netns arblab$1-"
    [ -s "$TMP/inodes.$1" ] || return 0
    for p in /proc/[0-9]*; do
        ino=$(stat -L -c %i "$p/ns/net" 2>/dev/null) || continue
        grep -qx "$ino" "$TMP/inodes.$1" && echo "process ${p#/proc/} in a lab namespace"
    done
}
# lab NAME ARGS: a run in the background, its namespaces watched; the
# JSON in $TMP/NAME.json, status in $rc
lab() {
    name=$1
    shift
    "$ARBOR" lab "$TMP/star.ini" --json -q "$@" >"$TMP/$name.json" 2>"$TMP/$name.err" &
    pid=$!
    wait_ranks $pid || true
    wait_bounded $pid 120
    rc=$?
    left=$(left_behind $pid)
    if [ -z "$left" ] && [ -s "$TMP/inodes.$pid" ]; then
        pass "$name: nothing left ($(wc -l <"$TMP/inodes.$pid") namespaces removed)"
    else
        fail "$name: left behind" "$left" "namespaces seen: $(wc -l <"$TMP/inodes.$pid" 2>/dev/null)"
    fi
}
# field NAME PATH: a value of run NAME's JSON
field() {
    /usr/bin/python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(str(v).lower() if isinstance(v, bool) else v)' "$TMP/$1.json" "$2" 2>/dev/null
}

# ---- a star of 4 hosts, exact --------------------------------------------------
lab star
st="$(field star status) $(field star correct) $(field star arbor.ranks) $(field star lab.calls)"
if [ $rc -eq 0 ] && [ "$st" = "done true 4 3" ]; then
    pass "star:4: an exact AllReduce on 4 ranks, 3 timed calls"
else
    fail "star:4" "status $rc: $st" "$(cat "$TMP/star.err")"
fi
same "the JSON echoes the runtime's re-credit timers" "$RC_MIN $RC_MAX off" \
    "$(field star scenario.arbor.recredit_min) $(field star scenario.arbor.recredit_max) $(field star scenario.arbor.recredit_order)"
same "the default scale puts 100G host links at 1 Gbit/s" "0.010000 1.000000" \
    "$(field star lab.scale | awk '{ printf "%.6f", $1 }') $(field star lab.shaped_rate_gbps | awk '{ printf "%.6f", $1 }')"
# Every rank receives the whole 1 MiB result over its own link, shaped to
# 1 Gbit/s with a token bucket of 125000 B (1 ms at that rate): a call
# takes at least (1048576 - 125000) x 8 / 1e9 s = 7.4 ms, so goodput
# (S x 8 / cct) is at most 1e9 x 1048576 / 923576 = 1.135 Gbit/s.
g=$(field star goodput_gbps)
if awk -v g="$g" 'BEGIN { exit !(g > 0 && g <= 1.135) }'; then
    pass "goodput $g Gbit/s within the shaped link's bound (1.135)"
else
    fail "goodput within the link's bound" "$g"
fi
cct=$(field star cct_us)
if awk -v c="$cct" 'BEGIN { exit !(c >= 7390) }'; then
    pass "cct $cct us at least the link's 7390 us"
else
    fail "cct at least the link's" "$cct"
fi

# ARBOR_WINDOW=auto (arbor.window 0): every rank's AllReduce channel (1 MiB
# over 4 channels: 32 offsets each) starts with a window within auto's
# bounds, 4..16, and arbor.cc.window_mean is their mean
ws="$(field star ranks.0.window) $(field star ranks.1.window) $(field star ranks.2.window) $(field star ranks.3.window)"
wm=$(field star arbor.cc.window_mean)
if echo "$ws" | awk -v m="$wm" '{ s = 0; for (i = 1; i <= 4; i++) { if ($i < 4 || $i > 16) exit 1; s += $i }
    d = s / 4 - m; exit !(NF == 4 && d < 0.001 && d > -0.001) }'; then
    pass "auto's windows within 4..16 ($ws), their mean in arbor.cc.window_mean ($wm)"
else
    fail "the ranks' windows" "ranks: $ws, mean: $wm"
fi

# the JSON validates against its schema (docs/schema/arbor-lab.schema.json)
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
    if /usr/bin/python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
        "$TMP/star.json" docs/schema/arbor-lab.schema.json 2>"$TMP/schema.err"; then
        pass "the JSON validates against arbor-lab.schema.json"
    else
        fail "arbor-lab schema" "$(tail -3 "$TMP/schema.err")"
    fi
else
    skip "the JSON schema" "no jsonschema for /usr/bin/python3 (Debian: python3-jsonschema)"
fi

# ---- 1% loss on every link: exact, the drops counted by nftables ------------------
if command -v nft >/dev/null 2>&1; then
    lab lossy -s fabric.loss=0.01
    d=$(field lossy drops)
    if [ $rc -eq 0 ] && [ "$(field lossy correct)" = true ] && [ "${d:-0}" -gt 0 ]; then
        pass "1% loss on every link: exact, $d datagrams dropped by nftables"
    else
        fail "1% loss" "status $rc, drops $d" "$(cat "$TMP/lossy.err")"
    fi
else
    skip "loss by nftables" "nft (nftables) is missing"
fi

# ---- a leaf-spine: two leaves and a spine, each an arbor switch -----------------
# with --csv: arbor sim --csv's files, which arbor plot draws
lab leafspine -s fabric.topology=leafspine:2,2,1 -s arbor.collective=allreduce \
    --csv "$TMP/lab" -s run.sample=10us
if [ $rc -eq 0 ] && [ "$(field leafspine correct)" = true ] &&
    [ "$(field leafspine topology.switches)" = 3 ]; then
    pass "leafspine:2,2,1: three switch processes, an exact AllReduce"
else
    fail "leafspine" "status $rc" "$(cat "$TMP/leafspine.err")"
fi
"$ARBOR" sim "$TMP/star.ini" -q -s fabric.topology=leafspine:2,2,1 -s workload.size=64K \
    --csv "$TMP/sim" >/dev/null 2>"$TMP/sim.err" || fail "arbor sim --csv" "$(cat "$TMP/sim.err")"
for f in util queue flows ranks; do
    same "lab --csv: $f.csv has arbor sim's columns" "$(head -1 "$TMP/sim-$f.csv" 2>&1)" \
        "$(head -1 "$TMP/lab-$f.csv" 2>&1)"
done
same "lab --csv: a row per rank, each with its done time" "0,0,0 0,1,1 0,2,2 0,3,3" \
    "$(awk -F, 'NR > 1 && $4 > 0 { printf "%s%s,%s,%s", s, $1, $2, $3; s = " " }' "$TMP/lab-ranks.csv")"
# 10 us of the scenario at scale 0.01 is 1 ms of the lab: a run of a
# second or more has hundreds of samples; the collective's 4 x 1 MiB
# crossed the spine's links (tier1) at some point of them
rows=$(($(wc -l <"$TMP/lab-util.csv") - 1))
busy=$(awk -F, 'NR > 1 && ($4 > 0.05 || $5 > 0.05) { n++ } END { print n + 0 }' "$TMP/lab-util.csv")
if [ "$rows" -ge 100 ] && [ "$busy" -gt 0 ] && [ "$(wc -l <"$TMP/lab-queue.csv")" -eq $((rows + 1)) ]; then
    pass "lab --csv: $rows samples of the links, $busy with the spine's links busy"
else
    fail "lab --csv: samples" "$rows rows, $busy busy on tier1" "$(head -3 "$TMP/lab-util.csv")"
fi
if command -v gnuplot >/dev/null 2>&1; then
    expect_out "arbor plot draws the lab's run" "lab-util.png lab-queue.png lab-ranks.png" \
        sh -c 'o=$("$0" plot "$1" -o "$2") || exit; for f in $o; do basename "$f"; done | paste -sd" "' \
        "$ARBOR" "$TMP/lab" "$TMP"
    expect_out "arbor plot draws the lab's run over the simulation's" "sim-vs-lab-ranks.png" \
        sh -c 'o=$("$0" plot "$1" "$2") || exit; echo "$o" | grep -o "sim-vs-lab-ranks.png"' \
        "$ARBOR" "$TMP/sim" "$TMP/lab"
else
    skip "arbor plot of the lab's run" "gnuplot is not installed"
fi

# ---- another program on the fabric; lab.spin reaches ranks and switches ----------
# the program prints, on rank 0, its ARBOR_SPIN and how many switch processes
# run with --spin 50us (one: the star's; every lab process shares this PID
# namespace); the default run's JSON says 0
out=$(timeout 120 "$ARBOR" lab "$TMP/star.ini" -q -s lab.spin=50us -- sh -c \
    'echo "rank $ARBOR_LAB_RANK of $ARBOR_LAB_SIZE, spin $ARBOR_SPIN"; ps -eo args | grep -c "[s]witch --listen .* --spin 50us"' \
    2>"$TMP/prog.err")
same "a program run on every host, rank 0's output printed; lab.spin in its environment and the switch's" \
    "rank 0 of 4, spin 50us 1" "$(echo $out)"
# unset, lab.spin is auto: 50us while the lab's processes (here 4 ranks and a
# switch) are at most 4 a core of this machine, else 0
want_spin=$(awk -v c="$(nproc)" 'BEGIN { print 5 <= 4 * c ? "50.0" : "0.0" }')
same "lab.spin = auto: $want_spin us in the JSON for 5 processes on $(nproc) cores" "$want_spin" \
    "$(field star lab.spin_us)"
same "lab.spin = auto echoed in the scenario" "auto" "$(field star scenario.lab.spin)"

# ---- a lossy link's ends cut UDP GSO sends into one datagram a frame ---------------
# (a GSO buffer crosses a veth whole: the loss rule would drop its datagrams
# together); a loss-free link keeps the kernel's default. Rank 0 prints its
# own link's gso_max_segs: with the loss on h0's link only, then on h1's.
gso_of() { # -s LINKSETTING: rank 0's link's gso_max_segs
    timeout 120 "$ARBOR" lab "$TMP/star.ini" -q -s "$1" -- sh -c \
        'ip -o -d link show | grep -v ": lo:" | grep -o "gso_max_segs [0-9]*" | head -1' 2>"$TMP/gso.err"
}
if command -v nft >/dev/null 2>&1; then
    same "a lossy link's host end: one datagram a frame (gso_max_segs 1)" "gso_max_segs 1" \
        "$(gso_of "fabric.link=host:h0 loss=0.01")"
    g=$(gso_of "fabric.link=host:h1 loss=0.01")
    if [ -n "$g" ] && [ "$g" != "gso_max_segs 1" ]; then
        pass "a loss-free link keeps the kernel's GSO ($g)"
    else
        fail "a loss-free link's GSO" "'$g'" "$(cat "$TMP/gso.err")"
    fi
else
    skip "a lossy link's GSO" "nft (nftables) is missing"
fi

# ---- a two-level k-ary tree: two leaves, two spines (two roots) ------------------
lab kary -s fabric.topology=kary:2,2 -s arbor.collective=allreduce
if [ $rc -eq 0 ] && [ "$(field kary correct)" = true ] &&
    [ "$(field kary topology.switches)" = 4 ]; then
    pass "kary:2,2: four switch processes (two spines, each a root), an exact AllReduce"
else
    fail "kary" "status $rc" "$(cat "$TMP/kary.err")"
fi

# ---- stopped mid-run: SIGTERM, SIGINT ------------------------------------------------
for sig in TERM:15 INT:2; do
    num=${sig#*:}
    sig=${sig%:*}
    "$ARBOR" lab "$TMP/star.ini" -q -s workload.size=16MiB -s lab.iters=1000 \
        >"$TMP/kill.out" 2>"$TMP/kill.err" &
    pid=$!
    if wait_ranks $pid; then
        sleep 0.5
        kill -$sig $pid
        wait_bounded $pid 30
        rc=$?
        want=$((128 + num))
        left=$(left_behind $pid)
        if [ $rc -eq $want ] && [ -z "$left" ] && grep -q "stopped by" "$TMP/kill.err"; then
            pass "SIG$sig mid-run: exit $rc, nothing left ($(wc -l <"$TMP/inodes.$pid") namespaces removed)"
        else
            fail "SIG$sig mid-run" "status $rc (want $want)" "$left" "$(cat "$TMP/kill.err")"
        fi
    else
        kill -KILL $pid 2>/dev/null
        fail "SIG$sig mid-run: the ranks never started" "$(cat "$TMP/kill.err")"
    fi
done
finish
