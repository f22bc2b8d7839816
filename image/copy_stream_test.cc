// The copy engine's streamed uploads (a blob uploaded while its source still
// makes it: the OCI chunked upload), against a real docker-registry in its
// three set-ups, and against image/testing/hostile_registry.py refusing PATCH
// (the whole-blob PUT fallback). The daemon source's streams are covered end
// to end by copy_test.cc (docker-daemon: -> docker://).
#include <doctest/doctest.h>
#include <stdlib.h>

#include "core/hash.h"
#include "image/blob.h"
#include "image/copy.h"
#include "image/docker_transport.h"
#include "image/http.h"
#include "image/registry.h"
#include "image/testing/python_server.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::image;
using imgtool::image::testing::HostileRegistry;
using imgtool::testing::RegistryServer;
using imgtool::testing::ScratchDir;
using nlohmann::json;

namespace {

// A source double that makes its one layer as the daemon source does: handed
// out as a GrowingBlob first, pushed piece by piece on the calling thread
// (through a pipe smaller than the layer, so the producer waits for the
// upload), and served whole by open_blob() afterwards. `fail_after`: the
// producer throws after that many bytes (0: never).
class StreamingSource : public ImageSource {
 public:
  explicit StreamingSource(size_t layer_bytes, size_t fail_after = 0) : fail_after_(fail_after) {
    layer_.resize(layer_bytes);
    uint32_t x = 12345;
    for (auto& c : layer_) {
      x = x * 1664525u + 1013904223u;
      c = static_cast<char>(x >> 24);
    }
    config_ = R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})";
    layer_d_ = {media::kOciLayerTar, sha256_digest(layer_), static_cast<int64_t>(layer_.size())};
    config_d_ = {media::kOciConfig, sha256_digest(config_), static_cast<int64_t>(config_.size())};
  }
  Manifest manifest() override {
    json m{{"schemaVersion", 2}, {"mediaType", media::kOciManifest}, {"config", config_d_}, {"layers", {layer_d_}}};
    return Manifest{m.dump(), media::kOciManifest};
  }
  Manifest manifest_streaming(const BlobEvents& ev) override {
    if (ev.streaming) produce(ev);
    if (ev.ready) {
      ev.ready(layer_d_);
      ev.ready(config_d_);
    }
    return manifest();
  }
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override {
    return std::make_unique<StringReader>(d.digest == config_d_.digest ? config_ : layer_);
  }
  std::string describe() const override { return "streaming-test-source"; }
  const std::string& layer() const { return layer_; }
  const Descriptor& layer_descriptor() const { return layer_d_; }

 private:
  void produce(const BlobEvents& ev) {
    auto s = std::make_shared<GrowingBlob>(layer_d_.media_type, 1 << 20);
    ev.streaming(s);
    constexpr size_t kPiece = 100000;
    bool reading = true;
    for (size_t off = 0; off < layer_.size(); off += kPiece) {
      if (fail_after_ && off >= fail_after_) {
        Error e("streaming-test-source: the producer broke after " + std::to_string(off) + " bytes");
        s->fail(std::make_exception_ptr(e));
        throw e;
      }
      if (reading) reading = s->push(layer_.data() + off, std::min(kPiece, layer_.size() - off));
    }
    s->end(layer_d_);
  }
  size_t fail_after_;
  std::string layer_, config_;
  Descriptor layer_d_, config_d_;
};

json route(const std::string& method, const std::string& path, int status, json extra = json::object()) {
  json r{{"method", method}, {"path", path}, {"status", status}};
  r.update(extra);
  return r;
}

}  // namespace

