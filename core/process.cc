#include "core/process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <cstdlib>
#include <boost/process.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/signal_cleanup.h"

namespace bp = boost::process;
namespace fs = std::filesystem;

namespace imgtool {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

bool have_program(const std::string& name) { return !bp::search_path(name).empty(); }

namespace {

// The log of a run with RunOptions::log_path: the command line first, then the child's stdout and
// stderr written straight into it as they come (so `tail -f` follows a build), then the outcome.
class RunLog {
 public:
  RunLog(const std::string& path, const std::vector<std::string>& argv) : file_(std::fopen(path.c_str(), "abe")), path_(path) {
    if (!file_) throw Error("cannot open the log " + path + " for appending");
    std::string head = "$";
    for (auto& a : argv) head += " " + a;
    head += "\n";
    std::fwrite(head.data(), 1, head.size(), file_);
    std::fflush(file_);
    start_ = std::ftell(file_);
  }
  ~RunLog() {
    if (file_) std::fclose(file_);
  }
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;
  FILE* file() const { return file_; }
  // What the child wrote (both streams, in the order they came).
  std::string output() const {
    std::ifstream in(path_, std::ios::binary);
    in.seekg(start_);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void finish(const RunResult& r, const RunOptions& opt) {
    std::ostringstream s;
    if (r.timed_out) s << "[imgtool] timed out after " << opt.timeout->count() << "s\n";
    s << "[imgtool] exit " << r.exit_code << '\n';
    std::fseek(file_, 0, SEEK_END);
    std::fwrite(s.str().data(), 1, s.str().size(), file_);
    std::fflush(file_);
  }

 private:
  FILE* file_;
  std::string path_;
  long start_ = 0;
};

// The stdin pipe with both ends close-on-exec: a child another thread starts meanwhile (-j 2
// builds) must not inherit the write end, or this run's child would wait for EOF until that
// unrelated child ends. The child it is meant for gets its end through dup2, which clears the flag.
bp::pipe cloexec_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  return bp::pipe(fds[0], fds[1]);
}

// The children run() is waiting on, for the signal handler (0: a free slot). Plain atomics:
// all a handler may touch.
constexpr int kChildSlots = 64;
std::atomic<pid_t> g_children[kChildSlots];

// Holds a child's pid in a slot while run() waits on it.
class ChildSlot {
 public:
  explicit ChildSlot(pid_t pid) {
    for (auto& s : g_children)
      if (pid_t free = 0; s.compare_exchange_strong(free, pid)) {
        slot_ = &s;
        return;
      }
  }
  ~ChildSlot() {
    if (slot_) slot_->store(0);
  }
  ChildSlot(const ChildSlot&) = delete;
  ChildSlot& operator=(const ChildSlot&) = delete;

 private:
  std::atomic<pid_t>* slot_ = nullptr;
};

extern "C" void end_children_then_die(int sig) {
  for (auto& s : g_children)
    if (pid_t pid = s.load(); pid > 0) ::kill(pid, SIGTERM);
  remove_registered_dirs();  // private temp and uncommitted staging folders (core/signal_cleanup.h)
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered once the handler returns: the signal's own default action
}

void wait_child(bp::child& c, const RunOptions& opt, RunResult& r) {
  ChildSlot slot(c.id());
  if (opt.timeout && !c.wait_for(*opt.timeout)) {
    r.timed_out = true;
    c.terminate();
  }
  c.wait();
  r.exit_code = r.timed_out ? -1 : c.exit_code();
}

}  // namespace

void end_children_on_signal() {
  struct sigaction sa {};
  sa.sa_handler = end_children_then_die;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& opt) {
  if (argv.empty()) throw Error("run: empty command");
  auto exe = bp::search_path(argv[0]);
  if (argv[0].find('/') != std::string::npos) exe = argv[0];
  if (exe.empty()) throw Error("program not found in PATH: " + argv[0]);
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  auto env = boost::this_process::environment();
  bp::environment child_env = env;
  for (auto& [k, v] : opt.env) child_env[k] = v;
  std::string cwd = opt.cwd.empty() ? fs::current_path().string() : opt.cwd;
  RunResult r;
  bp::opstream in(cloexec_pipe());
  auto feed = [&] {
    if (!opt.stdin_data.empty()) in.write(opt.stdin_data.data(), opt.stdin_data.size());
    in.flush();
    in.pipe().close();
  };
  if (!opt.log_path.empty()) {  // both streams into the log as they come; `out` holds them merged
    RunLog log(opt.log_path, argv);
    bp::child c(exe, bp::args(args), (bp::std_out & bp::std_err) > log.file(), bp::std_in < in, child_env,
                bp::start_dir(cwd));
    feed();
    wait_child(c, opt, r);
    r.out = log.output();
    log.finish(r, opt);
    return r;
  }
  PrivateTempDir tmp("imgtool-run-");
  fs::path out_p = tmp / "out", err_p = tmp / "err";
  bp::child c(exe, bp::args(args), bp::std_out > out_p.string(), bp::std_err > err_p.string(), bp::std_in < in, child_env,
              bp::start_dir(cwd));
  feed();
  wait_child(c, opt, r);
  r.out = slurp(out_p);
  r.err = slurp(err_p);
  return r;
}

}  // namespace imgtool
