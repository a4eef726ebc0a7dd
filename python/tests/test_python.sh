#!/bin/sh
# The Python package (python/arbor, docs/python.md) as ranks of
# /usr/bin/python3 under arbor run, used from the build tree: the six
# collectives on NumPy arrays and other buffers, in place and not, blocking
# and non-blocking, every result exact (python/tests/colls.py); the calls
# each communicator counted; errors as exceptions with the runtime's
# message; a rank killed inside a call; and the package installed by
# cmake --install, imported from the prefix's site-packages.
# Usage: test_python.sh PATH_TO_ARBOR
. "$(dirname "$0")/../../tests/cli/lib.sh"
. "$(dirname "$0")/../../tests/mpi/named.sh"
BUILD=$(cd "$(dirname "$ARBOR")" && pwd)
PY=/usr/bin/python3
[ -x $PY ] || skip_all "/usr/bin/python3 is not installed (Debian: python3)"
$PY -c 'import numpy' 2>/dev/null || skip_all "/usr/bin/python3 has no numpy (Debian: python3-numpy)"
export PYTHONPATH="$BUILD/python"

# ---- outside a job ----------------------------------------------------------
env -u ARBOR_SWITCH -u ARBOR_SECRET $PY -c 'import arbor; arbor.Comm()' >"$TMP/out" 2>"$TMP/err"
if [ $? -ne 0 ] && grep -q "arbor._comm.ArborError: ARBOR_SWITCH and ARBOR_SECRET are not set" "$TMP/err"; then
    pass "outside a job: ArborError saying how to run it"
else
    fail "outside a job: ArborError saying how to run it" "$(tail -2 "$TMP/err")"
fi

# ---- the collectives --------------------------------------------------------
mkdir "$TMP/meet"
timeout 300 "$ARBOR" run -n 4 -- $PY python/tests/colls.py "$TMP/meet" >"$TMP/out" 2>"$TMP/err"
same "colls.py: exit status" 0 "$?"
grep -v "^ " "$TMP/err" | tail -5
ok=$(grep -c '^rank [0-3]: [1-9][0-9]* checks, 0 wrong, [0-9]* calls' "$TMP/out")
same "colls.py: every rank's checks pass, none wrong" 4 "$ok"
# 5 dtypes x 3 counts x (3 ops x 7 + 2) + 1 + 5 + 1 calls, the last reduce
# refused before it started: 352 on every communicator's counter, and as
# many bytes out as a rank's inputs at least
calls=$(sed -n 's/^rank [0-3]: .* wrong, \([0-9]*\) calls.*/\1/p' "$TMP/out" | sort -u)
same "colls.py: each communicator counted the 352 calls made" 352 "$calls"

# ---- the ticker: ticks between calls, sleeps through them ----------------------
# as the MPI interposer's (tests/cli/test_mpi.sh, which derives the bound):
# a tick in each of five 100 ms gaps; wakes that found a wait at most
# 30 + waits / 8 ms (a tick every millisecond gave about waits / 1 ms)
mkdir "$TMP/tick"
timeout 120 "$ARBOR" run -n 4 -- $PY python/tests/colls.py "$TMP/tick" ticker >"$TMP/out" 2>"$TMP/err"
same "colls.py ticker: exit status" 0 "$?"
ok=$(awk '$3 == "ticker" && NF == 7 && $7 >= 5 && $5 <= 30 + $6 / 0.008 { n++ } END { print n + 0 }' "$TMP/out")
if [ "$ok" -eq 4 ]; then
    pass "the ticker ticked in every gap and slept through the waits on every rank"
else
    fail "the ticker: at least 5 ticks, at most 30 + waits / 8 ms wakes in calls" \
        "$(grep ticker "$TMP/out")" "$(tail -3 "$TMP/err")"
fi

# ---- a rank killed inside a call ----------------------------------------------
# rank 2 dies inside a 64 MiB AllReduce; deadline 3 s: every other rank's
# call raises ArborError naming rank 2 within the deadline plus 1 s of
# scheduling (arbor run's SIGKILL of the stragglers comes 5 s after)
mkdir "$TMP/ready"
timeout 90 "$ARBOR" run -n 4 --timeout 3s -- $PY python/tests/colls.py "$TMP/ready" kill 2 \
    >"$TMP/out" 2>"$TMP/err"
named=$(named_in_time "$TMP/out" 2 4.0 0 1 3)
same "a killed rank: every other rank's call raises ArborError naming it in time" 3 "$named"

# ---- installed --------------------------------------------------------------
if cmake --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/inst" 2>&1; then
    site=$(find "$TMP/prefix" -path '*/site-packages/arbor/__init__.py' | head -1)
    site=${site%/arbor/__init__.py}
    if [ -n "$site" ] && PYTHONPATH="$site" timeout 60 "$ARBOR" run -n 2 -- $PY -c '
import arbor, numpy as np, os
c = arbor.Comm(); x = np.full(8, c.rank + 1, np.int64); c.allreduce(x)
assert arbor.__file__.startswith("'"$TMP"'/prefix"), arbor.__file__
assert (x == 3).all(), x
os.write(1, b"ok\n")' >"$TMP/out" 2>&1 && [ "$(grep -c '^ok$' "$TMP/out")" -eq 2 ]; then
        pass "installed: the package in PREFIX's site-packages finds PREFIX's libarbor"
    else
        fail "installed: the package in PREFIX's site-packages" "site: $site" "$(tail -5 "$TMP/out")"
    fi
else
    fail "cmake --install" "$(tail -5 "$TMP/inst")"
fi
finish
