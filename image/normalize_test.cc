// Deterministic images (image/normalize.h) on tars made here with libarchive: the same files in
// another order, with other build times, give the same bytes; a changed file does not; the rules
// drop build records but never a whiteout; a hard-link group is written in path order; a
// timestamp .pyc is clamped with its source; two whole images built "on two days" get one digest.
#include "image/normalize.h"

#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/strings.h"
#include "image/blob.h"
#include "image/compress.h"
#include "image/image_diff.h"
#include "image/memory.h"
#include "image/normalized_cache.h"

using namespace imgtool;
using namespace imgtool::image;

namespace {

constexpr int64_t kEpoch = 1767225600;  // 2026-01-01T00:00:00Z

struct File {
  std::string path, data;
  int64_t mtime = kEpoch + 86400;  // built after the epoch: clamped
  std::string hardlink;            // non-empty: a hard link to this path
  unsigned mode = 0644;
};

la_ssize_t append(archive*, void* ud, const void* buf, size_t n) {
  static_cast<std::string*>(ud)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// A layer tar (gzip when asked), entries in the given order, atime/ctime as a real build leaves them.
std::string tar_of(const std::vector<File>& files, bool gzip = false) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (gzip) archive_write_add_filter_gzip(a);
  archive_write_open2(a, &out, nullptr, append, nullptr, nullptr);
  for (const auto& f : files) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, f.path.c_str());
    archive_entry_set_mtime(e, f.mtime, 123456789);
    archive_entry_set_atime(e, f.mtime + 5, 0);
    archive_entry_set_ctime(e, f.mtime + 7, 0);
    if (!f.hardlink.empty()) {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_copy_hardlink(e, f.hardlink.c_str());
      archive_entry_set_size(e, 0);
    } else if (f.path.back() == '/') {
      archive_entry_set_filetype(e, AE_IFDIR);
      archive_entry_set_perm(e, 0755);
    } else {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, f.mode);
      archive_entry_set_size(e, la_int64_t(f.data.size()));
    }
    archive_write_header(a, e);
    if (f.hardlink.empty() && !f.data.empty()) archive_write_data(a, f.data.data(), f.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

struct Seen {
  int64_t mtime = 0;
  std::string data, hardlink;
  bool has_atime = false;
};

// path -> what the tar holds, and the order of the paths.
std::map<std::string, Seen> read_tar(const std::string& tar, std::vector<std::string>* order = nullptr) {
  std::map<std::string, Seen> out;
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  REQUIRE(archive_read_open_memory(a, tar.data(), tar.size()) == ARCHIVE_OK);
  archive_entry* e;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    Seen s{archive_entry_mtime(e), "", archive_entry_hardlink(e) ? archive_entry_hardlink(e) : "",
           archive_entry_atime_is_set(e) != 0};
    char buf[4096];
    for (la_ssize_t n; (n = archive_read_data(a, buf, sizeof buf)) > 0;) s.data.append(buf, size_t(n));
    if (order) order->push_back(archive_entry_pathname(e));
    out[archive_entry_pathname(e)] = s;
  }
  archive_read_free(a);
  return out;
}

NormalizeOptions options() {
  return {.epoch = kEpoch,
          .rules = parse_normalize_rules("drop\tvar/log/dpkg.log\tdpkg's log\n"
                                         "drop\ttmp/*\tbuild debris\n"
                                         "pyc\t*.pyc\tbyte-code\n",
                                         "rules.tsv")};
}

std::string normalized(const std::string& tar, NormalizedLayer* out = nullptr) {
  NormalizedLayer l;
  std::string t = normalize_layer_tar(tar, options(), l);
  if (out) *out = l;
  return t;
}

// A timestamp-based .pyc (flags 0) recording source mtime `mtime`.
std::string pyc(uint32_t flags, uint32_t mtime) {
  std::string b = "\xa7\x0d\x0d\x0a";
  for (uint32_t v : {flags, mtime, 42u})
    for (int i = 0; i < 4; ++i) b += char((v >> (8 * i)) & 0xff);
  return b + "code";
}

}  // namespace

