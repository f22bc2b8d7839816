#!/usr/bin/env python3
"""The hash lock of the CUDA bases' NVIDIA wheels (issue 35): matrix/kb/cuda_wheels.lock.

usage: scripts/lock-cuda-wheels.py write [KB_DIR]        # PyPI's simple index -> the lock (network)
       scripts/lock-cuda-wheels.py check LOCK WHEELHOUSE PIN...
                                                         # every pinned wheel in WHEELHOUSE is a locked file
       scripts/lock-cuda-wheels.py covers KB_DIR         # the lock has a line for every pin of the KB

write: for every wheel matrix/kb/cuda_wheels.yaml pins, the sha256 of each Linux x86_64 file PyPI
lists for that release (the simple index, PEP 691 JSON: https://pypi.org/simple/NAME/, "hashes"),
as pip's hash lines:
  name==version --hash=sha256:HEX [--hash=…]      (PEP 503 names, sorted)
check (scripts/make-cuda-base.sh, before any file of a wheel is used): each PIN's wheel file in
WHEELHOUSE hashes to one of the lock's hashes for it; anything else -- another file under the same
name, a pin the lock lacks -- is one line on stderr and exit 2.
"""
import hashlib
import json
import os
import re
import sys
import urllib.request


def refuse(line):
    print(line, file=sys.stderr)
    sys.exit(2)


def project(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path):
    lock = {}
    for n, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9._-]+)==(\S+)((?: --hash=sha256:[0-9a-f]{64})+)", line)
        if not m:
            refuse(f"{path}:{n}: expected 'name==version --hash=sha256:HEX…', found {line[:80]!r}")
        lock[(project(m[1]), m[2])] = set(re.findall(r"sha256:([0-9a-f]{64})", m[3]))
    return lock


def check(lock_path, wheelhouse, pins):
    lock = read_lock(lock_path)
    files = {}
    for f in os.listdir(wheelhouse):
        if f.endswith(".whl"):
            parts = f.split("-")
            files.setdefault((project(parts[0]), parts[1]), []).append(f)
    for pin in pins:
        name, _, version = pin.partition("==")
        key = (project(name), version)
        if key not in lock:
            refuse(f"{lock_path}: no lock line for {pin} (scripts/lock-cuda-wheels.py write)")
        if key not in files:
            refuse(f"{wheelhouse}: no wheel for {pin}")
        for f in files[key]:
            h = hashlib.sha256()
            with open(os.path.join(wheelhouse, f), "rb") as w:
                for chunk in iter(lambda: w.read(1 << 20), b""):
                    h.update(chunk)
            if h.hexdigest() not in lock[key]:
                refuse(f"{wheelhouse}/{f}: sha256 {h.hexdigest()} is not the locked file of {pin} ({lock_path})")


def pins_of(kb_dir):
    import yaml  # the KB is YAML; the checker above needs nothing but the standard library

    rows = yaml.safe_load(open(os.path.join(kb_dir, "cuda_wheels.yaml")))["cuda_wheels"]
    return sorted({(w["package"], w["version"]) for r in rows for w in r["wheels"]})


def covers(kb_dir):
    lock = read_lock(os.path.join(kb_dir, "cuda_wheels.lock"))
    missing = [f"{n}=={v}" for n, v in pins_of(kb_dir) if (project(n), v) not in lock]
    if missing:
        refuse(f"{kb_dir}/cuda_wheels.lock: no line for {', '.join(missing)} (scripts/lock-cuda-wheels.py write)")


def write(kb_dir):
    pins = pins_of(kb_dir)
    lines = []
    for name, version in pins:
        url = f"https://pypi.org/simple/{project(name)}/"
        req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            page = json.load(r)
        hashes = sorted(f["hashes"]["sha256"] for f in page["files"]
                        if f["filename"].endswith(".whl") and f["filename"].split("-")[1] == version
                        and "linux" in f["filename"] and "x86_64" in f["filename"])
        if not hashes:
            refuse(f"{url}: no Linux x86_64 wheel of {version}")
        lines.append(f"{project(name)}=={version}" + "".join(f" --hash=sha256:{h}" for h in hashes))
    out = os.path.join(kb_dir, "cuda_wheels.lock")
    with open(out + ".tmp", "w") as f:
        f.write("# The CUDA bases' NVIDIA wheels by sha256 (scripts/lock-cuda-wheels.py write; each line's source:\n"
                "# https://pypi.org/simple/NAME/, the hashes PyPI lists for the release's Linux x86_64 files).\n"
                "# make-cuda-base.sh refuses a wheel whose bytes are not one of these.\n")
        f.write("\n".join(sorted(lines)) + "\n")
    os.replace(out + ".tmp", out)
    print(f"{out}: {len(lines)} wheels")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "write":
        write(sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "matrix", "kb"))
    elif len(sys.argv) == 3 and sys.argv[1] == "covers":
        covers(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
