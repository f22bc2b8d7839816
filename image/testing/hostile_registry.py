#!/usr/bin/env python3
"""A scriptable HOSTILE registry for tests: an HTTP(S) server on 127.0.0.1 that
answers each request from a JSON script, so a test can make it misbehave in
ways a real registry cannot (HEAD and GET disagreeing, foreign or http://
Location/Link URLs, redirects to http, oversized/endless/trickling bodies).

  hostile_registry.py --port-file F --script S --log L [--tls CERT KEY | --tls-reset]

The port (chosen by the kernel) is written to F once the server listens. S is
re-read on every request, so a test may start several servers first and write
their scripts (which name each other's ports) afterwards:

  {"basic_auth": "user:password",      # optional: 401 + Basic challenge without it
   "routes": [{"method": "GET", "path": "^/v2/x/manifests/v1$",   # regex on the path
               "status": 200, "headers": {"Content-Type": "...",
                                          "Link": ["<a>; rel=prev", "<b>; rel=next"]},  # a list: one line each
               "next_link_suffix": "",          # Link: <request path + suffix>; rel="next"
               "body": "text", "repeat": 1,     # body repeated n times
               "endless": false,                # stream the body forever (no length)
               "trickle": 0.0}]}                # seconds between single bytes

The first matching route answers; none = 404 with a registry error body. Every
request is appended to L as one JSON line:
  {"method", "path", "authorization" (the header or null), "body_bytes"}
(a chunked body, as a streamed PATCH sends, is read whole and counted too).
"""
import argparse, base64, http.server, json, os, re, socket, ssl, struct, sys, threading, time

ARGS = None
LOG_LOCK = threading.Lock()


def load_script():
    try:
        with open(ARGS.script) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"routes": []}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall each

    def log_message(self, *a):
        pass

    def record(self, body_bytes):
        entry = {"method": self.command, "path": self.path,
                 "authorization": self.headers.get("Authorization"), "body_bytes": body_bytes}
        with LOG_LOCK, open(ARGS.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.read_chunked()
        n = int(self.headers.get("Content-Length") or 0)
        left = n
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 16))
            if not chunk:
                break
            left -= len(chunk)
        return n

    def read_chunked(self):
        """A streamed (chunked) body, read whole so the connection stays in step."""
        n = 0
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return n
            left = size
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 16))
                if not chunk:
                    return n
                left -= len(chunk)
            n += size
            self.rfile.readline()  # CRLF after the chunk

    def answer(self):
        self.record(self.read_body())
        script = load_script()
        want = script.get("basic_auth")
        if want and not self.authorized(want):
            return self.send(401, {"WWW-Authenticate": 'Basic realm="hostile"'},
                             b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}')
        for route in script.get("routes", []):
            if route.get("method", "GET") == self.command and re.search(route["path"], self.path):
                return self.play(route)
        self.send(404, {"Content-Type": "application/json"},
                  b'{"errors":[{"code":"NAME_UNKNOWN","message":"no such route"}]}')

    def authorized(self, userpass):
        return self.headers.get("Authorization") == "Basic " + base64.b64encode(userpass.encode()).decode()

    def play(self, route):
        body = route.get("body", "").encode() * int(route.get("repeat", 1))
        status, headers = int(route.get("status", 200)), dict(route.get("headers", {}))
        if "next_link_suffix" in route:  # a new page URL every time: a listing that never ends
            headers["Link"] = '<%s%s>; rel="next"' % (self.path, route["next_link_suffix"])
        if route.get("endless"):
            return self.endless(status, headers, body or b"x" * 65536)
        if route.get("trickle"):
            return self.trickle(status, headers, body, float(route["trickle"]))
        self.send(status, headers, body)

    def send(self, status, headers, body):
        self.send_response(status)
        for k, v in headers.items():
            for line in (v if isinstance(v, list) else [v]):
                self.send_header(k, line)
        if not any(k.lower() == "content-length" for k in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def endless(self, status, headers, chunk):
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        deadline = time.time() + 120  # never outlive a broken client forever
        try:
            while time.time() < deadline:
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass

    def trickle(self, status, headers, body, pause):
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = answer


class TlsResetServer(http.server.ThreadingHTTPServer):
    """--tls-reset: a "TLS port" that answers plain http as TlsServer does (400 "Client sent an
    HTTP request to an HTTPS server") but resets every TLS handshake (RST after the ClientHello):
    a broken or attacked TLS connection, which is no proof that the port speaks only http."""

    def get_request(self):
        sock, addr = self.socket.accept()
        if sock.recv(1, socket.MSG_PEEK) == b"\x16":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # RST
            raise OSError("TLS handshake reset")
        msg = b"Client sent an HTTP request to an HTTPS server.\n"
        sock.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: " +
                     str(len(msg)).encode() + b"\r\n\r\n" + msg)
        sock.close()
        raise OSError("plain http on the TLS port")


class TlsServer(http.server.ThreadingHTTPServer):
    """TLS, but answers a plain-http request the way Go's servers (and so
    docker-registry) do: 400 "Client sent an HTTP request to an HTTPS server"."""
    ctx = None

    def get_request(self):
        sock, addr = self.socket.accept()
        if sock.recv(1, socket.MSG_PEEK) != b"\x16":  # not a TLS handshake record
            msg = b"Client sent an HTTP request to an HTTPS server.\n"
            sock.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: " +
                         str(len(msg)).encode() + b"\r\n\r\n" + msg)
            sock.close()
            raise OSError("plain http on the TLS port")
        return self.ctx.wrap_socket(sock, server_side=True), addr


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--tls-reset", action="store_true")
    ARGS = p.parse_args()
    cls = TlsServer if ARGS.tls else TlsResetServer if ARGS.tls_reset else http.server.ThreadingHTTPServer
    srv = cls(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if ARGS.tls:
        srv.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        srv.ctx.load_cert_chain(ARGS.tls[0], ARGS.tls[1])
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