TEST_CASE("normalize: the same files in another order, built at other times, give the same tar bytes") {
  std::vector<File> day1 = {{"usr/"},
                            {"usr/lib/"},
                            {"usr/lib/libx.so.1", "elf"},
                            {"opt/venv/bin/python", "py", kEpoch + 10},
                            {"etc/old.conf", "base file", kEpoch - 1000}};
  std::vector<File> day2 = {day1[4], day1[3], day1[0], day1[2], day1[1]};
  for (auto& f : day2)
    if (f.mtime > kEpoch) f.mtime += 3 * 86400;  // three days later
  NormalizedLayer l;
  std::string a = normalized(tar_of(day1), &l), b = normalized(tar_of(day2, true));  // gzip in: the same out
  CHECK(a == b);
  CHECK(l.mtimes_clamped == 4);
  CHECK(l.spooled);  // day1's entries are out of path order
  NormalizedLayer sorted;
  CHECK(normalized(a, &sorted) == a);  // normalizing a normalized layer changes nothing,
  CHECK_FALSE(sorted.spooled);         // and an ordered layer streams in one pass
  std::vector<std::string> order;
  auto seen = read_tar(a, &order);
  INFO(strings::join(order, " "));
  CHECK(order ==
        std::vector<std::string>{"etc/old.conf", "opt/venv/bin/python", "usr/", "usr/lib/", "usr/lib/libx.so.1"});
  CHECK(seen["etc/old.conf"].mtime == kEpoch - 1000);  // older than the epoch: as built
  CHECK(seen["usr/lib/libx.so.1"].mtime == kEpoch);
  CHECK_FALSE(seen["usr/lib/libx.so.1"].has_atime);
  CHECK(seen["usr/lib/libx.so.1"].data == "elf");
  // One changed byte is another image.
  day2[3].data = "elF";
  CHECK(normalized(tar_of(day2)) != a);
}

TEST_CASE("normalize: build records are dropped by rule, a whiteout never; a timestamp .pyc is clamped") {
  NormalizedLayer l;
  std::string t = normalized(tar_of({{"var/log/dpkg.log", "2026-03-01 install"},
                                     {"tmp/build.txt", "debris"},
                                     {"tmp/.wh.wheels", ""},
                                     {"app/m.cpython-311.pyc", pyc(0, uint32_t(kEpoch + 999))},
                                     {"app/h.cpython-311.pyc", pyc(1, 0)},  // checked-hash: no time in it
                                     {"app/m.py", "x = 1"}}),
                             &l);
  auto seen = read_tar(t);
  CHECK_FALSE(seen.count("var/log/dpkg.log"));
  CHECK_FALSE(seen.count("tmp/build.txt"));
  CHECK(seen.count("tmp/.wh.wheels"));  // deletes a lower layer's file: dropping it would bring that back
  CHECK(l.dropped == std::vector<std::string>{"var/log/dpkg.log", "tmp/build.txt"});
  CHECK(l.pyc_rewritten == 1);
  CHECK(seen["app/m.cpython-311.pyc"].data == pyc(0, uint32_t(kEpoch)));
  CHECK(seen["app/m.py"].mtime == kEpoch);  // the source and its .pyc agree
  CHECK(seen["app/h.cpython-311.pyc"].data == pyc(1, 0));
}

TEST_CASE("normalize: a hard-link group is written in path order, the first path carrying the data") {
  std::string t = normalized(tar_of({{"z/python3.11", "interp", kEpoch + 5, "", 0755},
                                     {"a/python3", "", kEpoch + 5, "z/python3.11"},
                                     {"m/python", "", kEpoch + 5, "z/python3.11"}}));
  std::vector<std::string> order;
  auto seen = read_tar(t, &order);
  CHECK(order == std::vector<std::string>{"a/python3", "m/python", "z/python3.11"});
  CHECK(seen["a/python3"].hardlink.empty());
  CHECK(seen["a/python3"].data == "interp");
  CHECK(seen["m/python"].hardlink == "a/python3");
  CHECK(seen["z/python3.11"].hardlink == "a/python3");
  NormalizedLayer again;
  CHECK(normalized(t, &again) == t);  // in order already: streamed, links as they are
  CHECK_FALSE(again.spooled);
  // The same group listed another way round gives the same bytes.
  CHECK(t == normalized(tar_of({{"a/python3", "interp", kEpoch + 9, "", 0755},
                                {"z/python3.11", "", kEpoch + 9, "a/python3"},
                                {"m/python", "", kEpoch + 9, "a/python3"}})));
}

