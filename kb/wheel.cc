#include "kb/wheel.h"

#include <archive.h>
#include <archive_entry.h>

#include <cstdio>
#include <memory>

#include "core/error.h"
#include "core/hash.h"
#include "core/strings.h"
#include "scan/name_match.h"

namespace imgtool::kb {

namespace {

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

// The wheel's bytes go through here on their way to libarchive: one pass reads and hashes them.
struct Feed {
  FILE* f = nullptr;
  Sha256 hash;
  int64_t size = 0;
  std::vector<char> buf = std::vector<char>(1 << 20);
  size_t read() {
    size_t n = std::fread(buf.data(), 1, buf.size(), f);
    hash.update(buf.data(), n);
    size += static_cast<int64_t>(n);
    return n;
  }
};

la_ssize_t feed_read(archive*, void* ctx, const void** out) {
  auto* feed = static_cast<Feed*>(ctx);
  *out = feed->buf.data();
  return static_cast<la_ssize_t>(feed->read());
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_shared_library(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return path.rfind("paddle/", 0) == 0 && (ends_with(base, ".so") || base.find(".so.") != std::string::npos);
}

std::string read_small(archive* a, const std::string& where) {
  std::string out;
  char buf[1 << 16];
  for (la_ssize_t n; (n = archive_read_data(a, buf, sizeof buf)) != 0;) {
    if (n < 0) throw InputError(where + ": " + archive_error_string(a));
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (8u << 20)) throw InputError(where + ": expected a small text file, found more than 8 MiB");
  }
  return out;
}

GpuCode scan_library(archive* a, const std::string& where) {
  scan::FatbinScanner s;
  const void* block;
  size_t n;
  la_int64_t offset;
  for (int r; (r = archive_read_data_block(a, &block, &n, &offset)) != ARCHIVE_EOF;) {
    if (r < ARCHIVE_WARN) throw InputError(where + ": " + archive_error_string(a));
    s.feed(static_cast<const char*>(block), n);
  }
  return s.result();
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

const char* const kVersionVars[] = {"full_version",     "cuda_version", "cudnn_version",           "nccl_version",
                                    "tensorrt_version", "cinn_version", "with_pip_cuda_libraries", "with_pip_tensorrt",
                                    "commit",           "with_mkl"};

void read_version_file(const std::string& text, WheelFacts& w) {
  w.has_version_file = true;
  for (const char* name : kVersionVars)
    if (std::string v = scan::names::py_string_var(text, name); !v.empty()) w.version_vars[name] = v;
  w.compiled_cuda_archs = py_list_var(text, "compiled_cuda_archs");
}

void visit(archive* a, const std::string& path, const std::string& where, WheelFacts& w) {
  std::string dir = path.substr(0, path.find('/'));
  if (ends_with(dir, ".dist-info") && path == dir + "/METADATA") return read_metadata(read_small(a, where), w);
  if (ends_with(dir, ".dist-info") && path == dir + "/WHEEL") return read_wheel_file(read_small(a, where), w);
  if (path == "paddle/version/__init__.py") return read_version_file(read_small(a, where), w);
  if (is_shared_library(path)) {
    GpuCode code = scan_library(a, where);
    if (!code.empty()) w.gpu_code[path] = code;
    return;
  }
  archive_read_data_skip(a);
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

WheelFacts read_wheel(const std::filesystem::path& wheel) {
  WheelFacts w;
  w.file = wheel.filename().string();
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(wheel.c_str(), "rb"), &std::fclose);
  if (!f) throw InputError(wheel.string() + ": expected a wheel file, found none (cannot open it)");
  Feed feed{.f = f.get()};
  std::unique_ptr<archive, ArchiveFree> a(archive_read_new());
  archive_read_support_format_zip_streamable(a.get());
  if (archive_read_open(a.get(), &feed, nullptr, feed_read, nullptr) != ARCHIVE_OK)
    throw InputError(wheel.string() + ": expected a wheel (a zip file), found " + archive_error_string(a.get()));
  archive_entry* e;
  for (int r; (r = archive_read_next_header(a.get(), &e)) != ARCHIVE_EOF;) {
    if (r < ARCHIVE_WARN)
      throw InputError(wheel.string() + ": expected a wheel (a zip file), found " + archive_error_string(a.get()));
    std::string path = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    visit(a.get(), path, wheel.string() + ": " + path, w);
  }
  while (feed.read() > 0) {
  }  // the central directory: the hash covers the whole file
  w.sha256 = feed.hash.digest();
  w.size = feed.size;
  if (w.name.empty() || w.version.empty())
    throw InputError(wheel.string() +
                     ": expected a wheel with *.dist-info/METADATA naming Name and Version, found none");
  return w;
}

}  // namespace imgtool::kb
