#include "scan/contents_tree.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "image/inflate.h"

namespace imgtool::scan {

struct ContentsTree::RawEntry {
  std::string path;
  FsEntry entry;
  std::string hardlink;  // normalised target, if a hard link
};

// One layer as read, before it is merged: its entries in tar order and its
// whiteouts (applied before the entries, whatever their tar order).
struct ContentsTree::LayerScan {
  std::vector<RawEntry> raw;
  std::vector<std::pair<std::string, bool>> whiteouts;  // path, opaque
  LayerStats stats;
};

struct ScannedLayer {
  ContentsTree::LayerScan scan;
  size_t entries = 0;  // what it counts against the caps once merged
  int64_t kept = 0;
};

namespace {

constexpr const char* kWhiteout = ".wh.";
constexpr const char* kOpaque = ".wh..wh..opq";

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

// The read callback runs inside libarchive's C frames: an exception must not
// unwind through them. It is stored here and rethrown once libarchive returns.
// `r` yields tar bytes (the layer already inflated by image::InflatingReader).
// The buffer starts at 16 KiB and doubles, up to 1 MiB, each time a read fills
// it (a small layer never maps a big one; libarchive is done with the last
// block when it asks for the next).
struct ReadCtx {
  image::BlobReader* r;
  Buffer buf = Buffer(16 << 10);  // not zero-filled: each read fills what it returns
  size_t last = 0;
  std::exception_ptr error;
};

la_ssize_t read_cb(archive* a, void* p, const void** out) {
  auto* c = static_cast<ReadCtx*>(p);
  if (c->last == c->buf.size() && c->buf.size() < (1 << 20)) c->buf = Buffer(2 * c->buf.size());
  *out = c->buf.data();
  try {
    c->last = c->r->read(reinterpret_cast<char*>(c->buf.data()), c->buf.size());
    return static_cast<la_ssize_t>(c->last);
  } catch (...) {
    c->error = std::current_exception();
    archive_set_error(a, EIO, "the layer's reader failed");
    return -1;
  }
}

// libarchive reads plain tar only: gzip and zstd were undone before it
// (image::InflatingReader), and no other filter is enabled, so an xz, bzip2,
// lzip... layer is not a tar stream to it, and no filter can ever run an
// external program (filter_all's lrzip/lzop/grzip would).
void restrict_filters(archive* a) {
  if (archive_read_support_filter_none(a) != ARCHIVE_OK) throw Error("libarchive: cannot read unfiltered tar");
}

FsEntry::Type type_of(mode_t t) {
  switch (t) {
    case AE_IFREG:
      return FsEntry::Type::kFile;
    case AE_IFDIR:
      return FsEntry::Type::kDir;
    case AE_IFLNK:
      return FsEntry::Type::kSymlink;
    default:
      return FsEntry::Type::kOther;
  }
}

// The file's bytes as libarchive hands them out (no copy), through the fat-binary scanner, the
// library-name scanner and the dynamic-section reader, in one pass.
void scan_code(archive* a, FsEntry& entry) {
  scan::FatbinScanner s;
  scan::DlopenNames names;
  scan::ElfDynamicScanner dyn;
  const void* block;
  size_t n;
  la_int64_t offset;
  while (archive_read_data_block(a, &block, &n, &offset) == ARCHIVE_OK) {
    s.feed(static_cast<const char*>(block), n);
    names.feed(static_cast<const char*>(block), n);
    dyn.feed(static_cast<const char*>(block), n);
  }
  names.finish();
  entry.gpu_code = std::make_shared<const GpuCode>(s.result());
  entry.dlopen_names = std::make_shared<const std::set<std::string>>(names.names());
  entry.elf = std::make_shared<const ElfDynamic>(dyn.result());
}

// Only the dynamic section: the blocks up to it, then the rest skipped.
void scan_dynamic(archive* a, FsEntry& entry) {
  scan::ElfDynamicScanner dyn;
  const void* block;
  size_t n;
  la_int64_t offset;
  while (!dyn.done() && archive_read_data_block(a, &block, &n, &offset) == ARCHIVE_OK)
    dyn.feed(static_cast<const char*>(block), n);
  if (dyn.done()) archive_read_data_skip(a);
  entry.elf = std::make_shared<const ElfDynamic>(dyn.result());
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

namespace {

std::string checked_path(const char* p, size_t max, const std::string& where, const char* what) {
  if (!p) throw Error(where + ": expected a " + what + " in every tar entry, found an entry without one");
  size_t n = strnlen(p, max + 1);
  if (n > max)
    throw Error(where + ": expected " + what + "s of at most " + std::to_string(max) + " bytes, found a longer one");
  return std::string(p, n);
}

std::string error_of(archive* a) {
  const char* e = archive_error_string(a);
  return e ? e : "unknown libarchive error";
}

Error entries_cap(const std::string& where, const ContentsLimits& limits) {
  return Error(where + ": expected at most " + std::to_string(limits.max_entries) +
               " tar entries in the image, found more (a hostile or broken layer?)");
}

Error kept_cap(const std::string& where, const ContentsLimits& limits) {
  return Error(where + ": expected at most " + std::to_string(limits.max_kept_bytes) +
               " bytes of kept small files in the image, found more (a hostile layer?)");
}

[[noreturn]] void rethrow_or(const ReadCtx& ctx, const std::string& message) {
  if (ctx.error) std::rethrow_exception(ctx.error);
  throw Error(message);
}

}  // namespace

ContentsTree::RawEntry ContentsTree::read_entry(archive* a, archive_entry* e, const std::string& where,
                                                Budget& budget) const {
  if (budget.entries.fetch_add(1) + 1 > limits_.max_entries) throw entries_cap(where, limits_);
  RawEntry r{normalize(checked_path(archive_entry_pathname(e), limits_.max_path, where, "path")), {}, {}};
  if (const char* hl = archive_entry_hardlink(e))
    r.hardlink = normalize(checked_path(hl, limits_.max_path, where, "link target"));
  r.entry.type = type_of(archive_entry_filetype(e));
  r.entry.size = archive_entry_size(e);
  if (r.entry.size < 0)  // libarchive can report one for a GNU tar (found by fuzz_layer: kept, it sized a string)
    throw Error(where + ": expected tar entries of non-negative size, found " + std::to_string(r.entry.size) + " for " +
                r.path);
  if (const char* l = archive_entry_symlink(e)) r.entry.link = checked_path(l, limits_.max_path, where, "link target");
  if (r.entry.type == FsEntry::Type::kFile && r.hardlink.empty() && keep_ && keep_(r.path, r.entry.size)) {
    int64_t n = r.entry.size;  // not negative: refused above
    if (budget.kept.fetch_add(n) + n > limits_.max_kept_bytes) throw kept_cap(where, limits_);
    r.entry.content = std::make_shared<const std::string>(read_data(a, r.entry.size));
  } else if (r.entry.type == FsEntry::Type::kFile && r.hardlink.empty() && examine_ && examine_(r.path)) {
    scan_code(a, r.entry);
  } else if (r.entry.type == FsEntry::Type::kFile && r.hardlink.empty() && dynamic_ && dynamic_(r.path)) {
    scan_dynamic(a, r.entry);
  } else {
    archive_read_data_skip(a);  // nothing keeps these bytes: never copied out of the decoder's buffer
  }
  return r;
}

namespace {

struct Stopped {};  // another layer's scan failed: this one ends quietly

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ContentsTree::LayerScan ContentsTree::scan(image::BlobReader& layer, const std::string& where, Budget& budget) const {
  auto t0 = std::chrono::steady_clock::now();
  image::InflatingReader tar(layer, where);
  std::unique_ptr<archive, ArchiveFree> a(archive_read_new());
  restrict_filters(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_empty(a.get());
  ReadCtx ctx{&tar};
  if (archive_read_open(a.get(), &ctx, nullptr, read_cb, nullptr) != ARCHIVE_OK)
    rethrow_or(ctx, where + ": expected a tar layer (uncompressed, gzip or zstd), found: " + error_of(a.get()));
  LayerScan s;
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    if (budget.stop.load(std::memory_order_relaxed)) throw Stopped{};
    RawEntry r = read_entry(a.get(), e, where, budget);
    if (ctx.error) std::rethrow_exception(ctx.error);
    std::string base = basename_of(r.path);
    if (base == kOpaque) {
      s.whiteouts.push_back({dirname_of(r.path), true});
      continue;
    }
    if (base.rfind(kWhiteout, 0) == 0) {
      s.whiteouts.push_back({dirname_of(r.path) + (dirname_of(r.path) == "/" ? "" : "/") + base.substr(4), false});
      continue;
    }
    s.raw.push_back(std::move(r));
  }
  if (rc != ARCHIVE_EOF)
    rethrow_or(ctx, where + ": layer is not a readable tar stream (uncompressed, gzip or zstd): " + error_of(a.get()));
  s.stats.entries = s.raw.size() + s.whiteouts.size();
  a.reset();
  s.stats.codec = image::codec_name(tar.codec());
  s.stats.tar = tar.decoded_bytes();
  s.stats.parallel_chunks = tar.parallel_chunks();
  // Read the blob past the tar's end (padding, trailer): lets the reader verify the digest.
  s.stats.compressed = tar.drain();
  s.stats.seconds = seconds_since(t0);
  return s;
}

void ContentsTree::apply(LayerScan&& s) {
  for (const auto& [p, opaque] : s.whiteouts) erase_under(p, !opaque);
  for (auto& r : s.raw) {
    if (!r.hardlink.empty()) {
      const FsEntry* t = find(r.hardlink);
      r.entry = t ? *t : FsEntry{};  // shares the target's kept bytes (shared_ptr), never copies them
    }
    if (r.entry.type != FsEntry::Type::kDir) erase_under(r.path, false);  // a file replaces a dir
    entries_[r.path] = std::move(r.entry);
  }
}

LayerStats ContentsTree::add_layer(image::BlobReader& layer, const std::string& where) {
  Budget b;
  b.entries = seen_entries_;
  b.kept = kept_bytes_;
  LayerScan s = scan(layer, where, b);
  seen_entries_ = b.entries;
  kept_bytes_ = b.kept;
  LayerStats stats = s.stats;
  apply(std::move(s));
  return stats;
}

std::vector<LayerStats> ContentsTree::add_layers(const std::vector<LayerInput>& layers, unsigned jobs) {
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(layers.size()));
  Budget b;
  b.entries = seen_entries_;
  b.kept = kept_bytes_;
  std::vector<std::optional<LayerScan>> ready(layers.size());
  std::exception_ptr error;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<size_t> order(layers.size());  // biggest first: the longest scan never starts last
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return layers[x].size > layers[y].size; });
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k; (k = next.fetch_add(1)) < layers.size() && !b.stop;) {
      size_t i = order[k];
      try {
        LayerScan s = layers[i].scanned ? merged_counts(*layers[i].scanned, layers[i].where, b)
                                        : scan(*layers[i].open(), layers[i].where, b);
        std::lock_guard lk(mu);
        ready[i] = std::move(s);
      } catch (const Stopped&) {
      } catch (...) {
        std::lock_guard lk(mu);
        if (!error) error = std::current_exception();
        b.stop = true;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < jobs; ++t) threads.emplace_back(worker);
  std::vector<LayerStats> stats;
  for (size_t i = 0; i < layers.size(); ++i) {  // merge in layer order, each as soon as it is read
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return ready[i].has_value() || error; });
    if (error) break;
    LayerScan s = std::move(*ready[i]);
    ready[i].reset();
    lk.unlock();
    stats.push_back(s.stats);
    apply(std::move(s));
  }
  for (auto& t : threads) t.join();
  seen_entries_ = b.entries;
  kept_bytes_ = b.kept;
  if (error) std::rethrow_exception(error);
  return stats;
}

