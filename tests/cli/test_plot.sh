# The `arbor plot` command: figures from a run's CSV files (flows, Arbor,
# several runs drawn over each other), and its errors.
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
    if [ "$ranks" -eq 8 ] && grep -q "ar-ranks.csv' skip 1 using 0:4" "$TMP/ar.gp"; then
        pass "ranks.csv has the 8 ranks and the figure reads it"
    else
        fail "ranks.csv has the 8 ranks and the figure reads it" "$ranks rows"
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
