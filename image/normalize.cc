#include "image/normalize.h"

#include <archive.h>
#include <archive_entry.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <semaphore>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/paths.h"
#include "core/strings.h"
#include "image/blob.h"
#include "image/compress.h"
#include "image/normalized_cache.h"
#include "image/tar_stream.h"

namespace imgtool::image {

namespace fs = std::filesystem;

// ---- rules --------------------------------------------------------------------------------------

namespace {

// The rules file's action names, one table for reading a file and for naming an action.
const std::map<std::string, NormalizeAction> kActions = {{"drop", NormalizeAction::drop},
                                                         {"pyc", NormalizeAction::pyc}};

}  // namespace

std::string normalize_action_name(NormalizeAction a) {
  for (const auto& [name, action] : kActions)
    if (action == a) return name;
  throw Error("normalize: an action without a name in the rules table");
}

std::vector<NormalizeRule> parse_normalize_rules(const std::string& text, const std::string& where) {
  std::vector<NormalizeRule> out;
  int n = 0;
  for (const std::string& raw : strings::split(text, '\n')) {
    ++n;
    std::string line = strings::trim(raw);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = strings::split(raw, '\t');
    std::string at = where + ":" + std::to_string(n) + ": ";
    if (f.size() != 3 || strings::trim(f[1]).empty() || strings::trim(f[2]).empty())
      throw InputError(at + "expected ACTION<TAB>PATTERN<TAB>REASON, found '" + line + "'");
    auto a = kActions.find(strings::trim(f[0]));
    if (a == kActions.end()) throw InputError(at + "expected the action drop or pyc, found '" + f[0] + "'");
    out.push_back({a->second, strings::trim(f[1]), strings::trim(f[2])});
  }
  return out;
}

std::vector<NormalizeRule> read_normalize_rules(const fs::path& file) {
  if (!fs::is_regular_file(file)) throw InputError(file.string() + ": expected a normalize rules file, found none");
  if (fs::file_size(file) > (1u << 20)) throw InputError(file.string() + ": expected at most 1 MiB of rules");
  return parse_normalize_rules(read_file(file), file.string());
}

std::string normalize_revision() { return "normalize revision 1"; }

fs::path default_normalize_rules() { return fs::path(data_dir()) / "image" / "normalize_rules.tsv"; }

namespace {

// ---- one layer ----------------------------------------------------------------------------------

std::string clean_path(const char* p) {
  std::string s = p ? p : "";
  while (s.rfind("./", 0) == 0) s.erase(0, 2);
  while (!s.empty() && s[0] == '/') s.erase(0, 1);
  return s;
}

const NormalizeRule* rule_for(const std::vector<NormalizeRule>& rules, const std::string& path, NormalizeAction a) {
  for (const auto& r : rules)
    if (r.action == a && ::fnmatch(r.pattern.c_str(), path.c_str(), 0) == 0) return &r;
  return nullptr;
}

struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using Entry = std::unique_ptr<archive_entry, EntryDeleter>;

struct Record {
  std::string path;
  Entry entry;
  int64_t offset = 0, size = 0;  // the data in the spool
};

// A timestamp-based .pyc (PEP 552 flags 0) records its source's mtime at bytes 8..11: clamped as the
// source's is, so the two still agree and the bytes no longer carry the build time.
bool clamp_pyc(std::string& data, int64_t epoch) {
  if (data.size() < 16) return false;
  auto u32 = [&](size_t at) {
    return uint32_t(uint8_t(data[at])) | uint32_t(uint8_t(data[at + 1])) << 8 | uint32_t(uint8_t(data[at + 2])) << 16 |
           uint32_t(uint8_t(data[at + 3])) << 24;
  };
  if (u32(4) != 0 || int64_t(u32(8)) <= epoch) return false;
  for (int i = 0; i < 4; ++i) data[8 + i] = char((uint64_t(epoch) >> (8 * i)) & 0xff);
  return true;
}

// Copies the current entry's data to `out` in chunks (memory bounded, whatever the entry's size). A
// .pyc the rule names has its first 16 bytes (magic, flags, mtime, size) gathered first and clamped;
// returns whether it was.
bool copy_entry(TarStream& tar, bool pyc, int64_t epoch, const std::function<void(const char*, size_t)>& out) {
  char buf[65536];
  size_t have = 0, n = 0;
  while (pyc && have < 16 && (n = tar.read_data(buf + have, sizeof buf - have)) != 0) have += n;
  bool clamped = false;
  if (pyc) {
    std::string head(buf, have);
    clamped = clamp_pyc(head, epoch);
    out(head.data(), head.size());
  }
  while ((n = tar.read_data(buf, sizeof buf)) != 0) out(buf, n);
  return clamped;
}

// The headers a spooled layer holds in memory at once (data goes to the spool file). A real layer
// has some 10^4 to 10^5; the stream path holds none.
constexpr size_t kMaxSpooledEntries = 4'000'000;

// Reads every entry of the layer into `records` (data appended to `spool`), rules applied.
void read_layer(BlobReader& in, const NormalizeOptions& o, std::FILE* spool, std::vector<Record>& records,
                NormalizedLayer& out) {
  TarStream tar(in, "normalize: the layer");
  int64_t offset = 0;
  while (archive_entry* e = tar.next()) {
    std::string path = clean_path(archive_entry_pathname(e));
    if (path.empty()) continue;                                              // "./" itself
    bool whiteout = path.substr(path.rfind('/') + 1).rfind(".wh.", 0) == 0;  // deletes a lower layer's file: kept
    if (!whiteout && rule_for(o.rules, path, NormalizeAction::drop)) {
      out.dropped.push_back(path);
      continue;
    }
    bool pyc = archive_entry_filetype(e) == AE_IFREG && rule_for(o.rules, path, NormalizeAction::pyc);
    int64_t size = 0;
    if (copy_entry(tar, pyc, o.epoch, [&](const char* p, size_t n) {
          if (std::fwrite(p, 1, n, spool) != n) throw Error("normalize: cannot write the spool file");
          size += int64_t(n);
        }))
      ++out.pyc_rewritten;
    if (records.size() >= kMaxSpooledEntries)
      throw Error("normalize: expected at most " + std::to_string(kMaxSpooledEntries) +
                  " entries in a layer that is out of path order, found more (a layer made to exhaust memory?)");
    Record r{path, Entry(archive_entry_clone(e)), offset, size};
    offset += size;
    records.push_back(std::move(r));
  }
}

// Hard links name a path written before them; sorted by path, a group's first path carries the
// data and the others link to it.
void order_hard_links(std::vector<Record>& records) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < records.size(); ++i) at[records[i].path] = i;
  std::map<std::string, std::vector<size_t>> groups;  // target path -> link records
  for (size_t i = 0; i < records.size(); ++i)
    if (const char* t = archive_entry_hardlink(records[i].entry.get())) groups[clean_path(t)].push_back(i);
  for (auto& [target, links] : groups) {
    auto t = at.find(target);
    if (t == at.end()) continue;  // a link to a dropped or absent path: left as it came
    size_t first = t->second;
    for (size_t l : links) first = records[l].path < records[first].path ? l : first;
    if (first != t->second) {  // the first path takes the data and the stat; the old target becomes a link
      Record& f = records[first];
      Record& old = records[t->second];
      Entry moved(archive_entry_clone(old.entry.get()));
      archive_entry_set_pathname(moved.get(), f.path.c_str());
      std::swap(f.entry, moved);
      std::swap(f.offset, old.offset);
      std::swap(f.size, old.size);
      old.entry = std::move(moved);
      archive_entry_set_pathname(old.entry.get(), old.path.c_str());
      archive_entry_set_size(old.entry.get(), 0);
      archive_entry_copy_hardlink(old.entry.get(), f.path.c_str());
    }
    for (size_t l : links)
      if (l != first) {
        archive_entry_copy_hardlink(records[l].entry.get(), records[first].path.c_str());
        archive_entry_set_size(records[l].entry.get(), 0);
        records[l].size = 0;
      }
  }
}

