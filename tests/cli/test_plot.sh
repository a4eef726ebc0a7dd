# The `arbor plot` command: figures from a run's CSV files (flows, Arbor,
# several runs drawn over each other, runs without samples), what the
# gnuplot script says (titles, units, keys, pairs drawn so that neither
# hides the other), and its errors.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/s.ini" <<'INI'
[fabric]
topology = leafspine:2,2,2
[workload]
kind = perm
size = 256KiB
[run]
sample = 5us
INI
"$ARBOR" sim "$TMP/s.ini" --quiet --csv "$TMP/run" >/dev/null 2>&1

# Errors: exit 2, one stderr line naming what was wrong.
expect_err "no prefix" 2 "expected a results prefix" "$ARBOR" plot
expect_err "unknown option" 2 "unknown option '--bogus'" "$ARBOR" plot --bogus
expect_err "missing files" 2 "nope-util.csv: cannot open" "$ARBOR" plot "$TMP/nope"
expect_err "-o without a directory" 2 "plot: -o needs a value" "$ARBOR" plot "$TMP/run" -o
# -o names a directory that must exist: checked first, nothing drawn
# (expect_err: one line, nothing on stdout)
expect_err "-o DIR that does not exist" 2 "^arbor plot: -o: $TMP/none: no such directory$" \
    "$ARBOR" plot "$TMP/run" -o "$TMP/none"
expect_err "-o FILE, not a directory" 2 "^arbor plot: -o: $TMP/run-util.csv: not a directory$" \
    "$ARBOR" plot "$TMP/run" -o "$TMP/run-util.csv"
expect_err "--sweep with -o DIR that does not exist" 2 "^arbor plot: -o: $TMP/none: no such directory$" \
    "$ARBOR" plot --sweep "$TMP/run-util.csv" -x a -y b -o "$TMP/none"
# nothing to draw at all (no samples, no completed flow, no ranks): one line, status 2
printf '[fabric]\ntopology = star:4\n[workload]\nkind = perm\n[run]\nsample = 0\nstop = 1ns\n' >"$TMP/empty.ini"
"$ARBOR" sim "$TMP/empty.ini" --quiet --csv "$TMP/empty" >/dev/null 2>&1
expect_err "nothing to draw" 2 "^arbor plot: $TMP/empty: nothing to draw: no samples \(run.sample was 0: -s run.sample=10us\), no completed flows, no ranks\$" \
    "$ARBOR" plot "$TMP/empty"
printf 'x,y\n1,2\n' >"$TMP/bad-util.csv"
expect_err "wrong header" 2 "bad-util.csv:1: expected a header starting with time_us" \
    "$ARBOR" plot "$TMP/bad"
cp "$TMP/run-util.csv" "$TMP/bad2-util.csv"
cp "$TMP/run-queue.csv" "$TMP/bad2-queue.csv"
printf 'id,src,dst,bytes,start_us,finish_us,fct_us\n0,0,1,5,0.0,1.0,zz\n' >"$TMP/bad2-flows.csv"
expect_err "bad fct" 2 "bad2-flows.csv:2: fct_us: not a number" "$ARBOR" plot "$TMP/bad2"
expect_status "help" 0 "$ARBOR" plot --help
# without gnuplot on the PATH: status 1 and one line
expect_err "no gnuplot" 1 "needs gnuplot" env PATH=/nonexistent "$ARBOR" plot "$TMP/run"

if ! command -v gnuplot >/dev/null 2>&1; then
    skip "figures" "gnuplot is not installed"
else
    mkdir "$TMP/figs"
    want="$TMP/figs/run-util.png
$TMP/figs/run-queue.png
$TMP/figs/run-fct.png"
    expect_out "three figures into -o DIR" "$want" "$ARBOR" plot "$TMP/run" -o "$TMP/figs"
    for f in util queue fct; do
        # a PNG starts with \211PNG
        if [ "$(od -An -c -N4 "$TMP/figs/run-$f.png" | tr -d ' ')" = '211PNG' ]; then
            pass "run-$f.png is a PNG"
        else
            fail "run-$f.png is a PNG"
        fi
    done
    expect_out "beside the CSV by default" "$TMP/run-util.png
$TMP/run-queue.png
$TMP/run-fct.png" "$ARBOR" plot "$TMP/run"

    # An Arbor run: no flows, but each rank's completion and the slots live.
    "$ARBOR" sim -s topology=star:8 -s size=4MiB --quiet --csv "$TMP/ar" >/dev/null 2>&1
    expect_out "Arbor run: util, queue, ranks, slots" "$TMP/ar-util.png
