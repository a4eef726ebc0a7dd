#!/bin/sh
# arbor mpirun and the PMPI interposer (libarbor_mpi.so, docs/mpi.md): an MPI
# program's six collectives over Arbor, checked against Open MPI's own for
# every datatype and op the interposer maps (tests/mpi/mpi_colls.c); the
# calls each rank says went over Arbor and over MPI (ARBOR_MPI_VERBOSE)
# against those the program expected; the switch's counters; and a rank
# killed inside a call: the others' calls end with an error naming it
# within the deadline. tests/mpi/test_mpi_preload.sh runs unmodified
# programs (bench/mpi_allreduce.c, mpi4py) through the preload.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../mpi/named.sh"
BUILD=$(dirname "$ARBOR")
COLLS=$BUILD/mpi/mpi_colls
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun is not installed (Debian: openmpi-bin)"
[ -x "$COLLS" ] || skip_all "this build has no MPI (libopenmpi-dev), so no libarbor_mpi.so"
# root may run Open MPI only when told so; the sanitizer build's ranks run
# without the leak check (Open MPI's plugins leave allocations at exit)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# the sanitizer build links the interposer into the program (a preloaded
# library would come before the sanitizer's runtime)
PRELOAD=
grep -q 'ARB_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && PRELOAD=--no-preload
MPIRUN="-np 4 --oversubscribe --mca orte_base_help_aggregate 0"

# ---- usage -----------------------------------------------------------------
expect_err "no program" 2 "arbor mpirun: give the program after --" "$ARBOR" mpirun -np 2 ./x
expect_err "a bad --timeout" 2 "arbor mpirun: --timeout 'soon': want a duration" \
    "$ARBOR" mpirun --timeout soon -np 2 -- ./x
ARBOR_MPIRUN=/nonexistent/mpirun "$ARBOR" mpirun -np 2 -- true >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "cannot run /nonexistent/mpirun" "$TMP/err" &&
    grep -q "mpirun exited with status 127" "$TMP/err"; then
    pass "a launcher that is not there: status 1, named"
else
    fail "a launcher that is not there: status 1, named" "status $rc" "$(cat "$TMP/err")"
fi

# ---- the six collectives against Open MPI's ---------------------------------
# shellcheck disable=SC2086
timeout 240 "$ARBOR" mpirun --verbose --stats --timeout 20s $PRELOAD $MPIRUN -- "$COLLS" \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
same "mpi_colls: exit status" 0 "$rc"
ranks=$(grep -c '^rank [0-3]: [1-9][0-9]* checks, 0 wrong$' "$TMP/out")
same "mpi_colls: every rank's checks pass, none wrong" 4 "$ranks"
grep WRONG "$TMP/err" | head -5
# each collective: the calls the program expected over Arbor and over MPI,
# on every rank's summary
for coll in MPI_Allreduce MPI_Reduce MPI_Bcast MPI_Allgather MPI_Reduce_scatter_block MPI_Barrier; do
    want=$(sed -n "s/^expect $coll arbor \([0-9]*\) mpi \([0-9]*\)$/arbor \1 calls mpi \2 calls/p" "$TMP/out")
    got=$(grep "^arbor-mpi: rank [0-3]: $coll:" "$TMP/err" |
        sed 's/.*: arbor \([0-9]*\) calls [0-9]* B; mpi \([0-9]*\) calls.*/arbor \1 calls mpi \2 calls/' |
        sort -u)
    if [ -n "$want" ] && [ "$got" = "$want" ] &&
        [ "$(grep -c "^arbor-mpi: rank [0-3]: $coll:" "$TMP/err")" -eq 4 ]; then
        pass "$coll: $want on every rank, as the program expects"
    else
        fail "$coll: the calls over each path" "want: $want" "got:  $got"
    fi
done
# the reasons: the unsigned MAX/MIN and the bitwise AND stayed on MPI, named
if grep -q "^arbor-mpi: rank 0: MPI_Allreduce:.*datatype without an Arbor dtype: [1-9].*op not SUM, MAX or MIN: [1-9]" "$TMP/err" &&
    grep -q "^arbor-mpi: rank 0: MPI_Barrier:.*communicator not MPI_COMM_WORLD or a duplicate: 1;" "$TMP/err"; then
    pass "the summary says why calls went to MPI"