namespace {

// An image in `store` with `layers` (gzip tars), its config stamped as a build on `day` stamps it.
Manifest image_in(MemoryStore& store, const std::vector<std::string>& layers, const std::string& day,
                  const std::string& tag) {
  nlohmann::json layer_list = nlohmann::json::array(), diff_ids = nlohmann::json::array();
  for (const auto& l : layers) {
    store.put_blob(sha256_digest(l), l);
    layer_list.push_back(Descriptor{media::kDockerLayerGzip, sha256_digest(l), int64_t(l.size()), {}});
    diff_ids.push_back("sha256:unused-" + std::to_string(diff_ids.size()));
  }
  nlohmann::json cfg = {
      {"architecture", "amd64"},
      {"os", "linux"},
      {"created", day + "T10:00:00.123Z"},
      {"container", "c0ffee" + day},
      {"container_config", {{"Hostname", "c0ffee"}}},
      {"config", {{"Labels", {{"io.imgtool.paddle", "3.3.1"}}}, {"Image", "sha256:" + sha256_hex(day)}}},
      {"history",
       {{{"created", day + "T09:59:00Z"}, {"created_by", "RUN pip install"}},
        {{"created", day + "T09:59:30Z"}, {"created_by", "ENV A=1"}, {"empty_layer", true}},
        {{"created", day + "T09:59:59Z"},
         {"created_by", "#(nop) COPY dir:" + sha256_hex(day + "stat") + " in /opt/venv "}}}},
      {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}};
  std::string c = cfg.dump();
  store.put_blob(sha256_digest(c), c);
  nlohmann::json m = {{"schemaVersion", 2},
                      {"mediaType", media::kDockerManifest},
                      {"config", Descriptor{media::kDockerConfig, sha256_digest(c), int64_t(c.size()), {}}},
                      {"layers", layer_list}};
  Manifest man{m.dump(), media::kDockerManifest};
  store.put_manifest(man, tag);
  return man;
}

}  // namespace

TEST_CASE("normalize_image, compress = false: plain tar layers (digest = diff_id), the same config and image ID") {
  auto built = std::make_shared<MemoryStore>(), gz = std::make_shared<MemoryStore>(),
       tar = std::make_shared<MemoryStore>();
  image_in(*built,
           {tar_of({{"etc/os-release", "debian", kEpoch - 5000}}, true),
            tar_of({{"opt/venv/lib/paddle.so", "so", kEpoch + 100}}, true)},
           "2026-03-01", "day1");
  MemorySource src(built, "day1");
  MemoryDestination to_gz(gz), to_tar(tar);
  NormalizeResult zipped = normalize_image(src, to_gz, options(), "t");
  NormalizeOptions plain = options();
  plain.compress = false;
  NormalizeResult r = normalize_image(src, to_tar, plain, "t");
  CHECK(r.manifest.config().digest == zipped.manifest.config().digest);  // what an engine's image ID is
  REQUIRE(r.layers.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(r.layers[i].to.media_type == std::string(media::kOciLayerTar));
    CHECK(r.layers[i].to.digest == r.layers[i].diff_id);
    CHECK(r.layers[i].diff_id == zipped.layers[i].diff_id);
    CHECK(sha256_digest(*tar->blob(r.layers[i].to.digest)) == r.layers[i].diff_id);
  }
}

