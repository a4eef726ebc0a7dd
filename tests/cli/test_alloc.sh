# The library allocates by name through src/base/alloc.h (arb_malloc,
# arb_free, ...), so that the process allocator (arb_mem_set_default) sees
# every allocation and tests/unit/test_mem.c can fail each in turn. This
# reads the undefined symbols of every object in libarbor.a (beside the
# command): only src/base/mem.c, the default process allocator, may call
# the C library's malloc family. Skipped where nm is missing.
. "$(dirname "$0")/lib.sh"

LIB=$(dirname "$ARBOR")/libarbor.a
if ! command -v nm >/dev/null 2>&1; then
    skip_all "nm is not installed"
fi
if [ ! -f "$LIB" ]; then
    fail "no static library at $LIB"
    finish
fi
# the archive's members as nm names them: libarbor.a:mem.c.o: ...
nm -A -u "$LIB" 2>/dev/null | sed -n 's/^[^:]*:\([^:]*\.o\):.* U \(.*\)$/\1 \2/p' >"$TMP/undef"
n=$(wc -l <"$TMP/undef")
if [ "$n" -lt 100 ]; then
    fail "nm listed $n undefined symbols in $LIB, want a whole library's"
fi
grep -Ew '(malloc|calloc|realloc|free|aligned_alloc|strdup|strndup|reallocarray|posix_memalign)$' \
    "$TMP/undef" | sort -u >"$TMP/calls"
same "only mem.c.o calls the C library's allocator" "mem.c.o" \
    "$(cut -d' ' -f1 "$TMP/calls" | sort -u | tr '\n' ' ' | sed 's/ $//')"
grep -q '^mem.c.o malloc$' "$TMP/calls" &&
    pass "mem.c.o calls malloc (the check reads the archive)" ||
    fail "mem.c.o does not call malloc: does the check read the archive?"
finish
