#include "verify/contents_tree.h"

#include <archive.h>
#include <archive_entry.h>

#include <vector>

#include "core/error.h"

namespace imgtool::verify {

namespace {

constexpr const char* kWhiteout = ".wh.";
constexpr const char* kOpaque = ".wh..wh..opq";

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

struct ReadCtx {
  image::BlobReader* r;
  std::vector<char> buf = std::vector<char>(1 << 20);
};

la_ssize_t read_cb(archive*, void* p, const void** out) {
  auto* c = static_cast<ReadCtx*>(p);
  *out = c->buf.data();
  return static_cast<la_ssize_t>(c->r->read(c->buf.data(), c->buf.size()));
}

struct RawEntry {
  std::string path;
  FsEntry entry;
  std::string hardlink;  // normalised target, if a hard link
};

std::string dirname_of(const std::string& p) {
  size_t s = p.rfind('/');
  return s == 0 || s == std::string::npos ? "/" : p.substr(0, s);
}

std::string basename_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

FsEntry::Type type_of(mode_t t) {
  switch (t) {
    case AE_IFREG: return FsEntry::Type::kFile;
    case AE_IFDIR: return FsEntry::Type::kDir;
    case AE_IFLNK: return FsEntry::Type::kSymlink;
    default: return FsEntry::Type::kOther;
  }
}

std::string read_data(archive* a, int64_t size) {
  std::string s(static_cast<size_t>(size), '\0');
  la_ssize_t n = archive_read_data(a, s.data(), s.size());
  if (n < 0) return "";
  s.resize(static_cast<size_t>(n));
  return s;
}

}  // namespace

std::string ContentsTree::normalize(const std::string& tar_path) {
  std::string out = "/";
  size_t i = 0;
  while (i < tar_path.size()) {
    size_t j = tar_path.find('/', i);
    if (j == std::string::npos) j = tar_path.size();
    std::string part = tar_path.substr(i, j - i);
    i = j + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      out = dirname_of(out);
      continue;
    }
    out += (out == "/" ? "" : "/") + part;
  }
  return out;
}

const FsEntry* ContentsTree::find(const std::string& path) const {
  auto it = entries_.find(path);
  return it == entries_.end() ? nullptr : &it->second;
}

void ContentsTree::erase_under(const std::string& dir, bool include_self) {
  if (include_self) entries_.erase(dir);
  std::string prefix = dir == "/" ? "/" : dir + "/";
  auto it = entries_.lower_bound(prefix);
  while (it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0) it = entries_.erase(it);
}

void ContentsTree::add_layer(image::BlobReader& layer, const std::string& where) {
  std::unique_ptr<archive, ArchiveFree> a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_empty(a.get());
  ReadCtx ctx{&layer};
  if (archive_read_open(a.get(), &ctx, nullptr, read_cb, nullptr) != ARCHIVE_OK)
    throw Error(where + ": expected a tar layer, found: " + archive_error_string(a.get()));
  std::vector<RawEntry> raw;
  std::vector<std::pair<std::string, bool>> whiteouts;  // path, opaque
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    std::string path = normalize(archive_entry_pathname(e));
    std::string base = basename_of(path);
    if (base == kOpaque) {
      whiteouts.push_back({dirname_of(path), true});
      continue;
    }
    if (base.rfind(kWhiteout, 0) == 0) {
      whiteouts.push_back({dirname_of(path) + (dirname_of(path) == "/" ? "" : "/") + base.substr(4), false});
      continue;
    }
    RawEntry r{path, {}, {}};
    if (const char* hl = archive_entry_hardlink(e)) r.hardlink = normalize(hl);
    r.entry.type = type_of(archive_entry_filetype(e));
    r.entry.size = archive_entry_size(e);
    if (const char* l = archive_entry_symlink(e)) r.entry.link = l;
    if (r.entry.type == FsEntry::Type::kFile && r.hardlink.empty() && keep_ && keep_(path, r.entry.size))
      r.entry.content = read_data(a.get(), r.entry.size);
    raw.push_back(std::move(r));
  }
  if (rc != ARCHIVE_EOF)
    throw Error(where + ": layer is not a readable tar stream: " + archive_error_string(a.get()));
  char sink[65536];
  while (layer.read(sink, sizeof sink) > 0) {}  // drain: lets the reader verify the digest
  for (const auto& [p, opaque] : whiteouts) erase_under(p, !opaque);
  for (auto& r : raw) {
    if (!r.hardlink.empty()) {
      const FsEntry* t = find(r.hardlink);
      r.entry = t ? *t : FsEntry{};
    }
    if (r.entry.type != FsEntry::Type::kDir) erase_under(r.path, false);  // a file replaces a dir
    entries_[r.path] = std::move(r.entry);
  }
}

bool ContentsTree::has_children(const std::string& dir) const {
  auto it = entries_.lower_bound(dir + "/");
  return it != entries_.end() && it->first.compare(0, dir.size() + 1, dir + "/") == 0;
}

std::optional<std::string> ContentsTree::resolve(const std::string& path) const {
  std::string todo = normalize(path), done = "/";
  if (todo == "/") return todo;
  int hops = 0;
  size_t i = 1;
  while (i <= todo.size()) {
    size_t j = todo.find('/', i);
    if (j == std::string::npos) j = todo.size();
    std::string cur = normalize(done + "/" + todo.substr(i, j - i));
    std::string rest = j < todo.size() ? todo.substr(j) : "";
    const FsEntry* e = find(cur);
    if (!e && !has_children(cur)) return std::nullopt;
    if (e && e->type == FsEntry::Type::kSymlink) {
      if (++hops > 40) return std::nullopt;
      std::string target = e->link.rfind('/', 0) == 0 ? e->link : dirname_of(cur) + "/" + e->link;
      todo = normalize(target + rest);
      done = "/";
      i = 1;
      continue;
    }
    done = cur;
    i = j + 1;
  }
  return done;
}

}  // namespace imgtool::verify
