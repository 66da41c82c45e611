#!/usr/bin/env python3
"""check_includes.py SOURCE_DIR - the direction of the cost model's #include lines.

With -Wmissing-prototypes a call needs a prototype, so a file's includes are
the calls it may make: checking them checks that calls go down only. The
floors of cost/ (cost/detailed/core/core.h draws them):

  4 top         cost/detailed/*.c, cost/detailed/top.h
  3 families    cost/detailed/train/, serve/, dlrm/
  2 mechanisms  cost/detailed/llm/
  1 ground      cost/detailed/core/, and cost/kernel/ beside it
  0 base        cost/*.c, cost/*.h (hardware, topology, stack, model, task,
                result, engine, the registry; cost/detailed.h, the public face)

Rules, for every file under cost/ and every #include "..." in it:
  - it names a file that exists, inside cost/: cost/ includes nothing of
    driver/, worker/ or anything else outside it;
  - a file includes its own folder or a lower floor, never a higher one (a
    header as much as a source file), and never a folder beside its own on
    the same floor: the families never include each other, nor core/ and
    kernel/;
  - cost/kernel/ includes only itself and cost/hw.h (with its cost/status.h);
  - every folder of cost/detailed/ sits on a floor, and has one interface
    header (top.h for the top), which declares only functions its folder's
    .c files define.
Prints each violation as FILE:LINE: message and exits 1 when there is any.
"""
import os
import re
import sys

FAMILIES = ('train', 'serve', 'dlrm')
KERNEL_BASE = ('cost/hw.h', 'cost/status.h')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def floor(path):
    """(level, folder) of a repository path under cost/, None outside, ValueError unplaced."""
    if path.startswith('cost/detailed/'):
        rest = path[len('cost/detailed/'):]
        if '/' not in rest:
            return 4, 'top'
        folder = rest.split('/')[0]
        if folder in FAMILIES:
            return 3, folder
        if folder == 'llm':
            return 2, 'llm'
        if folder == 'core':
            return 1, 'core'
        raise ValueError('cost/detailed/%s/ is on no floor' % folder)
    if path.startswith('cost/kernel/'):
        return 1, 'kernel'
    if path.startswith('cost/'):
        if path.count('/') == 1:
            return 0, 'cost'
        raise ValueError('%s is on no floor' % os.path.dirname(path))
    return None


def includes(root, path):
    """(line, included repository path or the raw text) of a file's quoted includes."""
    out = []
    with open(os.path.join(root, path), encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            here = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
            if os.path.exists(os.path.join(root, here)):
                out.append((n, here))
            elif os.path.exists(os.path.join(root, 'cost', m.group(1))):
                out.append((n, os.path.normpath(os.path.join('cost', m.group(1)))))
            else:
                out.append((n, None, m.group(1)))
    return out


def check_file(root, path, bad):
    try:
        lf, ff = floor(path)
    except ValueError as e:
        bad.append('%s:1: %s' % (path, e))
        return
    for inc in includes(root, path):
        n, target = inc[0], inc[1]
        if target is None:
            bad.append('%s:%d: "%s" names no file' % (path, n, inc[2]))
            continue
        try:
            where = floor(target)
        except ValueError as e:
            bad.append('%s:%d: %s' % (path, n, e))
            continue
        if where is None:
            bad.append('%s:%d: %s is outside cost/ (the cost model includes nothing of '
                       'driver/, worker/ or the rest)' % (path, n, target))
            continue
        lt, ft = where
        if ff == 'kernel' and ft != 'kernel' and target not in KERNEL_BASE:
            bad.append('%s:%d: cost/kernel/ stands on cost/hw.h only, not %s' % (path, n, target))
        elif lt > lf:
            bad.append('%s:%d: %s (floor %d, %s) includes %s (floor %d, %s): calls go down only'
                       % (path, n, path, lf, ff, target, lt, ft))
        elif lt == lf and ft != ff:
            bad.append('%s:%d: %s includes %s beside it: %s and %s never include each other'
                       % (path, n, path, target, ff, ft))


DECL = re.compile(r'^(?!static\b|typedef\b|extern\b|#|\s)[A-Za-z_][\w \*]*?\b(\w+)\s*\(([^;{}]*)\)\s*;',
                  re.M)
EXTERN = re.compile(r'^extern\s+const\s+[\w ]+?\b(\w+)\s*;', re.M)


def defined(text, name):
    """whether text defines function (or const object) name at file scope"""
    fn = re.compile(r'^(?!static\b)[A-Za-z_][\w \*]*?\b%s\s*\([^;{}]*\)\s*\{' % re.escape(name), re.M)
    obj = re.compile(r'^const\s+[\w ]+?\b%s\s*=' % re.escape(name), re.M)
    return fn.search(text) is not None or obj.search(text) is not None


def check_headers(root, bad):
    base = os.path.join(root, 'cost', 'detailed')
    folders = [''] + sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))
    for d in folders:
        rel = os.path.join('cost/detailed', d) if d else 'cost/detailed'
        names = sorted(os.listdir(os.path.join(root, rel)))
        headers = [n for n in names if n.endswith('.h')]
        sources = [n for n in names if n.endswith('.c')]
        if len(headers) != 1:
            bad.append('%s/: %d interface headers (one a folder: %s)' % (rel, len(headers),
                                                                        ', '.join(headers) or 'none'))
            continue
        text = ''.join(open(os.path.join(root, rel, s), encoding='utf-8').read() for s in sources)
        htext = open(os.path.join(root, rel, headers[0]), encoding='utf-8').read()
        for m in list(DECL.finditer(htext)) + list(EXTERN.finditer(htext)):
            if not defined(text, m.group(1)):
                line = htext.count('\n', 0, m.start()) + 1
                bad.append('%s/%s:%d: declares %s, which no .c of %s/ defines'
                           % (rel, headers[0], line, m.group(1), rel))


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    root = sys.argv[1]
    bad = []
    for top, dirs, files in os.walk(os.path.join(root, 'cost')):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(('.c', '.h')):
                check_file(root, os.path.relpath(os.path.join(top, f), root), bad)
    check_headers(root, bad)
    for b in bad:
        print(b)
    if bad:
        print('check_includes: %d violation(s) of the floors of cost/ (see %s)'
              % (len(bad), os.path.relpath(__file__, root) if os.path.isabs(__file__) else __file__))
        return 1
    print('check_includes: cost/ calls go down only')
    return 0


if __name__ == '__main__':
    sys.exit(main())
