#include "kb/wheel.h"

#include <cctype>
#include <set>

#include "core/error.h"
#include "core/hash.h"
#include "core/strings.h"
#include "scan/name_match.h"

namespace imgtool::kb {

namespace {

constexpr uint64_t kMaxText = 8u << 20;  // METADATA, WHEEL, the version file
constexpr const char* kVersionFile = "paddle/version/__init__.py";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_shared_library(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return path.rfind("paddle/", 0) == 0 && (ends_with(base, ".so") || base.find(".so.") != std::string::npos);
}

// Where pip installs an entry, relative to site-packages: <dist>.data/purelib/ and
// <dist>.data/platlib/ are unpacked there like the wheel's root (scripts, headers, data go elsewhere).
std::string install_path(const std::string& name) {
  size_t slash = name.find('/');
  if (slash == std::string::npos || !ends_with(name.substr(0, slash), ".data")) return name;
  for (std::string scheme : {"purelib/", "platlib/"})
    if (name.compare(slash + 1, scheme.size(), scheme) == 0) return name.substr(slash + 1 + scheme.size());
  return name;
}

// One file per installed path, one *.dist-info folder (pip refuses a wheel with two).
void check_install_paths(const std::vector<ZipEntry>& entries, const std::string& where) {
  std::set<std::string> paths, dist_info;
  for (const auto& e : entries) {
    std::string dir = e.name.substr(0, e.name.find('/'));
    if (ends_with(dir, ".dist-info") && dir != e.name) dist_info.insert(dir);
    if (e.name.back() != '/' && !paths.insert(install_path(e.name)).second)
      throw InputError(where + ": " + strings::printable(e.name) + ": expected one file per installed path, found " +
                       strings::printable(install_path(e.name)) + " twice");
  }
  if (dist_info.size() > 1)
    throw InputError(where + ": expected one *.dist-info folder, found " + std::to_string(dist_info.size()) + " (" +
                     strings::printable(*dist_info.begin()) + ", " + strings::printable(*std::next(dist_info.begin())) +
                     ")");
}

// "Key: value" header lines of an email-style METADATA (continuation lines ignored).
void read_metadata(const std::string& text, WheelFacts& w) {
  for (const auto& line : strings::split_lines(text)) {
    if (line.empty()) break;  // the description body follows the headers
    auto value = [&](const std::string& key) -> std::optional<std::string> {
      if (line.rfind(key + ": ", 0) != 0) return std::nullopt;
      return line.substr(key.size() + 2);
    };
    if (auto v = value("Name")) w.name = *v;
    if (auto v = value("Version")) w.version = *v;
    if (auto v = value("Requires-Python")) w.requires_python = *v;
    if (auto v = value("Requires-Dist")) w.requires_dist.push_back(*v);
    const std::string py = "Classifier: Programming Language :: Python :: 3.";
    if (line.rfind(py, 0) == 0 && line.size() > py.size() &&
        line.find_first_not_of("0123456789", py.size()) == std::string::npos)
      w.python_classifiers.push_back(line.substr(py.size() - 2));
  }
}

void read_wheel_file(const std::string& text, WheelFacts& w) {
  for (const auto& line : strings::split_lines(text))
    if (line.rfind("Tag: ", 0) == 0) w.tags.push_back(line.substr(5));
}

// The version file's values derive reads (kb/derive.h): checked (below). The others are kept as
// found and read by no one here.
const char* const kVersionFields[] = {"cuda_version", "cudnn_version", "nccl_version", "tensorrt_version"};
const char* const kOtherVars[] = {"full_version",      "cinn_version", "with_pip_cuda_libraries",
                                  "with_pip_tensorrt", "commit",       "with_mkl"};

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool one_of(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

// Whether the name in text[at, after) is bound there: `name = …` at a statement's start (a line's,
// after ';' or ':') or in a target list (after '=', ',', '(' or '['); `name: T = …` and
// `name += …` at a statement's start. (Not inside a string: print('cuda_version:', x) binds nothing.)
bool binds(const std::string& text, size_t at, size_t after) {
  size_t b = at == 0 ? std::string::npos : text.find_last_not_of(" \t", at - 1);
  char before = b == std::string::npos ? '\n' : text[b];
  size_t i = text.find_first_not_of(" \t", after);
  if (i == std::string::npos) return false;
  bool statement = one_of(before, "\n;:");
  bool assign = text[i] == '=' && text.compare(i, 2, "==") != 0;
  bool augmented = i + 1 < text.size() && text[i + 1] == '=' && one_of(text[i], "+-*/%&|^@");
  return (assign && (statement || one_of(before, "=,(["))) || (statement && (text[i] == ':' || augmented));
}

// Offsets of every statement that binds `name`.
std::vector<size_t> bindings(const std::string& text, const std::string& name) {
  std::vector<size_t> out;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    size_t after = at + name.size();
    bool word = (at == 0 || !ident_char(text[at - 1])) && (after == text.size() || !ident_char(text[after]));
    if (word && binds(text, at, after)) out.push_back(at);
  }
  return out;
}

// "= '12.6'  # comment" (what follows the name on its line) -> "12.6"; None / False bare -> that
// word; nullopt for any other form.
std::optional<std::string> plain_value(std::string rest) {
  rest = strings::trim(rest.substr(0, rest.find('#')));
  if (rest.empty() || rest[0] != '=') return std::nullopt;
  rest = strings::trim(rest.substr(1));
  if (rest == "None" || rest == "False") return rest;
  if (rest.size() < 2 || (rest[0] != '\'' && rest[0] != '"') || rest.back() != rest[0]) return std::nullopt;
  std::string v = rest.substr(1, rest.size() - 2);
  return v.find_first_of(std::string(1, rest[0]) + "\\") == std::string::npos ? std::optional(v) : std::nullopt;
}

// Digits and dots ("12.6", "8.9.7", a CPU build's "0"), or a CPU build's False / None / "".
bool plain_version(const std::string& v) {
  if (v.empty() || v == "False" || v == "None") return true;
  for (const auto& part : strings::split(v, '.'))
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
  return true;
}

// The one line `name = '<plain version>'` at the file's top level, or nothing.
std::optional<std::string> version_field(const std::string& text, const std::string& name, const std::string& where) {
  std::vector<size_t> at = bindings(text, name);
  if (at.empty()) return std::nullopt;
  std::string line = text.substr(at[0], text.find('\n', at[0]) - at[0]);
  std::optional<std::string> v = plain_value(line.substr(name.size()));
  if (at.size() > 1 || (at[0] > 0 && text[at[0] - 1] != '\n') || !v)
    throw InputError(where + ": " + name + ": expected one top-level line " + name + " = '<version>', found " +
                     (at.size() > 1 ? std::to_string(at.size()) + " assignments" : strings::quoted(line)));
  if (!plain_version(*v))
    throw InputError(where + ": " + name +
                     ": expected a plain version (digits and dots: '12.6', '8.9.7') or 'False' / "
                     "'None', found " +
                     strings::quoted(*v));
  return v;
}

void read_version_file(const std::string& text, WheelFacts& w, const std::string& where) {
  w.has_version_file = true;
  for (const char* name : kOtherVars)
    if (std::string v = scan::names::py_string_var(text, name); !v.empty()) w.version_vars[name] = v;
  for (const char* name : kVersionFields)
    if (auto v = version_field(text, name, where); v && !v->empty()) w.version_vars[name] = *v;
  w.compiled_cuda_archs = py_list_var(text, "compiled_cuda_archs");
}

enum class Role { kSkip, kMetadata, kWheelFile, kVersionFile, kLibrary };

Role role_of(const std::string& name) {
  std::string dir = name.substr(0, name.find('/'));
  if (ends_with(dir, ".dist-info") && name == dir + "/METADATA") return Role::kMetadata;
  if (ends_with(dir, ".dist-info") && name == dir + "/WHEEL") return Role::kWheelFile;
  std::string path = install_path(name);
  if (path == kVersionFile) return Role::kVersionFile;
  return is_shared_library(path) ? Role::kLibrary : Role::kSkip;
}

// The entries a wheel's facts come from, inflated within the budget; the rest passed over.
class WheelVisitor : public ZipVisitor {
 public:
  WheelVisitor(WheelFacts& w, const std::string& where, uint64_t budget) : w_(w), where_(where), budget_(budget) {}

