#include "image/copy.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "image/docker_transport.h"

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

struct BlobCopier {
  ImageSource& src;
  ImageDestination& dst;
  const CopyOptions& o;
  std::atomic<int> skipped{0};
  std::atomic<int64_t> bytes{0};

  void copy_one(const Descriptor& d) {
    if (dst.has_blob(d)) {
      ++skipped;
      return;
    }
    auto delay = std::chrono::milliseconds(300);
    for (int attempt = 1;; ++attempt) {
      try {
        auto in = src.open_blob(d);
        CountingReader counted(*in, bytes);
        dst.put_blob(d, counted);
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

  void run(const std::vector<Descriptor>& blobs) {
    std::atomic<size_t> next{0};
    std::exception_ptr first_error;
    std::mutex mu;
    auto worker = [&] {
      for (size_t i; (i = next++) < blobs.size();) {
        try {
          copy_one(blobs[i]);
        } catch (...) {
          std::lock_guard lk(mu);
          if (!first_error) first_error = std::current_exception();
          next = blobs.size();  // stop handing out work
        }
      }
    };
    std::vector<std::thread> threads;
    int n = std::max(1, std::min<int>(o.jobs, static_cast<int>(blobs.size())));
    for (int i = 0; i < n; ++i) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    if (first_error) std::rethrow_exception(first_error);
  }
};

void link_mount_source(ImageSource& src, ImageDestination& dst) {
  auto* s = dynamic_cast<DockerSource*>(&src);
  auto* d = dynamic_cast<DockerDestination*>(&dst);
  if (s && d && s->registry().host() == d->registry().host()) d->set_mount_source(s->repo());
}

}  // namespace

CopyResult copy_image(ImageSource& src, ImageDestination& dst, const std::string& tag, const CopyOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  Manifest m = src.manifest();
  auto j = m.json();
  if (j.contains("manifests"))
    throw Error(src.describe() + ": is an image index (multi-platform); copy one platform's manifest by digest");
  std::vector<Descriptor> blobs = m.layers();
  blobs.push_back(m.config());
  link_mount_source(src, dst);
  BlobCopier c{src, dst, o};
  c.run(blobs);
  dst.put_manifest(m, tag);  // last: the tag moves only now
  CopyResult r{m.digest(), m.media_type, static_cast<int>(blobs.size()), c.skipped.load(), c.bytes.load()};
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace imgtool::image
