# The build as a newcomer meets it (run from the source tree): CMake finds
# the libraries without pkg-config and names every missing one.
. "$(dirname "$0")/lib.sh"

command -v cmake >/dev/null 2>&1 || skip_all "cmake not found"

# Every library hidden: configure fails and names each one.
PKG_CONFIG_LIBDIR=/nonexistent cmake -S . -B "$TMP/none" \
    -DCMAKE_IGNORE_PATH="/usr/include;/usr/local/include;/usr/lib;/usr/local/lib;/lib;/usr/lib/$(uname -m)-linux-gnu;/lib/$(uname -m)-linux-gnu" \
    >"$TMP/none.out" 2>"$TMP/none.err"
rc=$?
if [ $rc -ne 0 ] && grep -q "cJSON (Debian: libcjson-dev)" "$TMP/none.err" &&
    grep -q "inih (Debian: libinih-dev)" "$TMP/none.err" &&
    grep -q "libpcap (Debian: libpcap-dev)" "$TMP/none.err"; then
    pass "configure names every missing library"
else
    fail "configure names every missing library" "status $rc" "$(cat "$TMP/none.err")"
fi

# pkg-config knows none of them: found by header and library name instead,
# and arbor.pc then lists them as Libs.private.
if PKG_CONFIG_LIBDIR=/nonexistent cmake -S . -B "$TMP/nopc" >"$TMP/nopc.out" 2>&1; then
    pass "configure without pkg-config's modules"
    libs=$(sed -n 's/^Libs.private: //p' "$TMP/nopc/arbor.pc")
    case " $libs " in
    *" -lcjson "*) pass "arbor.pc: Libs.private has -lcjson without pkg-config" ;;
    *) fail "arbor.pc: Libs.private has -lcjson without pkg-config" "$libs" ;;
    esac
else
    fail "configure without pkg-config's modules" "$(tail -20 "$TMP/nopc.out")"
fi

# make demo builds the command only, not the tests and benchmarks (what make
# demo and make test install first: tests/cli/test_deps.sh)
if command -v make >/dev/null 2>&1; then
    make -n demo >"$TMP/make.n" 2>&1
    if grep -q -- "--target arbor_cli" "$TMP/make.n" && [ "$(grep -c -- '--build' "$TMP/make.n")" -eq 1 ]; then
        pass "make demo builds the command only"
    else
        fail "make demo builds the command only" "$(cat "$TMP/make.n")"
    fi
else
    skip "make" "make not found"
fi

finish
