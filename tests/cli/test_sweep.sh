# arbor sweep: the points and their order, the table's figures recomputed
# here from single `arbor sim` runs, one table whatever the number of
# processes (1, 2 forked, mpirun -np 1 and 2), a failing point as a row, a
# worker or rank that dies ending the sweep (never a hang), and the errors.
# The MPI checks need mpirun and an arbor built with MPI; they show as
# skipped otherwise (and a build without MPI must refuse a launcher).
. "$(dirname "$0")/lib.sh"

A=$ARBOR
cat >"$TMP/s.ini" <<'EOF'
; two topologies x two loss rates x two sizes, three seeds each
[fabric]
topology = ${topo="star:4","leafspine:2,2,2"}
loss = ${0, 0.002}
[workload]
kind = ring_allreduce
size = ${size=128,256}KiB
[sweep]
repeat = 3
EOF

# ---- a point's warnings --------------------------------------------------------
# A run's warnings reach stderr as arbor sim's do, once a point (from its
# first replication), naming the point: 4 subchannels on star:4, whose
# fabric offers one tree, at two sizes, two replications each.
cat >"$TMP/warn.ini" <<'EOF'
[fabric]
topology = star:4
[workload]
kind = arbor
size = ${64,128}KiB
[arbor]
subchannels = 4
[run]
stop = 0
[sweep]
repeat = 2
EOF
"$A" sweep "$TMP/warn.ini" -n 2 -q --csv "$TMP/warn.csv" >/dev/null 2>"$TMP/warn.err"
rc=$?
n0=$(grep -c "^arbor sweep: warning: point 0: .*warn.ini:7: arbor.subchannels: 4 subchannels, but the fabric offers the group 1 distinct tree" "$TMP/warn.err")
n1=$(grep -c "^arbor sweep: warning: point 1: .*arbor.subchannels: 4 subchannels" "$TMP/warn.err")
same "a point's warning: once a point, naming it (status, lines for points 0 and 1, lines in all)" \
    "0 1 1 2" "$rc $n0 $n1 $(wc -l <"$TMP/warn.err" | tr -d ' ')"

# ---- the points --------------------------------------------------------------
"$A" sweep "$TMP/s.ini" --list >"$TMP/list" 2>"$TMP/err"
want='8 points x 3 replications
0 topo=star:4 fabric.loss=0 size=128
1 topo=star:4 fabric.loss=0 size=256
2 topo=star:4 fabric.loss=0.002 size=128
3 topo=star:4 fabric.loss=0.002 size=256
4 topo=leafspine:2,2,2 fabric.loss=0 size=128
5 topo=leafspine:2,2,2 fabric.loss=0 size=256
6 topo=leafspine:2,2,2 fabric.loss=0.002 size=128
7 topo=leafspine:2,2,2 fabric.loss=0.002 size=256'
if [ "$(cat "$TMP/list")" = "$want" ]; then pass "--list: 2 x 2 x 2 points, first variable slowest"
else fail "--list" "$(cat "$TMP/list" "$TMP/err")"; fi

# ---- one table whatever the processes ------------------------------------------
"$A" sweep "$TMP/s.ini" -n 1 -q --csv "$TMP/n1.csv" --json "$TMP/n1.json" >"$TMP/n1.txt" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/n1.csv" ]; then pass "-n 1 runs"; else fail "-n 1 runs" "status $rc" "$(cat "$TMP/err")"; fi
"$A" sweep "$TMP/s.ini" -n 2 -q --csv "$TMP/n2.csv" --json "$TMP/n2.json" >/dev/null 2>&1
if cmp -s "$TMP/n1.csv" "$TMP/n2.csv" && cmp -s "$TMP/n1.json" "$TMP/n2.json"; then
    pass "-n 1 and -n 2: byte-identical CSV and JSON"
else
    fail "-n 1 and -n 2 differ" "$(diff "$TMP/n1.csv" "$TMP/n2.csv" | head -5)"
