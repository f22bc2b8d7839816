#include "run/profile.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::runconf;
namespace fs = std::filesystem;

namespace {
std::string profiles() { return imgtool::testing::source_dir() + "/run/profiles"; }

struct Dir {
  fs::path p = fs::temp_directory_path() / ("imgtool-run-profile-test-" + std::to_string(::getpid()));
  Dir() {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(p, ec);
  }
  std::string file(const std::string& name, const std::string& text) {
    write_file_atomic(p / name, text);
    return (p / name).string();
  }
};

RunSpec load(std::vector<std::string> layers, std::vector<std::string> sets = {}, std::vector<std::string> dirs = {}) {
  dirs.push_back(profiles());
  return load_profile({layers, sets, dirs});
}

std::string error_of(std::vector<std::string> layers, std::vector<std::string> sets = {},
                     std::vector<std::string> dirs = {}) {
  try {
    load(layers, sets, dirs);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("sizes and ulimits parse strictly") {
  CHECK(parse_size("8g") == 8ull << 30);
  CHECK(parse_size("512m") == 512ull << 20);
  CHECK(parse_size("1Gi") == 1ull << 30);
  CHECK(parse_size("67108864") == 67108864ull);
  CHECK_FALSE(parse_size("8gb"));
  CHECK_FALSE(parse_size("-1"));
  CHECK_FALSE(parse_size("0"));
  CHECK_FALSE(parse_size(""));
  CHECK(parse_ulimit("unlimited") == -1);
  CHECK(parse_ulimit("-1") == -1);
  CHECK(parse_ulimit("64m") == 64 << 20);
  CHECK_FALSE(parse_ulimit("-2"));
  CHECK(format_size(8ull << 30) == "8g");
  CHECK(format_size(67108864) == "64m");
  CHECK(format_size(1000) == "1000");
}

TEST_CASE("layers: base -> domain -> project -> --set, later wins key by key") {
  Dir d;
  std::string project = d.file("proj.yaml", "extends: ocr\nname: invoice\nshm_size: 12g\nenv:\n  A: b\n");
  RunSpec s = load({project}, {"cpus=4", "env.B=c"});
  CHECK(s.name == "invoice");            // project
  CHECK(s.shm_bytes == 12ull << 30);     // project over ocr's 16g over base's 8g
  CHECK(s.memory_bytes == 32ull << 30);  // ocr
  CHECK(s.stack == 67108864);            // base
  CHECK(s.memlock == -1);                // base
  CHECK(s.user == "1000:1000");          // base
  CHECK(s.cpus == "4");                  // --set over ocr's 8
  CHECK(s.env.at("A") == "b");
  CHECK(s.env.at("B") == "c");
  CHECK(s.env.at("PYTHONUNBUFFERED") == "1");  // base
  CHECK(s.code.target == "/workspace/code");
  REQUIRE(s.layers.size() == 3);
  CHECK(s.layers[0].ends_with("base.yaml"));
  CHECK(s.layers[2] == project);
  // Several --profile layers apply in order too.
  CHECK(load({"base", "detection"}).gpus == "all");
  CHECK(load({"detection", "base"}).shm_bytes == 8ull << 30);
}

TEST_CASE("bad profiles: one line naming file:line or the key") {
  Dir d;
  std::string unknown = d.file("unknown.yaml", "extends: base\nshm_size: 8g\nshm_sise: 9g\n");
  CHECK(error_of({unknown}) ==
        unknown + ":3: expected a profile key (see `imgtool run-config --keys`), found unknown key 'shm_sise'");
  std::string gb = d.file("gb.yaml", "shm_size: 8gb\n");
  CHECK(error_of({gb}).rfind(gb + ":1: shm_size: expected a size > 0", 0) == 0);
  CHECK(error_of({gb}).find("found '8gb'") != std::string::npos);
  std::string neg = d.file("neg.yaml", "memory: -1\n");
  CHECK(error_of({neg}).rfind(neg + ":1: memory: expected a size > 0", 0) == 0);
  std::string nested = d.file("nested.yaml", "ulimit:\n  memlock: unlimited\n  nofile: 10\n");
  CHECK(error_of({nested}) ==
        nested + ":3: expected a profile key (see `imgtool run-config --keys`), found unknown key 'ulimit.nofile'");
  std::string missing = d.file("missing.yaml", "extends: no-such-layer\n");
  CHECK(error_of({missing}).rfind(missing + ":1:", 0) == 0);
  CHECK(error_of({missing}).find("expected a profile layer named 'no-such-layer'") != std::string::npos);
  CHECK(error_of({"no-such-profile"})
            .rfind("--profile no-such-profile: expected a profile layer named 'no-such-profile'", 0) == 0);
  std::string root = d.file("root.yaml", "user: \"0:0\"\n");
  CHECK(error_of({root}).find("user: expected a numeric non-root uid") != std::string::npos);
  CHECK(error_of({"base"}, {"gpus=-1"}) ==
        "--set gpus=-1: gpus: expected 'auto', 'all' or a GPU count >= 0, found '-1'");
  CHECK(error_of({"base"}, {"shm_size=8gb"}).rfind("--set shm_size=8gb: shm_size: expected a size > 0", 0) == 0);
  CHECK(error_of({"base"}, {"bogus=1"}).find("found unknown key 'bogus'") != std::string::npos);
  CHECK(error_of({"base"}, {"noequals"}) == "--set noequals: expected key=value, found no '='");
  std::string a = d.file("a.yaml", "extends: b\n"), b = d.file("b.yaml", "extends: a\n");
  CHECK(error_of({"a"}, {}, {d.p.string()}).find("without a cycle") != std::string::npos);
}

TEST_CASE("every key in the table has help, and the shipped profiles load") {
  for (auto& k : profile_keys()) CHECK(std::string(k.help).size() > 5);
  for (auto& name : {"base", "ocr", "detection"}) CHECK_NOTHROW(load({name}));
  CHECK_NOTHROW(load({imgtool::testing::source_dir() + "/run/examples/invoice-ocr.yaml"}));
}
