# Shared helpers of the command tests: source it, call the checks, end with
# `finish`. Every check counts; finish prints "N passed, N failed" (and ", N
# skipped"). Exit status: 1 when a check failed, else SKIP_CODE (77, which
# ctest's SKIP_RETURN_CODE shows as "Skipped") when a check was skipped,
# else 0. A skipped check does not stop the script: the others still run and
# count. Under ctest (ARBOR_CHECK_LOG set) each skipped check and the
# script's counts are added to that log, which scripts/test_report.sh reads
# at the end of `make test` to say what did not run, and why.
ARBOR=${1:?usage: $0 PATH_TO_ARBOR}
PASSED=0
FAILED=0
SKIPPED=0
SKIP_CODE=77
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "  $l"; done; }
same() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want: $2" "got:  $3"; fi; }
# check_log KIND TEXT...: a line of the check log (tab-separated), if any
check_log() {
    [ -n "${ARBOR_CHECK_LOG:-}" ] || return 0
    _name=${ARBOR_TEST_NAME:-$(basename "$0" .sh)}
    _line=$(
        IFS='	'
        printf '%s\t%s' "$_name" "$*" | tr '\n\r' '  '
    )
    printf '%s\n' "$_line" >>"$ARBOR_CHECK_LOG"
}
# skip NAME REASON: a check that cannot run here (a tool is missing).
skip() {
    SKIPPED=$((SKIPPED + 1))
    echo "skip $1: $2"
    check_log skip "$1" "$2"
}
# skip_all REASON: nothing more of this test can run here (what ran still
# counts); ends it.
skip_all() {
    echo "skipped: $1"
    SKIPPED=$((SKIPPED + 1))
    check_log skip "the rest of the script" "$1"
    finish
    exit $?
}

# expect_out NAME EXPECTED CMD...: stdout equals EXPECTED, status 0.
expect_out() {
    name=$1 want=$2
    shift 2
    got=$("$@" 2>"$TMP/err")
    rc=$?
    if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
        pass "$name"
    else
        fail "$name" "status $rc" "want: $want" "got:  $got" "stderr: $(cat "$TMP/err")"
    fi
}

# expect_err NAME STATUS PATTERN CMD...: exit STATUS, exactly one stderr
# line matching PATTERN (grep -E), nothing on stdout.
expect_err() {
    name=$1 want_rc=$2 pat=$3
    shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    lines=$(wc -l <"$TMP/err")
    if [ $rc -eq "$want_rc" ] && [ "$lines" -eq 1 ] && grep -Eq "$pat" "$TMP/err" &&
        [ ! -s "$TMP/out" ]; then
        pass "$name"
    else
        fail "$name" "status $rc (want $want_rc), $lines stderr lines" "stderr: $(cat "$TMP/err")" \
            "stdout: $(head -c 300 "$TMP/out")"
    fi
}

# expect_status NAME STATUS CMD...: only the exit status.
expect_status() {
    name=$1 want_rc=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq "$want_rc" ]; then pass "$name"; else fail "$name" "status $rc (want $want_rc)"; fi
}

finish() {
    check_log counts "$PASSED" "$FAILED" "$SKIPPED"
    if [ "$SKIPPED" -gt 0 ]; then
        echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
    else
        echo "$PASSED passed, $FAILED failed"
    fi
    [ "$FAILED" -eq 0 ] || return 1
    [ "$SKIPPED" -eq 0 ] || return $SKIP_CODE
    return 0
}

# wait_bounded PID SECONDS: wait for PID (its status); 124, and PID killed, when it is
# still running after SECONDS
wait_bounded() {
    i=0
    while kill -0 "$1" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt $(($2 * 10)) ]; then
            kill -KILL "$1" 2>/dev/null
            wait "$1" 2>/dev/null
            return 124
        fi
        sleep 0.1
    done
    wait "$1"
}
