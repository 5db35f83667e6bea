#!/bin/bash
# The tree's architecture, checked: src/core's libraries include only downward (base <- curves <-
# sched; report and device on base only), nothing in src/core includes a Slurm, SPANK, munge or
# CUDA header or a file outside src/core, and every project include is spelled one way: its path
# under src/ ("core/sched/engine.hpp"), never a bare name or a relative path.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
exec /usr/bin/python3 - "$top" <<'PY'
import os, re, sys
top = sys.argv[1]
src = os.path.join(top, 'src')
allowed = {'base': {'base'}, 'curves': {'base', 'curves'}, 'sched': {'base', 'curves', 'sched'},
           'report': {'base', 'report'}, 'device': {'base', 'device'}}
forbidden = re.compile(r'^(slurm/|spank\.h|munge\.h|cuda|nvml|src/)')
quoted = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
angled = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)
errors = []
checked = 0

def sources(root):
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith(('.cpp', '.hpp', '.h', '.c', '.cu')):
                yield os.path.join(d, n)

for lib in sorted(os.listdir(os.path.join(src, 'core'))):
    folder = os.path.join(src, 'core', lib)
    if not os.path.isdir(folder):
        continue
    if lib not in allowed:
        errors.append(f'src/core/{lib}: a folder the layering rules do not know (add it to {sys.argv[0]})')
        continue
    for path in sources(folder):
        rel = os.path.relpath(path, top)
        text = open(path, encoding='utf-8').read()
        checked += 1
        for inc in quoted.findall(text):
            parts = inc.split('/')
            if parts[0] != 'core' or len(parts) < 3:
                errors.append(f'{rel}: includes "{inc}", which is not in src/core')
            elif parts[1] not in allowed[lib]:
                errors.append(f'{rel}: includes "{inc}": core/{lib} may include only '
                              + ', '.join(sorted(f'core/{a}' for a in allowed[lib])))
        for inc in angled.findall(text):
            if forbidden.match(inc):
                errors.append(f'{rel}: includes <{inc}>: no Slurm, SPANK, munge or CUDA header in src/core')

# One spelling: a quoted include names a file by its path under src/ (Slurm's own headers are
# "src/..." paths of Slurm's tree; the installed client header is "explsched/report.h").
for root in (src, os.path.join(top, 'testsuite')):
    for path in sources(root):
        rel = os.path.relpath(path, top)
        for inc in quoted.findall(open(path, encoding='utf-8').read()):
            checked += 1
            if inc.startswith('src/') or inc in ('explsched_config.h', 'explsched/report.h'):
                continue
            if os.path.isfile(os.path.join(src, inc)):
                continue
            if rel.startswith('testsuite/') and '/' not in inc and \
                    os.path.isfile(os.path.join(os.path.dirname(path), inc)):
                continue  # a test's own helper header beside it
            errors.append(f'{rel}: includes "{inc}": spell project headers as their path under src/')

for e in errors:
    print('layering:', e)
print(f'layering: {checked} includes checked, {len(errors)} errors')
sys.exit(1 if errors or checked == 0 else 0)
PY
