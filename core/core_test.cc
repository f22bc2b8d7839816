#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/buffer.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/junit.h"
#include "core/paths.h"
#include "core/process.h"
#include "core/sqlite.h"
#include "core/strings.h"
#include "core/version.h"

using namespace imgtool;

TEST_CASE("sha256 of known vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_digest("abc") == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
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
    CHECK(s.path().filename().string().rfind(".out.tmp-", 0) == 0);  // mkdtemp's name, beside the final folder
    s.commit();
  }
  CHECK(read_file(base / "out" / "f") == "2");
  CHECK(fs::status(base / "out").permissions() == fs::perms(0755));  // an output folder, readable as before
  // A place that takes no folder is the user's path: InputError naming it and why, not an Error.
  CHECK_THROWS_WITH_AS(StagingDir("/proc/x"),
                       "'/proc/x': expected a place where a folder can be made, found /proc: no such "
                       "folder, or one that takes no new folders (like /proc)",
                       InputError);
  CHECK_THROWS_WITH_AS(StagingDir(base / "a" / "key" / "out"),
                       ("'" + (base / "a/key/out").string() +
                        "': expected a place where a "
                        "folder can be made, found " +
                        (base / "a/key").string() + ": a file where a folder should be")
                           .c_str(),
                       InputError);
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

TEST_CASE("atomic writes never follow a planted temp-file symlink and leave no temp files") {
  fs::path base = fs::temp_directory_path() / ("imgtool-core-excl-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::create_directories(base);
  write_file_atomic(base / "victim", "untouched");
  // The old scheme wrote through `<path>.tmp-<pid>`: a link planted there redirected the write.
  fs::create_symlink(base / "victim", base / ("out.tmp-" + std::to_string(::getpid())));
  write_file_atomic(base / "out", "new");
  CHECK(read_file(base / "victim") == "untouched");
  CHECK(read_file(base / "out") == "new");
  CHECK(fs::is_regular_file(fs::symlink_status(base / "out")));
  int files = 0;
  for (auto& e : fs::directory_iterator(base))
    files += e.path().filename().string().find(".tmp-X") == std::string::npos;
  CHECK(files == 3);  // victim, out, the planted link; no leftovers
  fs::remove_all(base);
}

TEST_CASE("run keeps child output in a private folder, not at predictable /tmp names") {
  fs::path victim = fs::temp_directory_path() / ("imgtool-core-victim-" + std::to_string(::getpid()));
  write_file_atomic(victim, "untouched");
  std::vector<fs::path> planted;
  for (int n = 1; n <= 200; ++n)
    for (const char* ext : {".out", ".err"}) {
      fs::path p =
          fs::temp_directory_path() / ("imgtool-" + std::to_string(::getpid()) + "-" + std::to_string(n) + ext);
      std::error_code ec;
      fs::create_symlink(victim, p, ec);
      if (!ec) planted.push_back(p);
    }
  auto r = run({"sh", "-c", "echo secret-token; echo err >&2"});
  for (auto& p : planted) fs::remove(p);
  CHECK(r.out == "secret-token\n");
  CHECK(r.err == "err\n");
  CHECK(read_file(victim) == "untouched");
  fs::remove(victim);
}

TEST_CASE("cache folder: XDG_CACHE_HOME or the account's home when HOME is unset; private, or refused") {
  struct EnvGuard {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    void set(const char* k, const char* v) {
      const char* old = std::getenv(k);
      saved.push_back({k, old ? std::optional<std::string>(old) : std::nullopt});
      v ? ::setenv(k, v, 1) : ::unsetenv(k);
    }
    ~EnvGuard() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it)
        it->second ? ::setenv(it->first.c_str(), it->second->c_str(), 1) : ::unsetenv(it->first.c_str());
    }
  } env;
  fs::path base = fs::temp_directory_path() / ("imgtool-core-cache-" + std::to_string(::getpid()));
  fs::remove_all(base);
  env.set("IMGTOOL_CACHE", nullptr);
  env.set("HOME", nullptr);
  env.set("XDG_CACHE_HOME", (base / "xdg").c_str());
  CHECK(cache_dir() == (base / "xdg" / "imgtool").string());
  struct stat st {};
  ::stat(cache_dir().c_str(), &st);
  CHECK((st.st_mode & 0777) == 0700);
  env.set("XDG_CACHE_HOME", nullptr);
  CHECK(cache_dir().rfind("/tmp", 0) != 0);  // getpwuid's home, never a shared /tmp
  env.set("IMGTOOL_CACHE", (base / "open").c_str());
  fs::create_directories(base / "open");
  fs::permissions(base / "open", fs::perms::all);  // 0777: anyone could plant blobs or a records.db
  try {
    cache_dir();
    FAIL("expected a world-writable cache folder to be refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("chmod 700") != std::string::npos);
  }
  if (::geteuid() == 0) {  // someone else's folder, even a private one (root can make one here)
    env.set("IMGTOOL_CACHE", (base / "theirs").c_str());
    fs::create_directories(base / "theirs");
    fs::permissions(base / "theirs", fs::perms::owner_all);
    REQUIRE(::chown((base / "theirs").c_str(), 65534, 65534) == 0);
    try {
      cache_dir();
      FAIL("expected someone else's cache folder to be refused");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("found owner uid 65534 (someone else's folder") != std::string::npos);
    }
  } else {
    MESSAGE("not root: the someone-else's-folder case needs a chown");
  }
  fs::remove_all(base);
}

