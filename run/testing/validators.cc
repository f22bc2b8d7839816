#include "run/testing/validators.h"

#include <set>
#include <sstream>

#include "core/error.h"
#include "core/process.h"
#include "run/render.h"

namespace imgtool::runconf::testing {
namespace {

struct DockerFlags {
  std::set<std::string> with_value, without_value;
};

// `docker run --help`'s option lines: "  -v, --volume list   Bind mount a volume" (a value type
// after the names) or "      --rm   Automatically remove …" (none). Names end at two spaces.
DockerFlags docker_run_flags_known() {
  auto r = imgtool::run({"docker", "run", "--help"});
  if (!r.ok()) throw Error("docker run --help: " + r.err);
  DockerFlags f;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] != '-') continue;
    std::istringstream words(line.substr(start, line.find("  ", start) - start));
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x.back() == ',' ? x.substr(0, x.size() - 1) : x);
    bool value = w.back()[0] != '-';
    for (auto& name : w)
      if (name[0] == '-') (value ? f.with_value : f.without_value).insert(name);
  }
  return f;
}

const DockerFlags& known() {
  static const DockerFlags f = docker_run_flags_known();
  return f;
}

// The words' structure: docker run, known flags (with their values), the image, the command.
std::string argv_problem(const std::vector<std::string>& w, const std::string& image,
                         const std::vector<std::string>& command) {
  if (w.size() < 3 || w[0] != "docker" || w[1] != "run") return "expected `docker run …`";
  size_t i = 2;
  for (; i < w.size() && w[i][0] == '-'; ++i) {
    if (known().with_value.count(w[i]))
      ++i;
    else if (!known().without_value.count(w[i]))
      return "flag " + w[i] + " is not a `docker run` flag";
  }
  if (i >= w.size() || w[i] != image)
    return "expected the image " + image + " after the flags, found " + (i < w.size() ? w[i] : "nothing");
  if (std::vector<std::string>(w.begin() + long(i) + 1, w.end()) != command)
    return "the words after the image are not the command";
  return "";
}

}  // namespace

std::vector<std::string> shell_words(const std::string& line) {
  auto r = imgtool::run({"sh", "-c", "printf '%s\\0' " + line});
  if (!r.ok()) throw Error("sh could not split: " + line + ": " + r.err);
  std::vector<std::string> w;
  for (size_t a = 0, z; (z = r.out.find('\0', a)) != std::string::npos; a = z + 1) w.push_back(r.out.substr(a, z - a));
  return w;
}

std::string docker_run_problem(const std::string& line, const std::string& image,
                               const std::vector<std::string>& command) {
  auto words = shell_words(line);
  if (auto p = argv_problem(words, image, command); !p.empty()) return p;
  RunOptions no_daemon;
  no_daemon.env["DOCKER_HOST"] = "unix:///nonexistent/imgtool-test/docker.sock";
  auto r = imgtool::run(words, no_daemon);
  if (r.err.find("Cannot connect to the Docker daemon") == std::string::npos)
    return "docker refused the words: " + r.err;
  return "";
}

std::string compose_problem(const std::filesystem::path& file) {
  auto r = imgtool::run({"docker-compose", "-f", file.string(), "config"});
  return r.ok() ? "" : "docker-compose config: " + r.out + r.err;
}

std::map<std::string, std::string> k8s_problems(const std::vector<std::filesystem::path>& files) {
  std::vector<std::string> argv = {"kubernetes-validate", "--strict", "-k", kK8sVersion};
  for (auto& f : files) argv.push_back(f.string());
  auto r = imgtool::run(argv);
  std::map<std::string, std::string>
      out;  // "INFO F passed for …" clears a file; any other line about it is its problem
  for (auto& f : files) out[f.string()] = "not named in kubernetes-validate's output: " + r.out + r.err;
  std::set<std::string> failed;
  std::istringstream in(r.out + r.err);
  for (std::string line; std::getline(in, line);)
    for (auto& f : files) {
      if (line.find(" " + f.string() + " ") == std::string::npos) continue;
      bool passed = line.rfind("INFO " + f.string() + " passed ", 0) == 0;
      if (!passed) failed.insert(f.string());
      if (!passed || !failed.count(f.string())) out[f.string()] = passed ? "" : line;
    }
  return out;
}

}  // namespace imgtool::runconf::testing
