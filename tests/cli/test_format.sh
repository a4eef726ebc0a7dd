# Every C source and header follows the repository's .clang-format.
# Skipped (exit 77) where clang-format is not installed.
. "$(dirname "$0")/lib.sh"

if ! command -v clang-format >/dev/null 2>&1; then
    skip_all "clang-format is not installed"
fi
files=$(git ls-files '*.c' '*.h' 2>/dev/null)
[ -n "$files" ] || files=$(find include src tools tests bench -name '*.[ch]')
for f in $files; do
    if clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        PASSED=$((PASSED + 1))
    else
        fail "$f is not formatted (run: clang-format -i $f)"
    fi
done
echo "checked $PASSED files"
finish