std::shared_ptr<const ScannedLayer> ContentsTree::scan_unmerged(image::BlobReader& layer,
                                                                const std::string& where) const {
  Budget b;  // this layer alone: counted over all layers when add_layers merges it
  auto out = std::make_shared<ScannedLayer>();
  out->scan = scan(layer, where, b);
  out->entries = b.entries;
  out->kept = b.kept;
  return out;
}

// A layer scan_unmerged() read, counted against the caps over all layers (a copy: the same
// layer may sit twice in an image).
ContentsTree::LayerScan ContentsTree::merged_counts(const ScannedLayer& l, const std::string& where,
                                                    Budget& budget) const {
  if (budget.entries.fetch_add(l.entries) + l.entries > limits_.max_entries) throw entries_cap(where, limits_);
  if (budget.kept.fetch_add(l.kept) + l.kept > limits_.max_kept_bytes) throw kept_cap(where, limits_);
  return l.scan;
}

bool ContentsTree::has_children(const std::string& dir) const {
  auto it = entries_.lower_bound(dir + "/");
  return it != entries_.end() && it->first.compare(0, dir.size() + 1, dir + "/") == 0;
}

// `todo` is normalized (no empty, "." or ".." component), so each step only appends a component
// to `done`: linear in the path, where normalizing the whole prefix at every step was quadratic.
std::optional<std::string> ContentsTree::resolve(const std::string& path) const {
  std::string todo = normalize(path), done;
  if (todo == "/") return todo;
  int hops = 0;
  size_t i = 1;
  while (i <= todo.size()) {
    size_t j = todo.find('/', i);
    if (j == std::string::npos) j = todo.size();
    size_t before = done.size();
    done.append("/").append(todo, i, j - i);
    const FsEntry* e = find(done);
    if (!e && !has_children(done)) return std::nullopt;
    if (e && e->type == FsEntry::Type::kSymlink) {
      if (++hops > 40) return std::nullopt;
      std::string base = before == 0 ? "/" : done.substr(0, before);
      std::string target = e->link.rfind('/', 0) == 0 ? e->link : base + "/" + e->link;
      todo = normalize(target.append(todo, j, std::string::npos));
      if (todo == "/") return todo;
      done.clear();
      i = 1;
      continue;
    }
    i = j + 1;
  }
  return done;
}

std::string dirname_of(const std::string& p) {
  size_t s = p.rfind('/');
  return s == 0 || s == std::string::npos ? "/" : p.substr(0, s);
}

std::string basename_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

}  // namespace imgtool::scan