  bool want(const ZipEntry& e) override {
    role_ = role_of(e.name);
    if (role_ == Role::kSkip) return false;
    std::string at = where_ + ": " + strings::printable(e.name);
    if (role_ != Role::kLibrary && e.size > kMaxText)
      throw InputError(at + ": expected a small text file (at most 8 MiB), found " + std::to_string(e.size) + " bytes");
    if (e.size > budget_)
      throw InputError(at + ": expected at most " + std::to_string(budget_ + inflated_) +
                       " bytes to inflate from one wheel (kb derive's limit), found this entry declares " +
                       std::to_string(e.size) + " after " + std::to_string(inflated_) + " already read");
    budget_ -= e.size;
    inflated_ += e.size;
    text_.clear();
    scanner_.emplace();
    names_.emplace();
    return true;
  }
  void data(const char* p, size_t n) override {
    if (role_ == Role::kLibrary)
      scanner_->feed(p, n), names_->feed(p, n);
    else
      text_.append(p, n);
  }
  void end(const ZipEntry& e) override {
    if (role_ == Role::kMetadata) read_metadata(text_, w_);
    if (role_ == Role::kWheelFile) read_wheel_file(text_, w_);
    if (role_ == Role::kVersionFile) read_version_file(text_, w_, where_ + ": " + strings::printable(e.name));
    if (role_ == Role::kLibrary && !scanner_->result().empty()) w_.gpu_code[install_path(e.name)] = scanner_->result();
    if (role_ == Role::kLibrary) {
      names_->finish();
      if (!names_->names().empty()) w_.dlopen_names[install_path(e.name)] = names_->names();
      if (!names_->heads().empty()) w_.dlopen_heads[install_path(e.name)] = names_->heads();
      if (!names_->embedded().empty()) w_.embedded_names[install_path(e.name)] = names_->embedded();
    }
  }

