# Without Open MPI the project still builds and every other feature works:
# a build configured with -DARB_MPI=OFF (as on a machine without MPI, even
# where it is installed) refuses what needs MPI with one line and exit 2,
# and gives the same simulation and sweep results as the build under test.
# Skipped where the build under test has no MPI itself: the other tests then
# check those refusals with it.
. "$(dirname "$0")/lib.sh"
A=$ARBOR

command -v cmake >/dev/null 2>&1 || skip_all "cmake not found"
"$A" sweep --help | grep -q "built with MPI" ||
    skip_all "this arbor was built without MPI: test_sweep and test_partition check it"

B="$TMP/b/arbor"
if cmake -S . -B "$TMP/b" -DCMAKE_BUILD_TYPE=Release -DARB_MPI=OFF >"$TMP/conf.out" 2>&1 &&
    cmake --build "$TMP/b" -j 2 --target arbor_cli >"$TMP/build.out" 2>&1 && [ -x "$B" ]; then
    pass "configure and build with -DARB_MPI=OFF"
else
    fail "configure and build with -DARB_MPI=OFF" "$(tail -20 "$TMP/conf.out" "$TMP/build.out")"
    finish
    exit $?
fi

if "$B" sweep --help | grep -q "built with MPI"; then
    fail "sweep --help does not claim MPI" "$("$B" sweep --help | grep MPI)"
else
    pass "sweep --help does not claim MPI"
fi

cat >"$TMP/p.ini" <<'EOF'
[fabric]
topology = kary:4,2
[transport]
kind = irn
[workload]
kind = perm
size = 20000
seed = 3
EOF
expect_err "--partition is refused" 2 \
    "[-]-partition asks for MPI, but this arbor was built without MPI" \
    "$B" sim "$TMP/p.ini" --partition 2

cat >"$TMP/s.ini" <<'EOF'
[fabric]
topology = star:4
loss = ${loss=0,0.001}
[workload]
kind = arbor
size = 256KiB
[sweep]
repeat = 2
EOF
expect_err "sweep --mpi is refused" 2 "[-]-mpi asks for MPI, but this arbor was built without MPI" \
    "$B" sweep "$TMP/s.ini" --mpi
expect_err "a launcher is refused" 2 \
    "started by an MPI launcher, but this arbor was built without MPI" \
    env OMPI_COMM_WORLD_SIZE=2 "$B" sweep "$TMP/s.ini"

# The rest is the same program: the same figures as the build under test,
# but for the host's and the packet pool's size, which a sanitizer build
# (ARB_NO_POOLS: a packet allocated on its own) reports as its peak.
figures() { sed 's/"wall_s":[0-9.]*//g; s/"peak_rss_mb":[0-9.]*//g; s/"pool_size":[0-9]*//g' "$1"; }
for case in "perm on kary:4,2|$TMP/p.ini" "the default Arbor AllReduce|"; do
    name=${case%%|*} file=${case#*|}
    "$A" sim $file -s workload.size=1MiB --json -q >"$TMP/a.json" 2>"$TMP/a.err"
    ra=$?
    "$B" sim $file -s workload.size=1MiB --json -q >"$TMP/b.json" 2>"$TMP/b.err"
    rb=$?
    figures "$TMP/a.json" >"$TMP/a.fig"
    figures "$TMP/b.json" >"$TMP/b.fig"
    if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ -s "$TMP/a.fig" ] && cmp -s "$TMP/a.fig" "$TMP/b.fig"; then
        pass "sim, $name: the same JSON"
    else
        fail "sim, $name: the same JSON" "status $ra and $rb" "$(cat "$TMP/a.err" "$TMP/b.err")"
    fi
done

"$A" sweep "$TMP/s.ini" -n 2 --csv "$TMP/a.csv" >/dev/null 2>"$TMP/a.err"
ra=$?
"$B" sweep "$TMP/s.ini" -n 2 --csv "$TMP/b.csv" >/dev/null 2>"$TMP/b.err"
rb=$?
if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ "$(wc -l <"$TMP/b.csv")" -eq 3 ] &&
    cmp -s "$TMP/a.csv" "$TMP/b.csv"; then
    pass "sweep -n 2: the same table (2 points)"
else
    fail "sweep -n 2: the same table (2 points)" "status $ra and $rb" "$(cat "$TMP/a.err" "$TMP/b.err")" \
        "$(cat "$TMP/b.csv" 2>/dev/null)"
fi

finish