fi
lines=$(wc -l <"$TMP/n1.csv")
if [ "$lines" -eq 9 ] && head -1 "$TMP/n1.csv" | grep -q '^point,topo,fabric.loss,size,seed,n,status,error,sim_time_us,sim_time_us_ci95,'
then pass "CSV: a header and one row per point"; else fail "CSV shape" "$(head -2 "$TMP/n1.csv")"; fi
"$A" sweep "$TMP/s.ini" -q --csv - >"$TMP/stdout.csv" 2>/dev/null
if cmp -s "$TMP/n1.csv" "$TMP/stdout.csv"; then pass "--csv - writes the table to stdout"
else fail "--csv -" "$(head -2 "$TMP/stdout.csv")"; fi

# ---- the figures: point 3 is star:4, loss 0.002, 256 KiB, seeds 1..3 -------------
fig() { grep -o "\"$1\":[-0-9.e+]*" | head -1 | cut -d: -f2; }
: >"$TMP/single"
for s in 1 2 3; do
    "$A" sim --json -q -s topology=star:4 -s loss=0.002 -s workload.kind=ring_allreduce -s size=256KiB \
        --seed $s | fig sim_time_us >>"$TMP/single"
done
# mean and ci95 = t(0.975, 2) x sd / sqrt(3), t = 4.303
want=$(awk '{ x[NR] = $1; s += $1 } END { m = s / NR; for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2
    printf "%.6f %.6f", m, 4.303 * sqrt(v / (NR - 1)) / sqrt(NR) }' "$TMP/single")
got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } $1 == "3" {
    print $(c["sim_time_us"]), $(c["sim_time_us_ci95"]) }' "$TMP/n1.csv")
if awk -v w="$want" -v g="$got" 'BEGIN { split(w, a, " "); split(g, b, " ")
        for (i = 1; i <= 2; i++) { d = a[i] - b[i]; if (d < 0) d = -d; if (d > 1e-5 * (1 + a[i])) exit 1 }
        exit a[2] > 0 ? 0 : 1 }'; then
    pass "point 3: mean and 95% CI of sim_time_us over seeds 1..3 ($got)"
else
    fail "point 3's figures" "want $want (from arbor sim --seed 1..3)" "got  $got"
fi
seed=$(awk -F, '$1 == "3" { print $5 }' "$TMP/n1.csv")
if [ "$seed" = 1 ]; then pass "the row names its first seed"; else fail "seed column" "$seed"; fi

# ---- sizes: a value with the one size syntax's units --------------------------------
# ${s=64,128}K substitutes 64K and 128K: binary, the points of ${s=64,128}KiB
for u in K KiB; do
    printf '[fabric]\ntopology = star:4\n[workload]\nkind = ring_allreduce\nsize = ${s=64,128}%s\n' \
        "$u" >"$TMP/unit$u.ini"
    "$A" sweep "$TMP/unit$u.ini" -n 1 -q --csv "$TMP/unit$u.csv" >/dev/null 2>"$TMP/unit$u.err"
done
if [ -s "$TMP/unitK.csv" ] && cmp -s "$TMP/unitK.csv" "$TMP/unitKiB.csv"; then
    pass "a sweep of \${s=64,128}K: the table of \${s=64,128}KiB"
else
    fail "a sweep of sizes in K" "$(cat "$TMP/unitK.err")" "$(diff "$TMP/unitK.csv" "$TMP/unitKiB.csv" | head -4)"
fi

# ---- a failing point is a row; the sweep goes on ----------------------------------
cat >"$TMP/f.ini" <<'EOF'
[fabric]
topology = ${t="star:4","pgft:2;2,2;1,2;1,1x","star:8"}
[workload]
kind = ring_allreduce
size = 64KiB
[sweep]
seeds = 5..6
EOF
"$A" sweep "$TMP/f.ini" -q -n 2 --csv "$TMP/f.csv" >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/f.csv")" -eq 4 ] && grep -q '^0,star:4,5,2,done,,[0-9]' "$TMP/f.csv" &&
    grep -q '^1,"pgft:2;2,2;1,2;1,1x",5,2,error,[^,]*f.ini:2: fabric.topology: pgft: .*,,,' "$TMP/f.csv" &&
    grep -q '^2,star:8,5,2,done,,[0-9]' "$TMP/f.csv"; then
    pass "a failing point: an error row naming fabric.topology, the others done, exit 1"
