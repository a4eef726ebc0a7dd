# The runtime at scale on one switch: 64 ranks of `arbor bench` under
# `arbor run`, an exact AllReduce (256, the most a job has, in
# tests/cli/scale_256.sh: release builds only). On this machine's cores 64
# ranks answer slowly; their REGISTERs used to be retried every 10 ms (a
# flood the switch could not take) and given up after a fixed 2.55 s, so
# every run failed with "rank N never answered our REGISTER" while rank N
# was alive. Now a call waits as long as its deadline allows
# (docs/runtime.md, "Every wait is bounded").
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

finish
