#!/usr/bin/env python3
"""A Docker Engine API stand-in on a Unix socket, for image/engine_api_test.cc: the answers an
engine gives (and the ones it gives when something is wrong), without a Docker engine.

  engine_socket.py --socket PATH --port-file F

Writes 1 to F once it listens (python_server.h waits for a "port").
GET  /v1.41/images/present/json   200 {"Id": …, "RootFS": {"Layers": []}}
GET  /v1.41/images/list/json      200 [] (a JSON array)
GET  /v1.41/images/broken/json    500 {"message": "engine\nbroke"}
GET  /v1.41/images/notjson/json   200 text that is not JSON
GET  /v1.41/images/*/json         404 {"message": "No such image: *"}
GET  /v1.41/images/present/get    200, 300000 bytes of "x"
GET  /v1.41/images/*/get          404 {"message": "No such image"}
POST /v1.41/images/load           200 {"stream": "Loaded image: N bytes"}, or, when the body starts
                                  with "bad", 200 {"error": "bad tar"} (the engine's late failure)
"""
import argparse, http.server, json, os, socketserver


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self):
        return "unix"

    def answer(self, status, body, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/v1.41/images/present/json":
            return self.answer(200, json.dumps({"Id": "sha256:" + "a" * 64, "RootFS": {"Layers": []}}))
        if path == "/v1.41/images/list/json":
            return self.answer(200, "[]")
        if path == "/v1.41/images/broken/json":
            return self.answer(500, json.dumps({"message": "engine\nbroke"}))
        if path == "/v1.41/images/notjson/json":
            return self.answer(200, "not json\nat all", "text/plain")
        if path == "/v1.41/images/present/get":
            return self.answer(200, b"x" * 300000, "application/x-tar")
        name = path[len("/v1.41/images/"):].rsplit("/", 1)[0]
        return self.answer(404, json.dumps({"message": "No such image: " + name}))

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        if self.path.startswith("/v1.41/images/load"):
            if body.startswith(b"bad"):
                return self.answer(200, json.dumps({"errorDetail": {"message": "bad tar"}, "error": "bad tar"}) + "\n")
            return self.answer(200, json.dumps({"stream": "Loaded image: %d bytes" % len(body)}) + "\n")
        return self.answer(404, json.dumps({"message": "page not found"}))

    def log_message(self, fmt, *args):
        pass


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--port-file", required=True)
    a = p.parse_args()
    if os.path.exists(a.socket):
        os.unlink(a.socket)
    srv = Server(a.socket, Handler)
    with open(a.port_file + ".tmp", "w") as f:
        f.write("1")
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
