// RegistryServer: a REAL docker-registry (Debian package `docker-registry`,
// /usr/bin/docker-registry) on 127.0.0.1 with a free port and its own storage,
// for integration tests. Header-only: include it and use it.
//
//   RegistryServer reg(RegistryServer::Mode::kHttp);   // or kBasicAuth, kTls
//   image::Registry client(reg.host(), reg.options());  // options(): CA file + credentials
//   reg.kill(); ... reg.start();                       // same port, same storage
//
// Set-ups
//   kHttp       plain http (imgtool uses http for loopback hosts automatically).
//   kBasicAuth  htpasswd (bcrypt, `htpasswd -B`) Basic auth; user()/password().
//   kTls        TLS with a throw-away CA made by the openssl CLI; ca_file().
// `extra_config` is appended to config.yml (e.g. an `auth: token:` block).
// Manifest DELETE is enabled (`storage: delete: enabled: true`) unless
// `allow_delete` is false (then the registry answers 405, as by default).
// The constructor returns once the port accepts connections; the destructor
// kills the server and removes its folder. Logs: dir()/registry.log.
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/process.h"
#include "image/registry.h"

extern char** environ;

namespace imgtool::testing {

// A loopback port nothing listens on right now (for servers a test starts).
inline int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

// True when something accepts TCP connections on 127.0.0.1:port.
inline bool port_accepts(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

class RegistryServer {
 public:
  enum class Mode { kHttp, kBasicAuth, kTls };

  explicit RegistryServer(Mode mode = Mode::kHttp, const std::string& name = "registry", std::string extra_config = "",
                          bool allow_delete = true, bool access_log = false)
      : mode_(mode), extra_config_(std::move(extra_config)), allow_delete_(allow_delete), access_log_(access_log) {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("imgtool-registry-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "storage");
    port_ = free_port();
    if (mode_ == Mode::kTls) make_certificates();
    if (mode_ == Mode::kBasicAuth) make_htpasswd();
    write_config();
    start();
  }
  ~RegistryServer() {
    kill();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RegistryServer(const RegistryServer&) = delete;
  RegistryServer& operator=(const RegistryServer&) = delete;

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::string ca_file() const { return mode_ == Mode::kTls ? (dir_ / "ca.crt").string() : ""; }
  std::string user() const { return "imgtool"; }
  std::string password() const { return "correct-horse-battery"; }
  bool running() const { return pid_ > 0; }

  // How many requests the server logged whose request line starts with `request` ("GET /v2/ "):
  // needs access_log. The server's own count, not the client's.
  int requests(const std::string& request) const {
    std::ifstream in(dir_ / "registry.log");
    int n = 0;
    for (std::string line; std::getline(in, line);)
      if (line.find("\"" + request) != std::string::npos) ++n;
    return n;
  }

  // Client options that work with this server (CA file, credentials).
  image::RegistryOptions options() const {
    image::RegistryOptions o;
    o.ca_file = ca_file();
    if (mode_ == Mode::kBasicAuth) o.credentials = image::Credentials{user(), password(), ""};
    return o;
  }

  // Starts the server (again) on the same port and storage; waits until ready.
  void start() {
    if (pid_ > 0) return;
    std::string log = (dir_ / "registry.log").string(), cfg = (dir_ / "config.yml").string();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    const char* argv[] = {"/usr/bin/docker-registry", "serve", cfg.c_str(), nullptr};
    int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw Error("cannot start /usr/bin/docker-registry (apt-get install docker-registry)");
    wait_ready();
  }

  // SIGKILLs the server (a crash mid-push); start() brings it back.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  bool accepts() const { return port_accepts(port_); }

  void wait_ready() {
    for (int i = 0; i < 200; ++i) {
      if (accepts()) return;
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    pid_ = -1;
    throw Error("docker-registry did not start; log: " + (dir_ / "registry.log").string());
  }

  void sh(const std::vector<std::string>& argv) const {
    RunOptions o;
    o.cwd = dir_.string();
    auto r = run(argv, o);
    if (!r.ok()) throw Error(argv[0] + " failed: " + r.err);
  }

  void make_certificates() const {
    std::ofstream(dir_ / "ext.cnf") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    sh({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
        "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=imgtool test CA"});
    sh({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
        "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"});
    sh({"openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
        "server.crt", "-days", "2", "-extfile", "ext.cnf"});
  }

  void make_htpasswd() const {
    auto r = run({"htpasswd", "-Bbn", user(), password()});
    if (!r.ok()) throw Error("htpasswd failed (apt-get install apache2-utils): " + r.err);
    std::ofstream(dir_ / "htpasswd") << r.out;
  }

  void write_config() const {
    std::ofstream c(dir_ / "config.yml");
    c << "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: " << (access_log_ ? "false" : "true") << "\n"
      << "storage:\n  filesystem:\n    rootdirectory: " << (dir_ / "storage").string()
      << "\n  delete:\n    enabled: " << (allow_delete_ ? "true" : "false") << "\n"
      << "http:\n  addr: 127.0.0.1:" << port_ << "\n";
    if (mode_ == Mode::kTls)
      c << "  tls:\n    certificate: " << (dir_ / "server.crt").string()
        << "\n    key: " << (dir_ / "server.key").string() << "\n";
    if (mode_ == Mode::kBasicAuth)
      c << "auth:\n  htpasswd:\n    realm: imgtool-test\n    path: " << (dir_ / "htpasswd").string() << "\n";
    c << extra_config_;
  }

  Mode mode_;
  std::string extra_config_;
  bool allow_delete_ = true;
  bool access_log_ = false;
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace imgtool::testing
