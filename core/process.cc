#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/process.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

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
  RunLog(const std::string& path, const std::vector<std::string>& argv)
      : file_(std::fopen(path.c_str(), "abe")), path_(path) {
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

// Both output streams of a child through close-on-exec pipes, read on a thread of its own (two
// pipes read one after the other could deadlock: the child blocks on a full stderr while we wait
// for stdout's end). At most `cap` bytes of each are kept; the rest is read and dropped, so the
// child never blocks and nothing grows past the cap. Once the child has been reaped (finish), what
// the pipes still hold is read; a pipe some grandchild keeps open is given up after a quiet 100 ms
// or 2 s at most, so run() never waits on a process it did not start.
class CappedCapture {
 public:
  explicit CappedCapture(size_t cap) : cap_(cap), out_pipe_(cloexec_pipe()), err_pipe_(cloexec_pipe()) {}
  ~CappedCapture() { stop(); }
  CappedCapture(const CappedCapture&) = delete;
  CappedCapture& operator=(const CappedCapture&) = delete;
  bp::pipe& out_pipe() { return out_pipe_; }
  bp::pipe& err_pipe() { return err_pipe_; }
  // After the child started (Boost has closed the parent's write ends by then). The reader thread
  // blocks every signal, so none (SIGCHLD, end_children_on_signal's) is ever handled on a helper
  // that only reads pipes.
  void start() {
    out_.fd = out_pipe_.native_source();
    err_.fd = err_pipe_.native_source();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    thread_ = std::thread([this] { loop(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  // After the child was reaped: the rest of the pipes, then the kept bytes (and notes) into `r`.
  void finish(RunResult& r) {
    stop();
    r.out = std::move(out_.kept);
    r.err = std::move(err_.kept);
    r.out_dropped = out_.dropped;
    r.err_dropped = err_.dropped;
    if (r.out_dropped) r.out += cut_note("stdout", cap_, r.out_dropped);
    if (r.err_dropped) r.err += cut_note("stderr", cap_, r.err_dropped);
  }

 private:
  struct Stream {
    int fd = -1;
    bool open = true;
    std::string kept;
    uint64_t dropped = 0;
  };

  void stop() {
    if (!thread_.joinable()) return;
    done_ = true;
    thread_.join();
  }
  void loop() {
    std::chrono::steady_clock::time_point give_up{};
    while (out_.open || err_.open) {
      if (done_ && give_up == std::chrono::steady_clock::time_point{})
        give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      if (done_ && std::chrono::steady_clock::now() > give_up) return;
      pollfd p[2];
      Stream* s[2];
      nfds_t n = 0;
      for (Stream* x : {&out_, &err_})
        if (x->open) s[n] = x, p[n++] = {x->fd, POLLIN, 0};
      int k = ::poll(p, n, 100);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 || (k == 0 && done_)) return;
      for (nfds_t i = 0; i < n; ++i)
        if (p[i].revents) read_some(*s[i]);
    }
  }
  void read_some(Stream& s) {
    ssize_t got = ::read(s.fd, buf_.data(), buf_.size());
    if (got < 0 && errno == EINTR) return;
    if (got <= 0) {
      s.open = false;
      return;
    }
    size_t keep = std::min<size_t>(static_cast<size_t>(got), cap_ - std::min(cap_, s.kept.size()));
    s.kept.append(buf_.data(), keep);
    s.dropped += static_cast<size_t>(got) - keep;
  }

  size_t cap_;
  bp::pipe out_pipe_, err_pipe_;
  Stream out_, err_;
  std::atomic<bool> done_{false};
  std::thread thread_;
  std::vector<char> buf_ = std::vector<char>(64 * 1024);
};

extern "C" void end_children_then_die(int sig) {
  for (auto& s : g_children)
    if (pid_t pid = s.load(); pid > 0) ::kill(pid, SIGTERM);
  remove_registered_dirs();  // private temp and uncommitted staging folders (core/signal_cleanup.h)
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered once the handler returns: the signal's own default action
}

// Boost 1.74's wait_for waits for SIGCHLD in sigtimedwait without blocking it first: a child that
// ends before the wait starts (a quick `sh -c`), or a SIGCHLD another thread takes, leaves it asleep
// for the whole timeout. running() reaps with waitpid(WNOHANG) and keeps the exit status, so polling
// it with a growing pause (1 ms up to 50 ms) cannot miss the end.
bool wait_until(bp::child& c, std::chrono::steady_clock::time_point deadline) {
  auto pause = std::chrono::milliseconds(1);
  std::error_code ec;
  while (c.running(ec) && !ec) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  return true;
}

void wait_child(bp::child& c, const RunOptions& opt, RunResult& r) {
  ChildSlot slot(c.id());
  if (opt.timeout && !wait_until(c, std::chrono::steady_clock::now() + *opt.timeout)) {
    r.timed_out = true;
    c.terminate();
  }
  c.wait();
  r.exit_code = r.timed_out ? -1 : c.exit_code();
}

}  // namespace

std::string cut_note(const std::string& stream, size_t cap, uint64_t dropped) {
  return "\n[imgtool] " + stream + " cut at " + std::to_string(cap) + " bytes: " + std::to_string(dropped) +
         " more bytes were read and dropped\n";
}

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
  if (opt.max_output > 0) {  // both streams through pipes, each kept up to the cap
    CappedCapture cap(opt.max_output);
    bp::child c(exe, bp::args(args), bp::std_out > cap.out_pipe(), bp::std_err > cap.err_pipe(), bp::std_in < in,
                child_env, bp::start_dir(cwd));
    cap.start();
    feed();
    wait_child(c, opt, r);
    cap.finish(r);
    return r;
  }
  PrivateTempDir tmp("imgtool-run-");
  fs::path out_p = tmp / "out", err_p = tmp / "err";
  bp::child c(exe, bp::args(args), bp::std_out > out_p.string(), bp::std_err > err_p.string(), bp::std_in < in,
              child_env, bp::start_dir(cwd));
  feed();
  wait_child(c, opt, r);
  r.out = slurp(out_p);
  r.err = slurp(err_p);
  return r;
}

}  // namespace imgtool