TEST_CASE("normalize_image: two builds of the same files on two days get one manifest digest") {
  auto built = std::make_shared<MemoryStore>(), out1 = std::make_shared<MemoryStore>(),
       out2 = std::make_shared<MemoryStore>();
  std::vector<File> base = {{"etc/os-release", "debian", kEpoch - 5000}};
  std::vector<File> venv1 = {{"opt/venv/lib/paddle.so", "so", kEpoch + 100}, {"var/log/dpkg.log", "day 1"}};
  std::vector<File> venv2 = {{"var/log/dpkg.log", "day 2"}, {"opt/venv/lib/paddle.so", "so", kEpoch + 900}};
  image_in(*built, {tar_of(base, true), tar_of(venv1, true)}, "2026-03-01", "day1");
  image_in(*built, {tar_of(base, true), tar_of(venv2, true)}, "2026-03-04", "day2");
  MemorySource day1(built, "day1"), day2(built, "day2");
  MemoryDestination d1(out1), d2(out2);
  NormalizeResult r1 = normalize_image(day1, d1, options(), "3.3.1-cpu");
  NormalizeResult r2 = normalize_image(day2, d2, options(), "3.3.1-cpu");
  CHECK(r1.manifest.digest() == r2.manifest.digest());
  CHECK(out1->tag("3.3.1-cpu") == r1.manifest.digest());
  CHECK(r1.layers.size() == 2);
  CHECK(r1.layers[1].dropped == std::vector<std::string>{"var/log/dpkg.log"});
  // The config says when by the epoch only, names no build container, and lists the new layers.
  auto cfg = nlohmann::json::parse(*out1->blob(r1.manifest.config().digest));
  CHECK(cfg["created"] == "2026-01-01T00:00:00Z");
  CHECK(cfg["history"][0]["created"] == "2026-01-01T00:00:00Z");
  CHECK(cfg["history"][0]["created_by"] == "RUN pip install");
  CHECK_FALSE(cfg.contains("container"));
  CHECK_FALSE(cfg.contains("container_config"));
  CHECK(cfg["rootfs"]["diff_ids"][1] == r1.layers[1].diff_id);
  CHECK(cfg["config"]["Labels"]["io.imgtool.paddle"] == "3.3.1");
  CHECK_FALSE(cfg["config"].contains("Image"));
  // the COPY's stat hash is its layer's content now (the empty ENV line takes no layer)
  CHECK(cfg["history"][2]["created_by"] == "#(nop) COPY dir:" + r1.layers[1].diff_id.substr(7) + " in /opt/venv ");
  // The written layer is what its descriptor says.
  std::string gz = *out1->blob(r1.layers[1].to.digest);
  CHECK(sha256_digest(gz) == r1.layers[1].to.digest);
  CHECK(read_tar(gz).count("opt/venv/lib/paddle.so"));
  // Another file content: another digest.
  image_in(*built, {tar_of(base, true), tar_of({{"opt/venv/lib/paddle.so", "sO", kEpoch + 100}}, true)}, "2026-03-01",
           "changed");
  MemorySource changed(built, "changed");
  auto out3 = std::make_shared<MemoryStore>();
  MemoryDestination d3(out3);
  CHECK(normalize_image(changed, d3, options()).manifest.digest() != r1.manifest.digest());
}

