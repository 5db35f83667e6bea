#!/bin/bash
# The tree is formatted as .clang-format says: every C and C++ source under src/ and testsuite/
# (clang-format --dry-run --Werror). Formatting differs between clang-format major versions, so
# the check runs with the version the tree was formatted with (the `# clang-format major:` line
# of .clang-format) and is skipped (77) with another one or none.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
want=$(sed -n 's/^# clang-format major: *\([0-9]*\).*/\1/p' .clang-format)
[ -n "$want" ] || { echo "FAIL: .clang-format lacks its '# clang-format major: N' line"; exit 1; }
fmt=""
for c in clang-format-"$want" clang-format; do
    command -v "$c" >/dev/null || continue
    v=$("$c" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
    [ "$v" = "$want" ] && { fmt=$c; break; }
done
[ -n "$fmt" ] || { echo "SKIP: clang-format $want not installed (the tree is formatted with it)"; exit 77; }
if [ -d .git ] && command -v git >/dev/null; then
    mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.hpp' 'src/*.h' 'src/*.c' \
        'testsuite/*.cpp' 'testsuite/*.hpp' 'testsuite/*.c' 'testsuite/*.cu')
else
    mapfile -t files < <(find src testsuite -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' -o -name '*.cu' | sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no sources found under $top"; exit 1; }
out=$("$fmt" --dry-run --Werror "${files[@]}" 2>&1)
rc=$?
if [ $rc != 0 ]; then
    echo "$out" | grep -E "error:" | sed 's/: error:.*//' | sort -u | sed 's/^/not formatted: /' | head -50
    echo "FAIL: run: $fmt -i \$(git ls-files 'src/*.[ch]pp' 'src/*.[ch]' 'testsuite/*.[ch]pp' 'testsuite/*.c' 'testsuite/*.cu')"
    exit 1
fi
echo "ok: ${#files[@]} files formatted as .clang-format says ($fmt $want)"
