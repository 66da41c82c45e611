#!/usr/bin/env python3
"""driver_includes.py SOURCE_DIR - the driver's rooms include downward only.

driver/ is a ground (the .c/.h files at its top: suggest, job) and four
rooms, bottom to top: load/ (configuration files and key tables), sweep/
(specs and the run), query/ (results and reports), cli/ (the commands).
Checked over every `#include "..."` of driver/, worker/ and cost/:
  - a driver file includes driver headers of its own room, of a room
    below it, or of the ground; the ground includes no room;
  - inside a room, files (a .c and its .h are one module) include each
    other without a cycle; a room's shared private header (a .h without
    a .c of its name: load_key.h, best_query.h) declares functions of
    several files, so only the includes of it count, not its own;
  - worker/ and cost/ include nothing of driver/ (they are below it).
Prints every violation as FILE:LINE and exits 1 when there is one.
"""
import os
import re
import sys

ROOMS = {"": 0, "load": 1, "sweep": 2, "query": 3, "cli": 4}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(top):
    for folder, _, names in sorted(os.walk(top)):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                yield os.path.join(folder, name)


def includes(path, root):
    """(line number, repository-relative path) of each include that names a
    file of the tree."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
            if os.path.exists(target):
                yield n, os.path.relpath(target, root)


def room(rel):
    """The room of a driver/ path ("" for the ground), or None."""
    parts = rel.split(os.sep)
    if parts[0] != "driver":
        return None
    return parts[1] if len(parts) > 2 else ""


def module(rel):
    return os.path.splitext(rel)[0]


def cycle(graph):
    """A list of modules forming a cycle of `graph`, or None."""
    state = {}

    def visit(m, stack):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d, stack)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [])
            if found:
                return found
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    bad = []
    graph = {}
    for top in ("driver", "worker", "cost"):
        for path in sources(os.path.join(root, top)):
            rel = os.path.relpath(path, root)
            mine = room(rel)
            for n, target in includes(path, root):
                theirs = room(target)
                if theirs is None:
                    continue
                if mine is None:
                    bad.append(f"{rel}:{n}: includes {target}: {top}/ is below driver/")
                elif theirs not in ROOMS or mine not in ROOMS:
                    bad.append(f"{rel}:{n}: includes {target}: a folder that is no room")
                elif ROOMS[theirs] > ROOMS[mine] or (mine == "" and theirs != ""):
                    where = f"driver/{mine}/" if mine else "the ground (driver/)"
                    bad.append(f"{rel}:{n}: includes {target}: {where} is below "
                               f"driver/{theirs}/")
                elif theirs == mine and module(target) != module(rel) and \
                        (rel.endswith(".c") or os.path.exists(module(path) + ".c")):
                    graph.setdefault(module(rel), set()).add(module(target))
    loop = cycle(graph)
    if loop:
        bad.append("driver: files include each other in a cycle: " + " -> ".join(loop))
    for b in bad:
        print(b)
    if not bad:
        print(f"driver includes: the ground and {len(ROOMS) - 1} rooms include downward, "
              f"{len(graph)} modules without a cycle")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