TEST_CASE("streamed upload: a blob moves while it is made, into a real docker-registry (http, Basic auth, TLS)") {
  for (auto mode : {RegistryServer::Mode::kHttp, RegistryServer::Mode::kBasicAuth, RegistryServer::Mode::kTls}) {
    RegistryServer srv(mode, "stream");
    CAPTURE(srv.host());
    StreamingSource src(5 << 20);
    auto reg = std::make_shared<Registry>(srv.host(), srv.options());
    DockerDestination dst(reg, "test/stream");
    CopyResult r = copy_image(src, dst, "v1", {.jobs = 2});
    CHECK(r.blobs_streamed == 1);
    CHECK(r.bytes_copied >= static_cast<int64_t>(src.layer().size()));
    CHECK(reg->resolve("test/stream", "v1") == r.digest);
    CHECK(reg->head_blob("test/stream", src.layer_descriptor().digest) == static_cast<int64_t>(src.layer().size()));
    auto in = reg->get_blob("test/stream", src.layer_descriptor());
    CHECK(read_all(*in, src.layer().size()) == src.layer());  // read back and re-hashed
  }
}

TEST_CASE("streamed upload: a producer that breaks fails the copy, and the tag stays where it was") {
  RegistryServer srv(RegistryServer::Mode::kHttp, "stream-fail");
  auto reg = std::make_shared<Registry>(srv.host(), srv.options());
  StreamingSource good(1 << 20);
  DockerDestination dst(reg, "test/stream");
  CopyResult first = copy_image(good, dst, "v1");
  StreamingSource broken(5 << 20, 3 << 20);
  CHECK_THROWS_WITH_AS(copy_image(broken, dst, "v1"), doctest::Contains("producer broke"), Error);
  CHECK(reg->resolve("test/stream", "v1") == first.digest);
  CHECK_FALSE(reg->head_blob("test/stream", broken.layer_descriptor().digest));
}

TEST_CASE("streamed upload: a registry refusing PATCH gets the whole blob in one PUT") {
  ScratchDir dir("stream-hostile");
  ::setenv("DOCKER_CONFIG", dir.path.c_str(), 1);  // no credentials of the machine's user
  HostileRegistry h(dir.path, "nopatch");
  h.script({{"routes",
             {route("GET", "^/v2/$", 200, {{"body", "{}"}}), route("HEAD", "^/v2/test/s/blobs/", 404),
              route("POST", "^/v2/test/s/blobs/uploads/$", 202,
                    {{"headers", {{"Location", "/v2/test/s/blobs/uploads/u1"}}}}),
              route("PATCH", "^/v2/test/s/blobs/uploads/u1", 405,
                    {{"body", R"({"errors":[{"code":"UNSUPPORTED","message":"chunked uploads are not supported"}]})"}}),
              route("PUT", "^/v2/test/s/blobs/uploads/u1\\?digest=", 201), route("HEAD", "^/v2/test/s/manifests/", 404),
              route("PUT", "^/v2/test/s/manifests/v1$", 201)}}});
  RegistryOptions o;
  o.attempts = 1;
  auto reg = std::make_shared<Registry>(h.host(), o);
  DockerDestination dst(reg, "test/s");
  StreamingSource src(3 << 20);
  std::vector<std::string> log;
  CopyResult r = copy_image(src, dst, "v1", {.jobs = 2, .log = [&](const std::string& l) { log.push_back(l); }});
  CHECK(r.blobs_streamed == 0);
  CHECK(r.digest == src.manifest().digest());
  auto reqs = h.requests();
  int patch_at = -1, put_at = -1, manifest_at = -1;
  std::string layer_put = "/v2/test/s/blobs/uploads/u1?digest=" + url_escape(src.layer_descriptor().digest);
  for (int i = 0; i < static_cast<int>(reqs.size()); ++i) {
    const auto& q = reqs[static_cast<size_t>(i)];
    if (q["method"] == "PATCH") patch_at = i;
    if (q["method"] == "PUT" && q["path"] == layer_put) {
      put_at = i;
      CHECK(q["body_bytes"] == src.layer().size());  // the whole blob, monolithic
    }
    if (q["method"] == "PUT" && q["path"] == "/v2/test/s/manifests/v1") manifest_at = i;
  }
  CHECK(patch_at >= 0);
  CHECK(put_at > patch_at);
  CHECK(manifest_at > put_at);
  bool said = false;
  for (auto& l : log) said |= l.find("uploading the whole blob instead") != std::string::npos;
  CHECK(said);
}
