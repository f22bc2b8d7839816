#!/usr/bin/env python3
"""The files of a local CUDA base (scripts/make-cuda-base.sh) as one image layer, made on the host.

  cuda-files-layer.py layer WHEELHOUSE CUDA_MM DIR
      DIR/layer.tar: /usr/local/cuda-<mm>/ from NVIDIA's wheels in WHEELHOUSE (nvidia_*.whl):
      redist/ = every wheel's files (dist-info folders kept, so the image says which NVIDIA
      packages and versions it carries; no __pycache__), targets/x86_64-linux/lib/ = links to every
      redist/nvidia/*/lib/lib*.so*, lib64 -> targets/x86_64-linux/lib. Streamed from the zip files
      into the tar (nothing unpacked to disk), in name order, owner root, files 0644, folders 0755,
      times from the wheels: the same wheels give the same bytes. DIR/diff_id: its sha256.
  cuda-files-layer.py image DIR BASE_CONFIG TAG
      DIR/manifest.json + DIR/<config>.json: a `docker save` image of the base (its config read
      from BASE_CONFIG, the base's own config JSON) plus that layer, tagged TAG. `docker load`
      takes DIR (tarred) and writes the layer straight into its layer store: the base's layers are
      already there (the manifest names them, load skips what the engine has), and no file passes
      through a build container's overlay (a COPY through fuse-overlayfs took most of the base's
      build time here).
"""
import calendar
import fnmatch
import hashlib
import json
import os
import posixpath
import sys
import tarfile
import zipfile

FILE_MODE, DIR_MODE = 0o644, 0o755
LIB = "targets/x86_64-linux/lib"


class HashingWriter:
    """A file that hashes what is written to it (the layer's diff_id, in the same pass)."""

    def __init__(self, path):
        self.f, self.h = open(path, "wb"), hashlib.sha256()

    def write(self, b):
        self.h.update(b)
        return self.f.write(b)

    def close(self):
        self.f.close()


def wheel_entries(wheelhouse):
    """(path under redist/, zip file, ZipInfo) for every file of every nvidia_*.whl, first wheel wins."""
    seen = {}
    for name in sorted(os.listdir(wheelhouse)):
        if not (name.startswith("nvidia_") and name.endswith(".whl")):
            continue
        z = zipfile.ZipFile(os.path.join(wheelhouse, name))
        for info in z.infolist():
            parts = info.filename.split("/")
            if info.is_dir() or "__pycache__" in parts or any(p in ("", ".", "..") for p in parts):
                continue
            seen.setdefault(info.filename, (z, info))  # nvidia/__init__.py is in every wheel, the same
    if not seen:
        sys.exit(f"cuda-files-layer: no nvidia_*.whl in {wheelhouse}")
    return seen


def zip_time(info):
    return calendar.timegm(info.date_time + (0, 0, 0))


def tar_info(name, kind, mtime, size=0, target=""):
    t = tarfile.TarInfo(name)
    t.type, t.mtime, t.uid, t.gid, t.uname, t.gname = kind, mtime, 0, 0, "root", "root"
    t.mode = DIR_MODE if kind == tarfile.DIRTYPE else (0o777 if kind == tarfile.SYMTYPE else FILE_MODE)
    t.size, t.linkname = size, target
    return t


def make_layer(wheelhouse, cuda_mm, out_dir):
    root = f"usr/local/cuda-{cuda_mm}"
    files = wheel_entries(wheelhouse)
    newest = max(zip_time(i) for _, i in files.values())
    links = {}
    for path in files:
        parts = path.split("/")  # nvidia/<package>/lib/lib*.so*, as the recipe's loader paths expect
        if len(parts) == 4 and parts[0] == "nvidia" and parts[2] == "lib" and fnmatch.fnmatch(parts[3], "lib*.so*"):
            base = parts[3]
            if base in links:
                sys.exit(f"cuda-files-layer: {base} is in two wheels ({links[base]}, {path})")
            links[base] = path
    entries = {}  # tar name -> (kind, payload)
    for path, (z, info) in files.items():
        entries[f"{root}/redist/{path}"] = ("file", (z, info))
    for base, path in links.items():
        entries[f"{root}/{LIB}/{base}"] = ("link", f"../../../redist/{path}")
    entries[f"{root}/lib64"] = ("link", LIB)
    dirs = set()
    for name in entries:
        d = posixpath.dirname(name)
        while d and d not in dirs:
            dirs.add(d)
            d = posixpath.dirname(d)
    for d in dirs:
        entries[d] = ("dir", None)
    os.makedirs(out_dir, exist_ok=True)
    w = HashingWriter(os.path.join(out_dir, "layer.tar"))
    with tarfile.open(fileobj=w, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries):
            kind, payload = entries[name]
            if kind == "dir":
                tar.addfile(tar_info(name + "/", tarfile.DIRTYPE, newest))
            elif kind == "link":
                tar.addfile(tar_info(name, tarfile.SYMTYPE, newest, target=payload))
            else:
                z, info = payload
                with z.open(info) as src:
                    tar.addfile(tar_info(name, tarfile.REGTYPE, zip_time(info), size=info.file_size), src)
    w.close()
    with open(os.path.join(out_dir, "diff_id"), "w") as f:
        f.write("sha256:" + w.h.hexdigest() + "\n")


def make_image(out_dir, base_config_path, tag):
    with open(base_config_path, "rb") as f:
        config = json.load(f)
    with open(os.path.join(out_dir, "diff_id")) as f:
        diff_id = f.read().strip()
    config["rootfs"]["diff_ids"].append(diff_id)
    config.setdefault("history", []).append({
        "created": config.get("created", "1970-01-01T00:00:00Z"),
        "created_by": "scripts/make-cuda-base.sh: /usr/local/cuda-X.Y from NVIDIA's wheels "
                      "(scripts/cuda-files-layer.py, docker load)"})
    body = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    config_name = hashlib.sha256(body).hexdigest() + ".json"
    with open(os.path.join(out_dir, config_name), "wb") as f:
        f.write(body)
    n = len(config["rootfs"]["diff_ids"])
    # The base's layers are in the engine already: load finds them by chain ID and never opens
    # these paths, which this folder does not hold.
    layers = [f"base-layer-{i}/layer.tar" for i in range(n - 1)] + ["layer.tar"]
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump([{"Config": config_name, "RepoTags": [tag], "Layers": layers}], f)
    os.remove(os.path.join(out_dir, "diff_id"))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "layer":
        make_layer(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 5 and sys.argv[1] == "image":
        make_image(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
