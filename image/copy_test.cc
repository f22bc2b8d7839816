// Integration: imgtool copy between docker-daemon:, oci: and docker:// with a
// real Docker engine, real docker-registry (http, Basic auth, TLS), and skopeo
// and umoci reading back what imgtool wrote. Fault cases: registry killed
// mid-push, a proxy serving corrupted blobs, wrong password, untrusted TLS.
#include "image/copy.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include "core/fs.h"
#include "core/hash.h"
#include "image/daemon_transport.h"
#include "image/docker_transport.h"
#include "image/memory.h"
#include "image/normalize.h"
#include "image/transport.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::image;
using imgtool::testing::RegistryServer;
using imgtool::testing::ScratchDir;

namespace {

// A small image: the local base plus one 4 MB layer of random bytes.
std::string small_image() {
  static std::string tag;
  if (!tag.empty()) return tag;
  ScratchDir ctx("small-image");
  std::ofstream(ctx.path / "Dockerfile")
      << "FROM " << imgtool::testing::base_image()
      << "\nRUN head -c 4000000 /dev/urandom > /random.bin && echo hi > /hello.txt\n";
  auto r = run({"docker", "build", "-q", "-t", "imgtool-test/image-copy:1", ctx.path.string()});
  if (!r.ok()) throw Error("docker build failed: " + r.err);
  tag = "imgtool-test/image-copy:1";
  return tag;
}

TransportOptions options_for(const RegistryServer& srv, const std::string& cache) {
  TransportOptions o;
  o.registry = srv.options();
  o.daemon.cache_root = cache;
  return o;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string skopeo_digest(const std::vector<std::string>& extra, const std::string& ref) {
  std::vector<std::string> argv{"skopeo", "inspect", "--format", "{{.Digest}}"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(ref);
  auto r = run(argv);
  INFO(r.err);
  REQUIRE(r.ok());
  return trim(r.out);
}

CopyResult push(const std::string& src, const std::string& dst, const TransportOptions& o) {
  Reference s = parse_reference(src), d = parse_reference(dst);
  auto source = open_source(s, o);
  auto dest = open_destination(d, o);
  return copy_image(*source, *dest, d.tag);
}

}  // namespace

TEST_CASE("copy docker-daemon: to each registry set-up; skopeo reads back the same digest") {
  std::string img = small_image();
  ScratchDir cache("copy-cache");
  for (auto mode : {RegistryServer::Mode::kHttp, RegistryServer::Mode::kBasicAuth, RegistryServer::Mode::kTls}) {
    RegistryServer srv(mode, "copy");
    CAPTURE(srv.host());
    auto o = options_for(srv, cache.path.string());
    CopyResult r = push("docker-daemon:" + img, "docker://" + srv.host() + "/test/small:v1", o);
    std::vector<std::string> extra{"--tls-verify=false"};
    if (mode == RegistryServer::Mode::kBasicAuth) extra.push_back("--creds=" + srv.user() + ":" + srv.password());
    CHECK(skopeo_digest(extra, "docker://" + srv.host() + "/test/small:v1") == r.digest);
    // the first push compresses (empty layer cache) and uploads each layer while compressing it
    if (mode == RegistryServer::Mode::kHttp) CHECK(r.blobs_streamed > 0);
    // unchanged re-push: everything skipped, manifest PUT skipped too
    CopyResult again = push("docker-daemon:" + img, "docker://" + srv.host() + "/test/small:v1", o);
    CHECK(again.blobs_streamed == 0);
    CHECK(again.digest == r.digest);
    CHECK(again.blobs_skipped == again.blobs);
    CHECK(again.bytes_copied == 0);
  }
}

// The layer cache's temporary files were <cache>/tmp/<pid>-<n>, opened with std::ofstream: a
// symlink planted at such a name (by anyone who could write the cache folder) had the layer
// written through it into its target, and the symlink itself renamed into blobs/.
TEST_CASE("copy docker-daemon: never writes through a file planted in the layer cache's tmp folder") {
  std::string img = small_image();
  ScratchDir cache("planted-cache");
  RegistryServer srv(RegistryServer::Mode::kHttp, "planted");
  fs::create_directories(cache.path / "tmp");
  fs::path victim = cache.path / "victim";
  write_file_atomic(victim, "precious");
  for (int n = 1; n <= 500; ++n)
    fs::create_symlink(victim, cache.path / "tmp" / (std::to_string(::getpid()) + "-" + std::to_string(n)));
  CopyResult r = push("docker-daemon:" + img, "docker://" + srv.host() + "/test/planted:v1",
                      options_for(srv, cache.path.string()));
  CHECK(r.blobs_streamed > 0);  // the layers were compressed into this cache
  CHECK(read_file(victim) == "precious");
  for (auto& e : fs::directory_iterator(cache.path / "blobs")) {
    CAPTURE(e.path());
    CHECK(fs::is_regular_file(fs::symlink_status(e.path())));
  }
}

TEST_CASE("oci: layouts: umoci and skopeo read what imgtool wrote; oci: <-> docker:// round trip") {
  std::string img = small_image();
  ScratchDir dir("oci");
  RegistryServer srv(RegistryServer::Mode::kHttp, "oci");
  auto layout = (dir.path / "layout").string();
  auto r = imgtool::testing::imgtool({"copy", "docker-daemon:" + img, "oci:" + layout + ":v1", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::string digest = nlohmann::json::parse(r.out)["digest"];
  CHECK(skopeo_digest({}, "oci:" + layout + ":v1") == digest);
  auto ls = run({"umoci", "ls", "--layout", layout});
  CHECK(ls.ok());
  CHECK(ls.out.find("v1") != std::string::npos);
  auto st = run({"umoci", "stat", "--image", layout + ":v1"});
  INFO(st.err);
  CHECK(st.ok());

  std::string remote = "docker://" + srv.host() + "/test/from-oci:v2";
  REQUIRE(imgtool::testing::imgtool({"copy", "oci:" + layout + ":v1", remote}).exit_code == 0);
  CHECK(skopeo_digest({"--tls-verify=false"}, remote) == digest);

  auto back = (dir.path / "back").string();
  REQUIRE(imgtool::testing::imgtool({"copy", remote, "oci:" + back + ":v3"}).exit_code == 0);
  CHECK(skopeo_digest({}, "oci:" + back + ":v3") == digest);
  // and skopeo's own copy of the same remote image agrees
  auto sk = (dir.path / "skopeo").string();
  REQUIRE(run({"skopeo", "copy", "--src-tls-verify=false", remote, "oci:" + sk + ":v4"}).ok());
  CHECK(skopeo_digest({}, "oci:" + sk + ":v4") == digest);
  // docker:// -> docker:// in the same registry mounts instead of uploading
  auto mounted = imgtool::testing::imgtool({"copy", remote, "docker://" + srv.host() + "/test/mounted:v5", "--json"});
  REQUIRE(mounted.exit_code == 0);
  CHECK(nlohmann::json::parse(mounted.out)["bytes_copied"] == 0);
}

TEST_CASE("imgtool copy: a bad reference exits 2 with one line") {
  auto r = imgtool::testing::imgtool({"copy", "paddle:1", "oci:/tmp/x"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad image reference 'paddle:1'") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

namespace {

// Kills the registry once `after` bytes of a large blob have been read.
class KillingSource : public ImageSource {
 public:
  KillingSource(ImageSource& in, RegistryServer& srv) : in_(in), srv_(srv) {}
  Manifest manifest() override { return in_.manifest(); }
  std::string describe() const override { return in_.describe(); }
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override {
    auto r = in_.open_blob(d);
    if (d.size < (2 << 20)) return r;
    return std::make_unique<Killer>(std::move(r), *this);
  }
  std::atomic<bool> killed{false};

 private:
  struct Killer : BlobReader {
    Killer(std::unique_ptr<BlobReader> in, KillingSource& s) : in(std::move(in)), s(s) {}
    size_t read(char* buf, size_t len) override {
      if (seen > (1 << 20) && !s.killed.exchange(true)) s.srv_.kill();
      size_t n = in->read(buf, len);
      seen += n;
      return n;
    }
    std::unique_ptr<BlobReader> in;
    KillingSource& s;
    size_t seen = 0;
  };
  ImageSource& in_;
  RegistryServer& srv_;
};

}  // namespace

TEST_CASE("registry killed mid-push: the tag never moves early, a re-run completes") {
  std::string img = small_image();
  ScratchDir cache("kill-cache");
  RegistryServer srv(RegistryServer::Mode::kHttp, "kill");
  auto o = options_for(srv, cache.path.string());
  std::string dst = "docker://" + srv.host() + "/test/kill:release";
  // the tag first points at an older image (a tiny one pushed through the client)
  Registry reg(srv.host());
  Descriptor cfg =
      reg.put_blob("test/kill", R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})",
                   media::kOciConfig);
  nlohmann::json old{
      {"schemaVersion", 2}, {"mediaType", media::kOciManifest}, {"config", cfg}, {"layers", nlohmann::json::array()}};
  std::string old_digest = reg.put_manifest("test/kill", "release", old.dump(), media::kOciManifest);

  auto src = open_source(parse_reference("docker-daemon:" + img), o);
  auto dest = open_destination(parse_reference(dst), o);
  KillingSource killing(*src, srv);
  CHECK_THROWS_AS(copy_image(killing, *dest, "release"), Error);
  CHECK(killing.killed);
  srv.start();
  CHECK(reg.resolve("test/kill", "release") == old_digest);  // not moved by the failed push
  CopyResult r = push("docker-daemon:" + img, dst, o);
  CHECK(reg.resolve("test/kill", "release") == r.digest);
  CHECK(skopeo_digest({"--tls-verify=false"}, dst) == r.digest);
}

namespace {

// A tiny fault-injecting HTTP proxy (python3): forwards GET/HEAD to the
// registry and flips one byte of every blob body. The only fake in these tests.
const char* kProxy = R"PY(
import http.server, sys, urllib.request, urllib.error
UP = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def fwd(self, body):
        req = urllib.request.Request(UP + self.path, method=self.command,
              headers={k: v for k, v in self.headers.items() if k.lower() in ('accept', 'authorization')})
        try:
            r = urllib.request.urlopen(req)
        except urllib.error.HTTPError as e:
            r = e
        data = r.read() if body else b''
        if body and '/blobs/sha256:' in self.path and data:
            data = bytes([data[0] ^ 1]) + data[1:]
        self.send_response(r.code)
        for k, v in r.headers.items():
            if k.lower() not in ('transfer-encoding', 'connection', 'content-length'):
                self.send_header(k, v)
        self.send_header('Content-Length', str(len(data)) if body else r.headers.get('Content-Length', '0'))
        self.end_headers()
        if body:
            self.wfile.write(data)
    def do_GET(self): self.fwd(True)
    def do_HEAD(self): self.fwd(False)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
)PY";

}  // namespace

TEST_CASE("a registry answer with a wrong digest is rejected") {
  std::string img = small_image();
  ScratchDir dir("proxy");
  RegistryServer srv(RegistryServer::Mode::kHttp, "proxy");
  TransportOptions o = options_for(srv, (dir.path / "cache").string());
  push("docker-daemon:" + img, "docker://" + srv.host() + "/test/p:v1", o);
  std::ofstream(dir.path / "proxy.py") << kProxy;
  RegistryServer port_source(RegistryServer::Mode::kHttp, "proxy-port");  // just to borrow a free port
  int port = port_source.port();
  port_source.kill();
  std::string pidfile = (dir.path / "pid").string();
  std::string cmd = "python3 " + (dir.path / "proxy.py").string() + " " + std::to_string(port) + " http://" +
                    srv.host() + " >/dev/null 2>&1 & echo $! > " + pidfile;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  auto r = imgtool::testing::imgtool({"copy", "docker://127.0.0.1:" + std::to_string(port) + "/test/p:v1",
                                      "oci:" + (dir.path / "out").string() + ":v1"});
  std::string pid = trim(imgtool::read_file(pidfile));
  run({"kill", pid});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("digest mismatch") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path / "out" / "index.json"));
}

TEST_CASE("wrong password and untrusted TLS give clear errors") {
  std::string img = small_image();
  ScratchDir dir("auth");
  {
    RegistryServer srv(RegistryServer::Mode::kBasicAuth, "badpw");
    std::ofstream(dir.path / "config.json")
        << R"({"auths":{")" << srv.host() << R"(":{"auth":")" << base64_encode(srv.user() + ":nope") << R"("}}})";
    RunOptions ro;
    ro.env["DOCKER_CONFIG"] = dir.path.string();
    auto r = imgtool::testing::imgtool({"copy", "docker-daemon:" + img, "docker://" + srv.host() + "/test/a:v1"}, ro);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("authentication failed") != std::string::npos);
    CHECK(r.err.find("nope") == std::string::npos);
    std::ofstream(dir.path / "config.json") << R"({"auths":{")" << srv.host() << R"(":{"auth":")"
                                            << base64_encode(srv.user() + ":" + srv.password()) << R"("}}})";
    CHECK(imgtool::testing::imgtool({"copy", "docker-daemon:" + img, "docker://" + srv.host() + "/test/a:v1"}, ro)
              .exit_code == 0);
  }
  RegistryServer tls(RegistryServer::Mode::kTls, "tls");
  auto r = imgtool::testing::imgtool({"copy", "docker-daemon:" + img, "docker://" + tls.host() + "/test/t:v1"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("TLS verification failed") != std::string::npos);
  CHECK(imgtool::testing::imgtool(
            {"copy", "docker-daemon:" + img, "docker://" + tls.host() + "/test/t:v1", "--ca-file", tls.ca_file()})
            .exit_code == 0);
}

