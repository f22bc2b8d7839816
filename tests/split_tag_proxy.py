#!/usr/bin/env python3
"""A hostile registry front for tests: forwards every request to a real
docker-registry, except that a HEAD of /v2/<repo>/manifests/<tag> answers with
another digest than the GET of the same tag serves (a tag re-pointed between
the two requests, or a registry lying on one of them). A real registry cannot
be made to do this on demand.

  split_tag_proxy.py --port P --upstream 127.0.0.1:5000 --head TAG=sha256:<hex>

Listens on 127.0.0.1:P only. Stdlib only.
"""
import argparse
import http.client
import http.server
import socketserver


def make_handler(upstream, head_digests):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _lie(self):
            parts = self.path.split("?")[0].split("/manifests/")
            if self.command != "HEAD" or len(parts) != 2 or parts[1] not in head_digests:
                return False
            self.send_response(200)
            self.send_header("Docker-Content-Digest", head_digests[parts[1]])
            self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
            self.send_header("Content-Length", "400")
            self.end_headers()
            return True

        def _forward(self):
            if self._lie():
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            conn = http.client.HTTPConnection(upstream, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)) if self.command != "HEAD"
                             else resp.getheader("Content-Length", "0"))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _forward

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--head", action="append", default=[], help="TAG=DIGEST answered to HEAD")
    a = ap.parse_args()
    lies = dict(h.split("=", 1) for h in a.head)
    Server(("127.0.0.1", a.port), make_handler(a.upstream, lies)).serve_forever()


if __name__ == "__main__":
    main()
