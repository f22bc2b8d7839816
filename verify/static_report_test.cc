// verify_static end to end on an in-memory image and repository; renderings.
#include <doctest/doctest.h>

#include "scan/testing/layers.h"
#include "sign/keys.h"
#include "sign/sign_image.h"
#include "verify/report_render.h"
#include "verify/static_checks.h"

using namespace imgtool;
using namespace imgtool::verify;
using namespace imgtool::scan::testing;

namespace {
MemorySource cpu_image(const std::string& python_label) {
  return MemorySource(
      config_with({{"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", python_label}, {"io.imgtool.variant", "cpu"}}),
      {make_tar(python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False"), "gzip")});
}
}  // namespace

TEST_CASE("verify_static: signed honest image passes; wrong key and a lie fail") {
  MemorySource src = cpu_image("3.11");
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  auto key = sign::generate_key();
  sign::sign_digest(repo, *key, {src.manifest().digest(), repo.name() + ":3.2.0", {}});
  StaticInputs in{"docker://127.0.0.1:5000/ai/paddle:3.2.0", &src, &repo, "", "3.2.0"};
  VerifyOptions opt{key.get(), "test.pub", true, {}, &test_kb()};
  Report r = verify_static(in, opt);
  CHECK_MESSAGE(r.ok(), render_table(r));

  auto other = sign::generate_key();
  opt.public_key = other.get();
  Report wrong = verify_static(in, opt);
  CHECK_FALSE(wrong.ok());
  CHECK(render_table(wrong).find("does not verify with the given key") != std::string::npos);

  MemorySource liar = cpu_image("3.10");
  in.source = &liar;
  opt.public_key = key.get();
  Report unsigned_lie = verify_static(in, opt);
  CHECK_FALSE(unsigned_lie.ok());
  std::string table = render_table(unsigned_lie);
  CHECK(table.find("FAIL signature") != std::string::npos);                           // the liar was never signed ...
  CHECK(table.find("not scanned: the signature check failed") != std::string::npos);  // ... so never scanned

  sign::sign_digest(repo, *key, {liar.manifest().digest(), repo.name() + ":3.2.0", {}});
  Report lie = verify_static(in, opt);
  CHECK_FALSE(lie.ok());
  table = render_table(lie);
  CHECK(table.find("FAIL claims.python") != std::string::npos);
  CHECK(table.find("expected: Python 3.10") != std::string::npos);
}

TEST_CASE("verify_static: a tag needs a signature for exactly REGISTRY/REPO:TAG; a digest, for the repository") {
  MemorySource src = cpu_image("3.11");
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  auto key = sign::generate_key();
  sign::sign_digest(repo, *key, {src.manifest().digest(), repo.name() + ":stable", {}});  // another tag
  VerifyOptions opt{key.get(), "test.pub", true, {}, &test_kb()};
  // The same digest under another tag (an attacker with push rights re-tagging an old signed image).
  StaticInputs in{"docker://127.0.0.1:5000/ai/paddle:3.2.0", &src, &repo, "", "3.2.0"};
  Report other_tag = verify_static(in, opt);
  CHECK_FALSE(other_tag.ok());  // before: REGISTRY/REPO was required, so any tag's signature passed
  std::string table = render_table(other_tag);
  CHECK(table.find("signed identity is 127.0.0.1:5000/ai/paddle:stable, expected 127.0.0.1:5000/ai/paddle:3.2.0") !=
        std::string::npos);
  CHECK(table.find("--any-tag-of-repository") != std::string::npos);  // the fix names the opt-in
  opt.policy.identity_rule = sign::IdentityRule::any_tag_of_repository;
  CHECK_MESSAGE(verify_static(in, opt).ok(), "any tag of the repository, on request");
  opt.policy.identity_rule = sign::IdentityRule::exact;
  in.tag = "stable";
  CHECK_MESSAGE(verify_static(in, opt).ok(), "the exact tag");
  in.tag = "";  // by digest: the repository's signature holds, as cosign signs a digest
  in.ref = "docker://127.0.0.1:5000/ai/paddle@" + src.manifest().digest();
  CHECK(verify_static(in, opt).ok());
}

namespace {
// Counts the blobs verify opens (to prove an unsigned image's layers are never parsed).
struct CountingSource : image::ImageSource {
  explicit CountingSource(image::ImageSource& s) : inner(s) {}
  image::Manifest manifest() override { return inner.manifest(); }
  std::unique_ptr<image::BlobReader> open_blob(const image::Descriptor& d) override {
    ++opened;
    return inner.open_blob(d);
  }
  std::string describe() const override { return inner.describe(); }
  image::ImageSource& inner;
  int opened = 0;
};
}  // namespace

TEST_CASE("verify_static: an image whose signature fails is not scanned (no config, no layer read)") {
  MemorySource src = cpu_image("3.11");
  CountingSource counting(src);
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");  // nothing signed
  auto key = sign::generate_key();
  StaticInputs in{"docker://127.0.0.1:5000/ai/paddle:3.2.0", &counting, &repo, "", "3.2.0"};
  VerifyOptions opt{key.get(), "test.pub", true, {}, &test_kb()};
  Report r = verify_static(in, opt);
  CHECK_FALSE(r.ok());
  CHECK(counting.opened == 0);
}

TEST_CASE("verify_static: a manifest other than the pinned digest is a read failure, nothing checked on it") {
  MemorySource src = cpu_image("3.11");
  StaticInputs in{"docker://h/r@sha256:" + std::string(64, 'a'), &src, nullptr, "sha256:" + std::string(64, 'a'), ""};
  VerifyOptions opt{nullptr, "", false, {}, &test_kb()};
  Report r = verify_static(in, opt);
  CHECK_FALSE(r.ok());
  REQUIRE(r.checks.size() == 1);
  CHECK(r.checks[0].id == "read");
}

TEST_CASE("renderings: json and junit carry expected/found/fix") {
  Report r;
  r.image = "docker://h/r:t";
  r.add({"claims.python", "Python version", Status::kFail, "Python 3.10", "python 3.11", "rebuild <with> 3.10"});
  r.add({"signature", "signed", Status::kPass, "sig", "valid", ""});
  auto j = report_json(r);
  CHECK(j["ok"] == false);
  CHECK(j["checks"][0]["fix"] == "rebuild <with> 3.10");
  std::string x = render_junit(r);
  CHECK(x.find("failures=\"1\"") != std::string::npos);
  CHECK(x.find("rebuild &lt;with&gt; 3.10") != std::string::npos);
  CHECK(x.find("<testcase classname=\"imgtool.verify\" name=\"signature\">") != std::string::npos);
}
