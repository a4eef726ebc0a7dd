# Shared helpers of the command tests: source it, call the checks, end with
# `finish`. Every check counts; finish prints "N passed, N failed" (and ", N
# skipped"). Exit status: 1 when a check failed, else SKIP_CODE (77, which
# ctest's SKIP_RETURN_CODE shows as "Skipped") when a check was skipped,
# else 0.
ARBOR=${1:?usage: $0 PATH_TO_ARBOR}
PASSED=0
FAILED=0
SKIPPED=0
SKIP_CODE=77
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "  $l"; done; }
# skip NAME REASON: a check that cannot run here (a tool is missing).
same() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want: $2" "got:  $3"; fi; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip $1: $2"; }
# skip_all REASON: nothing of this test can run here; ends it as skipped.
skip_all() {
    echo "skipped: $1"
    SKIPPED=$((SKIPPED + 1))
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