void set_times(archive_entry* e, int64_t epoch, NormalizedLayer& out) {
  int64_t m = archive_entry_mtime_is_set(e) ? archive_entry_mtime(e) : epoch;
  if (m > epoch) m = epoch, ++out.mtimes_clamped;
  archive_entry_set_mtime(e, m, 0);
  archive_entry_unset_atime(e);
  archive_entry_unset_ctime(e);
  archive_entry_unset_birthtime(e);
}

using Sink = std::function<void(const char*, size_t)>;

// "usr/" and "usr": one directory, one place in the order.
std::string_view order_key(const std::string& p) {
  return std::string_view(p).substr(0, p.size() - (!p.empty() && p.back() == '/'));
}

// The normalized tar's writer: pax, names byte for byte, to `sink`.
class TarWriter {
 public:
  explicit TarWriter(const Sink& sink) : sink_(sink), a_(archive_write_new()) {
    archive_write_set_format_pax_restricted(a_);
    // Names as the layer holds them (a CA file named in Hungarian is no UTF-8 in the C locale): pax's
    // BINARY header charset writes them untranslated.
    archive_write_set_format_option(a_, "pax", "hdrcharset", "BINARY");
    if (archive_write_open2(a_, this, nullptr, &TarWriter::write_cb, nullptr, nullptr) != ARCHIVE_OK)
      fail("cannot write the layer");
  }
  ~TarWriter() { archive_write_free(a_); }
  void header(archive_entry* e, const std::string& path) {
    if (archive_write_header(a_, e) != ARCHIVE_OK) fail(path);
  }
  void data(const char* p, size_t n, const std::string& path) {
    if (n > 0 && archive_write_data(a_, p, n) < 0) fail(path);
  }
  void close() {
    if (archive_write_close(a_) != ARCHIVE_OK) fail("cannot finish the layer");
  }

