// Normalized layers remembered (issue 35): the same source layer, normalized with the same epoch
// and rules by the same normalizer and gzip encoder, gives the same layer, so a re-publish with
// --reproducible (another registry, a promotion, a copy after a failed push) normalizes and
// compresses nothing it did before.
//
//   NormalizedCache nc(layer_cache);
//   if (auto hit = nc.find(source_layer.digest, options)) ... hit->to is in layer_cache's blobs/
//   ... nc.put(normalized_layer, options)   after layer_cache.commit() placed its blob
//
// Under the LayerCache's root:
//   normalized/<key-hex>  {"from","diff_id","dropped","pyc_rewritten","mtimes_clamped","spooled"}
// key = sha256 of the source layer's digest (a content address: the bytes the normalizer would read;
// a registry or layout layer's blob digest, a tar source's diff_id -- docker-daemon:'s, the engine's own),
// the epoch, each rule's action and pattern (its reason changes no byte), normalize_revision() and
// encoder_id(gzip). The blob itself is the LayerCache's (map/<diff_id> -> blobs/<hex>): one store,
// one trim, one re-hash per process before its bytes are read (LayerCache::verify). An entry whose
// blob is gone, another encoder's, or the wrong size finds nothing, and the layer is normalized again.
//
// Trust: the cache folder is the user's own (cache_dir(), like the layer cache); an entry is trusted
// to map its source to the blob it names. `imgtool reproduce`, which checks a publish, does not read
// it: its rebuild is normalized afresh.
#pragma once
#include <optional>
#include <string>

#include "image/layer_cache.h"
#include "image/normalize.h"

namespace imgtool::image {

class NormalizedCache {
 public:
  explicit NormalizedCache(const LayerCache& layers);

  // The normalized layer of the source layer `from_digest` under `o` (o.epoch, o.rules), if cached:
  // `to` names a blob of the LayerCache whose size matches (not yet re-hashed: call
  // LayerCache::verify before reading it).
  std::optional<NormalizedLayer> find(const std::string& from_digest, const NormalizeOptions& o) const;
  // Records `l` (l.from_digest, l.to, l.diff_id and what was changed); its blob must already be committed.
  void put(const NormalizedLayer& l, const NormalizeOptions& o) const;

  // The entry's key (sha256 hex) for `from_digest` under `o`.
  static std::string key(const std::string& from_digest, const NormalizeOptions& o);

 private:
  const LayerCache& layers_;
};

}  // namespace imgtool::image
