# The documentation holds up on its own (run from the source tree):
#  - every Markdown link in README.md, docs/ and contrib/ names a file of the
#    repository, and its #anchor a heading of that file;
#  - every "docs/X.md section N" (or "X.md section N") in any tracked file
#    names a numbered heading "N." of that page;
#  - nothing points outside the repository (specification sections, seed
#    documents, files of the machine the project was written on);
#  - every scenario key is in docs/scenarios.md's key table with the default
#    `arbor sim --keys` prints;
#  - the code blocks' commands run as written from the source tree after make
#    (build/arbor, not a bare arbor).
. "$(dirname "$0")/lib.sh"

PY=$(command -v python3 2>/dev/null) || skip_all "python3 is not installed"
command -v git >/dev/null 2>&1 && git rev-parse --show-toplevel >/dev/null 2>&1 ||
    skip_all "not a git checkout (the check walks the tracked files)"

"$ARBOR" sim --keys >"$TMP/keys" 2>&1 || fail "arbor sim --keys"

"$PY" - "$TMP/keys" <<'PY' >"$TMP/out" 2>&1
import os, re, subprocess, sys

files = [f for f in subprocess.check_output(['git', 'ls-files']).decode().split('\n') if f]
text_ext = ('.md', '.c', '.h', '.sh', '.py', '.ini', '.lua', '.txt', '.in', '.cmake')
texts = [f for f in files if f.endswith(text_ext) and not f.startswith('tests/fuzz/corpus/')
         and os.path.isfile(f)]

def slug(h):
    h = re.sub(r'[`*_]', '', h.strip().lower()).replace('_', '')
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')

anchors = {}
def anchors_of(path):
    if path not in anchors:
        seen, out = {}, set()
        fence = False
        for line in open(path, encoding='utf-8'):
            if line.startswith('```'):
                fence = not fence
            m = None if fence else re.match(r'#{1,6} (.*)', line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else '%s-%d' % (s, n))
        anchors[path] = out
    return anchors[path]

def headings_numbered(path):
    nums = set()
    for line in open(path, encoding='utf-8'):
        m = re.match(r'#{2,4} (\d+(?:\.\d+)*)\.? ', line)
        if m:
            nums.add(m.group(1))
    return nums

bad = []
ok = 0
# 1. Markdown links
for f in texts:
    if not f.endswith('.md'):
        continue
    body = open(f, encoding='utf-8').read()
    body = re.sub(r'```.*?```', '', body, flags=re.S)
    for m in re.finditer(r'\]\(([^)\s]+)\)', body):
        target = m.group(1)
        if re.match(r'[a-z]+:', target):
            continue
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if dest not in files and not any(x.startswith(dest + '/') for x in files):
            bad.append('%s: link to %s: no such file in the repository' % (f, target))
            continue
        if anchor:
            if not dest.endswith('.md') or anchor not in anchors_of(dest):
                bad.append('%s: link to %s: no heading #%s in %s' % (f, target, anchor, dest))
                continue
        ok += 1
# 2. "X.md section N" references, in every tracked text file
for f in texts:
    body = open(f, encoding='utf-8', errors='replace').read()
    for m in re.finditer(r'(?:docs/)?([a-z][a-z0-9-]*\.md),? sections? ((?:\d+(?:\.\d+)*)(?:(?:, | and |-)\d+(?:\.\d+)*)*)', body):
        page = 'docs/' + m.group(1)
        if page not in files:
            continue
        have = headings_numbered(page)
        for n in re.findall(r'\d+(?:\.\d+)*', m.group(2)):
            if n not in have:
                line = body.count('\n', 0, m.start()) + 1
                bad.append('%s:%d: %s section %s: no such numbered heading' % (f, line, page, n))
            else:
                ok += 1
# 3. references outside the repository
outside = [r'\bspec(ification)? sections? \d', r'\bspec \d+\b', r'\bfabric\.md\b', r'\bpgft\.md\b',
           r'\bseed 00\d', r'\bDESIGN\.md\b', r'/work/', r'\barbor-protocol\.md\b',
           r'\.\./shared/']
me = 'tests/cli/test_docs.sh'
for f in texts:
    if f == me:
        continue
    for i, line in enumerate(open(f, encoding='utf-8', errors='replace'), 1):
        for pat in outside:
            if re.search(pat, line):
                bad.append('%s:%d: points outside the repository: %s' % (f, i, line.strip()[:100]))
                break
        else:
            continue
ok += 1
# 4. scenario keys
table = {}
for line in open('docs/scenarios.md', encoding='utf-8'):
    m = re.match(r'\| `([a-z_]+\.[a-z_.]+)` \| ([^|]*) \|', line)
    if m:
        d = m.group(2).strip().strip('`')
        table[m.group(1)] = '' if d == '(empty)' else d
for line in open(sys.argv[1], encoding='utf-8'):
    m = re.match(r'(\S+) = (.*)$', line.rstrip('\n'))
    if not m:
        continue
    k, d = m.group(1), m.group(2)
    if k not in table:
        bad.append('docs/scenarios.md: key %s is not in the key table' % k)
    elif table[k] != d:
        bad.append('docs/scenarios.md: %s: default %r, arbor sim --keys says %r' % (k, table[k], d))
    else:
        ok += 1
# 5. the commands of the code blocks run as written from the source tree after
# make: the command is build/arbor there, never a bare arbor (not on PATH)
cmd = re.compile(r'(^|\s|\(|--\s)arbor (sim|route|topo|wire|run|switch|bench|sweep|plot|lab|mpirun)\b(?!:)')
for f in texts:
    if not (f.endswith('.md') and (f.startswith('docs/') or f == 'README.md')):
        continue
    fence = False
    for i, line in enumerate(open(f, encoding='utf-8'), 1):
        if line.startswith('```'):
            fence = not fence
            continue
        code = fence or (line.startswith('    ') and line.strip().startswith('arbor '))
        said = re.match(r'\s*arbor( [a-z-]+)+: ', line)  # an error line the command prints
        if code and not said and not line.lstrip().startswith('#') and cmd.search(line.split(' # ')[0]):
            bad.append('%s:%d: a bare arbor command (build/arbor from the source tree): %s'
                       % (f, i, line.strip()[:90]))
        elif code:
            ok += 1
for b in bad:
    print('BAD ' + b)
print('OK %d' % ok)
PY
if grep -q '^BAD ' "$TMP/out"; then
    fail "documentation references" "$(grep '^BAD ' "$TMP/out" | head -40)"
elif grep -q '^OK ' "$TMP/out"; then
    pass "documentation references ($(sed -n 's/^OK //p' "$TMP/out") checked)"
else
    fail "documentation references" "$(cat "$TMP/out")"
fi
finish