 private:
  static la_ssize_t write_cb(archive*, void* self, const void* buf, size_t n) {
    auto* w = static_cast<TarWriter*>(self);
    try {
      w->sink_(static_cast<const char*>(buf), n);
      return static_cast<la_ssize_t>(n);
    } catch (...) {
      w->err_ = std::current_exception();
      return -1;
    }
  }
  [[noreturn]] void fail(const std::string& what) {
    if (err_) std::rethrow_exception(err_);
    throw Error("normalize: " + what + ": " + (archive_error_string(a_) ? archive_error_string(a_) : "?"));
  }
  const Sink& sink_;
  std::exception_ptr err_;
  archive* a_;
};

void write_layer(std::vector<Record>& records, std::FILE* spool, int64_t epoch, const Sink& sink,
                 NormalizedLayer& out) {
  // Stable: a path a layer names twice keeps its order (the later one wins when applied).
  std::stable_sort(records.begin(), records.end(),
                   [&](const Record& a, const Record& b) { return order_key(a.path) < order_key(b.path); });
  order_hard_links(records);
  TarWriter w(sink);
  char buf[65536];
  for (Record& r : records) {
    archive_entry* e = r.entry.get();
    archive_entry_set_pathname(e, r.path.c_str());
    set_times(e, epoch, out);
    if (archive_entry_hardlink(e)) r.size = 0;
    w.header(e, r.path);
    if (r.size > 0 && ::fseeko(spool, r.offset, SEEK_SET) != 0) throw Error("normalize: cannot read the spool file");
    for (int64_t left = r.size; left > 0;) {  // in chunks: memory bounded, whatever the entry's size
      size_t n = size_t(std::min<int64_t>(left, int64_t(sizeof buf)));
      if (std::fread(buf, 1, n, spool) != n) throw Error("normalize: cannot read the spool file");
      w.data(buf, n, r.path);
      left -= int64_t(n);
    }
  }
  w.close();
}

