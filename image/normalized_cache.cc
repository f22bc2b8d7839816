#include "image/normalized_cache.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/json_file.h"
#include "image/compress.h"

namespace imgtool::image {
namespace {

namespace fs = std::filesystem;

// An entry lists the paths a drop rule removed: a layer has some 10^5 paths at most.
constexpr uintmax_t kMaxEntryBytes = uintmax_t{32} << 20;

fs::path entry_path(const LayerCache& layers, const std::string& key) { return layers.root() / "normalized" / key; }

std::optional<nlohmann::json> read_entry(const fs::path& p) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec || size > kMaxEntryBytes) return std::nullopt;
  auto j = parse_json_or_discarded(read_file(p));
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

std::string string_of(const nlohmann::json& j, const char* k) {
  const auto& v = json_member(j, k);
  return v.is_string() ? v.get<std::string>() : std::string();
}

size_t count_of(const nlohmann::json& j, const char* k) {
  const auto& v = json_member(j, k);
  return v.is_number_unsigned() ? v.get<size_t>() : 0;
}

}  // namespace

NormalizedCache::NormalizedCache(const LayerCache& layers) : layers_(layers) {
  if (layers.compression() != Compression::kGzip)
    throw Error("normalized-layer cache: expected the gzip layer cache, found " +
                compression_name(layers.compression()));
}

std::string NormalizedCache::key(const std::string& from_digest, const NormalizeOptions& o) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& r : o.rules) rules.push_back({normalize_action_name(r.action), r.pattern});
  nlohmann::json k{{"from", from_digest},
                   {"epoch", o.epoch},
                   {"rules", rules},
                   {"normalizer", normalize_revision()},
                   {"encoder", encoder_id(Compression::kGzip)}};
  return sha256_hex(k.dump());
}

std::optional<NormalizedLayer> NormalizedCache::find(const std::string& from_digest, const NormalizeOptions& o) const {
  auto j = read_entry(entry_path(layers_, key(from_digest, o)));
  if (!j || string_of(*j, "from") != from_digest) return std::nullopt;
  const auto& dropped = json_member(*j, "dropped");
  std::string diff_id = string_of(*j, "diff_id");
  if (!is_sha256_digest(diff_id) || !dropped.is_array()) return std::nullopt;
  auto to = layers_.find_unverified(diff_id);  // this encoder's blob, its size checked
  if (!to) return std::nullopt;
  NormalizedLayer l{.from_digest = from_digest, .to = *to, .diff_id = diff_id};
  for (const auto& p : dropped)
    if (p.is_string()) l.dropped.push_back(p.get<std::string>());
  l.pyc_rewritten = count_of(*j, "pyc_rewritten");
  l.mtimes_clamped = count_of(*j, "mtimes_clamped");
  l.spooled = json_member(*j, "spooled").is_boolean() && json_member(*j, "spooled").get<bool>();
  l.cached = true;
  return l;
}

void NormalizedCache::put(const NormalizedLayer& l, const NormalizeOptions& o) const {
  nlohmann::json j{{"from", l.from_digest},
                   {"diff_id", l.diff_id},
                   {"dropped", l.dropped},
                   {"pyc_rewritten", l.pyc_rewritten},
                   {"mtimes_clamped", l.mtimes_clamped},
                   {"spooled", l.spooled}};
  write_file_atomic(entry_path(layers_, key(l.from_digest, o)), j.dump());
}

}  // namespace imgtool::image
