#!/usr/bin/env python3
"""Records (PyPI) and constructs (Paddle's per-CUDA index) the pages kb/check_test.cc serves from a
loopback index (kb/testing/index_server.py). Run from anywhere; writes beside this file:

  record.py pypi        GET https://pypi.org/pypi/NAME/json for paddlepaddle, paddlepaddle-gpu and
                        every package matrix/kb/cuda_wheels.yaml pins; trimmed (README.md) into
                        pypi/NAME/json; malformed/pypi/paddlepaddle/json = the first 2,000 bytes of
                        the recorded paddlepaddle page (a body cut short, as a broken proxy serves it)
  record.py paddle      packages/stable/cuXYZ/paddlepaddle-gpu/index.html for every cuXYZ index the
                        KB's GPU builds name: PEP 503 pages listing exactly the versions the KB knows

Needs PyYAML (python3-yaml) to read the KB; the test itself needs neither this script nor PyYAML.
"""
import json, os, re, sys, urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
KB = os.path.join(HERE, "..", "..", "..", "matrix", "kb")
PADDLE_STABLE = "https://www.paddlepaddle.org.cn/packages/stable/"


def kb_file(name):
    with open(os.path.join(KB, name)) as f:
        return yaml.safe_load(f)


def write(path, text):
    path = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def trim(page):
    """info: name and version; releases: per version only its earliest-uploaded file (the one that
    dates the release), with filename, packagetype, upload_time_iso_8601 and yanked."""
    keep = ("filename", "packagetype", "upload_time_iso_8601", "yanked")
    releases = {}
    for version, files in page["releases"].items():
        first = sorted(files, key=lambda f: f["upload_time_iso_8601"])[:1]
        releases[version] = [{k: f[k] for k in keep} for f in first]
    info = {k: page["info"][k] for k in ("name", "version")}
    return {"info": info, "last_serial": page["last_serial"], "releases": releases}


def record_pypi():
    names = ["paddlepaddle", "paddlepaddle-gpu"]
    for base in kb_file("cuda_wheels.yaml")["cuda_wheels"]:
        names += [w["package"] for w in base["wheels"] if w["package"] not in names]
    for name in names:
        with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=60) as r:
            page = json.load(r)
        text = json.dumps(trim(page), indent=1) + "\n"
        write(f"pypi/{name}/json", text)
        if name == "paddlepaddle":
            write("malformed/pypi/paddlepaddle/json", text[:2000])
        print(name, len(text))


def construct_paddle():
    pages = {}  # "cu126/" -> [file names]
    for rel in kb_file("paddle.yaml")["releases"]:
        py = rel["python"].split("-")
        tags = sorted({"cp" + p.replace(".", "") for p in (py[0], py[-1])})
        for build in rel.get("gpu", []):
            url = build.get("index_url", "")
            if not url.startswith(PADDLE_STABLE):
                continue
            files = pages.setdefault(url[len(PADDLE_STABLE):], [])
            for v in build.get("versions") or rel["versions"]:
                spec = build["requirement"].replace("{version}", v).split("==", 1)[1]
                files += [f"paddlepaddle_gpu-{spec}-{t}-{t}-linux_x86_64.whl" for t in tags]
    for cu, files in sorted(pages.items()):
        links = "".join(f'    <a href="https://paddle-whl.bj.bcebos.com/stable/{cu}paddlepaddle-gpu/{f}">{f}</a><br/>\n'
                        for f in files)
        write(f"packages/stable/{cu}paddlepaddle-gpu/index.html",
              "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.0\">\n"
              "    <title>Links for paddlepaddle-gpu</title>\n  </head>\n  <body>\n"
              f"    <h1>Links for paddlepaddle-gpu</h1>\n{links}  </body>\n</html>\n")
        print(cu, len(files))


if __name__ == "__main__":
    {"pypi": record_pypi, "paddle": construct_paddle}[sys.argv[1]]()