// Thrown by stream_layer at the first entry out of path order: the layer is done again through the
// spool (from a fresh read of the blob, into a fresh sink).
struct OutOfOrder {};

// The common case, in one pass without a spool: a layer whose entries already come in path order
// (Docker writes layers walking each folder in lexical order). There a hard-link group's first
// path is the one that carries the data already.
void stream_layer(BlobReader& in, const NormalizeOptions& o, const Sink& sink, NormalizedLayer& out) {
  TarStream tar(in, "normalize: the layer");
  TarWriter w(sink);
  std::string prev;
  bool first = true;
  while (archive_entry* e = tar.next()) {
    std::string path = clean_path(archive_entry_pathname(e));
    if (path.empty()) continue;
    bool whiteout = path.substr(path.rfind('/') + 1).rfind(".wh.", 0) == 0;
    if (!whiteout && rule_for(o.rules, path, NormalizeAction::drop)) {
      out.dropped.push_back(path);
      continue;
    }
    if (!first && !(order_key(prev) < order_key(path))) throw OutOfOrder{};
    first = false;
    prev = path;
    archive_entry_set_pathname(e, path.c_str());
    if (const char* t = archive_entry_hardlink(e)) {
      archive_entry_copy_hardlink(e, clean_path(t).c_str());
      archive_entry_set_size(e, 0);
    }
    set_times(e, o.epoch, out);
    bool pyc = archive_entry_filetype(e) == AE_IFREG && rule_for(o.rules, path, NormalizeAction::pyc);
    w.header(e, path);
    if (copy_entry(tar, pyc, o.epoch, [&](const char* p, size_t n) { w.data(p, n, path); })) ++out.pyc_rewritten;
  }
  w.close();
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads `in`, writes the normalized tar to `sink`.
void spool_layer(BlobReader& in, const NormalizeOptions& o, const fs::path& spool_dir, const Sink& sink,
                 NormalizedLayer& out) {
  std::string spool_path = (spool_dir / "layer.spool.XXXXXX").string();
  int fd = ::mkstemp(spool_path.data());  // a name of its own: layers may be spooled side by side
  if (fd < 0) throw Error("normalize: cannot create " + spool_path);
  ::unlink(spool_path.c_str());  // gone with the handle, whatever happens
  std::unique_ptr<std::FILE, FileCloser> spool(::fdopen(fd, "w+b"));
  if (!spool) {
    ::close(fd);
    throw Error("normalize: cannot open " + spool_path);
  }
  std::vector<Record> records;
  read_layer(in, o, spool.get(), records, out);
  std::fflush(spool.get());
  write_layer(records, spool.get(), o.epoch, sink, out);
}

// How a layer is read: streamed, and read again through the spool when it is out of path order (the
// reader can be opened twice); streamed only (OutOfOrder thrown: a stream read once); spooled at once.
enum class Pass { kStreamThenSpool, kStreamOnly, kSpool };

using Open = std::function<std::shared_ptr<BlobReader>()>;

// One layer: streamed when it comes in path order, else through the spool. `open` reads the layer
// from its start; `start` gives a fresh sink for each attempt (what an abandoned one wrote is dropped).
void normalize_tar(const Open& open, const NormalizeOptions& o, const fs::path& spool_dir,
                   const std::function<Sink()>& start, NormalizedLayer& out, Pass pass = Pass::kStreamThenSpool) {
  if (o.epoch <= 0) throw InputError("normalize: expected SOURCE_DATE_EPOCH > 0, found " + std::to_string(o.epoch));
  NormalizedLayer fresh = out;
  if (pass != Pass::kSpool) try {
      auto in = open();
      stream_layer(*in, o, start(), out);
      return;
    } catch (const OutOfOrder&) {
      if (pass == Pass::kStreamOnly) throw;
    }
  out = fresh;
  out.spooled = true;
  auto in = open();
  spool_layer(*in, o, spool_dir, start(), out);
}

}  // namespace

