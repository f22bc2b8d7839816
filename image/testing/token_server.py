#!/usr/bin/env python3
"""A token server for docker-registry's `auth: token:` mode (the distribution
token spec), for tests: signs ES256 JWTs with a key the test made with openssl;
the certificate travels in the JWT's `x5c` header and is the registry's
`rootcertbundle`.

  token_server.py --port-file F --key K --cert C --issuer I --service S \
                  --users U --log L

U is a JSON file: {"passwords": {"user": "password"},
                   "refresh_tokens": {"token": "user"},
                   "grants": {"user": {"repo/name": ["pull", "push"]}}}
GET  /token?service=S&scope=repository:R:pull,push   Basic auth, or anonymous
POST /token  (form) grant_type=refresh_token&refresh_token=T&service=S&scope=...
             or grant_type=password&username=U&password=P
A known user gets the requested actions its grants allow; anonymous gets none.
Bad credentials: 401. Every request is appended to L as one JSON line:
  {"method", "grant_type", "scope", "user", "basic" (bool), "granted"}.
"""
import argparse, base64, http.server, json, os, sys, threading, time, urllib.parse, uuid

import jwt  # python3-jwt (Debian), with python3-cryptography for ES256

ARGS = None
LOG_LOCK = threading.Lock()


def load(path):
    with open(path) as f:
        return f.read()


def cert_der_b64(pem):
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    der = x509.load_pem_x509_certificate(pem.encode()).public_bytes(Encoding.DER)
    return base64.b64encode(der).decode()


def grant(user, scopes, users):
    allowed = users.get("grants", {}).get(user, {}) if user else {}
    access = []
    for scope in scopes:
        parts = scope.split(":")
        if len(parts) != 3 or parts[0] != "repository":
            continue
        actions = [a for a in parts[2].split(",") if a in allowed.get(parts[1], [])]
        access.append({"type": "repository", "name": parts[1], "actions": actions})
    return access


def sign(user, access):
    now = int(time.time())
    claims = {"iss": ARGS.issuer, "sub": user or "", "aud": ARGS.service, "exp": now + 300,
              "nbf": now - 10, "iat": now, "jti": uuid.uuid4().hex, "access": access}
    return jwt.encode(claims, load(ARGS.key), algorithm="ES256",
                      headers={"x5c": [cert_der_b64(load(ARGS.cert))]})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def record(self, **entry):
        entry["method"] = self.command
        with LOG_LOCK, open(ARGS.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def basic_user(self, users):
        h = self.headers.get("Authorization", "")
        if not h.startswith("Basic "):
            return None, False
        user, _, password = base64.b64decode(h[6:]).decode().partition(":")
        return (user if users["passwords"].get(user) == password else ""), True

    def do_GET(self):
        users = json.loads(load(ARGS.users))
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        user, basic = self.basic_user(users)
        self.finish_token(users, "", q.get("scope", []), user, basic, oauth=False)

    def do_POST(self):
        users = json.loads(load(ARGS.users))
        n = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(n).decode())
        kind = form.get("grant_type", [""])[0]
        user = None
        if kind == "refresh_token":
            user = users.get("refresh_tokens", {}).get(form.get("refresh_token", [""])[0], "")
        elif kind == "password":
            name = form.get("username", [""])[0]
            user = name if users["passwords"].get(name) == form.get("password", [""])[0] else ""
        scopes = " ".join(form.get("scope", [])).split()
        self.finish_token(users, kind, scopes, user, False, oauth=True)

    def finish_token(self, users, kind, scopes, user, basic, oauth):
        if user == "":  # credentials given but wrong
            self.record(grant_type=kind, scope=scopes, user=None, basic=basic, granted=None)
            return self.reply(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]})
        access = grant(user, scopes, users)
        self.record(grant_type=kind, scope=scopes, user=user, basic=basic, granted=access)
        token = sign(user, access)
        doc = {"access_token": token, "expires_in": 300} if oauth else {"token": token, "expires_in": 300}
        self.reply(200, doc)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    for a in ("--port-file", "--key", "--cert", "--issuer", "--service", "--users", "--log"):
        p.add_argument(a, required=True)
    ARGS = p.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