namespace {

// A plain tar made by GNU tar of `dir`'s `paths`, in the order given (not sorted).
std::string gnu_tar(const fs::path& dir, const std::vector<std::string>& paths) {
  std::vector<std::string> argv{"tar", "-cf",       "-", "--format=gnu", "--no-recursion", "--mtime=@1800000000",
                                "-C",  dir.string()};
  argv.insert(argv.end(), paths.begin(), paths.end());
  auto r = run(argv);
  REQUIRE(r.ok());
  return r.out;
}

}  // namespace

TEST_CASE("normalize from docker-daemon: the save stream's tars, compressed once; the same bytes as from blobs") {
  // An image loaded into the real engine whose second layer is out of path order (b before a):
  // Docker gives its layers back from `docker save` byte for byte (tar-split).
  ScratchDir d("normalize-daemon");
  fs::create_directories(d.path / "files" / "etc");
  fs::create_directories(d.path / "files" / "srv");
  std::ofstream(d.path / "files" / "etc" / "hello") << "hello\n";
  std::ofstream(d.path / "files" / "srv" / "a") << "a\n";
  std::ofstream(d.path / "files" / "srv" / "b") << std::string(300000, 'b');
  std::vector<std::string> tars = {gnu_tar(d.path / "files", {"etc", "etc/hello"}),
                                   gnu_tar(d.path / "files", {"srv", "srv/b", "srv/a"})};
  auto store = std::make_shared<MemoryStore>();
  nlohmann::json layers = nlohmann::json::array(), diff_ids = nlohmann::json::array();
  for (const auto& t : tars) {
    store->put_blob(sha256_digest(t), t);
    layers.push_back(Descriptor{media::kOciLayerTar, sha256_digest(t), int64_t(t.size()), {}});
    diff_ids.push_back(sha256_digest(t));
  }
  std::string cfg = nlohmann::json{{"architecture", "amd64"},
                                   {"os", "linux"},
                                   {"created", "2027-01-01T00:00:00Z"},
                                   {"config", {{"Cmd", {"/bin/true"}}}},
                                   {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
                        .dump();
  store->put_blob(sha256_digest(cfg), cfg);
  Manifest m{nlohmann::json{{"schemaVersion", 2},
                            {"mediaType", media::kOciManifest},
                            {"config", Descriptor{media::kOciConfig, sha256_digest(cfg), int64_t(cfg.size()), {}}},
                            {"layers", layers}}
                 .dump(),
             media::kOciManifest};
  store->put_manifest(m, "built");
  std::string tag = "imgtool-test/normalize-daemon:" + std::to_string(::getpid());
  imgtool::testing::HandBuilt loaded;
  loaded.tags.push_back(tag);
  {
    MemorySource src(store, "built");
    DaemonDestination dst(tag);
    copy_image(src, dst, "");
  }
  // The normalized layers go where the CLI puts them: the layer cache the daemon source compresses into.
  PrivateTempDir cache_dir("imgtool-normalize-daemon-");
  LayerCache cache(cache_dir.path() / "gzip", Compression::kGzip);
  NormalizeOptions o{.epoch = 1767225600, .cache = &cache};
  auto normalize = [&] {
    DaemonSource src(tag, {.cache_root = cache.root().string()});
    auto out = std::make_shared<MemoryStore>();
    MemoryDestination dst(out);
    return normalize_image(src, dst, o, "t");
  };
  NormalizeResult r = normalize();
  REQUIRE(r.layers.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(r.layers[i].from_digest == diff_ids[i]);            // named by the tar the engine saved, hashed as read
    CHECK_FALSE(cache.find(diff_ids[i].get<std::string>()));  // the source layers were never compressed
    CHECK_FALSE(r.layers[i].cached);
  }
  CHECK_FALSE(r.layers[0].spooled);
  CHECK(r.layers[1].spooled);  // read again from a second save, through the spool
  // The same image read from its blobs (the path of oci: and docker:// sources): the same bytes.
  auto other = std::make_shared<MemoryStore>();
  MemoryDestination to_other(other);
  MemorySource by_blob(store, "built");
  CHECK(normalize_image(by_blob, to_other, {.epoch = o.epoch}, "t").manifest.digest() == r.manifest.digest());
  // Again: every layer from the normalized-layer cache, found by the engine's diff_ids.
  NormalizeResult again = normalize();
  CHECK(again.manifest.digest() == r.manifest.digest());
  for (const auto& l : again.layers) CHECK(l.cached);
}