else
    fail "a failing point" "status $rc" "$(cat "$TMP/f.csv" "$TMP/err")"
fi
if [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
    grep -q '^arbor sweep: 1 of 3 points did not finish (point 1: error: .*f.ini:2: fabric.topology: pgft: ' "$TMP/err"; then
    pass "  ... and one line on stderr says why, quiet or not"
else
    fail "  ... and one line on stderr says why" "$(cat "$TMP/err")"
fi

# ---- arbor plot --sweep: the points drawn are the table's --------------------------
if command -v gnuplot >/dev/null 2>&1; then
    out=$("$A" plot --sweep "$TMP/n1.csv" -x topo -y collective.cct_us -o "$TMP" 2>&1)
    rc=$?
    [ $rc -ne 0 ] || out=$("$A" plot --sweep "$TMP/n1.csv" -x size -y sim_time_us -o "$TMP" \
        --script "$TMP/p.gp" 2>&1)
    rc=$?
    # the series of topo=star:4, loss 0.002: rows 2 and 3 of the table, as x mean ci
    want=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } $1 == 2 || $1 == 3 {
        printf "%g %g %g\n", $(c["size"]), $(c["sim_time_us"]), $(c["sim_time_us_ci95"]) }' "$TMP/n1.csv")
    got=$(awk '/^\$s1 << EOD/ { on = 1; next } /^EOD/ { on = 0 } on { printf "%g %g %g\n", $1, $2, $3 }' "$TMP/p.gp")
    if [ $rc -eq 0 ] && [ "$out" = "$TMP/n1-sim_time_us-vs-size.png" ] && [ -s "$out" ] &&
        [ "$got" = "$want" ] && grep -q 'title "topo=star:4, fabric.loss=0.002"' "$TMP/p.gp"; then
        pass "plot --sweep: a PNG, one series per other variables, the table's means and CIs"
    else
        fail "plot --sweep" "status $rc: $out" "want: $want" "got:  $got"
    fi
    # a title, both axes labelled (the figure with its unit), a boxed key outside
    if grep -q '^set title "sim_time_us against size (mean, 95% CI)"' "$TMP/p.gp" &&
        grep -q '^set xlabel "size (the value swept, in the file.s unit)"' "$TMP/p.gp" &&
        grep -q '^set ylabel "sim_time_us (us; mean, 95% CI bars)"' "$TMP/p.gp" &&
        grep -q '^set key outside right top box' "$TMP/p.gp"; then
        pass "plot --sweep: title, axes with units, the key boxed outside"
    else
        fail "plot --sweep labels" "$(grep '^set \(title\|xlabel\|ylabel\|key\)' "$TMP/p.gp")"
    fi
else
    skip "plot --sweep" "gnuplot is not installed (Debian: gnuplot-nox)"
fi
expect_err "plot --sweep: an unknown variable" 2 "plot: -x nope: not a variable of .*n1.csv \(topo, fabric.loss, size\)" \
    "$A" plot --sweep "$TMP/n1.csv" -x nope -y cct_us
expect_err "plot --sweep: an unknown figure" 2 "plot: -y nope: not a figure of" \
    "$A" plot --sweep "$TMP/n1.csv" -x size -y nope
expect_err "plot --sweep: not a sweep table" 2 "not an 'arbor sweep --csv' table" \
    "$A" plot --sweep "$TMP/s.ini" -x size -y cct_us

