#include "verify/static_checks.h"

#include <chrono>
#include <cstdio>

#include "core/error.h"
#include "image/blob.h"
#include "image/trace.h"
#include "scan/contents_facts.h"
#include "scan/contents_tree.h"
#include "scan/loader.h"
#include "scan/stream_scans.h"
#include "sign/check_signature.h"
#include "verify/claims_check.h"
#include "verify/claims_model.h"
#include "verify/loader_rows.h"
#include "verify/signature_check.h"

namespace imgtool::verify {

namespace {

CheckResult read_failure(const std::string& what, const std::string& why) {
  return {"read",        "image readable",
          Status::kFail, what,
          why,           "check the reference, network and credentials (docker login / ~/.docker/config.json)"};
}

void add_signature(const StaticInputs& in, const VerifyOptions& opt, const std::string& digest, Report& r) {
  if (!opt.public_key) {
    r.add({"signature", "signed by the given key", Status::kFail, "a public key (--key)", "no key given",
           "pass --key keys/release.pub, or --no-signature to skip on purpose"});
    return;
  }
  if (!in.signatures) {
    r.add({"signature", "signed by the given key", Status::kFail, "signatures beside the image",
           "a transport without signatures (" + in.ref + ")", "verify the image in its registry (docker://...)"});
    return;
  }
  std::string identity = opt.policy.required_identity(in.signatures->name(), in.tag);
  if (in.index_digest.empty())
    return r.add(signature_result(*in.signatures, digest, *opt.public_key, opt.key_name, identity));
  // The tag names an index (what `imgtool sign` and `cosign sign` of that tag sign): its signature
  // binds the image read, which was taken by digest from those very bytes. Else the image's own.
  CheckResult on_index = signature_result(*in.signatures, in.index_digest, *opt.public_key, opt.key_name, identity);
  if (on_index.status == Status::kPass) {
    on_index.found +=
        " (on the index " + in.index_digest + "; its linux/amd64 image " + digest + " read from it by digest)";
    return r.add(std::move(on_index));
  }
  CheckResult on_image = signature_result(*in.signatures, digest, *opt.public_key, opt.key_name, identity);
  r.add(on_image.status == Status::kPass ? std::move(on_image) : std::move(on_index));
}

CheckResult not_scanned() {
  return {"claims",
          "claims match contents",
          Status::kSkip,
          "layers scanned once the signature holds",
          "not scanned: the signature check failed",
          "fix the signature first"};
}

std::string mib(int64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return b;
}

// With IMGTOOL_TRACE=1: one line per layer and the scan's total ("layers
// scanned in S s"), which bench/verify-scan.sh reads.
void trace_scan(const std::vector<scan::LayerStats>& stats, std::chrono::steady_clock::time_point t0) {
  if (!image::trace_enabled()) return;
  int64_t tar = 0, blob = 0;
  for (size_t i = 0; i < stats.size(); ++i) {
    const scan::LayerStats& s = stats[i];
    std::string chunks = s.parallel_chunks ? " (" + std::to_string(s.parallel_chunks) + " chunks in parallel)" : "";
    image::trace("verify: layer " + std::to_string(i) + ": " + mib(s.compressed) + " " + s.codec + chunks + " -> " +
                 mib(s.tar) + " tar, " + std::to_string(s.entries) + " entries, " + std::to_string(s.seconds) + " s");
    tar += s.tar;
    blob += s.compressed;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  image::trace("verify: " + std::to_string(stats.size()) + " layers scanned in " + std::to_string(secs) + " s (" +
               mib(blob) + " blobs, " + mib(tar) + " tar)");
}

// The blob is read (for a registry: received and hashed) on a thread of its
// own, so the scanning thread only inflates and parses tar headers. The
// reader's exception comes back from read() as it was.
std::unique_ptr<image::BlobReader> read_ahead(std::unique_ptr<image::BlobReader> blob) {
  std::shared_ptr<image::BlobReader> in(std::move(blob));
  return std::make_unique<image::ThreadedReader>(
      [in](image::PipeReader& pipe) {
        std::vector<char> buf(1 << 20);
        while (size_t n = in->read(buf.data(), buf.size()))
          if (!pipe.push(buf.data(), n)) return;  // the scan stopped early
      },
      8 << 20);
}

// The tree the claims are read from: the files the facts, the loader's view and (for_inventory)
// the SBOM keep, the GPU code examined.
scan::ContentsTree contents_tree(bool for_inventory) {
  scan::ContentsTree tree([for_inventory](const std::string& p, int64_t n) {
    return scan::keep_for_facts(p, n) || scan::keep_for_loader(p, n) ||
           (for_inventory && sbom::keep_for_inventory(p, n));
  });
  tree.examine_code(scan::examine_for_loader);  // Paddle's libraries, and libcudnn (its dlopened parts)
  tree.examine_dynamic(scan::read_dynamic_for_loader);
  return tree;
}

// Layers are read in parallel (one per core, biggest first) and merged in order (ContentsTree::add_layers);
// a layer already scanned as the source saved it (`scans`) is not read again.
LayerReads read_contents(scan::ContentsTree& tree, image::ImageSource& src, const image::Manifest& m,
                         const image::ImageConfig& config, const scan::StreamScans& scans) {
  LayerReads reads;
  std::vector<scan::LayerInput> layers;
  std::vector<image::Descriptor> blobs = m.layers();
  for (size_t i = 0; i < blobs.size(); ++i) {
    const image::Descriptor& l = blobs[i];
    layers.push_back({src.describe() + " layer " + l.digest, [&src, l] { return read_ahead(src.open_blob(l)); }, l.size,
                      i < config.diff_ids.size() ? scans.find(config.diff_ids[i]) : nullptr});
    ++(layers.back().scanned ? reads.as_saved : reads.from_source);
  }
  auto t0 = std::chrono::steady_clock::now();
  image::trace("verify: scanning " + std::to_string(layers.size()) + " layers (" + std::to_string(scans.scanned()) +
               " read as the image was saved)");
  trace_scan(tree.add_layers(layers), t0);
  return reads;
}

void add_claims(const StaticInputs& in, const VerifyOptions& opt, const image::Manifest& m, Report& r,
                scan::ContentsTree& tree, const scan::StreamScans& scans, std::optional<sbom::Inventory>* inventory,
                LayerReads& reads) {
  image::ImageConfig config = image::read_image_config(*in.source, m);
  Claims claims = read_claims(config, in.tag);
  reads = read_contents(tree, *in.source, m, config, scans);
  if (inventory) *inventory = sbom::gather_inventory(tree);
  const matrix::KnowledgeBase& kb = *opt.kb;
  scan::ContentsFacts facts = scan::gather_facts(tree);
  std::vector<std::string> env;
  for (const auto& [k, v] : claims.env) env.push_back(k + "=" + v);
  if (claims.cuda_base()) {  // a CUDA base (scripts/make-cuda-base.sh): its library set, not Paddle claims
    for (auto& c : check_base_libraries(tree, facts, env, claims.base_cuda, kb)) r.add(std::move(c));
    return;
  }
  for (auto& c : check_claims(claims, facts, kb)) r.add(std::move(c));
  PaddleLibraryRows paddle = check_paddle_libraries(tree, facts, env, claims, kb);
  for (auto& c : paddle.rows) r.add(std::move(c));
  for (auto& c : check_loader_paths(tree, facts, env, paddle.sonames)) r.add(std::move(c));
}

}  // namespace

StaticResult check_static(const StaticInputs& in, const VerifyOptions& opt, bool gather_inventory) {
  if (!in.source) throw InputError("verify: expected an image source, found none");
  if (opt.policy.contents && !opt.kb)
    throw InputError("verify: expected a knowledge base for the claims check, found none");
  StaticResult out;
  Report& r = out.report;
  r.image = in.ref;
  scan::ContentsTree tree = contents_tree(gather_inventory);
  // Without a signature to hold first (the release gate, on a built image): the layers a source
  // reads uncompressed as it works out the manifest (a docker save) are scanned as they go by, so
  // the image is read once. Otherwise nothing is scanned before the signature holds.
  scan::StreamScans scans(tree, in.ref);
  image::BlobEvents ev;
  if (opt.policy.contents && !opt.signature) ev.tar = scans.callback();
  try {
    out.manifest = in.source->manifest_streaming(ev);
    scans.wait();
  } catch (const std::exception& e) {
    r.add(read_failure("the manifest of " + in.ref, e.what()));
    return out;
  }
  const image::Manifest& m = out.manifest;
  r.digest = m.digest();
  if (!in.signed_digest.empty() && in.signed_digest != r.digest) {
    r.add(read_failure("the manifest " + in.signed_digest + " of " + in.ref, "a manifest hashing to " + r.digest));
    return out;
  }
  if (opt.signature) add_signature(in, opt, r.digest, r);
  if (opt.policy.contents && !r.ok()) {
    r.add(not_scanned());
  } else if (opt.policy.contents) {
    try {
      add_claims(in, opt, m, r, tree, scans, gather_inventory ? &out.inventory : nullptr, out.layer_reads);
    } catch (const std::exception& e) {
      r.add(read_failure("config and layers of " + in.ref, e.what()));
    }
  }
  return out;
}

}  // namespace imgtool::verify
