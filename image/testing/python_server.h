// Test servers written in Python that stand where a real component cannot
// misbehave on demand (hostile_registry.py) or does not exist as a package
// (token_server.py, the token half of docker-registry's `auth: token:`).
// Header-only, for tests.
//
//   PythonServer srv("hostile_registry.py", dir, {"--script", ...});
//   srv.port();                         // chosen by the kernel, read from its port file
//   HostileRegistry h(dir, "main");     // + h.script(json) / h.requests()
//
// Each server binds 127.0.0.1 only, writes its port to a file once it listens,
// and is killed (SIGKILL) by the destructor. Debian's /usr/bin/python3 is used
// when present: python3-jwt is a Debian package (scripts/install-deps.sh).
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "tests/test_dirs.h"

extern char** environ;

namespace imgtool::image::testing {

inline std::filesystem::path testing_dir() {
  return std::filesystem::path(imgtool::testing::source_dir()) / "image" / "testing";
}

inline std::string python3() { return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

class PythonServer {
 public:
  // Runs testing_dir()/script with `args` + "--port-file F"; output goes to dir/name.log.
  PythonServer(const std::string& script, const std::filesystem::path& dir, const std::string& name,
               std::vector<std::string> args) {
    port_file_ = dir / (name + ".port");
    log_ = dir / (name + ".log");
    std::vector<std::string> argv{python3(), (testing_dir() / script).string(), "--port-file", port_file_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc = posix_spawnp(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw Error("cannot start " + argv[0] + " " + argv[1]);
    wait_port();
  }
  ~PythonServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  PythonServer(const PythonServer&) = delete;
  PythonServer& operator=(const PythonServer&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  void wait_port() {
    for (int i = 0; i < 2400; ++i) {  // up to 60 s: python3 + cryptography start slowly on a loaded machine
      if (std::filesystem::exists(port_file_)) {
        std::ifstream(port_file_) >> port_;
        if (port_ > 0) return;
      }
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    pid_ = -1;
    std::stringstream log;
    log << std::ifstream(log_).rdbuf();
    throw Error("test server did not start: " + log.str());
  }

  std::filesystem::path port_file_, log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// hostile_registry.py: answers from a JSON script (re-read per request) and
// logs every request, with its Authorization header, as one JSON line.
class HostileRegistry {
 public:
  // tls: {cert, key} for https, {"--tls-reset"} for a port that resets every TLS handshake
  // (and answers plain http with 400 as a TLS port does), or empty for plain http.
  HostileRegistry(const std::filesystem::path& dir, const std::string& name, std::vector<std::string> tls = {})
      : script_(dir / (name + ".script.json")),
        log_(dir / (name + ".requests.jsonl")),
        server_("hostile_registry.py", dir, name, args(tls)) {}

  std::string host() const { return server_.host(); }
  int port() const { return server_.port(); }
  std::string url(const std::string& scheme = "http") const { return scheme + "://" + host(); }

  void script(const nlohmann::json& s) {
    std::ofstream(script_.string() + ".tmp") << s.dump();
    std::filesystem::rename(script_.string() + ".tmp", script_);
  }

  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

 private:
  std::vector<std::string> args(const std::vector<std::string>& tls) {
    script({{"routes", nlohmann::json::array()}});
    std::vector<std::string> a{"--script", script_.string(), "--log", log_.string()};
    if (tls.size() == 2) a.insert(a.end(), {"--tls", tls[0], tls[1]});
    if (tls.size() == 1) a.push_back(tls[0]);
    return a;
  }

  std::filesystem::path script_, log_;
  PythonServer server_;
};

}  // namespace imgtool::image::testing