TEST_CASE("diff_images: the first differing layer and its files; the normalized pair is the same") {
  auto built = std::make_shared<MemoryStore>(), n1 = std::make_shared<MemoryStore>(),
       n2 = std::make_shared<MemoryStore>();
  std::vector<File> base = {{"etc/os-release", "debian", kEpoch - 5000}};
  image_in(*built, {tar_of(base, true), tar_of({{"a.so", "x", kEpoch + 1}, {"var/log/dpkg.log", "1"}}, true)},
           "2026-03-01", "one");
  image_in(*built, {tar_of(base, true), tar_of({{"var/log/dpkg.log", "22"}, {"a.so", "x", kEpoch + 2}}, true)},
           "2026-03-02", "two");
  MemorySource one(built, "one"), two(built, "two");
  ImageDifference d = diff_images(one, two);
  CHECK_FALSE(d.same);
  CHECK(d.config_differs);
  CHECK(std::find(d.config_keys.begin(), d.config_keys.end(), "created") != d.config_keys.end());
  CHECK(d.layer == -1);  // the made-up diff_ids agree: only the config is told apart
  // With the configs' real diff_ids the layers are compared and the files named.
  MemoryDestination d1(n1), d2(n2);
  NormalizeOptions keep = options();
  keep.rules.clear();
  auto r1 = normalize_image(one, d1, keep, "x"), r2 = normalize_image(two, d2, keep, "x");
  MemorySource x1(n1, "x"), x2(n2, "x");
  d = diff_images(x1, x2);
  CHECK(d.layer == 1);
  REQUIRE(d.files.size() == 1);  // the mtimes were clamped alike; the log's contents differ
  CHECK(d.files[0].path == "var/log/dpkg.log");
  CHECK(d.files[0].a->size == 1);
  CHECK(d.files[0].b->size == 2);
  CHECK(render_difference(d).find("first differing layer: 1") != std::string::npos);
  // With the rules the log goes, and the two are one image.
  auto s1 = std::make_shared<MemoryStore>(), s2 = std::make_shared<MemoryStore>();
  MemoryDestination e1(s1), e2(s2);
  normalize_image(one, e1, options(), "x"), normalize_image(two, e2, options(), "x");
  MemorySource y1(s1, "x"), y2(s2, "x");
  CHECK(diff_images(y1, y2).same);
  CHECK(render_difference(diff_images(y1, y2)).rfind("same: sha256:", 0) == 0);
}

TEST_CASE("LayerCompressor: one tar, one gzip stream, whatever the threads and whatever ran before") {
  // Compressible and incompressible 1 MiB blocks mixed (the second kind takes the sample path, which
  // used to leave its hash table behind in the thread's buffer for the next block).
  std::string data;
  uint64_t x = 88172645463325252ull;
  for (int b = 0; b < 12; ++b)
    for (size_t i = 0; i < (1u << 20); ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      data += b % 3 == 0 ? char(x) : char('a' + (i * 7 + b) % 23);
    }
  auto gz = [&](int jobs, size_t chunk) {
    std::string out;
    LayerCompressor c(Compression::kGzip, jobs, [&](const char* p, size_t n) { out.append(p, n); });
    for (size_t at = 0; at < data.size(); at += chunk) c.write(data.data() + at, std::min(chunk, data.size() - at));
    std::string said = c.finish().digest;  // (before hashing `out`: finish writes the trailer)
    return std::make_pair(said, sha256_digest(out));
  };
  auto first = gz(1, 10240);
  CHECK(first.first == first.second);
  for (int round = 0; round < 3; ++round) {
    CHECK(gz(4, 65536) == first);
    CHECK(gz(3, 777) == first);
  }
}

TEST_CASE("normalize rules: the shipped file reads, and bad lines are one clear line") {
  auto rules = read_normalize_rules(default_normalize_rules());
  CHECK(rules.size() >= 10);
  for (const auto& r : rules) CHECK_FALSE(r.reason.empty());
  CHECK_THROWS_WITH_AS(parse_normalize_rules("drop\tonly-two\n", "r.tsv"),
                       "r.tsv:1: expected ACTION<TAB>PATTERN<TAB>REASON, found 'drop\tonly-two'", InputError);
  CHECK_THROWS_WITH_AS(parse_normalize_rules("# c\n\nkeep\ta\tb\n", "r.tsv"),
                       "r.tsv:3: expected the action drop or pyc, found 'keep'", InputError);
  NormalizeOptions o = options();
  o.epoch = 0;
  NormalizedLayer l;
  CHECK_THROWS_AS(normalize_layer_tar(tar_of({{"a", "b"}}), o, l), InputError);
}

// ---- the normalized-layer cache (image/normalized_cache.h) ----------------------------------------

