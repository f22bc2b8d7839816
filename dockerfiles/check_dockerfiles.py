#!/usr/bin/env python3
"""Checks Dockerfiles with BuildKit's own parser (PyPI `dockerfile`, Go code).

usage: check_dockerfiles.py FILE_OR_FOLDER...
A folder is searched for files named Dockerfile. Beyond parsing, each file must
use only known instructions, start (after ARGs) with FROM, and carry the
io.imgtool.* labels of ARCHITECTURE.md. Prints one line per problem; exit 1 if
any, 0 otherwise (and "ok N" on the last line).
"""
import pathlib
import sys

import dockerfile

KNOWN = {"add", "arg", "cmd", "copy", "entrypoint", "env", "expose", "from", "healthcheck", "label",
         "maintainer", "onbuild", "run", "shell", "stopsignal", "user", "volume", "workdir"}
REQUIRED_LABELS = {"io.imgtool.paddle", "io.imgtool.python", "io.imgtool.variant", "io.imgtool.tag",
                   "io.imgtool.inputs-hash", "org.opencontainers.image.version"}


def problems(path):
    try:
        cmds = dockerfile.parse_file(str(path))
    except dockerfile.GoParseError as e:
        return [f"{path}: BuildKit parser: {e}"]
    out = []
    names = [c.cmd.lower() for c in cmds]
    out += [f"{path}:{c.start_line}: unknown instruction {c.cmd}" for c in cmds if c.cmd.lower() not in KNOWN]
    first = next((n for n in names if n != "arg"), None)
    if first != "from":
        out.append(f"{path}: first instruction is {first}, expected FROM")
    labels = set()
    for c in cmds:
        if c.cmd.lower() == "label":
            labels.update(c.value[0::2])
    out += [f"{path}: missing label {k}" for k in sorted(REQUIRED_LABELS - labels)]
    if "user" not in names:
        out.append(f"{path}: no USER instruction (images must not run as root)")
    return out


def main(args):
    files = []
    for a in args:
        p = pathlib.Path(a)
        files += sorted(p.rglob("Dockerfile")) if p.is_dir() else [p]
    if not files:
        print("no Dockerfile found in " + " ".join(args))
        return 1
    found = [line for f in files for line in problems(f)]
    print("\n".join(found + [f"ok {len(files) - len({l.split(':')[0] for l in found})}"]))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