$TMP/ar-queue.png
$TMP/ar-ranks.png
$TMP/ar-slots.png" "$ARBOR" plot "$TMP/ar" --script "$TMP/ar.gp"
    ranks=$(awk -F, 'NR > 1' "$TMP/ar-ranks.csv" | wc -l)
    # one job: x is the rank column (2), labelled "rank"
    if [ "$ranks" -eq 8 ] && grep -q "ar-ranks.csv' skip 1 using 2:4" "$TMP/ar.gp" &&
        grep -qx "set xlabel 'rank'" "$TMP/ar.gp"; then
        pass "one job: ranks.csv's 8 ranks against their rank, the axis 'rank'"
    else
        fail "one job's ranks figure" "$ranks rows" "$(grep -i rank "$TMP/ar.gp")"
    fi
    # two jobs: the rows in order, the axis says so
    "$ARBOR" sim -s topology=star:8 -s size=1MiB -s arbor.jobs=2 --quiet --csv "$TMP/ar2" >/dev/null 2>&1
    "$ARBOR" plot "$TMP/ar2" --script "$TMP/ar2.gp" >/dev/null 2>&1
    if grep -q "ar2-ranks.csv' skip 1 using 0:4" "$TMP/ar2.gp" &&
        grep -q "set xlabel \"rank: job 0's ranks, then job 1's, ... (2 jobs)\"" "$TMP/ar2.gp"; then
        pass "two jobs: ranks job after job, the axis names the order"
    else
        fail "two jobs' ranks figure" "$(grep -i rank "$TMP/ar2.gp")"
    fi

    # Every figure: a title, both axes labelled with a unit in parentheses, the
    # key outside the plot in a box.
    for gp in "$TMP/ar.gp" "$TMP/ar2.gp"; do
        figs=$(grep -c '^set output' "$gp")
        titles=$(grep -c '^set title "..*"' "$gp")
        xl=$(grep -Ec "^set xlabel .*(\(.+\)|'rank')" "$gp")
        yl=$(grep -Ec '^set ylabel .*\(.+\)' "$gp")
        keys=$(grep -c '^set key outside right top box' "$gp")
        if [ "$figs" -eq 4 ] && [ "$titles" -eq 4 ] && [ "$xl" -eq 4 ] && [ "$yl" -eq 4 ] &&
            [ "$keys" -eq 4 ]; then
            pass "$(basename "$gp"): 4 figures, each with a title, units on both axes, a boxed key outside"
        else
            fail "$(basename "$gp") labels" "figures $figs titles $titles xlabels $xl ylabels $yl keys $keys"
        fi
    done
    # A pair that can be equal (a star has one switch: all its slots are the
    # most in one switch; a class's deepest and mean queue): the wide,
    # translucent one first, the dashed one over it, each in the key.
    pair() { grep "^plot '[^']*$1" "$TMP/ar.gp" | sed 's/, /\n/g' | grep -n "$2" | cut -d: -f1 | head -1; }
    for p in "slots.csv:lw 6 lc rgb '#a0.*title \"all switches\":lw 1.5 dt 2 .*title \"most in one switch\"" \
        "queue.csv:lw 6 lc rgb '#a0.*title \"tier0_down deepest\":lw 1.5 dt 2 .*title \"tier0_down mean\""; do
        f=${p%%:*} rest=${p#*:} wide=${rest%%:*} thin=${rest#*:}
        w=$(pair "$f" "$wide") t=$(pair "$f" "$thin")
        if [ -n "$w" ] && [ -n "$t" ] && [ "$w" -lt "$t" ]; then
            pass "$f: the wide series drawn first ($w), the dashed over it ($t), both in the key"
        else
            fail "$f: band and line" "wide at '$w', dashed at '$t'" "$(grep "^plot '[^']*$f" "$TMP/ar.gp")"
        fi
    done
    # Utilisation above 1: a packet counts in the sample it starts in. An
    # Arbor packet of 8192 B is 8274 B on the wire (docs/arbor-sim.md); a
    # 100 Gb/s port starts at most ceil(C / 8274) of them in a 10 us sample
    # of C = 125000 B, so no sample passes that many packets' bytes over C,
    # and a saturated one does pass 1. The figure says why.
    bound=$(awk 'BEGIN { c = 100e9 * 10e-6 / 8; n = int(c / 8274); if (n * 8274 < c) n++; printf "%.6f", n * 8274 / c }')
    top=$(awk -F, 'NR > 1 { for (i = 2; i <= NF; i++) if ($i > m) m = $i } END { printf "%.6f", m }' "$TMP/ar-util.csv")
    if awk -v t="$top" -v b="$bound" 'BEGIN { exit !(t > 1 && t <= b) }' &&
        grep -q '^set title "link utilisation per port class\\n(a packet counts in the sample it starts in' "$TMP/ar.gp"; then
        pass "utilisation peaks at $top, above 1 and within whole packets started ($bound); the title says why"
    else
        fail "utilisation above 1" "peak $top, bound $bound" "$(grep 'utilisation' "$TMP/ar.gp")"
    fi

    # Without samples (run.sample = 0): what the CSVs have is drawn, one note
    # names the key, exit 0.
    sed 's/^sample = 5us/sample = 0/' "$TMP/s.ini" >"$TMP/nosample.ini"
    "$ARBOR" sim "$TMP/nosample.ini" --quiet --csv "$TMP/ns" >/dev/null 2>&1
    "$ARBOR" plot "$TMP/ns" >"$TMP/ns.out" 2>"$TMP/ns.err"
    rc=$?
    if [ $rc -eq 0 ] && [ "$(cat "$TMP/ns.out")" = "$TMP/ns-fct.png" ] && [ "$(wc -l <"$TMP/ns.err")" -eq 1 ] &&
        grep -q "^arbor plot: note: $TMP/ns: no samples (run.sample was 0), so no utilisation and queue figures over time; 'arbor sim -s run.sample=10us" "$TMP/ns.err"; then
        pass "no samples: the FCT drawn, one note naming run.sample, exit 0"
    else
        fail "no samples" "status $rc" "$(cat "$TMP/ns.out" "$TMP/ns.err")"
    fi
    "$ARBOR" sim -s topology=star:8 -s size=1MiB -s run.sample=0 --quiet --csv "$TMP/arns" >/dev/null 2>&1
    "$ARBOR" plot "$TMP/arns" >"$TMP/arns.out" 2>"$TMP/arns.err"
    rc=$?
    if [ $rc -eq 0 ] && [ "$(cat "$TMP/arns.out")" = "$TMP/arns-ranks.png" ] &&
        [ "$(wc -l <"$TMP/arns.err")" -eq 1 ] && grep -q "no utilisation, queue and slots figures" "$TMP/arns.err"; then
        pass "an Arbor run without samples: its ranks drawn, the note names slots too, exit 0"
    else
        fail "Arbor run without samples" "status $rc" "$(cat "$TMP/arns.out" "$TMP/arns.err")"
    fi
    # a sampled run beside an unsampled one: every figure each has, the note for the other
    expect_status "a sampled and an unsampled run together" 0 "$ARBOR" plot "$TMP/run" "$TMP/ns" -o "$TMP/figs"
    if [ "$(wc -l <"$TMP/out")" -eq 3 ] && grep -q "note: $TMP/ns: no samples" "$TMP/err" &&
        ! grep -q "note: $TMP/run" "$TMP/err"; then
        pass "run and ns: util, queue (run's), fct (both); the note names ns only"
    else
        fail "mixed runs" "$(cat "$TMP/out" "$TMP/err")"
    fi

    # Two runs over each other: ECMP against spraying, one legend entry each.
    sed 's/^\[fabric\]/[routing]\nscheme = spray\n[fabric]/' "$TMP/s.ini" >"$TMP/spray.ini"
    "$ARBOR" sim "$TMP/spray.ini" --quiet --csv "$TMP/spray" >/dev/null 2>&1
    expect_out "two runs: NAME1-vs-NAME2" "$TMP/run-vs-spray-util.png
$TMP/run-vs-spray-queue.png
$TMP/run-vs-spray-fct.png" "$ARBOR" plot "$TMP/run" "$TMP/spray" --script "$TMP/two.gp"
    nf=$(awk 'NR > 1' "$TMP/run-flows.csv" | wc -l)
    ns=$(awk 'NR > 1' "$TMP/spray-flows.csv" | wc -l)
    for t in "title \"run: $nf completed flows\"" "title \"spray: $ns completed flows\"" \
        'title "run: tier1_up"' 'title "spray: tier1_up"'; do
        if grep -qF "$t" "$TMP/two.gp"; then pass "legend: $t"; else fail "legend: $t"; fi
    done
    expect_out "-n names the figures" "$TMP/figs/cmp-util.png
$TMP/figs/cmp-queue.png
$TMP/figs/cmp-fct.png" "$ARBOR" plot "$TMP/run" "$TMP/spray" -o "$TMP/figs" -n cmp
fi

finish