namespace {

// A source that counts the layers read (the config is not a layer).
class CountingSource : public MemorySource {
 public:
  using MemorySource::MemorySource;
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override {
    if (d.media_type != media::kDockerConfig && d.media_type != media::kOciConfig) ++layer_reads;
    return MemorySource::open_blob(d);
  }
  int layer_reads = 0;
};

struct CacheFixture {
  PrivateTempDir dir{"imgtool-normalized-cache-test-"};
  LayerCache cache{dir.path() / "gzip", Compression::kGzip};
  std::shared_ptr<MemoryStore> built = std::make_shared<MemoryStore>();
  CacheFixture() {
    image_in(*built,
             {tar_of({{"etc/os-release", "debian", kEpoch - 5000}}, true),
              tar_of({{"opt/venv/lib/paddle.so", "so", kEpoch + 100}, {"var/log/dpkg.log", "day 1"}}, true)},
             "2026-03-01", "day1");
  }
  NormalizeOptions cached(NormalizeOptions o = options()) {
    o.cache = &cache;
    return o;
  }
  // A fresh destination's result, and the layers the source had to read for it.
  std::pair<NormalizeResult, int> publish(const NormalizeOptions& o, std::shared_ptr<MemoryStore> out = nullptr) {
    CountingSource src(built, "day1");
    if (!out) out = std::make_shared<MemoryStore>();
    MemoryDestination dst(out);
    NormalizeResult r = normalize_image(src, dst, o, "t");
    for (const auto& l : r.layers) CHECK(sha256_digest(*out->blob(l.to.digest)) == l.to.digest);
    return {r, src.layer_reads};
  }
};

}  // namespace

TEST_CASE("normalized-layer cache: a re-publish reads no layer and gives the same bytes as no cache") {
  CacheFixture f;
  auto [plain, plain_reads] = f.publish(options());
  auto [first, first_reads] = f.publish(f.cached());
  auto [again, again_reads] = f.publish(f.cached());
  CHECK(plain_reads == 2);
  CHECK(first_reads == 2);
  CHECK(again_reads == 0);
  CHECK(first.manifest.digest() == plain.manifest.digest());
  CHECK(again.manifest.digest() == plain.manifest.digest());
  REQUIRE(again.layers.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK_FALSE(first.layers[i].cached);
    CHECK(again.layers[i].cached);
    CHECK(again.layers[i].to.digest == plain.layers[i].to.digest);
    CHECK(again.layers[i].diff_id == plain.layers[i].diff_id);
    CHECK(again.layers[i].from_digest == plain.layers[i].from_digest);
    CHECK(again.layers[i].mtimes_clamped == plain.layers[i].mtimes_clamped);
  }
  CHECK(again.layers[1].dropped == std::vector<std::string>{"var/log/dpkg.log"});
  // The layer cache serves the normalized layer by its diff_id too (a daemon image of it is not
  // compressed again).
  CHECK(f.cache.find(plain.layers[1].diff_id)->digest == plain.layers[1].to.digest);
  CHECK(f.cache.config(plain.manifest.config().digest));  // and the config: no save for its publish
}

TEST_CASE("normalized-layer cache: another epoch or other rules find nothing; a rule's reason changes no byte") {
  CacheFixture f;
  f.publish(f.cached());
  NormalizeOptions later = f.cached();
  later.epoch += 86400;
  CHECK(f.publish(later).second == 2);
  NormalizeOptions fewer = f.cached();
  fewer.rules.pop_back();
  CHECK(f.publish(fewer).second == 2);
  NormalizeOptions reworded = f.cached();
  reworded.rules[0].reason = "said another way";
  CHECK(f.publish(reworded).second == 0);
  NormalizeOptions again = f.cached();
  again.reuse_cached = false;  // copy --renormalize
  CHECK(f.publish(again).second == 2);
  CHECK(f.publish(f.cached()).second == 0);
  CHECK(NormalizedCache::key("sha256:a", options()) != NormalizedCache::key("sha256:b", options()));
  NormalizeOptions other_action = options();
  other_action.rules[0].action = NormalizeAction::pyc;  // same pattern, another action: another key
  CHECK(NormalizedCache::key("sha256:a", options()) != NormalizedCache::key("sha256:a", other_action));
}