# ---- a variable named after a column of the table --------------------------------
# seed = ${seed=3,5} with repeat = 2: the variable's column is ${seed}, the
# table's seed (the first replication's) stays seed: one column per name,
# and plot --sweep -x seed finds the variable
printf '[fabric]\ntopology = star:4\nloss = 0.01\n[workload]\nkind = arbor\nsize = 64KiB\n[run]\nseed = ${seed=3,5}\n[sweep]\nrepeat = 2\n' >"$TMP/vseed.ini"
"$A" sweep "$TMP/vseed.ini" -n 1 -q --csv "$TMP/vseed.csv" >/dev/null 2>"$TMP/err"
head=$(head -1 "$TMP/vseed.csv")
dups=$(head -1 "$TMP/vseed.csv" | tr ',' '\n' | sort | uniq -d)
if [ -z "$dups" ] && echo "$head" | grep -q '^point,${seed},seed,n,status,error,' &&
    grep -q '^0,3,3,2,' "$TMP/vseed.csv" && grep -q '^1,5,5,2,' "$TMP/vseed.csv"; then
    pass "a variable named seed: its column \${seed}, the table's seed once"
else
    fail "a variable named seed: one column per name" "$head" "twice: $dups" "$(cat "$TMP/err")"
fi
if command -v gnuplot >/dev/null 2>&1; then
    out=$("$A" plot --sweep "$TMP/vseed.csv" -x seed -y sim_time_us -o "$TMP" --script "$TMP/vs.gp" 2>&1)
    rc=$?
    got=$(awk '/^\$s0 << EOD/ { on = 1; next } /^EOD/ { on = 0 } on { printf "%s ", $1 }' "$TMP/vs.gp")
    if [ $rc -eq 0 ] && [ "$got" = "3 5 " ]; then
        pass "  ... plot --sweep -x seed draws the variable's values"
    else
        fail "  ... plot --sweep -x seed" "status $rc: $out" "x: $got"
    fi
fi

# ---- progress -----------------------------------------------------------------
"$A" sweep "$TMP/s.ini" -n 2 --progress --csv "$TMP/p.csv" >/dev/null 2>"$TMP/err"
if [ "$(grep -c 'points (.*runs)' "$TMP/err")" -eq 8 ] && grep -q 'about .* left' "$TMP/err" &&
    tail -1 "$TMP/err" | grep -q '^sweep: 8/8 points (24/24 runs), .* elapsed, done$'; then
    pass "--progress: a line per point, time left, then done"
else
    fail "--progress" "$(cat "$TMP/err")"
fi

# ---- errors ---------------------------------------------------------------------
printf '[workload]\nkind = ring_allreduce\n\nsize = ${size=1MiB,lots}\n' >"$TMP/bad1.ini"
expect_err "a bad value names line, point and variable" 2 \
    "bad1.ini:4: workload.size: 'lots' is not a size.*\(point 1: size=lots\)" \
    "$A" sweep "$TMP/bad1.ini"
printf '[fabric]\nloss = ${x=0,0.1}\n[workload]\nsize = ${x=1,2}MiB\n' >"$TMP/bad2.ini"
expect_err "a variable declared twice" 2 'bad2.ini:4: \$\{x\}: declared again \(first on line 2\)' \
    "$A" sweep "$TMP/bad2.ini"
# replications whose figures are all alike (loss-free Arbor: the seed changes
# nothing): each point's mean is its single run's figure, spread exactly 0
printf '[fabric]\ntopology = star:4\n[workload]\nkind = arbor\nsize = ${s=64,128}KiB\n[sweep]\nseeds = 0..2\n' >"$TMP/alike.ini"
"$A" sweep "$TMP/alike.ini" --json "$TMP/alike.json" -q
for sz in 64 128; do
    one=$("$A" sim -s topology=star:4 -s workload.size=${sz}KiB --seed 1 --json -q |
        grep -o '"cct_us":[-0-9.e+]*' | head -1 | cut -d: -f2)
    if [ -n "$one" ] && grep -q "\"cct_us\":{\"mean\":$one,\"ci95\":0.000000,\"sd\":0.000000}" "$TMP/alike.json"
    then
        pass "identical replications, ${sz} KiB: the single run's CCT ($one us), sd and ci95 exactly 0"
    else
        fail "identical replications, ${sz} KiB: the single run's CCT, sd and ci95 exactly 0" "single run: $one" \
            "$(grep -o '"cct_us":{[^}]*}' "$TMP/alike.json")"
    fi
