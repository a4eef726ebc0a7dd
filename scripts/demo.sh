#!/bin/sh
# make demo: the main job on its built-in default. Until the simulator
# lands, that is a tour of the wire: one valid packet of every kind, then
# one of them decoded field by field and as JSON.
set -eu
ARBOR=${1:-build/arbor}
echo "== arbor wire examples: one offset's life, recovery and multi-tier packets"
"$ARBOR" wire examples
hex=$("$ARBOR" wire examples | awk '$1 == "request_3tier" {print $2}')
echo
echo "== arbor wire decode $hex"
"$ARBOR" wire decode "$hex"
echo
echo "== arbor wire decode --json (the same packet)"
"$ARBOR" wire decode --json "$hex"
echo
echo "== a malformed packet: the same header cut inside its 20 B"
"$ARBOR" wire decode "$(echo "$hex" | cut -c1-36)" 2>&1 || echo "(exit status $?)"