std::string normalize_layer_tar(const std::string& layer, const NormalizeOptions& o, NormalizedLayer& out) {
  PrivateTempDir tmp("imgtool-normalize-", o.spool_dir);
  std::string tar;
  normalize_tar([&] { return std::make_shared<StringReader>(layer); }, o, tmp.path(),
                [&]() -> Sink {
                  tar.clear();
                  return [&](const char* p, size_t n) { tar.append(p, n); };
                },
                out);
  return tar;
}

std::string normalize_config(const std::string& config, int64_t epoch, const std::vector<std::string>& diff_ids) {
  nlohmann::json j = nlohmann::json::parse(config, nullptr, false);
  if (!j.is_object()) throw InputError("normalize: expected an image config (a JSON object)");
  std::string when = strings::utc_rfc3339(epoch);
  j["created"] = when;
  static const std::regex kCopied("(dir|file):[0-9a-f]{64}");
  size_t layer = 0;  // history entries that made a layer, in order, name diff_ids[layer]
  if (j.contains("history") && j["history"].is_array())
    for (auto& h : j["history"]) {
      if (!h.is_object()) continue;
      h["created"] = when;
      bool empty = h.value("empty_layer", false);
      // The classic builder names a COPY by a hash of its source's files, stat data included (their
      // build-stage mtimes): said by the content the layer holds now, its normalized diff_id.
      if (!empty && layer < diff_ids.size() && h.contains("created_by") && h["created_by"].is_string())
        h["created_by"] = std::regex_replace(h["created_by"].get<std::string>(), kCopied,
                                             "$1:" + diff_ids[layer].substr(diff_ids[layer].find(':') + 1));
      if (!empty) ++layer;
    }
  j.erase("container");
  j.erase("container_config");
  // The classic builder's parent (an intermediate image's ID, new on every build); nothing runs on it.
  if (j.contains("config") && j["config"].is_object()) j["config"].erase("Image");
  j["rootfs"] = {{"type", "layers"}, {"diff_ids", diff_ids}};
  return j.dump();
}

namespace {

// One layer (read by `open`, named `from` in the normalized-layer cache) normalized into the file
// `out_path` (emptied first): what changed, `to` and diff_id.
NormalizedLayer normalize_into_file(const Open& open, const std::string& from, const NormalizeOptions& o,
                                    const fs::path& spool_dir, const fs::path& out_path, Pass pass) {
  NormalizedLayer nl{.from_digest = from};
  std::ofstream out;
  std::unique_ptr<LayerCompressor> gz;
  std::unique_ptr<Sha256> tar_hash;  // o.compress == false: the tar as it is
  int64_t tar_size = 0;
  auto write_out = [&](const char* p, size_t n) {
    out.write(p, std::streamsize(n));
    if (!out) throw Error("normalize: cannot write " + out_path.string());
  };
  auto start = [&]() -> Sink {  // each attempt: the file emptied, a fresh compressor
    gz.reset();
    out = std::ofstream(out_path, std::ios::binary | std::ios::trunc);
    if (!o.compress) {
      tar_hash = std::make_unique<Sha256>();
      tar_size = 0;
      return [&](const char* p, size_t n) {
        tar_hash->update(p, n);
        tar_size += static_cast<int64_t>(n);
        write_out(p, n);
      };
    }
    gz = std::make_unique<LayerCompressor>(Compression::kGzip, std::max(1, o.jobs), write_out);
    return [&](const char* p, size_t n) { gz->write(p, n); };
  };
  normalize_tar(open, o, spool_dir, start, nl, pass);
  CompressedLayer c;
  if (o.compress) {
    c = gz->finish();
  } else {
    c.diff_id = c.digest = tar_hash->digest();
    c.size = c.uncompressed_size = tar_size;
  }
  gz.reset();
  out.close();
  if (!out) throw Error("normalize: cannot write " + out_path.string());
  nl.diff_id = c.diff_id;
  nl.to = {o.compress ? media::kOciLayerGzip : media::kOciLayerTar, c.digest, c.size, {}};
  return nl;
}

// Blobs uploaded at once, beside the normalization of the next layer (as the copy engine's jobs).
constexpr size_t kUploads = 4;

// Where a layer's normalized blob lies, on its way to the destination.
struct Ready {
  NormalizedLayer layer;
  fs::path file;
  const LayerCache* verify = nullptr;  // a cached blob: re-hashed before its bytes are read
  bool remove_after = false;           // a private temporary file
};

// Uploads `r` unless `dst` has it; false when its cached blob failed the re-hash (then removed).
bool upload(ImageDestination& dst, const Ready& r) {
  struct Done {
    const Ready& r;
    ~Done() {
      std::error_code ec;
      if (r.remove_after) fs::remove(r.file, ec);
    }
  } done{r};
  if (dst.has_blob(r.layer.to)) return true;
  if (r.verify && !r.verify->verify(r.layer.to.digest)) return false;
  FileReader in(r.file);
  dst.put_blob(r.layer.to, in);
  return true;
}

// Normalized layers on their way to `dst`, each as soon as it is made: at most kUploads at once, a
// free slot taken by the next whichever upload ends first. add() may be called from any thread.
class Uploads {
 public:
  explicit Uploads(ImageDestination& dst) : dst_(dst) {}
  ~Uploads() {
    for (auto& [r, f] : running_)
      if (f.valid()) f.wait();
  }
  void add(std::shared_ptr<Ready> r) {
    slots_.acquire();
    std::lock_guard lk(mu_);
    running_.emplace_back(r, std::async(std::launch::async, [this, r] {
                            struct Release {
                              std::counting_semaphore<kUploads>& s;
                              ~Release() { s.release(); }
                            } release{slots_};
                            return upload(dst_, *r);
                          }));
  }
  // Waits for every upload; the layers whose cached blob failed its re-hash (to be made again).
  std::vector<std::shared_ptr<Ready>> wait() {
    std::vector<std::shared_ptr<Ready>> stale;
    std::lock_guard lk(mu_);
    for (auto& [r, f] : running_)
      if (!f.get()) stale.push_back(r);
    running_.clear();
    return stale;
  }