done
printf '[fabric]\ntopology = star:4\nloss = ${loss=0,0.1}\n[workload]\nsize = 64KiB\n[sweep]\nseeds = 3..4\n' >"$TMP/swset.ini"
expect_err "-s on a swept key is refused" 2 \
    "^arbor sweep: -s fabric.loss: .*swset.ini:3 sets it for every point; a -s would run them all with one value \\(change the values in the file\\)$" \
    "$A" sweep "$TMP/swset.ini" -s fabric.loss=0.5 --csv -
expect_err "  ... by its key alone" 2 "^arbor sweep: -s loss: .*swset.ini:3 sets it" \
    "$A" sweep "$TMP/swset.ini" -s loss=0.5 --list
expect_err "-s run.seed under sweep.seeds is refused" 2 "^arbor sweep: -s seed: .*swset.ini:7 sets it" \
    "$A" sweep "$TMP/swset.ini" -s seed=9 --list
expect_status "-s on a key the sweep leaves alone runs" 0 "$A" sweep "$TMP/swset.ini" -s size=32KiB -q
printf '[run]\nseed = ${1,2}\n[sweep]\nseeds = 7..8\n' >"$TMP/swseed.ini"
expect_err "a swept run.seed with sweep.seeds is refused" 2 \
    "swseed.ini:2: run.seed: swept here, and sweep.seeds \\(line 4\\) sets it" "$A" sweep "$TMP/swseed.ini"
printf '[workload]\nsize = ${y}MiB\n' >"$TMP/bad3.ini"
expect_err "an unknown reference" 2 'bad3.ini:2: \$\{y\}: no variable y' "$A" sweep "$TMP/bad3.ini"
printf '[sweep]\nrepeat = 2\nseeds = 1..3\n' >"$TMP/bad4.ini"
expect_err "repeat and seeds" 2 'bad4.ini:3: sweep.seeds: not with sweep.repeat' \
    "$A" sweep "$TMP/bad4.ini"
expect_err "arbor sim on a sweep points to arbor sweep" 2 \
    "sim: .*s.ini:4: fabric.loss: .* \(a sweep: run it with 'arbor sweep FILE'\)" "$A" sim "$TMP/s.ini"
expect_err "no file" 2 "sweep: a scenario FILE is needed" "$A" sweep
expect_err "missing file" 2 "sweep: .*nope.ini: cannot open" "$A" sweep "$TMP/nope.ini"
expect_err "--procs 0" 2 "sweep: --procs: '0' is not a count" "$A" sweep "$TMP/s.ini" -n 0
expect_err "unwritable --csv, before any run" 2 "sweep: --csv: cannot write" \
    "$A" sweep "$TMP/s.ini" --csv "$TMP/no/such/dir.csv"
# more runs than the collector counts, or than half any machine's memory holds
printf '[workload]\nsize = ${a=1..1000}KiB\nqps = ${b=1..1000}\n[sweep]\nrepeat = 4295\n' >"$TMP/huge.ini"
expect_err "more than 2^32 - 1 runs: refused, naming the file" 2 \
    "^arbor sweep: .*huge.ini: 4295000000 runs \\(points x replications\\): at most 4294967295$" \
    "$A" sweep "$TMP/huge.ini"
sed -i 's/4295/4294/' "$TMP/huge.ini"
expect_err "runs whose figures would pass half the memory: refused first" 2 \
    "^arbor sweep: .*huge.ini: 4294000000 runs: their figures take [0-9.]+ GiB until the table is made, more than half this machine's" \
    "$A" sweep "$TMP/huge.ini"
