#!/bin/sh
# Unmodified MPI programs over Arbor through arbor mpirun's preload of
# libarbor_mpi.so (docs/mpi.md): bench/mpi_allreduce.c built as it is, and
# an mpi4py script calling comm.Allreduce on NumPy arrays
# (tests/mpi/allreduce_mpi4py.py). Each run must show its calls went over
# Arbor (the ranks' summaries and the switch's counters), with the results
# checked: the mpi4py script checks its own; the bench's table must have
# its rows. Registered in release builds only (CMakeLists.txt): a
# sanitizer-built library preloaded into these programs would come before
# the sanitizer's runtime. Usage: test_mpi_preload.sh PATH_TO_ARBOR
. "$(dirname "$0")/../cli/lib.sh"
BUILD=$(dirname "$ARBOR")
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun is not installed (Debian: openmpi-bin)"
command -v mpicc >/dev/null 2>&1 || skip_all "mpicc is not installed (Debian: libopenmpi-dev)"
[ -f "$BUILD/libarbor_mpi.so" ] || skip_all "this build has no libarbor_mpi.so (no MPI)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="-np 4 --oversubscribe"

# ---- bench/mpi_allreduce.c, unmodified ----------------------------------------
# 1 KiB .. 64 KiB (7 sizes), 3 timed + 1 warm-up calls each and one f64 MAX
# per size for the slowest rank's mean: 7 x 5 = 35 AllReduces over Arbor,
# of 4 x (1+2+...+64) KiB + 7 x 8 B = 520248 B, and 7 x 4 = 28 barriers.
if mpicc -O2 -o "$TMP/mpi_allreduce" bench/mpi_allreduce.c 2>"$TMP/cc"; then
    # shellcheck disable=SC2086
    timeout 120 "$ARBOR" mpirun --verbose --stats $MPIRUN -- "$TMP/mpi_allreduce" 1024 65536 3 1 \
        >"$TMP/out" 2>"$TMP/err"
    same "mpi_allreduce: exit status" 0 "$?"
    rows=$(grep -v '^#' "$TMP/out" | awk '$2 == $1 / 4 && $6 > 0 {print $1}' | tr '\n' ' ')
    same "mpi_allreduce: a row for each size" "1024 2048 4096 8192 16384 32768 65536 " "$rows"
    got=$(grep -c '^arbor-mpi: rank [0-3]: MPI_Allreduce: arbor 35 calls 520248 B; mpi 0 calls 0 B;$' "$TMP/err")
    same "mpi_allreduce: 35 AllReduces of 520248 B over Arbor on each rank" 4 "$got"
    got=$(grep -c '^arbor-mpi: rank [0-3]: MPI_Barrier: arbor 28 calls 0 B; mpi 0 calls 0 B;$' "$TMP/err")
    same "mpi_allreduce: 28 barriers over Arbor on each rank" 4 "$got"
    aggs=$(sed -n 's/^arbor mpirun: switch: .* aggregates=\([0-9]*\) .*/\1/p' "$TMP/err")
    if [ -n "$aggs" ] && [ "$aggs" -ge 35 ]; then
        pass "mpi_allreduce: the switch aggregated ($aggs aggregates for 35 calls)"
    else
        fail "mpi_allreduce: the switch aggregated" "aggregates=$aggs" "$(tail -5 "$TMP/err")"
    fi
else
    fail "bench/mpi_allreduce.c builds with mpicc" "$(cat "$TMP/cc")"
fi

# ---- mpi4py ------------------------------------------------------------------
if /usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null; then
    # shellcheck disable=SC2086
    timeout 240 "$ARBOR" mpirun --verbose --stats $MPIRUN -- /usr/bin/python3 \
        tests/mpi/allreduce_mpi4py.py >"$TMP/out" 2>"$TMP/err"
    same "mpi4py: exit status" 0 "$?"
    ok=$(grep -c '^rank [0-3]: [1-9][0-9]* checks, 0 wrong$' "$TMP/out")
    same "mpi4py: every rank's checks pass, none wrong" 4 "$ok"
    want=$(sed -n 's/^expect allreduce \([0-9]*\)$/\1/p' "$TMP/out")
    got=$(grep -c "^arbor-mpi: rank [0-3]: MPI_Allreduce: arbor ${want:-x} calls [0-9]* B; mpi 0 calls" "$TMP/err")
    same "mpi4py: all ${want:-?} Allreduces over Arbor on each rank" 4 "$got"
    jobs=$(sed -n 's/^arbor mpirun: switch: .* jobs=\([0-9]*\) .*/\1/p' "$TMP/err")
    same "mpi4py: comm.Dup() is a job of its own on the switch" 2 "$jobs"
else
    skip "mpi4py" "/usr/bin/python3 lacks mpi4py or numpy (Debian: python3-mpi4py python3-numpy)"
fi
finish