TEST_CASE("normalized-layer cache: a swapped or missing blob is normalized again, an odd entry finds nothing") {
  CacheFixture f;
  auto [first, reads] = f.publish(f.cached());
  const std::string digest = first.layers[1].to.digest;
  SUBCASE("the blob's bytes swapped (same size): re-hashed before use, removed, made again") {
    std::string bytes = read_file(f.cache.blob_path(digest));
    bytes[bytes.size() / 2] ^= 0x5a;
    LayerCache fresh(f.cache.root(), Compression::kGzip);  // another process: nothing re-hashed yet
    write_file_atomic(fresh.blob_path(digest), bytes);
    NormalizeOptions o = f.cached();
    o.cache = &fresh;
    auto [again, again_reads] = f.publish(o);
    CHECK(again_reads == 1);
    CHECK_FALSE(again.layers[1].cached);
    CHECK(again.manifest.digest() == first.manifest.digest());
  }
  SUBCASE("the blob trimmed away") {
    std::filesystem::remove(f.cache.blob_path(digest));
    CHECK(f.publish(f.cached()).second == 1);
  }
  SUBCASE("the destination has the blob already: nothing is read, nothing re-hashed") {
    auto out = std::make_shared<MemoryStore>();
    f.publish(options(), out);
    std::filesystem::remove(f.cache.blob_path(first.layers[0].to.digest));
    write_file_atomic(f.cache.blob_path(digest), std::string(size_t(first.layers[1].to.size), 'x'));
    LayerCache fresh(f.cache.root(), Compression::kGzip);
    NormalizeOptions o = f.cached();
    o.cache = &fresh;
    auto [again, again_reads] = f.publish(o, out);
    CHECK(again_reads == 1);  // layer 0's blob is gone; layer 1 is in the destination
    CHECK(again.layers[1].cached);
  }
  SUBCASE("an upload that fails fails the image: no manifest, no tag") {
    auto out = std::make_shared<MemoryStore>();
    MemoryDestination dst(out);
    dst.fail_blob(digest);
    CountingSource src(f.built, "day1");
    CHECK_THROWS_AS(normalize_image(src, dst, f.cached(), "t"), Error);
    CHECK_FALSE(out->tag("t"));
  }
  SUBCASE("entries that are not what put() writes") {
    auto entry = f.cache.root() / "normalized" / NormalizedCache::key(first.layers[1].from_digest, options());
    for (const char* text : {"", "[1,2", "[]", R"({"from":7})", R"({"from":"sha256:x","diff_id":"sha256:y"})",
                             R"({"from":null,"diff_id":[],"dropped":{}})"}) {
      write_file_atomic(entry, text);
      CHECK_FALSE(NormalizedCache(f.cache).find(first.layers[1].from_digest, f.cached()));
    }
    std::string good = nlohmann::json{
        {"from", first.layers[1].from_digest},
        {"diff_id", first.layers[1].diff_id},
        {"dropped", {"a", 3}},
        {"pyc_rewritten", "many"},
        {"mtimes_clamped", -1},
        {"spooled", "yes"}}.dump();
    write_file_atomic(entry, good);
    auto hit = NormalizedCache(f.cache).find(first.layers[1].from_digest, f.cached());
    REQUIRE(hit);
    CHECK(hit->dropped == std::vector<std::string>{"a"});
    CHECK(hit->pyc_rewritten == 0);
    CHECK(hit->mtimes_clamped == 0);
    CHECK_FALSE(hit->spooled);
  }
}

