#include "scan/loader.h"

#include <fnmatch.h>

#include <set>

#include "core/strings.h"
#include "scan/name_match.h"

namespace imgtool::scan {

namespace {

// The loader's trusted directories on x86_64 Debian/Ubuntu (ld.so(8)) and the multiarch ones
// Debian's ld.so.conf.d/x86_64-linux-gnu.conf adds.
const std::vector<std::string> kDefaultDirs = {
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"};

// The driver's libraries (mounted by the NVIDIA hook at run time, from the host), and the loader
// itself (always loaded: a DT_NEEDED of it is matched by soname, never searched).
const char* const kDriverPrefixes[] = {"libcuda.so",    "libnvidia-",         "libnvcuvid.so",
                                       "libnvoptix.so", "libcudadebugger.so", "ld-linux"};

std::string env_value(const std::vector<std::string>& env, const std::string& key) {
  for (const auto& kv : env)
    if (kv.rfind(key + "=", 0) == 0) return kv.substr(key.size() + 1);
  return "";
}

std::vector<std::string> nonempty_parts(const std::vector<std::string>& parts) {
  std::vector<std::string> out;
  for (const auto& p : parts)
    if (!p.empty()) out.push_back(p);
  return out;
}

// Files of the tree matching a glob (as ldconfig's `include` expands it), sorted.
std::vector<std::string> glob(const ContentsTree& t, const std::string& pattern) {
  std::vector<std::string> out;
  std::string dir = t.resolve(dirname_of(pattern)).value_or(dirname_of(pattern));
  std::string base = basename_of(pattern);
  for (auto it = t.entries().lower_bound(dir + "/"); it != t.entries().end() && it->first.rfind(dir + "/", 0) == 0;
       ++it)
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
  for (const auto& raw : strings::split_lines(*e->content)) {
    std::string line = strings::trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      for (auto pat : nonempty_parts(strings::split(strings::trim(line.substr(8)), ' '))) {
        if (pat[0] != '/') pat = "/etc/" + pat;
        for (const auto& f : glob(t, pat)) read_conf(t, f, out, depth + 1);
      }
      continue;
    }
    for (char& c : line)
      if (c == ':' || c == ',' || c == '\t') c = ' ';
    for (const auto& d : nonempty_parts(strings::split(line, ' '))) out.push_back({d, path});
  }
}

}  // namespace

std::string Resolution::describe() const {
  std::string s = path;
  if (real != path) s += " -> " + real;
  s += " (" + (version.empty() ? std::string("version unknown") : version + ", from " + version_from) + "; via " + via +
       ")";
  return s;
}

std::vector<SearchDir> loader_search_dirs(const ContentsTree& tree, const std::vector<std::string>& env) {
  std::vector<SearchDir> out;
  for (const auto& d : nonempty_parts(strings::split(env_value(env, "LD_LIBRARY_PATH"), ':')))
    out.push_back({d, "LD_LIBRARY_PATH"});
  read_conf(tree, "/etc/ld.so.conf", out, 0);
  for (const auto& d : kDefaultDirs) out.push_back({d, "default"});
  return out;
}

bool read_dynamic_for_loader(const std::string& path) {
  std::string base = basename_of(path);
  return base.rfind("lib", 0) == 0 && base.find(".so") != std::string::npos;
}

bool examine_for_loader(const std::string& path) {
  std::string base = basename_of(path);
  return examine_for_facts(path) || base == "libcudnn.so" || base.rfind("libcudnn.so.", 0) == 0;
}

bool driver_library(const std::string& name) {
  for (const char* prefix : kDriverPrefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

bool keep_for_loader(const std::string& path, int64_t size) {
  return size <= (1 << 16) && (path == "/etc/ld.so.conf" || path.rfind("/etc/ld.so.conf.d/", 0) == 0);
}

ImageLoader::ImageLoader(const ContentsTree& tree, const ContentsFacts& facts, const std::vector<std::string>& env)
    : tree_(tree), facts_(facts), system_(loader_search_dirs(tree, env)) {}

std::string ImageLoader::version_of(const std::string& real, std::string* from) const {
  if (auto o = facts_.owners.find(real); o != facts_.owners.end()) {
    if (from) *from = o->second.dist;
    return o->second.version;
  }
  std::string base = basename_of(real);
  size_t so = base.find(".so.");
  if (so == std::string::npos) return "";
  auto v = names::versioned(base, base.substr(0, so + 4));
  if (v && from) *from = "its file name";
  return v.value_or("");
}

Resolution ImageLoader::resolve(const std::string& name, const std::vector<SearchDir>& dirs) const {
  Resolution r{name, "", "", "", "", ""};
  for (const auto& d : dirs) {
    auto p = tree_.resolve(d.dir + "/" + name);
    const FsEntry* e = p ? tree_.find(*p) : nullptr;
    if (!e || e->type == FsEntry::Type::kDir) continue;
    r.path = d.dir + "/" + name;
    r.via = d.via;
    r.real = *p;
    r.version = version_of(*p, &r.version_from);
    return r;
  }
  return r;
}

const ElfDynamic* ImageLoader::dynamic_of(const std::string& real) const {
  const FsEntry* e = tree_.find(real);
  return e && e->elf ? e->elf.get() : nullptr;
}

std::vector<SearchDir> ImageLoader::dirs_for(const std::string& path, const ElfDynamic& elf) const {
  const std::string origin = dirname_of(path), base = basename_of(path);
  auto expand = [&](const std::vector<std::string>& list, const std::string& via, std::vector<SearchDir>& out) {
    for (auto d : list) {
      for (const char* o : {"${ORIGIN}", "$ORIGIN"})
        for (size_t at; (at = d.find(o)) != std::string::npos;) d.replace(at, std::string(o).size(), origin);
      out.push_back({ContentsTree::normalize(d), via + " of " + base});
    }
  };
  std::vector<SearchDir> out;
  if (elf.runpath.empty()) expand(elf.rpath, "RPATH", out);
  size_t i = 0;
  for (; i < system_.size() && system_[i].via == "LD_LIBRARY_PATH"; ++i) out.push_back(system_[i]);
  expand(elf.runpath, "RUNPATH", out);
  out.insert(out.end(), system_.begin() + static_cast<long>(i), system_.end());
  return out;
}

std::vector<Need> ImageLoader::needs(const Resolution& r, std::vector<std::string>* unread) const {
  std::vector<Need> out;
  std::set<std::string> seen = {r.real};
  std::vector<std::pair<std::string, std::string>> todo = {{r.path, r.real}};  // (path as found, real file)
  for (size_t next = 0; next < todo.size() && out.size() < kMaxNeeds; ++next) {
    const auto [path, real] = todo[next];  // a copy: todo grows below
    const ElfDynamic* elf = dynamic_of(real);
    if (!elf) continue;  // the tree was not asked to read it
    if ((!elf->elf || elf->unread) && unread) unread->push_back(path);
    if (!elf->elf) continue;
    std::vector<SearchDir> dirs = dirs_for(path, *elf);
    for (const auto& name : elf->needed) {
      Need n{path, name, {name, "", "", "", "", ""}, driver_library(name)};
      if (!n.driver) n.res = resolve(name, dirs);
      if (n.res.found() && seen.insert(n.res.real).second) todo.push_back({n.res.path, n.res.real});
      out.push_back(std::move(n));
      if (out.size() >= kMaxNeeds) break;
    }
  }
  return out;
}

std::vector<Need> ImageLoader::dlopens(const Resolution& r, const std::string& family) const {
  std::vector<Need> out;
  const FsEntry* e = tree_.find(r.real);
  if (!e || !e->dlopen_names) return out;
  const ElfDynamic* elf = dynamic_of(r.real);
  std::vector<SearchDir> dirs = elf && elf->elf ? dirs_for(r.path, *elf) : system_;
  // cuDNN 9's libcudnn.so.9 holds its parts' names unversioned ("libcudnn_graph.so") and opens them
  // with its own major appended: its wheel ships libcudnn_graph.so.9 and nothing unversioned.
  std::string real = basename_of(r.real), major;
  if (auto so = real.find(".so."); so != std::string::npos)
    major = real.substr(so + 4, real.find('.', so + 4) - so - 4);
  std::set<std::string> opened;
  for (const auto& held : *e->dlopen_names) {
    if (held.rfind(family, 0) != 0 || held == real) continue;
    std::string name = held.ends_with(".so") && !major.empty() ? held + "." + major : held;
    if (opened.insert(name).second) out.push_back({r.path, name, resolve(name, dirs), false});
  }
  return out;
}

std::vector<LibraryCopy> ImageLoader::copies(const std::string& soname) const {
  std::vector<LibraryCopy> out;
  for (const auto& [path, e] : tree_.entries()) {
    if (e.type != FsEntry::Type::kFile) continue;
    std::string base = basename_of(path);
    if (base != soname && base.rfind(soname + ".", 0) != 0) continue;
    out.push_back({path, version_of(path)});
  }
  return out;
}

}  // namespace imgtool::scan
