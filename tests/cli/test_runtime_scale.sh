# The runtime at scale on one switch: 64 ranks of `arbor bench` under
# `arbor run`, an exact AllReduce; then 256, the most a job has
# (docs/runtime.md), an exact AllReduce and a Barrier. On this machine's
# cores 64 ranks answer slowly; their REGISTERs used to be retried every
# 10 ms (a flood the switch could not take) and given up after a fixed
# 2.55 s, so every run failed with "rank N never answered our REGISTER"
# while rank N was alive. Now a call waits as long as its deadline allows
# (docs/runtime.md, "Every wait is bounded"). 256 ranks on two cores
# starved the switch `arbor run` runs for them (a 1 KiB AllReduce had not
# finished after 12 minutes); `arbor run` now runs ranks more than four
# a core niced, the switch first, and such a call takes 40-55 s there
# (docs/runtime.md section 9).
. "$(dirname "$0")/lib.sh"

if "$ARBOR" run -n 64 --timeout 240s -- "$ARBOR" bench allreduce -b 64K -e 64K -n 1 -w 0 -c \
    >"$TMP/out" 2>"$TMP/err"; then
    wrong=$(grep -v '^#' "$TMP/out" | awk '{ s += $9 } END { print s + 0 }')
    rows=$(grep -v '^#' "$TMP/out" | grep -c .)
    if [ "$wrong" -eq 0 ] && [ "$rows" -eq 1 ]; then
        pass "64 ranks on one switch: an exact AllReduce"
    else
        fail "64 ranks: results" "$(cat "$TMP/out")"
    fi
else
    fail "64 ranks on one switch" "$(grep -v '^#' "$TMP/err" | sort | uniq -c | sort -rn | head -3)"
fi

# 256 ranks: an AllReduce of 1 KiB, one f32 a channel (every rank the
# responder of one, the other 255 its requesters: 256 x 255 REGISTERs a
# call), checked exactly, then a Barrier (256 channels again), each rank
# one process running both. A call took 40-55 s on a loaded 2-core
# machine; the deadline is far above that.
start=$(date +%s)
if "$ARBOR" run -n 256 --timeout 600s -- sh -c \
    '"$0" bench allreduce -b 1K -e 1K -n 1 -w 0 -c && "$0" bench barrier -n 1 -w 0' \
    "$ARBOR" >"$TMP/out" 2>"$TMP/err"; then
    rows=$(grep -v '^#' "$TMP/out" | awk '{ printf "%s%s %s %s", s, $1, $4, $9; s = "; " }')
    same "256 ranks on one switch: an exact AllReduce, then a Barrier ($(($(date +%s) - start)) s)" \
        "1024 sum 0; 0 none N/A" "$rows"
else
    fail "256 ranks on one switch ($(($(date +%s) - start)) s)" \
        "$(grep -v '^#' "$TMP/err" | sed 's/rank [0-9]*/rank N/g' | sort | uniq -c | sort -rn | head -3)"
fi
finish
