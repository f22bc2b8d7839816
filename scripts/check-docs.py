#!/usr/bin/env python3
"""Fails when the docs name a file or a symbol the code no longer has.

Read: every tracked Markdown file, and the comments of every header (*.h). Checked:
  - a path of the tree (`area/file.ext`, or area/file.h written plainly in a header comment) must exist;
  - `area::name` where area is one of imgtool's namespaces (builder, nightly, verify, …) must name
    something that the area's own folder defines or declares (so a symbol that moved to another area,
    or was deleted, is caught);
  - `Type::member` must name a type and a member that some source file still has;
  in header comments the last two are checked written plainly too (`Type::member` without backticks).
Prints one line per finding (file:line: what, and why) and exits 1; 0 when every name resolves.
  - a bare `file.h` / `file.cc` must be the name of some file of the tree.
A path is tried from the root and from the document's own folder. Globs, placeholders (`cmd_*.cc`, `<tag>.json`) and paths outside the tree (/etc/…) are not checked.

Usage: scripts/check-docs.py [SOURCE_DIR]
"""
import os
import re
import subprocess
import sys

BACKTICK = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^(?:\./)?([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+)$")
PLAIN_HEADER = re.compile(r"(?<![\w/.-])([a-z][a-z0-9_]*/(?:[a-z0-9_]+/)*[a-z0-9_]+\.h)\b")
SCOPED = re.compile(r"^(?:imgtool::)?([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_~][A-Za-z0-9_]*)(?:\(.*\))?$")
PLAIN_SCOPED = re.compile(r"(?<![\w:])((?:[A-Z][A-Za-z0-9]*|[a-z]+)::[A-Za-z_][A-Za-z0-9_]*)")
WORD = re.compile(r"[A-Za-z_~][A-Za-z0-9_]*")
COMMENT_CC = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)  # what the code has, not what its comments say
COMMENT_PY = re.compile(r"#[^\n]*")
EXTS = (".h", ".cc", ".py", ".sh", ".yaml", ".yml", ".md", ".json", ".in", ".txt", ".cfg", ".supp")


def git_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if os.path.exists(os.path.join(root, f))]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    files = git_files(root)
    tree = set(files)
    folders = {os.path.dirname(f) for f in files}
    folders |= {p for f in files for p in [f.split("/")[0]]}
    areas = sorted({f.split("/")[0] for f in files if "/" in f and f.endswith((".h", ".cc"))})
    words_by_area, all_words = {}, set()
    for f in files:
        if not f.endswith((".h", ".cc", ".py")):
            continue
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        text = COMMENT_PY.sub("", text) if f.endswith(".py") else COMMENT_CC.sub("", text)
        ws = set(WORD.findall(text))
        all_words |= ws
        words_by_area.setdefault(f.split("/")[0], set()).update(ws)
    namespaces = set(areas) | {"runconf", "fx", "testing"}
    findings = []

    basenames = {os.path.basename(f) for f in files}

    def check_path(where, p, here=""):
        p = p.rstrip(".,:;)")
        if "/" not in p:  # a bare file name: some file of the tree has it
            if p.endswith((".h", ".cc")) and not any(c in p for c in "*<>{}$|") and p not in basenames:
                findings.append("%s: `%s` names a file the tree does not have" % (where, p))
            return
        if any(c in p for c in "*<>{}$|") or p.startswith(("/", "~", "http", "docker:", "oci:")):
            return
        if p.split("/")[0] not in folders and os.path.join(here, p.split("/")[0]) not in folders:
            return
        if not p.endswith(EXTS) and not p.endswith("/"):
            return
        rel = os.path.normpath(os.path.join(here, p.rstrip("/")))
        if p.rstrip("/") not in tree and p.rstrip("/") not in folders and rel not in tree and rel not in folders:
            findings.append("%s: `%s` names a path the tree does not have" % (where, p))

    def check_scoped(where, tok):
        m = SCOPED.match(tok)
        if not m:
            return
        scope, name = m.group(1), m.group(2)
        if scope in ("std", "fs", "CLI", "YAML", "nlohmann", "boost", "json"):
            return
        if scope in areas:
            if name not in words_by_area.get(scope, set()):
                findings.append("%s: `%s`: %s/ defines no `%s`" % (where, tok, scope, name))
        elif scope[0].isupper() and scope not in all_words:
            findings.append("%s: `%s`: no type `%s` in the sources" % (where, tok, scope))
        elif scope[0].isupper() and name not in all_words:
            findings.append("%s: `%s`: no `%s` in the sources" % (where, tok, name))

    for f in files:
        is_md, is_h = f.endswith(".md"), f.endswith(".h")
        if not (is_md or is_h) or f.startswith(("matrix/kb/sources/", "tests/k8s/")):
            continue
        for n, line in enumerate(open(os.path.join(root, f), encoding="utf-8", errors="replace"), 1):
            if is_h and not line.lstrip().startswith("//"):
                continue
            where = "%s:%d" % (f, n)
            for tok in BACKTICK.findall(line):
                tok = tok.strip()
                if PATH.match(tok) or re.match(r"^[A-Za-z0-9_]+\.(h|cc)$", tok):
                    check_path(where, tok, os.path.dirname(f))
                check_scoped(where, tok)
            if is_h:
                for p in PLAIN_HEADER.findall(line):
                    check_path(where, p, os.path.dirname(f))
                for tok in PLAIN_SCOPED.findall(BACKTICK.sub("", line)):
                    check_scoped(where, tok)
    for line in findings:
        print(line)
    if findings:
        print("%d name(s) in the docs the code does not have" % len(findings))
        return 1
    print("docs: every path and scoped name resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
