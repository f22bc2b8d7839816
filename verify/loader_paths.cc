#include "verify/loader_paths.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "verify/name_match.h"

namespace imgtool::verify {

namespace {

// The loader's trusted directories on x86_64 Debian/Ubuntu (ld.so(8)) and the multiarch ones
// Debian's ld.so.conf.d/x86_64-linux-gnu.conf adds.
const std::vector<std::string> kDefaultDirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                                               "/usr/lib64", "/lib", "/usr/lib"};

// The CUDA libraries whose lookup is checked: basenames STEM.so.N[.N…] (names::versioned: plain
// string code, never std::regex on a layer's paths).
const char* const kCudaLibs[] = {"libcudart", "libcublas", "libcublasLt", "libcudnn", "libnccl", "libnvinfer",
                                 "libnvrtc", "libcurand", "libcusolver", "libcusparse", "libcufft"};

// "libcudart.so.12.6" -> "libcudart"; nullopt for any other name.
std::optional<std::string> cuda_lib_stem(const std::string& base) {
  for (const char* stem : kCudaLibs)
    if (names::versioned(base, std::string(stem) + ".so.")) return std::string(stem);
  return std::nullopt;
}


std::string env_value(const std::vector<std::string>& env, const std::string& key) {
  for (const auto& kv : env)
    if (kv.rfind(key + "=", 0) == 0) return kv.substr(key.size() + 1);
  return "";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Files of the tree matching a glob (as ldconfig's `include` expands it), sorted.
std::vector<std::string> glob(const ContentsTree& t, const std::string& pattern) {
  std::vector<std::string> out;
  std::string dir = t.resolve(dirname_of(pattern)).value_or(dirname_of(pattern));
  std::string base = basename_of(pattern);
  for (auto it = t.entries().lower_bound(dir + "/"); it != t.entries().end() && it->first.rfind(dir + "/", 0) == 0; ++it)
    if (dirname_of(it->first) == dir && fnmatch(base.c_str(), basename_of(it->first).c_str(), 0) == 0)
      out.push_back(it->first);
  return out;
}

// ld.so.conf: one directory per line (or several separated by spaces, colons, commas),
// `#` comments, `include GLOB` (relative globs are relative to /etc).
void read_conf(const ContentsTree& t, const std::string& path, std::vector<SearchDir>& out, int depth) {
  auto real = t.resolve(path);
  const FsEntry* e = real ? t.find(*real) : nullptr;
  if (!e || !e->content || depth > 8) return;
  for (const auto& raw : split(*e->content, '\n')) {
    std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      for (auto pat : split(trim(line.substr(8)), ' ')) {
        if (pat[0] != '/') pat = "/etc/" + pat;
        for (const auto& f : glob(t, pat)) read_conf(t, f, out, depth + 1);
      }
      continue;
    }
    for (char& c : line)
      if (c == ':' || c == ',' || c == '\t') c = ' ';
    for (const auto& d : split(line, ' ')) out.push_back({d, path});
  }
}

// The name the loader is asked for: the shortest versioned name present per library stem.
std::map<std::string, std::vector<std::string>> wanted_names(const ContentsTree& t) {
  std::map<std::string, std::string> soname;  // stem -> name
  std::map<std::string, std::vector<std::string>> where;  // name -> paths holding it
  for (const auto& [path, e] : t.entries()) {
    std::string base = basename_of(path);
    if (e.type == FsEntry::Type::kDir) continue;
    auto stem = cuda_lib_stem(base);
    if (!stem || !t.resolve(path)) continue;
    where[base].push_back(path);
    std::string& s = soname[*stem];
    if (s.empty() || std::count(base.begin(), base.end(), '.') < std::count(s.begin(), s.end(), '.')) s = base;
  }
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [stem, name] : soname) out[name] = where[name];
  return out;
}

bool paddle2_gpu(const ContentsFacts& f) {
  return std::any_of(f.paddles.begin(), f.paddles.end(), [](const PaddleDist& d) { return d.gpu && d.version.rfind("2.", 0) == 0; });
}

std::vector<std::string> unversioned_cudnn(const ContentsTree& t) {
  std::vector<std::string> out;
  for (const auto& [path, e] : t.entries())
    if (basename_of(path) == "libcudnn.so" && t.resolve(path)) out.push_back(path);
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

CheckResult lookup(const ContentsTree& t, const std::vector<SearchDir>& dirs, const std::string& name,
                   const std::vector<std::string>& exists) {
  CheckResult r{"contents.loader." + name, name + " is found at run time", Status::kPass,
                name + " in a directory the loader or Paddle searches (LD_LIBRARY_PATH, ld.so.conf, defaults, Paddle's paths)",
                "", ""};
  for (const auto& d : dirs) {
    if (auto p = t.resolve(d.dir + "/" + name); p && t.find(*p) && t.find(*p)->type != FsEntry::Type::kDir) {
      r.found = d.dir + "/" + name + " (via " + d.via + ")";
      return r;
    }
  }
  r.status = Status::kFail;
  r.found = "only at " + join(exists, ", ") + ", in no searched directory";
  std::string dir = dirname_of(exists.front());
  r.fix = "add " + dir + " to a file in /etc/ld.so.conf.d/ and run ldconfig in the image (or set ENV LD_LIBRARY_PATH=" + dir +
          ":$LD_LIBRARY_PATH), or link " + name + " into /usr/local/cuda/lib64";
  return r;
}

}  // namespace

bool keep_for_loader(const std::string& path, int64_t size) {
  return size <= (1 << 16) && (path == "/etc/ld.so.conf" || path.rfind("/etc/ld.so.conf.d/", 0) == 0);
}

std::vector<SearchDir> loader_search_dirs(const ContentsTree& tree, const ContentsFacts& facts,
                                          const std::vector<std::string>& env) {
  std::vector<SearchDir> out;
  for (const auto& d : split(env_value(env, "LD_LIBRARY_PATH"), ':')) out.push_back({d, "LD_LIBRARY_PATH"});
  read_conf(tree, "/etc/ld.so.conf", out, 0);
  for (const auto& d : kDefaultDirs) out.push_back({d, "default"});
  std::set<std::string> sites;
  for (const auto& p : facts.paddles)
    if (auto site = names::site_packages(p.location)) sites.insert(site->dir);
  for (const auto& site : sites) {
    out.push_back({site + "/paddle/libs", "Paddle"});
    // <site>/nvidia/<pkg>/lib, from any entry under it (layers may omit directory entries).
    std::set<std::string> libdirs;
    const std::string nv = site + "/nvidia/";
    for (auto it = tree.entries().lower_bound(nv); it != tree.entries().end() && it->first.rfind(nv, 0) == 0; ++it) {
      auto slash = it->first.find('/', nv.size());
      if (slash != std::string::npos && it->first.compare(slash, 5, "/lib/") == 0) libdirs.insert(it->first.substr(0, slash + 4));
    }
    for (const auto& d : libdirs) out.push_back({d, "Paddle (pip layout)"});
  }
  return out;
}

std::vector<CheckResult> check_loader_paths(const ContentsTree& tree, const ContentsFacts& facts,
                                            const std::vector<std::string>& env) {
  auto names = wanted_names(tree);
  if (paddle2_gpu(facts)) {
    auto links = unversioned_cudnn(tree);
    if (!links.empty()) names["libcudnn.so"] = links;
  }
  if (names.empty()) return {};
  auto dirs = loader_search_dirs(tree, facts, env);
  std::vector<CheckResult> out;
  for (const auto& [name, exists] : names) out.push_back(lookup(tree, dirs, name, exists));
  return out;
}

}  // namespace imgtool::verify