TEST_CASE("strings: lower, upper, join, trim, quoted, xml_escape") {
  CHECK(strings::quoted("paddlepaddle==3.2.0") == "'paddlepaddle==3.2.0'");
  CHECK(strings::quoted(std::string(120, 'a')) == "'" + std::string(120, 'a') + "'");
  CHECK(strings::quoted(std::string(121, 'a')) == "'" + std::string(60, 'a') + "…' (121 bytes)");
  CHECK(strings::lower("PaddlePaddle-GPU") == "paddlepaddle-gpu");
  CHECK(strings::upper("fail") == "FAIL");
  CHECK(strings::join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(strings::join({}, ",").empty());
  CHECK(strings::trim(" \tx y\r\n") == "x y");
  CHECK(strings::trim("   ").empty());
  CHECK(strings::xml_escape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
  CHECK(strings::split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(strings::split("", ',') == std::vector<std::string>{""});
  CHECK(strings::split_lines("a\r\nb\n\nc") == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(strings::split_lines("a\n") == std::vector<std::string>{"a"});
  CHECK(strings::split_lines("").empty());
}

TEST_CASE(
    "strings::printable: control characters and bytes that are not UTF-8 shown as escapes, nothing else touched") {
  using strings::printable;
  CHECK(printable("paddle 3.2.0 — ok, é, 日本, 🙂, C:\\path") ==
        "paddle 3.2.0 — ok, é, 日本, 🙂, C:\\path");
  CHECK(printable("\x1b[2Jgone\x07") == "\\x1b[2Jgone\\x07");  // ESC, BEL
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");       // NUL
  CHECK(printable("a\x7f"
                  "b") == "a\\x7fb");                     // DEL
  CHECK(printable("a\tb\nc\r") == "a\\x09b\\x0ac\\x0d");  // one line
  CHECK(printable("\xc2\x9b"
                  "31m") == "\\u009b31m");  // C1 CSI, as UTF-8
  CHECK(printable("\x9b"
                  "31m") == "\\x9b31m");  // C1 CSI, a raw byte (not UTF-8)
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(printable("\xc3") == "\\xc3");                    // cut short
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");           // overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(printable("\xef\xbf\xbf") == "\\uffff");          // not an XML character
  std::string mib(1 << 20, 'x');
  mib[4096] = '\x1b';
  std::string shown = printable(mib);
  CHECK(shown.size() == mib.size() + 3);  // kept whole: one byte became four
  CHECK(printable(shown) == shown);       // idempotent
  CHECK(strings::printable_lines("a\tb\r\nc\nd\re\x1b") == "a\tb\nc\nd\\x0de\\x1b");
  CHECK(strings::quoted("tag\x1b[2J") == "'tag\\x1b[2J'");
  CHECK(strings::quoted(std::string(59, 'a') + "é" + std::string(100, 'b')) ==
        "'" + std::string(59, 'a') + "…' (161 bytes)");
}

TEST_CASE("strings::printable: bidi overrides, isolates, marks and zero-width characters become escapes") {
  using strings::printable;
  // "Trojan Source": U+202E makes "3.2.0-gpu\u202e" + "upc" read as "3.2.0-gpucpu" reversed on a terminal.
  CHECK(printable("3.2.0-gpu\u202Eupc") == "3.2.0-gpu\\u202eupc");
  for (char32_t cp : {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200B, 0x200C, 0x200D,
                      0x200E, 0x200F, 0x2060, 0x061C, 0xFEFF, 0x2028, 0x2029}) {
    std::string utf8;
    if (cp < 0x800)
      utf8 = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    else
      utf8 = {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
              static_cast<char>(0x80 | (cp & 0x3F))};
    std::string shown = printable("a" + utf8 + "b");
    CHECK_MESSAGE(shown.find("\\u") == 1, "U+" << std::hex << static_cast<unsigned>(cp) << " -> " << shown);
    CHECK(printable(shown) == shown);
  }
  CHECK(printable("\u2010\u2030\u2070") == "\u2010\u2030\u2070");  // neighbours are plain text
}

TEST_CASE("strings::url_for_message: the query (a pre-signed URL's signature) never reaches a message") {
  CHECK(strings::url_for_message(
            "https://bucket.s3.amazonaws.com/blobs/ab?X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA") ==
        "https://bucket.s3.amazonaws.com/blobs/ab?…");
  CHECK(strings::url_for_message("https://r.example/v2/x/blobs/sha256:ab#frag") ==
        "https://r.example/v2/x/blobs/sha256:ab?…");
  CHECK(strings::url_for_message("https://r.example/v2/") == "https://r.example/v2/");
  CHECK(strings::url_for_message("https://r.example/\x1b[2J") == "https://r.example/\\x1b[2J");
}

TEST_CASE("strings::xml_escape: every byte value gives well-formed XML (python3's xml.etree reads it)") {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  all += "\xc2\x9b\xef\xbf\xbe\xed\xa0\x80 é 🙂";
  junit::Suite s{all, 1.0, {{all, all, 1.0, junit::Outcome::kFailed, all, all}}};
  std::string xml = junit::render(s);
  for (unsigned char c : xml) CHECK_MESSAGE((c >= 0x20 || c == '\n' || c == '\t'), "byte " << int(c));
  auto file = std::filesystem::temp_directory_path() / ("imgtool-core-xml-" + std::to_string(::getpid()) + ".xml");
  write_file_atomic(file, xml);
  auto r = run({"python3", "-c",
                "import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]); "
                "print(t.getroot()[0][0].get('name')[:4])",
                file.string()});
  std::filesystem::remove(file);
  INFO(r.err);
  CHECK(r.exit_code == 0);  // before: "not well-formed (invalid token)" at the first C0 byte
  CHECK(r.out == "\\x00\n");
}

// A process killed by SIGTERM/SIGINT under end_children_on_signal leaves no private temp folder
// and no uncommitted staging folder (before: both stayed, with whatever was written in them).
TEST_CASE("a signal removes the private temp and uncommitted staging folders of the process it kills") {
  for (int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    auto root = std::filesystem::temp_directory_path() / ("imgtool-core-signal-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "tmp");
    pid_t child = ::fork();
    if (child == 0) {
      end_children_on_signal();
      PrivateTempDir tmp("imgtool-run-", root / "tmp");
      StagingDir stage(root / "out");
      StagingDir done(root / "kept");
      write_file_atomic(tmp / "out", "child output");
      write_file_atomic(stage.path() / "cell" / "wheels" / "deep" / "a.whl", "wheel");
      std::filesystem::create_symlink("/etc/passwd", stage.path() / "cell" / "link");
      done.commit();
      write_file_atomic(root / "ready", "");
      for (;;) ::pause();
    }
    for (int i = 0; i < 400 && !std::filesystem::exists(root / "ready"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(std::filesystem::exists(root / "ready"));
    ::kill(child, sig);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == sig));  // the signal's own default action, still
    CHECK(std::filesystem::is_empty(root / "tmp"));           // before: imgtool-run-XXXXXX/out stayed
    std::vector<std::string> left;
    for (auto& e : std::filesystem::directory_iterator(root)) left.push_back(e.path().filename().string());
    std::sort(left.begin(), left.end());
    CHECK(left == std::vector<std::string>{"kept", "ready", "tmp"});  // before: .out.tmp-XXXXXX too
    CHECK(std::filesystem::exists("/etc/passwd"));                    // a link is removed, not followed
    std::filesystem::remove_all(root);
  }
}

TEST_CASE("junit: counts, outcomes and escaping") {
  junit::Suite s{"suite <1>", 2.5, {}};
  s.cases.push_back({"c", "ok", 1.0, junit::Outcome::kPassed, "", "out"});
  s.cases.push_back({"c", "bad", std::nullopt, junit::Outcome::kFailed, "why & how", "body"});
  s.cases.push_back({"c", "skip", std::nullopt, junit::Outcome::kSkipped, "not run", ""});
  std::string x = junit::render(s);
  CHECK(x.find("<testsuite name=\"suite &lt;1&gt;\" tests=\"3\" failures=\"1\" skipped=\"1\" time=\"2.500\">") !=
        std::string::npos);
  CHECK(x.find("<testcase classname=\"c\" name=\"ok\" time=\"1.000\"><system-out>out</system-out>") !=
        std::string::npos);
  CHECK(x.find("<failure message=\"why &amp; how\">body</failure>") != std::string::npos);
  CHECK(x.find("<skipped message=\"not run\"/>") != std::string::npos);
}

TEST_CASE("sqlite: schema, bind, step, columns; errors name the store") {
  auto dir = std::filesystem::temp_directory_path() / ("imgtool-sqlite-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    sqlite::Database db((dir / "sub" / "t.db").string(), "CREATE TABLE IF NOT EXISTS t(k TEXT, v REAL, n INTEGER);",
                        1000, "test store");
    sqlite::Statement ins(db, "INSERT INTO t VALUES(?,?,?)");
    ins.bind(1, std::string("a")).bind(2, 1.5).bind(3, int64_t{7});
    CHECK_FALSE(ins.step());
    sqlite::Statement sel(db, "SELECT k, v, n FROM t");
    REQUIRE(sel.step());
    CHECK(sel.text(0) == "a");
    CHECK(sel.real(1) == 1.5);
    CHECK(sel.integer(2) == 7);
    CHECK_FALSE(sel.step());
    try {
      sqlite::Statement bad(db, "SELECT nope FROM t");
      FAIL("a bad statement was prepared");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).rfind("test store: ", 0) == 0);
    }
  }
  CHECK_THROWS_AS(sqlite::Database("/proc/imgtool-no/t.db", "", 10, "x"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("run: a child started by another thread meanwhile never holds this run's stdin open") {
  // One thread keeps starting `sleep 2`; the other feeds `cat` and waits for it. If the sleepers
  // inherited the write end of cat's stdin pipe, cat would see EOF only when they exit (~2 s).
  std::atomic<bool> stop{false};
  std::thread sleepers([&] {
    while (!stop) imgtool::run({"sleep", "2"});
  });
  std::thread more_sleepers([&] {
    while (!stop) imgtool::run({"sleep", "2"});
  });
  double slowest = 0;
  for (int i = 0; i < 40; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = imgtool::run({"cat"}, {.stdin_data = "x"});
    slowest = std::max(slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    CHECK(r.out == "x");
  }
  stop = true;
  sleepers.join();
  more_sleepers.join();
  CHECK(slowest < 1.5);
}

TEST_CASE("run with max_output: the first bytes of each stream kept, the rest read and dropped, a note says so") {
  // 64 MiB on stdout and 8 MiB on stderr, written at the same time: neither pipe may stall the other.
  auto r =
      run({"sh", "-c", "head -c 8388608 /dev/zero | tr '\\0' e >&2 & head -c 67108864 /dev/zero | tr '\\0' o; wait"},
          {.timeout = std::chrono::seconds(120), .max_output = 1 << 20});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out_dropped == (64u << 20) - (1u << 20));
  CHECK(r.err_dropped == (8u << 20) - (1u << 20));
  CHECK(r.out == std::string(1 << 20, 'o') + cut_note("stdout", 1 << 20, r.out_dropped));
  CHECK(r.err.rfind(std::string(1 << 20, 'e'), 0) == 0);
  CHECK(r.err.find("[imgtool] stderr cut at 1048576 bytes: 7340032 more bytes were read and dropped") !=
        std::string::npos);
  // Under the cap: everything, no note; stdin and exit code as without a cap.
  auto small = run({"sh", "-c", "cat; echo err >&2; exit 3"}, {.stdin_data = "hello", .max_output = 1 << 20});
  CHECK(small.exit_code == 3);
  CHECK(small.out == "hello");
  CHECK(small.err == "err\n");
  CHECK(small.out_dropped + small.err_dropped == 0);
  // A timeout still ends it.
  auto t = run({"sh", "-c", "while :; do echo spam; done"}, {.timeout = std::chrono::seconds(2), .max_output = 4096});
  CHECK(t.timed_out);
  CHECK(t.out.size() < 4096 + 200);
  CHECK(t.out_dropped > 0);
}

TEST_CASE("run with max_output never waits on a grandchild that keeps the pipe open") {
  auto t0 = std::chrono::steady_clock::now();
  auto r =
      run({"sh", "-c", "echo started; sleep 30 & exit 0"}, {.timeout = std::chrono::seconds(60), .max_output = 4096});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.exit_code == 0);
  CHECK(r.out == "started\n");
  CHECK(s < 10);
}

TEST_CASE("Buffer: growing keeps the bytes it had; assign and release") {
  imgtool::Buffer b(3);
  std::memcpy(b.data(), "abc", 3);
  b.resize(1 << 20);  // grows: the first bytes stay
  CHECK(b.size() == size_t(1) << 20);
  CHECK(std::memcmp(b.data(), "abc", 3) == 0);
  b.resize(2);
  CHECK(std::string(b.begin(), b.end()) == "ab");
  const uint8_t more[] = {'x', 'y', 'z', 'w'};
  b.assign(more, more + 4);
  CHECK(std::string(b.begin(), b.end()) == "xyzw");
  b.release();
  CHECK(b.empty());
  CHECK(b.data() == nullptr);
}

TEST_CASE("strings::pep503_name: PEP 503") {
  CHECK(strings::pep503_name("paddlepaddle_gpu") == "paddlepaddle-gpu");
  CHECK(strings::pep503_name("PaddlePaddle-GPU") == "paddlepaddle-gpu");
  CHECK(strings::pep503_name("a._-b") == "a-b");
}
