// The typed image config (image/config.h): parsed once, OPTIONAL members may be absent or null,
// REQUIRED ones and members of the wrong type refused with one line naming the field.
#include "image/config.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "image/memory.h"

using namespace imgtool;
using namespace imgtool::image;
using nlohmann::json;

namespace {

const std::string kDiff = "sha256:" + std::string(64, 'd');

json minimal() {
  return {{"architecture", "amd64"}, {"os", "linux"}, {"rootfs", {{"type", "layers"}, {"diff_ids", {kDiff}}}}};
}

ImageConfig parse(const json& j) { return parse_image_config(j.dump(), "image config sha256:c0ffee"); }

std::string refusal(const json& j) {
  try {
    parse(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("image config: every member a reader needs, typed") {
  json j = minimal();
  j["created"] = "2026-11-23T20:10:11Z";
  j["variant"] = "v8";
  j["author"] = "imgtool";
  j["config"] = {{"User", "1000:1000"},
                 {"Env", {"PATH=/usr/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.6", "A=1=2", "NOEQUALS", "PATH=/bin"}},
                 {"Entrypoint", {"/bin/sh", "-c"}},
                 {"Cmd", {"python"}},
                 {"WorkingDir", "/work"},
                 {"Labels", {{"io.imgtool.paddle", "3.2.0"}, {"empty", ""}}},
                 {"ExposedPorts", {{"8080/tcp", json::object()}}}};
  ImageConfig c = parse(j);
  CHECK(c.architecture == "amd64");
  CHECK(c.os == "linux");
  CHECK(c.variant == "v8");
  CHECK(c.created == "2026-11-23T20:10:11Z");
  CHECK(c.author == "imgtool");
  CHECK(c.user == "1000:1000");
  CHECK(c.entrypoint == std::vector<std::string>{"/bin/sh", "-c"});
  CHECK(c.cmd == std::vector<std::string>{"python"});
  CHECK(c.working_dir == "/work");
  CHECK(c.diff_ids == std::vector<std::string>{kDiff});
  CHECK(c.label("io.imgtool.paddle") == "3.2.0");
  CHECK(c.label("empty").empty());
  CHECK(c.label("absent").empty());
  CHECK(c.labels.count("empty") == 1);
  CHECK(c.env.size() == 5);  // as written, in order
  auto env = c.env_map();
  CHECK(env.at("PATH") == "/bin");  // the later entry wins, as in a container
  CHECK(env.at("A") == "1=2");
  CHECK(env.count("NOEQUALS") == 0);
  CHECK(c.env_value("NVIDIA_REQUIRE_CUDA") == "cuda>=12.6");
  CHECK_FALSE(c.env_value("NVIDIA_DRIVER_CAPABILITIES"));
}

TEST_CASE("image config: OPTIONAL members may be absent or null") {
  ImageConfig bare = parse(minimal());
  CHECK(bare.labels.empty());
  CHECK(bare.env.empty());
  CHECK(bare.user.empty());
  CHECK(bare.created.empty());
  json nulls = minimal();
  nulls["created"] = nullptr;
  nulls["config"] = {{"Labels", nullptr}, {"Env", nullptr}, {"Cmd", nullptr}, {"User", nullptr}};
  ImageConfig c = parse(nulls);
  CHECK(c.labels.empty());
  CHECK(c.env.empty());
  CHECK(c.cmd.empty());
  json no_config = minimal();
  no_config["config"] = nullptr;
  CHECK(parse(no_config).labels.empty());
  json empty_diffs = minimal();
  empty_diffs["rootfs"]["diff_ids"] = json::array();  // an image without layers (a signature's config is one)
  CHECK(parse(empty_diffs).diff_ids.empty());
}

TEST_CASE("image config: REQUIRED members and wrong types are refused, naming the field, in one line") {
  auto with = [](const std::string& pointer, const json& v) {
    json j = minimal();
    j[json::json_pointer(pointer)] = v;
    return j;
  };
  auto without = [](const std::string& key) {
    json j = minimal();
    j.erase(key);
    return j;
  };
  struct Case {
    json config;
    std::string expected;
  };
  const Case cases[] = {
      {without("os"), "expected \"os\" (REQUIRED by the OCI image spec), found none"},
      {without("architecture"), "expected \"architecture\" (REQUIRED by the OCI image spec), found none"},
      {with("/architecture", ""), "expected \"architecture\" (REQUIRED by the OCI image spec), found an empty string"},
      {with("/os", 7), "expected \"os\" to be a string, found number"},
      {without("rootfs"), "expected \"rootfs\" (REQUIRED by the OCI image spec), found none"},
      {with("/rootfs/type", "tarballs"), "expected \"rootfs.type\" to be \"layers\", found '\"tarballs\"'"},
      {with("/rootfs", {{"type", "layers"}}),
       "expected \"rootfs.diff_ids\" (REQUIRED by the OCI image spec), found none"},
      {with("/rootfs/diff_ids", {kDiff, 3}),
       "expected \"rootfs.diff_ids\" entries to be strings, found number at index 1"},
      {with("/config", "x"), "expected \"config\" to be an object, found string"},
      {with("/config/Labels", json::array()), "expected \"config.Labels\" to map names to strings, found array"},
      {with("/config/Labels", {{"io.imgtool.cuda", 12.6}}),
       "expected \"config.Labels\" values to be strings, found number at '\"io.imgtool.cuda\"'"},
      {with("/config/Labels", {{"bad\nkey", true}}), "found boolean at '\"bad\\nkey\"'"},
      {with("/config/Env", "PATH=/bin"), "expected \"config.Env\" to be a list of strings, found string"},
      {with("/config/Env", {"A=1", json::object()}),
       "expected \"config.Env\" entries to be strings, found object at index 1"},
      {with("/config/User", 0), "expected \"config.User\" to be a string, found number"},
      {with("/created", 20261123), "expected \"created\" to be a string, found number"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.config.dump());
    std::string why = refusal(c.config);
    CHECK(why.rfind("image config sha256:c0ffee: ", 0) == 0);
    CHECK(why.find(c.expected) != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
  }
  CHECK(refusal(json::array()) == "image config sha256:c0ffee: expected a JSON object, found array");
  CHECK_THROWS_WITH_AS(parse_image_config("{\"os\": ", "image config x"),
                       "image config x: expected a JSON object, found text that is not JSON", InputError);
}

TEST_CASE("image config: read from a source by its manifest, the blob's digest checked") {
  auto store = std::make_shared<MemoryStore>();
  Manifest m = random_image(*store, 2, 16, "t");
  MemorySource src(store, "t");
  ImageConfig c = read_image_config(src, src.manifest());
  CHECK(c.os == "linux");
  CHECK(c.diff_ids.size() == 2);
  CHECK(c.diff_ids == std::vector<std::string>{m.layers()[0].digest, m.layers()[1].digest});
}
