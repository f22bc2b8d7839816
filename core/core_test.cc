#include <doctest/doctest.h>

#include <sys/stat.h>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/process.h"
#include "core/version.h"

using namespace imgtool;

TEST_CASE("sha256 of known vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_digest("abc") ==
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Sha256 h;
  h.update("a");
  h.update("bc");
  CHECK(h.hex() == sha256_hex("abc"));
  CHECK(is_sha256_digest(sha256_digest("x")));
  CHECK_FALSE(is_sha256_digest("sha256:ABC"));
}

TEST_CASE("versions compare numerically") {
  auto v = [](const char* s) { return *Version::parse(s); };
  CHECK(v("12.10") > v("12.9"));
  CHECK(v("12.6") == v("12.6.0"));
  CHECK(v("470.82.01") < v("470.82.2"));
  CHECK(v("12.6").is_prefix_of(v("12.6.3")));
  CHECK_FALSE(v("12.6").is_prefix_of(v("12.60")));
  CHECK(v("12.6.3").truncated(2) == "12.6");
  CHECK_FALSE(Version::parse("12.x"));
  CHECK_FALSE(Version::parse("12..6"));
  CHECK_FALSE(Version::parse(""));
  CHECK_THROWS_AS(Version::parse_or_throw("abc", "cuda"), InputError);
}

TEST_CASE("atomic writes and staging folders leave nothing half-written") {
  fs::path base = fs::temp_directory_path() / "imgtool-core-test";
  fs::remove_all(base);
  write_file_atomic(base / "a" / "key", "secret", 0600);
  CHECK(read_file(base / "a" / "key") == "secret");
  struct stat st {};
  ::stat((base / "a" / "key").c_str(), &st);
  CHECK((st.st_mode & 0777) == 0600);
  {
    StagingDir s(base / "out");
    write_file_atomic(s.path() / "f", "1");
  }  // not committed: nothing appears
  CHECK_FALSE(fs::exists(base / "out"));
  {
    StagingDir s(base / "out");
    write_file_atomic(s.path() / "f", "2");
    s.commit();
  }
  CHECK(read_file(base / "out" / "f") == "2");
  fs::remove_all(base);
}

TEST_CASE("run captures output, exit code, stdin and timeouts") {
  auto r = run({"sh", "-c", "cat; echo err >&2; exit 3"}, {.stdin_data = "hello"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == "hello");
  CHECK(r.err == "err\n");
  RunOptions o;
  o.timeout = std::chrono::seconds(1);
  auto t = run({"sleep", "5"}, o);
  CHECK(t.timed_out);
  CHECK_FALSE(t.ok());
  CHECK_THROWS_AS(run({"no-such-program-imgtool"}), Error);
}
