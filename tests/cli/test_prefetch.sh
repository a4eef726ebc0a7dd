# The event loop's prefetches are in the binary. A static function that
# does nothing but prefetch looks pure to GCC, which then deletes the call
# instead of inlining it (silently: the simulation is the same, only
# slower). src/sim/prefetch.h forces its prefetching helpers inline; this
# counts the prefetch instructions left in arb_sim_run. Skipped (exit 77) where objdump
# is missing or the machine has no prefetch instruction it knows.
. "$(dirname "$0")/lib.sh"

if ! command -v objdump >/dev/null 2>&1; then
    skip_all "objdump is not installed"
fi
case $(uname -m) in
x86_64 | i?86) insn='prefetch' ;;
aarch64 | arm64) insn='prfm' ;;
*) skip_all "no prefetch instruction known for $(uname -m)" ;;
esac
objdump -d --no-show-raw-insn "$ARBOR" |
    awk '/<arb_sim_run>:/ { f = 1; next } f && /^$/ { exit } f' >"$TMP/loop.s"
if [ ! -s "$TMP/loop.s" ]; then
    fail "arb_sim_run not found in $ARBOR"
else
    n=$(grep -c "$insn" "$TMP/loop.s")
    # 23 with GCC 12 at -O3 and -O0 alike; a helper that lost its call
    # takes two to seven with it.
    if [ "$n" -ge 16 ]; then
        pass "arb_sim_run holds $n prefetch instructions"
    else
        fail "arb_sim_run holds $n prefetch instructions, want at least 16" \
            "a prefetching helper in src/sim/prefetch.h was dropped: is it SIM_ALWAYS_INLINE?"
    fi
fi
finish
