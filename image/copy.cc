#include "image/copy.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.h"
#include "image/docker_transport.h"
#include "image/trace.h"

namespace imgtool::image {
namespace {

// Counts bytes as they pass to the destination.
class CountingReader : public BlobReader {
 public:
  CountingReader(BlobReader& in, std::atomic<int64_t>& n) : in_(in), n_(n) {}
  size_t read(char* buf, size_t len) override {
    size_t got = in_.read(buf, len);
    n_ += static_cast<int64_t>(got);
    return got;
  }
 private:
  BlobReader& in_;
  std::atomic<int64_t>& n_;
};

// Copies blobs on `jobs` worker threads as they are queued: the source may
// announce blobs (manifest_streaming) while it is still producing others, so
// uploads overlap with, e.g., compressing the next layer. Each digest is
// copied once however often it is queued.
struct BlobCopier {
  ImageSource& src;
  ImageDestination& dst;
  const CopyOptions& o;
  std::atomic<int> skipped{0};
  std::atomic<int64_t> bytes{0};

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Descriptor> queue;
  std::set<std::string> queued;
  bool closed = false;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;

  void copy_one(const Descriptor& d) {
    std::string id = d.digest.substr(7, 12);
    trace("blob " + id + ": check");
    if (dst.has_blob(d)) {
      trace("blob " + id + ": present, skipped");
      ++skipped;
      return;
    }
    auto delay = std::chrono::milliseconds(300);
    for (int attempt = 1;; ++attempt) {
      try {
        auto in = src.open_blob(d);
        CountingReader counted(*in, bytes);
        trace("blob " + id + ": upload " + std::to_string(d.size >> 20) + " MiB");
        dst.put_blob(d, counted);
        trace("blob " + id + ": uploaded");
        if (o.log) o.log("copied " + d.digest + " (" + std::to_string(d.size) + " bytes)");
        return;
      } catch (const Error& e) {
        if (!e.retryable || attempt >= o.attempts) throw;
        if (o.log) o.log("retrying " + d.digest + ": " + e.what());
      }
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
  }

  void worker() {
    for (;;) {
      Descriptor d;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return closed || first_error || !queue.empty(); });
        if (first_error || queue.empty()) return;
        d = std::move(queue.front());
        queue.pop_front();
      }
      try {
        copy_one(d);
      } catch (...) {
        std::lock_guard lk(mu);
        if (!first_error) first_error = std::current_exception();
        cv.notify_all();
        return;
      }
    }
  }

  void start(int jobs) {
    for (int i = 0; i < std::max(1, jobs); ++i) threads.emplace_back([this] { worker(); });
  }

  // Queues d unless already queued; throws the first worker error, if any, so
  // that a source still producing blobs stops early.
  void add(const Descriptor& d) {
    std::lock_guard lk(mu);
    if (first_error) std::rethrow_exception(first_error);
    if (!queued.insert(d.digest).second) return;
    queue.push_back(d);
    cv.notify_one();
  }

  // No more blobs: waits for the workers; rethrows the first error.
  void finish() {
    {
      std::lock_guard lk(mu);
      closed = true;
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
    threads.clear();
    if (first_error) std::rethrow_exception(first_error);
  }

  ~BlobCopier() {
    if (threads.empty()) return;
    {
      std::lock_guard lk(mu);
      closed = true;
      queue.clear();
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
  }
};

void link_mount_source(ImageSource& src, ImageDestination& dst) {
  auto* s = dynamic_cast<DockerSource*>(&src);
  auto* d = dynamic_cast<DockerDestination*>(&dst);
  if (s && d && s->registry().host() == d->registry().host()) d->set_mount_source(s->repo());
}

bool pipelining_disabled() {  // IMGTOOL_PIPELINE=0: manifest first, then blobs (for comparisons)
  const char* v = std::getenv("IMGTOOL_PIPELINE");
  return v && std::string(v) == "0";
}

}  // namespace

CopyResult copy_image(ImageSource& src, ImageDestination& dst, const std::string& tag, const CopyOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  trace("copy: " + src.describe() + " -> " + dst.describe());
  link_mount_source(src, dst);
  BlobCopier c{src, dst, o};
  Manifest m;
  if (pipelining_disabled()) {
    m = src.manifest();
    c.start(o.jobs);
  } else {
    c.start(o.jobs);
    m = src.manifest_streaming([&](const Descriptor& d) { c.add(d); });  // on error ~BlobCopier stops the workers
  }
  trace("copy: manifest ready");
  auto j = m.json();
  if (j.contains("manifests"))
    throw Error(src.describe() + ": is an image index (multi-platform); copy one platform's manifest by digest");
  std::vector<Descriptor> blobs = m.layers();
  blobs.push_back(m.config());
  for (auto& d : blobs) c.add(d);
  c.finish();
  trace("copy: blobs done");
  dst.put_manifest(m, tag);  // last: the tag moves only now
  trace("copy: manifest stored");
  CopyResult r{m.digest(), m.media_type, static_cast<int>(blobs.size()), c.skipped.load(), c.bytes.load()};
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace imgtool::image
