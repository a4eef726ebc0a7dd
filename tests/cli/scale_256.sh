# 256 ranks on one switch, the most a job has (docs/runtime.md): an exact
# AllReduce. Release builds only (CMakeLists.txt): under the sanitizers the
# same run took 644 s on this 2-core machine, against 333 s in release (and
# test_runtime_scale's 64 ranks run in both builds). `arbor run` runs ranks
# more than four a core niced, the switch first; without that a 1 KiB
# AllReduce of 256 ranks had not finished after 12 minutes here.
. "$(dirname "$0")/lib.sh"

# One f32 a channel: every rank the responder of one channel and a
# requester of the other 255 (256 x 255 REGISTERs), checked exactly.
start=$(date +%s)
if "$ARBOR" run -n 256 --timeout 600s -- "$ARBOR" bench allreduce -b 1K -e 1K -n 1 -w 0 -c \
    >"$TMP/out" 2>"$TMP/err"; then
    rows=$(grep -v '^#' "$TMP/out" | awk '{ printf "%s%s %s %s", s, $1, $4, $9; s = "; " }')
    same "256 ranks on one switch: an exact AllReduce ($(($(date +%s) - start)) s)" \
        "1024 sum 0" "$rows"
else
    fail "256 ranks on one switch ($(($(date +%s) - start)) s)" \
        "$(grep -v '^#' "$TMP/err" | sed 's/rank [0-9]*/rank N/g' | sort | uniq -c | sort -rn | head -3)"
fi
finish
