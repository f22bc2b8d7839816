#!/usr/bin/env python3
"""A loopback package index for tests: serves the files under --root by path, as a mirror of PyPI's
JSON API and Paddle's per-CUDA PEP 503 pages would (kb/testdata/index/README.md):

  GET /pypi/NAME/json                            ROOT/pypi/NAME/json
  GET /packages/stable/cuXYZ/paddlepaddle-gpu/   ROOT/packages/stable/cuXYZ/paddlepaddle-gpu/index.html
  GET /PREFIX/…                                  ROOT/PREFIX/… (the same under a sub-mirror: /malformed)

Anything else, or a path leaving ROOT: 404. No redirects. Binds 127.0.0.1 on a port the kernel
picks and writes it to --port-file once it listens (image/testing/python_server.h starts it).
"""
import argparse, http.server, os, posixpath, urllib.parse

ROOT = None


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = posixpath.normpath(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path))
        rel = path.lstrip("/")
        if self.path.split("?")[0].endswith("/"):
            rel = posixpath.join(rel, "index.html")
        file = os.path.realpath(os.path.join(ROOT, rel))
        if not file.startswith(ROOT + os.sep) or not os.path.isfile(file):
            self.send_error(404)
            return
        with open(file, "rb") as f:
            body = f.read()
        self.send_response(200)
        kind = "text/html; charset=utf-8" if file.endswith(".html") else "application/json"
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        print(fmt % args, flush=True)


def main():
    global ROOT
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--root", required=True)
    a = p.parse_args()
    ROOT = os.path.realpath(a.root)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
