#!/bin/sh
# make demo: the main job on its built-in default: an Arbor AllReduce of
# 64 MiB over star-32 in the packet simulator (docs/arbor-sim.md), then the
# same with real values checked as they arrive, on a smaller buffer.
set -eu
ARBOR=${1:-build/arbor}
echo "== arbor sim (built-in default: Arbor AllReduce, 64 MiB, star-32, header-only)"
"$ARBOR" sim --quiet
echo
echo "== arbor sim -s mode=values -s size=8MiB --wire-check (results checked, headers round-tripped)"
"$ARBOR" sim --quiet -s mode=values -s size=8MiB --wire-check --json |
    sed 's/.*"goodput_gbps":\([^,]*\),"cct_us":\([^,]*\),.*"correct":\([^,]*\),.*/goodput \1 Gb\/s, CCT \2 us, correct \3/'