else
    fail "the summary says why calls went to MPI" "$(grep '^arbor-mpi: rank 0' "$TMP/err")"
fi
# the switch saw them: two jobs (MPI_COMM_WORLD and its duplicate), and at
# least as many aggregates as the calls that reduce over Arbor on each rank
# (every such call aggregates at least once)
st=$(grep '^arbor mpirun: switch: ' "$TMP/err")
jobs=$(echo "$st" | sed -n 's/.* jobs=\([0-9]*\) .*/\1/p')
aggs=$(echo "$st" | sed -n 's/.* aggregates=\([0-9]*\) .*/\1/p')
reds=$(sed -n 's/^expect MPI_\(Allreduce\|Reduce\|Reduce_scatter_block\) arbor \([0-9]*\) .*/\2/p' "$TMP/out" |
    awk '{s += $1} END {print s + 0}')
same "the switch admitted both jobs" 2 "$jobs"
if [ -n "$aggs" ] && [ "$reds" -gt 0 ] && [ "$aggs" -ge "$reds" ]; then
    pass "the switch aggregated: $aggs aggregates for $reds reducing calls"
else
    fail "the switch aggregated" "aggregates=$aggs, reducing calls=$reds" "$st"
fi

# ---- the ticker: ticks between calls, sleeps through them --------------------
# Between calls a thread answers the peers (a tick 1 ms after a quiet sleep);
# while blocking waits run it sleeps 1, 2, 4, then 8 ms. mpi_colls ticker:
# five 100 ms gaps (each must hold a tick), then 20 AllReduces of 16 MiB.
# A wake that finds a wait running (or run since its last) costs, per
# stretch of waits, at most one at its start, three at the 1, 2 and 4 ms
# sleeps, one at its end, and one per 8 ms of waiting: six stretches give at
# most 30 + waits / 8 ms (a tick every millisecond through the waits, as
# before, gave about waits / 1 ms).
# shellcheck disable=SC2086
timeout 120 "$ARBOR" mpirun --verbose $PRELOAD $MPIRUN -- "$COLLS" ticker >"$TMP/out" 2>"$TMP/err"
rc=$?
same "mpi_colls ticker: exit status" 0 "$rc"
tk=$(sed -n 's/^arbor-mpi: rank \([0-3]\): ticker: \([0-9]*\) wakes, \([0-9]*\) in calls (\([0-9.]*\) s in blocking waits), \([0-9]*\) ticks$/\1 \2 \3 \4 \5/p' "$TMP/err")
ok=$(echo "$tk" | awk 'NF == 5 && $5 >= 5 && $3 <= 30 + $4 / 0.008 { n++ } END { print n + 0 }')
if [ "$ok" -eq 4 ]; then
    pass "the ticker ticked in every gap and slept through the waits on every rank"
else
    fail "the ticker: at least 5 ticks, at most 30 + waits / 8 ms wakes in calls" \
        "rank, wakes, in calls, waits (s), ticks:" "$tk" "$(grep ticker "$TMP/err")"
fi

# ---- a rank killed inside a call --------------------------------------------
# rank 2 dies inside a 16 MiB AllReduce; deadline 5 s: each other rank's call
# ends with an error naming rank 2 ("rank 2 never answered", "unanswered for
# 1 s: 2") within the deadline plus 1 s of scheduling on a loaded machine.
# --enable-recovery: mpirun lets the others run on to report it.
# shellcheck disable=SC2086
timeout 60 "$ARBOR" mpirun --timeout 5s $PRELOAD $MPIRUN --enable-recovery -- "$COLLS" kill 2 \
    >"$TMP/out" 2>"$TMP/err"
named=$(named_in_time "$TMP/out" 2 6.0 0 1 3)
same "a killed rank: every other rank's call fails naming it within the deadline" 3 "$named"
finish
