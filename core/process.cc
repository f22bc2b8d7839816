#include "core/process.h"

#include <unistd.h>

#include <cstdlib>
#include <boost/process.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

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

// A private folder (mkdtemp: unpredictable name, mode 0700) for one child's
// stdout/stderr: no other user can pre-create, link or read the files in it
// (a credential helper's answer passes through here). Removed on destruction.
class PrivateDir {
 public:
  PrivateDir() {
    std::string tmpl = (fs::temp_directory_path() / "imgtool-run-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw Error("cannot create a private temporary folder in " + fs::temp_directory_path().string());
    path_ = tmpl;
  }
  ~PrivateDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  fs::path operator/(const char* name) const { return path_ / name; }

 private:
  fs::path path_;
};

}  // namespace

bool have_program(const std::string& name) { return !bp::search_path(name).empty(); }

RunResult run(const std::vector<std::string>& argv, const RunOptions& opt) {
  if (argv.empty()) throw Error("run: empty command");
  auto exe = bp::search_path(argv[0]);
  if (argv[0].find('/') != std::string::npos) exe = argv[0];
  if (exe.empty()) throw Error("program not found in PATH: " + argv[0]);
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  PrivateDir tmp;
  fs::path out_p = tmp / "out", err_p = tmp / "err";
  auto env = boost::this_process::environment();
  bp::environment child_env = env;
  for (auto& [k, v] : opt.env) child_env[k] = v;
  RunResult r;
  bp::opstream in;
  bp::child c(exe, bp::args(args), bp::std_out > out_p.string(), bp::std_err > err_p.string(),
              bp::std_in < in, child_env, bp::start_dir(opt.cwd.empty() ? fs::current_path().string() : opt.cwd));
  if (!opt.stdin_data.empty()) in.write(opt.stdin_data.data(), opt.stdin_data.size());
  in.flush();
  in.pipe().close();
  if (opt.timeout) {
    if (!c.wait_for(*opt.timeout)) {
      r.timed_out = true;
      c.terminate();
      c.wait();
    }
  } else {
    c.wait();
  }
  r.exit_code = r.timed_out ? -1 : c.exit_code();
  r.out = slurp(out_p);
  r.err = slurp(err_p);
  if (!opt.log_path.empty()) {
    std::ofstream log(opt.log_path, std::ios::app | std::ios::binary);
    log << "$";
    for (auto& a : argv) log << ' ' << a;
    log << '\n' << r.out << r.err;
    if (r.timed_out) log << "[imgtool] timed out after " << opt.timeout->count() << "s\n";
    log << "[imgtool] exit " << r.exit_code << '\n';
  }
  return r;
}

}  // namespace imgtool