 private:
  ImageDestination& dst_;
  std::counting_semaphore<kUploads> slots_{kUploads};
  std::mutex mu_;
  std::vector<std::pair<std::shared_ptr<Ready>, std::future<bool>>> running_;
};

// Normalized now and kept: written straight into the layer cache (blob and diff_id map), then
// remembered under its source. `from` is known at the end when empty (read from `name_source`).
std::shared_ptr<Ready> into_cache(const Open& open, std::string from, const NormalizeOptions& o,
                                  const fs::path& spool_dir, Pass pass,
                                  const std::function<std::string()>& name_source = nullptr) {
  auto blob = o.cache->new_blob();
  NormalizedLayer nl = normalize_into_file(open, from, o, spool_dir, blob->temp_path(), pass);
  if (name_source) nl.from_digest = name_source();
  CompressedLayer c{.diff_id = nl.diff_id, .digest = nl.to.digest, .size = nl.to.size};
  o.cache->commit(*blob, c);
  NormalizedCache(*o.cache).put(nl, o);
  fs::path file = o.cache->blob_path(nl.to.digest);
  return std::make_shared<Ready>(Ready{std::move(nl), std::move(file)});
}

// A layer normalized now: kept in the cache when there is one, else in a temporary file of its own
// in `tmp`.
std::shared_ptr<Ready> normalize_now(const Open& open, const std::string& from, const NormalizeOptions& o,
                                     const fs::path& tmp, Pass pass,
                                     const std::function<std::string()>& name_source = nullptr) {
  if (o.compress && o.cache) return into_cache(open, from, o, tmp, pass, name_source);
  static std::atomic<uint64_t> n{0};
  fs::path file = tmp / ("layer-" + std::to_string(n++));
  NormalizedLayer nl = normalize_into_file(open, from, o, tmp, file, pass);
  if (name_source) nl.from_digest = name_source();
  return std::make_shared<Ready>(Ready{std::move(nl), std::move(file), nullptr, true});
}

// The source layer `from` from the normalized-layer cache, when it is there and may be used.
std::shared_ptr<Ready> from_cache(const std::string& from, const NormalizeOptions& o) {
  if (!o.compress || !o.cache || !o.reuse_cached) return nullptr;
  auto hit = NormalizedCache(*o.cache).find(from, o);
  if (!hit) return nullptr;
  fs::path file = o.cache->blob_path(hit->to.digest);
  return std::make_shared<Ready>(Ready{std::move(*hit), std::move(file), o.cache});
}

// Layer `d` of `src`, read from its start each time.
Open opener(ImageSource& src, const Descriptor& d) {
  return [&src, d] { return std::shared_ptr<BlobReader>(src.open_blob(d)); };
}

// The layers read through open_blob, normalized in order, each uploaded while the next is made. A
// cached blob that fails its re-hash is normalized again (and uploaded) after the rest.
std::vector<NormalizedLayer> normalize_blobs(ImageSource& src, const std::vector<Descriptor>& from,
                                             const NormalizeOptions& o, const fs::path& tmp, ImageDestination& dst) {
  std::vector<NormalizedLayer> out;
  Uploads uploads(dst);
  for (const Descriptor& d : from) {
    auto r = from_cache(d.digest, o);
    if (!r) r = normalize_now(opener(src, d), d.digest, o, tmp, Pass::kStreamThenSpool);
    out.push_back(r->layer);
    uploads.add(r);
  }
  for (const auto& stale : uploads.wait()) {
    const Descriptor& d = *std::find_if(from.begin(), from.end(),
                                        [&](const Descriptor& x) { return x.digest == stale->layer.from_digest; });
    auto again = into_cache(opener(src, d), d.digest, o, tmp, Pass::kStreamThenSpool);
    upload(dst, *again);
    for (auto& l : out)
      if (l.from_digest == d.digest) l = again->layer;
  }
  return out;
}

// One read of a tar source (read_tars): each layer it streams normalized on a thread of its own as
// it comes (the source reads on, the stream bounded), named in the cache by the diff_id the source
// hashed, and uploaded when `want` names it (a legacy save's layer the source could not tell apart
// before reading it is kept in the cache only). Returns the layers made, by source diff_id; adds to
// `again` those wanted and not made (out of path order, with Pass::kStreamOnly).
std::map<std::string, std::shared_ptr<Ready>> read_and_normalize(ImageSource& src, const std::vector<std::string>& want,
                                                                 const NormalizeOptions& o, const fs::path& tmp,
                                                                 Pass pass, Uploads& uploads,
                                                                 std::vector<std::string>& again) {
  std::vector<std::future<std::shared_ptr<Ready>>> workers;
  auto one = [&o, &tmp, pass, &uploads, &want](std::shared_ptr<StreamingBlob> s) -> std::shared_ptr<Ready> {
    try {
      auto r = normalize_now(
          [s] { return s; }, "", o, tmp, pass,
          [s] {
            char rest[65536];  // libarchive may stop at the end-of-archive blocks: the rest, to the stream's end
            while (s->read(rest, sizeof rest) != 0) {
            }
            auto d = s->descriptor();
            if (!d) throw Error("normalize: a layer's stream ended without its diff_id");
            return d->digest;
          });
      if (std::count(want.begin(), want.end(), r->layer.from_digest)) uploads.add(r);
      return r;
    } catch (const OutOfOrder&) {
      s->abandon();  // the source reads on; the layer is read again, through the spool
      return nullptr;
    } catch (...) {
      s->abandon();
      throw;
    }
  };
  src.read_tars(want,
                [&](std::shared_ptr<StreamingBlob> s) { workers.push_back(std::async(std::launch::async, one, s)); });
  std::map<std::string, std::shared_ptr<Ready>> made;
  std::exception_ptr failed;  // the first; every worker is joined before it is thrown
  for (auto& w : workers) try {
      if (auto r = w.get()) made[r->layer.from_digest] = r;
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  if (failed) std::rethrow_exception(failed);
  for (const auto& d : want)
    if (!made.count(d) && !std::count(again.begin(), again.end(), d)) again.push_back(d);
  return made;
}

// A source with tar_layers() (docker-daemon:): the layers not normalized before come from ONE read
// of its save stream as tars, normalized and compressed once (the source compresses none of them),
// named in the normalized-layer cache by their diff_id (the digest of the bytes the normalizer
// reads). A layer the source holds compressed already is read from there (no save for it).
std::vector<NormalizedLayer> normalize_tars(ImageSource& src, const TarLayers& t, const NormalizeOptions& o,
                                            const fs::path& tmp, ImageDestination& dst) {
  std::map<std::string, std::shared_ptr<Ready>> by_id;
  std::vector<std::string> want;
  Uploads uploads(dst);
  for (size_t i = 0; i < t.diff_ids.size(); ++i) {
    const std::string& id = t.diff_ids[i];
    if (by_id.count(id) || std::count(want.begin(), want.end(), id)) continue;
    auto r = from_cache(id, o);
    if (!r && t.stored[i]) r = normalize_now(opener(src, *t.stored[i]), id, o, tmp, Pass::kStreamThenSpool);
    if (!r) {
      want.push_back(id);
      continue;
    }
    by_id[id] = r;
    uploads.add(r);
  }
  std::vector<std::string> again;
  if (!want.empty()) by_id.merge(read_and_normalize(src, want, o, tmp, Pass::kStreamOnly, uploads, again));
  for (const auto& stale : uploads.wait()) again.push_back(stale->layer.from_digest);
  if (!again.empty()) {
    std::vector<std::string> left;
    for (auto& [id, r] : read_and_normalize(src, again, o, tmp, Pass::kSpool, uploads, left)) by_id[id] = r;
    uploads.wait();
    if (!left.empty()) throw Error("normalize: " + src.describe() + " gave no layer " + left.front());
  }
  std::vector<NormalizedLayer> out;
  for (const auto& id : t.diff_ids) out.push_back(by_id.at(id)->layer);
  return out;
}

}  // namespace

NormalizeResult normalize_image(ImageSource& src, ImageDestination& dst, const NormalizeOptions& o,
                                const std::string& tag) {
  if (o.epoch <= 0) throw InputError("normalize: expected SOURCE_DATE_EPOCH > 0, found " + std::to_string(o.epoch));
  PrivateTempDir tmp("imgtool-normalize-", o.spool_dir);
  NormalizeResult res;
  Descriptor source_config;
  if (auto t = src.tar_layers()) {
    res.layers = normalize_tars(src, *t, o, tmp.path(), dst);
    source_config = {media::kOciConfig, t->config_digest, 0, {}};
  } else {
    Manifest m = src.manifest();
    res.layers = normalize_blobs(src, m.layers(), o, tmp.path(), dst);
    source_config = m.config();
  }
  std::vector<std::string> diff_ids;
  nlohmann::json layers = nlohmann::json::array();
  for (const NormalizedLayer& nl : res.layers) {
    diff_ids.push_back(nl.diff_id);
    layers.push_back(nl.to);
  }
  auto cfg_reader = src.open_blob(source_config);
  std::string config = normalize_config(read_all(*cfg_reader), o.epoch, diff_ids);
  Descriptor cfg{media::kOciConfig, sha256_digest(config), int64_t(config.size()), {}};
  // Beside the layers: an engine's image of this config (its ID) is then published without a save.
  if (o.cache && o.compress) o.cache->put_config(config);
  if (!dst.has_blob(cfg)) {
    StringReader r(config);
    dst.put_blob(cfg, r);
  }
  nlohmann::json manifest = {
      {"schemaVersion", 2}, {"mediaType", media::kOciManifest}, {"config", cfg}, {"layers", layers}};
  res.manifest = {manifest.dump(), media::kOciManifest};
  dst.put_manifest(res.manifest, tag);
  return res;
}

}  // namespace imgtool::image
