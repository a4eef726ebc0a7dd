#!/bin/sh
# What a test run did not run, and why: read after ctest by `make test` (and
# by CI, with --strict).
#
#   sh scripts/test_report.sh [--strict] BUILD_DIR...
#
# For each build directory: the checks its ctest run counted (BUILD/Testing/
# checks.log, written by tests/unit/testkit.h and tests/cli/lib.sh), every
# skipped check with its reason, and every test ctest itself shows as
# skipped or not run (BUILD/junit.xml, from ctest --output-junit).
# Exit status: 0; with --strict, 1 when anything was skipped (CI runs on a
# machine where every test can run: scripts/deps.sh installs their tools),
# or when a directory has no record of a run.
set -u

strict=0
[ "${1:-}" = --strict ] && strict=1 && shift
[ $# -gt 0 ] || {
    echo "usage: $0 [--strict] BUILD_DIR..." >&2
    exit 2
}

skipped_any=0 missing=0
for b in "$@"; do
    log=$b/Testing/checks.log junit=$b/junit.xml
    if [ ! -s "$junit" ]; then
        echo "tests in $b: no record of a run ($junit is missing)"
        missing=1
        continue
    fi
    # counts over the programs that logged them: passed, failed, skipped
    counts=$(awk -F'\t' '$2 == "counts" { p += $3; f += $4; s += $5; n++ }
        END { printf "%d %d %d %d", n, p, f, s }' "$log" 2>/dev/null || echo "0 0 0 0")
    read -r progs passed failed skipped <<EOF
$counts
EOF
    # tests ctest shows as skipped or not run (exit 77, a missing program)
    notrun=$(grep -E '^[[:space:]]*<testcase ' "$junit" |
        grep -E 'status="(skipped|notrun|disabled)"' | sed 's/.*<testcase name="\([^"]*\)".*/\1/')
    skips=$(awk -F'\t' '$2 == "skip" { printf "  %s: %s (%s)\n", $1, $3, $4 }' "$log" 2>/dev/null)
    echo "tests in $b: $passed checks passed, $failed failed, $skipped skipped, over $progs programs"
    if [ -n "$skips" ] || [ -n "$notrun" ]; then
        skipped_any=1
        [ -n "$skips" ] && echo "skipped checks (what they need is missing here; sh scripts/deps.sh --install):" &&
            echo "$skips"
        for t in $notrun; do
            grep -q "^$t	skip	" "$log" 2>/dev/null || echo "  $t: skipped by ctest (no reason logged)"
        done
    fi
done
[ $strict -eq 1 ] || exit 0
if [ $missing -eq 1 ]; then
    echo "test_report: a build directory has no test run to report" >&2
    exit 1
fi
if [ $skipped_any -eq 1 ]; then
    echo "test_report: checks were skipped; on this machine every test must run" >&2
    exit 1
fi
exit 0
