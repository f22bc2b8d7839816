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

// The same for a stream (the destination needs its descriptor at the end).
class CountingStream : public StreamingBlob {
 public:
  CountingStream(StreamingBlob& in, std::atomic<int64_t>& n) : in_(in), n_(n) {}
  size_t read(char* buf, size_t len) override {
    size_t got = in_.read(buf, len);
    n_ += static_cast<int64_t>(got);
    return got;
  }
  const std::string& media_type() const override { return in_.media_type(); }
  std::optional<Descriptor> descriptor() const override { return in_.descriptor(); }
  void abandon() override { in_.abandon(); }

 private:
  StreamingBlob& in_;
  std::atomic<int64_t>& n_;
};

// Copies blobs on `jobs` worker threads as they are queued: the source may
// announce blobs (manifest_streaming) while it is still producing others, so
// uploads overlap with, e.g., compressing the next layer; a blob still being
// produced (a StreamingBlob) is uploaded while it is made. Each digest is
// copied once however often it is queued.
struct BlobCopier {
  struct Item {
    Descriptor d;
    std::shared_ptr<StreamingBlob> stream;  // set: a blob still being produced
  };
  ImageSource& src;
  ImageDestination& dst;
  const CopyOptions& o;
  std::atomic<int> skipped{0}, streamed{0};
  std::atomic<int64_t> bytes{0};

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> queue;
  std::set<std::string> queued;
  std::vector<std::shared_ptr<StreamingBlob>> streams;  // every stream queued, to match their digests later
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

  // Uploads a stream as it is produced (chunked). If the destination refuses
  // (a registry without PATCH) or the upload breaks, the stream is read to its
  // end — the producer then has the whole blob — and copied like any other.
  void copy_stream(StreamingBlob& s) {
    trace("blob stream: chunked upload while it is produced");
    std::atomic<int64_t> sent{0};
    try {
      CountingStream counted(s, sent);
      Descriptor d = dst.put_blob_stream(counted);
      trace("blob " + d.digest.substr(7, 12) + ": uploaded (streamed)");
      bytes += sent.load();
      ++streamed;
      if (o.log) o.log("copied " + d.digest + " (" + std::to_string(d.size) + " bytes, streamed)");
      return;
    } catch (const Error& e) {
      trace(std::string("blob stream: ") + e.what() + "; falling back to a whole-blob upload");
      if (o.log) o.log(std::string("streamed upload failed (") + e.what() + "), uploading the whole blob instead");
    }
    std::vector<char> sink(1 << 20);
    while (s.read(sink.data(), sink.size()) > 0) {
    }
    auto d = s.descriptor();
    if (!d) throw Error(src.describe() + ": a streamed blob ended without a digest");
    copy_one(*d);
  }

  // Streams queued but not yet taken would block their producer forever.
  void abandon_queued_locked() {
    for (auto& it : queue)
      if (it.stream) it.stream->abandon();
    queue.clear();
  }

  void worker() {
    for (;;) {
      Item it;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return closed || first_error || !queue.empty(); });
        if (first_error || queue.empty()) return;
        it = std::move(queue.front());
        queue.pop_front();
      }
      try {
        if (it.stream)
          copy_stream(*it.stream);
        else
          copy_one(it.d);
      } catch (...) {
        if (it.stream) it.stream->abandon();
        std::lock_guard lk(mu);
        if (!first_error) first_error = std::current_exception();
        abandon_queued_locked();
        cv.notify_all();
        return;
      }
    }
  }

  void start(int jobs) {
    for (int i = 0; i < std::max(1, jobs); ++i) threads.emplace_back([this] { worker(); });
  }

  // Queues d unless already queued (or being streamed); throws the first
  // worker error, if any, so that a source still producing blobs stops early.
  void add(const Descriptor& d) {
    std::lock_guard lk(mu);
    if (first_error) std::rethrow_exception(first_error);
    if (!queued.insert(d.digest).second) return;
    for (auto& s : streams)
      if (auto sd = s->descriptor(); sd && sd->digest == d.digest) return;  // its stream's worker has it
    queue.push_back({d, nullptr});
    cv.notify_one();
  }

  void add_stream(std::shared_ptr<StreamingBlob> s) {
    std::lock_guard lk(mu);
    if (first_error) {
      s->abandon();
      std::rethrow_exception(first_error);
    }
    streams.push_back(s);
    queue.push_back({Descriptor{}, std::move(s)});
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
      abandon_queued_locked();
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
  }
};

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "0";
}

// IMGTOOL_PIPELINE=0: manifest first, then blobs; IMGTOOL_STREAM=0: no upload
// before a blob is whole (both for comparisons).
bool pipelining_disabled() { return env_off("IMGTOOL_PIPELINE"); }
bool streaming_wanted(const ImageDestination& dst, const CopyOptions& o) {
  return o.stream && dst.accepts_streams() && !env_off("IMGTOOL_STREAM");
}

}  // namespace

CopyResult copy_image(ImageSource& src, ImageDestination& dst, const std::string& tag, const CopyOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  trace("copy: " + src.describe() + " -> " + dst.describe());
  if (auto origin = src.mount_origin()) dst.offer_mount(*origin);
  BlobCopier c{src, dst, o};
  Manifest m;
  if (pipelining_disabled()) {
    m = src.manifest();
    c.start(o.jobs);
  } else {
    c.start(o.jobs);
    BlobEvents ev{[&](const Descriptor& d) { c.add(d); }, nullptr};
    if (streaming_wanted(dst, o)) ev.streaming = [&](std::shared_ptr<StreamingBlob> s) { c.add_stream(std::move(s)); };
    m = src.manifest_streaming(ev);  // on error ~BlobCopier stops the workers
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
  r.blobs_streamed = c.streamed.load();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace imgtool::image
