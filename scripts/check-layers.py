#!/usr/bin/env python3
"""Fails on any #include that runs against the layers of ARCHITECTURE.md.

ARCHITECTURE.md holds a ```layers block: `area: allowed areas`, and `area (tests): more` for what
the area's tests (*_test.cc) and testing/ doubles may also include. Every area may include itself;
every area's tests may include tests/. The table itself must be a DAG. Prints one line per
violation (file:line: area includes X, allowed: …) and exits 1; 0 when the tree keeps the layers.

Usage: scripts/check-layers.py [SOURCE_DIR]
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/')


def read_table(root):
    text = open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8").read()
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if not m:
        sys.exit("ARCHITECTURE.md: expected a ```layers block, found none")
    allowed, tests = {}, {}
    for n, line in enumerate(m.group(1).splitlines(), 1):
        if not line.strip():
            continue
        head, _, rest = line.partition(":")
        deps = set(rest.split())
        name = head.replace("(tests)", "").strip()
        (tests if "(tests)" in head else allowed).setdefault(name, set()).update(deps)
    return allowed, tests


def check_dag(allowed):
    state = {}

    def visit(a, path):
        if state.get(a) == 1:
            sys.exit("ARCHITECTURE.md layers: a cycle: " + " -> ".join(path + [a]))
        if state.get(a) == 2:
            return
        state[a] = 1
        for b in sorted(allowed.get(a, ())):
            if b not in allowed:
                sys.exit("ARCHITECTURE.md layers: %s lists %s, which has no line of its own" % (a, b))
            visit(b, path + [a])
        state[a] = 2

    for a in sorted(allowed):
        visit(a, [])


def source_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard",
                          "*.h", "*.cc"], capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if "/" in f]


def is_test(path):
    return path.endswith("_test.cc") or "/testing/" in path


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    allowed, tests = read_table(root)
    check_dag(allowed)
    bad = 0
    for f in source_files(root):
        area = f.split("/", 1)[0]
        if area not in allowed:
            print("%s: area %s has no line in ARCHITECTURE.md's layers block" % (f, area))
            bad += 1
            continue
        ok = allowed[area] | {area}
        if is_test(f):
            ok = ok | tests.get(area, set()) | {"tests"}
        path = os.path.join(root, f)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if m and m.group(1) in allowed and m.group(1) not in ok:
                    print("%s:%d: %s includes %s/, which is not below it (allowed: %s)"
                          % (f, n, area, m.group(1), " ".join(sorted(ok - {area})) or "nothing"))
                    bad += 1
    if bad:
        print("%d include(s) against the layers (ARCHITECTURE.md)" % bad)
        return 1
    print("layers kept: %d files checked" % len(source_files(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