expect_err "a bad -s" 2 "sweep: -s fabric.nope: unknown key" "$A" sweep "$TMP/s.ini" -s fabric.nope=1
expect_err "-s with a sweep variable" 2 \
    "^arbor sweep: -s fabric.delay=\\\$\\{1,2\\}us: -s sets one value in every point; sweep variables go in the file$" \
    "$A" sweep "$TMP/s.ini" -s 'fabric.delay=${1,2}us'
expect_err "-s on [sweep]" 2 "^arbor sweep: -s sweep.repeat=2: \\[sweep\\] \\(repeat, seeds\\) is the file's: set it there$" \
    "$A" sweep "$TMP/s.ini" -s sweep.repeat=2
expect_err "--list with --csv" 2 "^arbor sweep: --list prints the points and runs nothing: not with --csv$" \
    "$A" sweep "$TMP/s.ini" --list --csv "$TMP/l.csv"

# ---- a worker that dies ends the sweep ------------------------------------------
cat >"$TMP/slow.ini" <<'EOF'
[fabric]
topology = star:32
[workload]
kind = arbor
size = ${s=1,2,3,4,5,6}GiB
EOF
# kill_child PID: wait for a child of PID that is an `arbor sweep`, then kill it
kill_child() {
    i=0
    while [ $i -lt 200 ]; do
        c=$(ps -o pid= --ppid "$1" 2>/dev/null | head -1 | tr -d ' ')
        if [ -n "$c" ]; then
            sleep 0.5
            kill -KILL "$c" 2>/dev/null && return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
echo precious >"$TMP/slow.csv"
"$A" sweep "$TMP/slow.ini" -n 2 -q --csv "$TMP/slow.csv" >/dev/null 2>"$TMP/err" &
pid=$!
if ! command -v ps >/dev/null 2>&1; then
    kill -KILL $pid
    wait $pid 2>/dev/null
    skip "a dead worker" "ps is not installed"
elif kill_child $pid; then
    wait_bounded $pid 60
    rc=$?
    if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
        grep -q "sweep: worker [01] (pid [0-9]*) killed by signal 9 (Killed) while running point [0-9], replication 0; the sweep is stopped" "$TMP/err"
    then
        pass "a killed worker ends the sweep: exit 1, one line naming it and its point"
    else
        fail "a killed worker" "status $rc (124: still running after 60 s)" "$(cat "$TMP/err")"
    fi
    left=$(ls "$TMP"/slow.csv.* 2>/dev/null | wc -l)
    same "  ... and --csv's file keeps what it held, no temporary file left" "precious 0" \
        "$(cat "$TMP/slow.csv") $left"
else
    wait_bounded $pid 60
    fail "a killed worker" "no worker process appeared"
fi

# The command stopped by a signal (kill, not a terminal's ^C to the whole
# group): its workers go with it, and --csv's file keeps what it held.
# (points of 13 s or more each: a worker still at its first when the
# command goes, and gone within 2 s of it)
sed 's/1,2,3,4,5,6/20,21/' "$TMP/slow.ini" >"$TMP/slower.ini"
for sig in TERM INT; do
    echo precious >"$TMP/slow.csv"
    "$A" sweep "$TMP/slower.ini" -n 2 -q --csv "$TMP/slow.csv" >/dev/null 2>"$TMP/err" &
    pid=$!
    i=0
    kids=""
    while [ $i -lt 200 ] && [ "$(echo $kids | wc -w)" -lt 2 ]; do
        kids=$(ps -o pid= --ppid $pid 2>/dev/null | tr -d ' ')
        sleep 0.1
        i=$((i + 1))
    done
    kill -$sig $pid
    wait_bounded $pid 30
    rc=$?
    i=0
    alive=$(echo $kids | wc -w)
    while [ $i -lt 20 ] && [ "$alive" -gt 0 ]; do
        alive=0
        for k in $kids; do
            if ps -o stat= -p "$k" 2>/dev/null | grep -qv Z; then alive=$((alive + 1)); fi
        done
        sleep 0.1
        i=$((i + 1))
    done
    left=$(ls "$TMP"/slow.csv.* 2>/dev/null | wc -l)
    same "SIG$sig to the sweep: it ends, its 2 workers with it, the file as it was" \
        "signalled 2 workers, 0 alive, precious, 0 left" \
        "$([ $rc -gt 128 ] && echo signalled || echo "status $rc") $(echo $kids | wc -w) workers, $alive alive, $(cat "$TMP/slow.csv"), $left left"
done

# ---- MPI ------------------------------------------------------------------------
built_mpi=0
"$A" sweep --help | grep -q "built with MPI" && built_mpi=1
if [ $built_mpi -eq 0 ]; then
    expect_err "without MPI: a launcher is refused" 2 \
        "started by an MPI launcher, but this arbor was built without MPI" \
        env OMPI_COMM_WORLD_SIZE=2 "$A" sweep "$TMP/s.ini"
    expect_err "without MPI: --mpi is refused" 2 "[-]-mpi asks for MPI, but this arbor was built without MPI" \
        "$A" sweep "$TMP/s.ini" --mpi
    skip "mpirun -np 1 and 2" "this arbor was built without MPI"
elif ! command -v mpirun >/dev/null 2>&1; then
    skip "mpirun -np 1 and 2" "mpirun is not installed (Debian: openmpi-bin)"
else
    # root may run Open MPI only when told so. In the sanitizer build the
    # ranks run without the leak check: Open MPI leaves allocations of its
    # plugins (unloaded by then, so no suppression can name them) at exit.
    # AddressSanitizer's other checks stay on; the leak check of the sweep's
    # own code runs in the checks above, which share all of it but
    # sweep_mpi.c.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    MPIRUN="mpirun --oversubscribe"
    for np in 1 2; do
        $MPIRUN -np $np "$A" sweep "$TMP/s.ini" -q --csv "$TMP/m$np.csv" --json "$TMP/m$np.json" \
            >"$TMP/m$np.out" 2>"$TMP/m$np.err"
        rc=$?
        if [ $rc -eq 0 ] && cmp -s "$TMP/n1.csv" "$TMP/m$np.csv" && cmp -s "$TMP/n1.json" "$TMP/m$np.json" &&
            grep -q "$np MPI rank" "$TMP/m$np.out"; then
            pass "mpirun -np $np: byte-identical to one process"
        else
            fail "mpirun -np $np" "status $rc" "$(diff "$TMP/n1.csv" "$TMP/m$np.csv" | head -5)" \
                "$(head -20 "$TMP/m$np.err")"
        fi
    done
    expect_err "--procs under MPI" 2 "under MPI each rank is one process" \
        env OMPI_COMM_WORLD_SIZE=1 "$A" sweep "$TMP/s.ini" -n 2
    # a rank that dies ends the whole run: mpirun notices and stops the others
    $MPIRUN -np 2 "$A" sweep "$TMP/slow.ini" -q --csv "$TMP/ms.csv" >/dev/null 2>"$TMP/err" &
    pid=$!
    killed=0
    i=0
    while [ $i -lt 300 ] && [ $killed -eq 0 ]; do
        r=$(ps -o pid=,args= --ppid $pid 2>/dev/null | grep 'sweep' | tail -1 | awk '{print $1}')
        if [ -n "$r" ]; then
            sleep 1
            kill -KILL "$r" 2>/dev/null && killed=1
        fi
        sleep 0.1
        i=$((i + 1))
    done
    wait_bounded $pid 60
    rc=$?
    if [ $killed -eq 1 ] && [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qi "signal 9\|killed" "$TMP/err"; then
        pass "mpirun -np 2: a killed rank ends the run (status $rc), the launcher names it"
    else
        fail "a killed rank" "killed $killed, status $rc (124: still running after 60 s)" "$(cat "$TMP/err")"
    fi
fi
finish