 private:
  WheelFacts& w_;
  const std::string& where_;
  uint64_t budget_, inflated_ = 0;
  Role role_ = Role::kSkip;
  std::string text_;
  std::optional<scan::FatbinScanner> scanner_;
  std::optional<scan::DlopenNames> names_;
};

WheelFacts read_facts(ZipInput& in, const std::string& name, const WheelReadOptions& o,
                      const std::function<void(const char*, size_t)>& raw) {
  std::string where = strings::printable(name);
  ZipReader zip(in, where);
  check_install_paths(zip.entries(), where);
  WheelFacts w;
  WheelVisitor v(w, where, o.max_inflated);
  zip.walk(v, raw);
  w.size = static_cast<int64_t>(in.size());
  if (w.name.empty() || w.version.empty())
    throw InputError(where + ": expected a wheel with *.dist-info/METADATA naming Name and Version, found none");
  return w;
}

}  // namespace

std::optional<std::vector<std::string>> py_list_var(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    if (at > 0 && text[at - 1] != '\n') continue;  // a line's first word
    size_t i = text.find_first_not_of(" \t", at + name.size());
    if (i == std::string::npos || text[i] != '=') continue;
    i = text.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || text[i] != '[') continue;
    size_t end = text.find(']', i);
    if (end == std::string::npos) return std::nullopt;
    std::vector<std::string> items;
    for (auto item : strings::split(text.substr(i + 1, end - i - 1), ',')) {
      item = strings::trim(item);
      if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"')) item = item.substr(1, item.size() - 2);
      if (!item.empty()) items.push_back(item);
    }
    return items;
  }
  return std::nullopt;
}

WheelFacts read_wheel(const std::filesystem::path& wheel, const WheelReadOptions& options) {
  FileZipInput in(wheel.string());
  Sha256 hash;
  WheelFacts w = read_facts(in, wheel.string(), options, [&](const char* p, size_t n) { hash.update(p, n); });
  w.file = wheel.filename().string();
  w.sha256 = hash.digest();
  return w;
}

WheelFacts read_wheel_bytes(std::string_view bytes, const std::string& name, const WheelReadOptions& options) {
  MemoryZipInput in(bytes);
  WheelFacts w = read_facts(in, name, options, {});
  w.file = name;
  w.sha256 = sha256_digest(bytes);
  return w;
}

}  // namespace imgtool::kb
