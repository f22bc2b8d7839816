// The copy engine: one image from any ImageSource to any ImageDestination.
//
// Order (the atomicity contract): every blob the manifest names (config and
// layers) is stored first — in parallel, skipping blobs the destination
// already has — and only then the manifest, whose PUT is what sets `tag`.
// A copy killed at any point leaves the tag where it was; re-running it
// completes (already stored blobs are skipped).
//
// Pipelining: the source's manifest_streaming() announces blobs as they become
// readable (docker-daemon: each layer once compressed into the layer cache), and
// `jobs` worker threads upload them while the source produces the rest.
// Streaming: when the destination accepts streams (docker://: the OCI chunked
// upload), a blob still being produced (a daemon layer being compressed) is
// uploaded while it is made; if the destination refuses (a registry without
// PATCH) or the stream's upload fails, the stream is read to its end and the
// whole blob copied like any other (HEAD, then the monolithic PUT, retried).
// A streamed blob's digest is unknown before it ends, so it cannot be skipped
// by a HEAD first: only blobs the source has whole (the layer cache) can.
// IMGTOOL_PIPELINE=0 turns pipelining off (manifest first, then blobs) and
// IMGTOOL_STREAM=0 streaming (blobs move once whole), for comparisons;
// IMGTOOL_TRACE=1 logs a timeline to stderr (trace.h).
#pragma once
#include <functional>
#include <string>

#include "image/image.h"

namespace imgtool::image {

struct CopyOptions {
  int jobs = 4;        // blobs transferred at once
  int attempts = 3;    // tries per blob on retryable errors (re-opening the source blob)
  bool stream = true;  // upload blobs while the source produces them, where the destination can
  std::function<void(const std::string&)> log;  // progress lines; none by default
};

struct CopyResult {
  std::string digest;  // manifest digest at the destination
  std::string media_type;
  int blobs = 0;          // blobs named by the manifest (config + layers)
  int blobs_skipped = 0;  // already present
  int64_t bytes_copied = 0;
  double seconds = 0;
  int blobs_streamed = 0;  // uploaded while the source produced them (chunked upload)
};

// tag: the destination tag; empty = store by digest only.
CopyResult copy_image(ImageSource& src, ImageDestination& dst, const std::string& tag, const CopyOptions& o = {});

}  // namespace imgtool::image
