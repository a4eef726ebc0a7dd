#!/bin/sh
# make bench: run every benchmark program; each prints its own figures and
# its baseline measured in the same run.
set -eu
BUILD=${1:-build}
for b in "$BUILD"/bench/bench_*; do
    [ -x "$b" ] || continue
    echo "== $b"
    "$b"
    echo
done