TEST_CASE("normalize_image from a tar source (docker-daemon:'s one read): the same bytes as from its blobs") {
  CacheFixture f;
  // A third layer out of path order (b before a): the one read cannot stream it, so it is read again
  // through the spool; and the base layer twice (an image may name one layer twice).
  std::string base = tar_of({{"etc/os-release", "debian", kEpoch - 5000}}, true);
  image_in(*f.built,
           {base, tar_of({{"opt/venv/lib/paddle.so", "so", kEpoch + 100}, {"var/log/dpkg.log", "day 1"}}, true),
            tar_of({{"srv/b", "b", kEpoch + 3}, {"srv/a", "a", kEpoch + 4}}, true), base},
           "2026-03-01", "four");
  auto blobs = std::make_shared<MemoryStore>();
  MemoryDestination to_blobs(blobs);
  MemorySource by_blob(f.built, "four");
  NormalizeResult expected = normalize_image(by_blob, to_blobs, options(), "t");
  REQUIRE(expected.layers.size() == 4);
  CHECK(expected.layers[2].spooled);

  auto publish = [&](MemoryTarSource& src, const NormalizeOptions& o) {
    auto out = std::make_shared<MemoryStore>();
    MemoryDestination dst(out);
    NormalizeResult r = normalize_image(src, dst, o, "t");
    CHECK(r.manifest.digest() == expected.manifest.digest());
    CHECK(out->tag("t") == expected.manifest.digest());
    for (const auto& l : r.layers) CHECK(sha256_digest(*out->blob(l.to.digest)) == l.to.digest);
    return r;
  };
  SUBCASE("no cache: one read streams the in-order layers, a second (spooled) the out-of-order one") {
    MemoryTarSource src(f.built, "four");
    NormalizeResult r = publish(src, options());
    CHECK(src.reads == 2);
    CHECK(src.layer_reads == 0);  // no compressed layer opened
    auto t = src.tar_layers();
    for (size_t i = 0; i < 4; ++i) {
      CHECK(r.layers[i].from_digest == t->diff_ids[i]);  // named by what the normalizer read: the tar
      CHECK(r.layers[i].to.digest == expected.layers[i].to.digest);
      CHECK(r.layers[i].spooled == (i == 2));
    }
    CHECK(r.layers[1].dropped == std::vector<std::string>{"var/log/dpkg.log"});
  }
  SUBCASE("with the normalized-layer cache: keyed by diff_id, a re-publish reads nothing") {
    MemoryTarSource first(f.built, "four"), again(f.built, "four");
    publish(first, f.cached());
    NormalizeResult r = publish(again, f.cached());
    CHECK(again.reads == 0);
    CHECK(again.layer_reads == 0);
    for (const auto& l : r.layers) CHECK(l.cached);
    CHECK(r.layers[2].spooled);  // as it was made
  }
  SUBCASE("a layer the source holds compressed already is read from there, the rest from one read") {
    MemoryTarSource src(f.built, "four", {false, true, false, false});
    NormalizeResult r = publish(src, options());
    CHECK(src.layer_reads == 1);
    CHECK(src.reads == 2);  // the stream, then the spool for the out-of-order layer
    CHECK(r.layers[1].from_digest == src.tar_layers()->diff_ids[1]);
  }
  SUBCASE("a source that streams layers not wanted (a legacy save's unknown folders): they are only cached") {
    MemoryTarSource first(f.built, "four");
    NormalizeResult made = publish(first, f.cached());
    std::filesystem::remove(f.cache.root() / "normalized" /
                            NormalizedCache::key(made.layers[1].from_digest, options()));
    MemoryTarSource src(f.built, "four");
    src.stream_all = true;
    NormalizeResult r = publish(src, f.cached());
    CHECK(src.reads == 1);
    CHECK_FALSE(r.layers[1].cached);
    for (size_t i : {0, 2, 3}) CHECK(r.layers[i].cached);
  }
  SUBCASE("an upload that fails fails the image, after every stream was drained or abandoned") {
    auto out = std::make_shared<MemoryStore>();
    MemoryDestination dst(out);
    dst.fail_blob(expected.layers[1].to.digest);
    MemoryTarSource src(f.built, "four");
    CHECK_THROWS_AS(normalize_image(src, dst, options(), "t"), Error);
    CHECK_FALSE(out->tag("t"));
  }
}
