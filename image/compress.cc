#include "image/compress.h"

#include <dlfcn.h>
#include <isa-l/crc.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "image/image.h"

namespace imgtool::image {

std::optional<Compression> parse_compression(const std::string& name) {
  if (name == "gzip") return Compression::kGzip;
  if (name == "zstd") return Compression::kZstd;
  return std::nullopt;
}

std::string compression_name(Compression c) { return c == Compression::kGzip ? "gzip" : "zstd"; }

const char* oci_layer_media_type(Compression c) {
  return c == Compression::kGzip ? media::kOciLayerGzip : media::kOciLayerZstd;
}

namespace {

constexpr size_t kBlock = 1 << 20;
// Raised whenever this file's gzip bytes change for the same tar (2: the ISA-L stream zeroed,
// fa4bdf9; 3: zlib instead of ISA-L, whose blobs could differ from run to run: deflate_raw).
constexpr int kGzipRevision = 3;

// The file the dynamic loader took `symbol` from, resolved (libz.so.1 -> libz.so.1.2.13: the
// version is in the name), or "static" when it is linked in.
std::string library_of(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "static";
  std::error_code ec;
  auto real = std::filesystem::canonical(info.dli_fname, ec);
  return (ec ? std::filesystem::path(info.dli_fname) : real).filename().string();
}

// Raw deflate of one block into `out` (resized; its capacity is reused, so a recycled buffer costs
// no allocation or zero-fill); `last` ends the stream (BFINAL), otherwise a full flush leaves the
// output byte-aligned (the 00 00 ff ff mark) so blocks concatenate. zlib, level 1: its output is a
// function of the bytes alone. ISA-L's igzip (this file's encoder until revision 3) gave one block
// in about 6,000 another valid encoding in imgtool on this project's machines -- the same input,
// hashed before and after, the same stream state, its first ICF segment ending elsewhere -- so the
// reproducible copy of one tar got another digest in CI; the same calls outside imgtool, with the
// input, level_buf and output at every address mod 64 KiB, never did (issue 35).
size_t deflate_raw(const char* in, size_t len, std::string& out, bool last) {
  struct Deflater {
    z_stream z{};
    Deflater() {
      if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw Error("zlib: deflateInit2 failed");
    }
    ~Deflater() { deflateEnd(&z); }
  };
  thread_local Deflater d;
  if (deflateReset(&d.z) != Z_OK) throw Error("zlib: deflateReset failed");
  size_t bound = deflateBound(&d.z, len) + 16;  // + the flush's empty stored block
  if (out.size() < bound) out.resize(bound);
  d.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
  d.z.avail_in = static_cast<uInt>(len);
  d.z.next_out = reinterpret_cast<Bytef*>(out.data());
  d.z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&d.z, last ? Z_FINISH : Z_FULL_FLUSH);
  if ((last && rc != Z_STREAM_END) || (!last && rc != Z_OK) || d.z.avail_in != 0)
    throw Error("zlib: deflate failed (" + std::to_string(rc) + ")");
  return out.size() - d.z.avail_out;
}

// Deflate "stored" blocks (BTYPE 00), as zlib emits for data that does not
// compress: the previous block ended byte-aligned, so each header is one byte
// (BFINAL, BTYPE, padding) + LEN + NLEN, and the data follows verbatim.
void store_blocks(const std::string& in, std::string& out, bool last) {
  constexpr size_t kMax = 65535;
  size_t nblocks = std::max<size_t>(1, (in.size() + kMax - 1) / kMax);
  out.resize(in.size() + nblocks * 5);
  char* o = out.data();
  size_t pos = 0;
  for (size_t b = 0; b < nblocks; ++b) {
    size_t n = std::min(kMax, in.size() - pos);
    *o++ = static_cast<char>(last && b + 1 == nblocks ? 1 : 0);
    *o++ = static_cast<char>(n & 0xff);
    *o++ = static_cast<char>(n >> 8);
    *o++ = static_cast<char>(~n & 0xff);
    *o++ = static_cast<char>((~n >> 8) & 0xff);
    std::memcpy(o, in.data() + pos, n);
    o += n;
    pos += n;
  }
}

void deflate_block(const std::string& in, std::string& out, bool last) {
  // Incompressible data (random bytes, archives, media) gains nothing from
  // the matcher: a 32 KiB sample decides, and then the block is stored.
  constexpr size_t kSample = 32 << 10;
  if (in.size() >= 4 * kSample) {
    thread_local std::string scratch;
    size_t got = deflate_raw(in.data() + in.size() / 2, kSample, scratch, false);
    if (got >= kSample - kSample / 64) {
      store_blocks(in, out, last);
      return;
    }
  }
  out.resize(deflate_raw(in.data(), in.size(), out, last));  // shrinking keeps the capacity
}

// A fixed pool of threads running tasks in FIFO order.
class Pool {
 public:
  explicit Pool(int n) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  std::future<void> submit(std::function<void()> f) {
    auto task = std::make_shared<std::packaged_task<void()>>(std::move(f));
    auto fut = task->get_future();
    {
      std::lock_guard lk(mu_);
      q_.push_back([task] { (*task)(); });
    }
    cv_.notify_one();
    return fut;
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;
        f = std::move(q_.front());
        q_.pop_front();
      }
      f();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

}  // namespace

struct LayerCompressor::Impl {
  Sink sink;
  Sha256 in_sha, out_sha;
  int64_t in_size = 0, out_size = 0;
  virtual ~Impl() = default;
  virtual void write(const char* p, size_t n) = 0;
  virtual void finish() = 0;
  void emit(const char* p, size_t n) {
    out_sha.update(p, n);
    out_size += static_cast<int64_t>(n);
    sink(p, n);
  }
};

namespace {

struct GzipImpl : LayerCompressor::Impl {
  // One block in flight: input and output buffers travel together and are
  // recycled once emitted, so steady state allocates nothing.
  struct Job {
    std::string in, out;
  };
  Pool pool;
  size_t max_inflight;
  std::deque<std::pair<std::shared_ptr<Job>, std::future<void>>> inflight;
  std::vector<std::shared_ptr<Job>> spare;
  std::shared_ptr<Job> cur;
  uint32_t crc = 0;

  explicit GzipImpl(int jobs) : pool(jobs), max_inflight(static_cast<size_t>(jobs) * 2 + 2) { cur = fresh(); }

  std::shared_ptr<Job> fresh() {
    if (spare.empty()) {
      auto j = std::make_shared<Job>();
      j->in.reserve(kBlock);
      return j;
    }
    auto j = std::move(spare.back());
    spare.pop_back();
    j->in.clear();
    return j;
  }
  void start() {
    static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    emit(reinterpret_cast<const char*>(hdr), sizeof hdr);
  }
  void submit(bool last) {
    auto job = std::move(cur);
    inflight.emplace_back(job, pool.submit([job, last] { deflate_block(job->in, job->out, last); }));
    cur = last ? nullptr : fresh();
    while (inflight.size() > (last ? 0 : max_inflight)) drain_one();
  }
  void drain_one() {
    auto [job, fut] = std::move(inflight.front());
    inflight.pop_front();
    fut.get();
    emit(job->out.data(), job->out.size());
    spare.push_back(std::move(job));
  }
  void write(const char* p, size_t n) override {
    crc = crc32_gzip_refl(crc, reinterpret_cast<const unsigned char*>(p), n);
    while (n > 0) {
      size_t take = std::min(n, kBlock - cur->in.size());
      cur->in.append(p, take);
      p += take;
      n -= take;
      if (cur->in.size() == kBlock) submit(false);
    }
  }
  void finish() override {
    submit(true);  // the remainder (possibly empty) with BFINAL
    unsigned char trailer[8];
    uint32_t isize = static_cast<uint32_t>(in_size);
    for (int i = 0; i < 4; ++i) trailer[i] = static_cast<unsigned char>(crc >> (8 * i));
    for (int i = 0; i < 4; ++i) trailer[4 + i] = static_cast<unsigned char>(isize >> (8 * i));
    emit(reinterpret_cast<const char*>(trailer), sizeof trailer);
  }
};

struct ZstdImpl : LayerCompressor::Impl {
  ZSTD_CCtx* cctx;
  std::vector<char> out;
  explicit ZstdImpl(int jobs) : cctx(ZSTD_createCCtx()), out(ZSTD_CStreamOutSize()) {
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, jobs);
  }
  ~ZstdImpl() override { ZSTD_freeCCtx(cctx); }
  void pump(const char* p, size_t n, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{p, n, 0};
    for (;;) {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      size_t left = ZSTD_compressStream2(cctx, &o, &in, mode);
      if (ZSTD_isError(left)) throw Error(std::string("zstd: ") + ZSTD_getErrorName(left));
      emit(out.data(), o.pos);
      bool done = mode == ZSTD_e_end ? left == 0 : in.pos == in.size;
      if (done) return;
    }
  }
  void write(const char* p, size_t n) override { pump(p, n, ZSTD_e_continue); }
  void finish() override { pump(nullptr, 0, ZSTD_e_end); }
};

}  // namespace

LayerCompressor::LayerCompressor(Compression c, int jobs, Sink sink) {
  if (jobs < 1) jobs = 1;
  if (c == Compression::kGzip) {
    auto g = std::make_unique<GzipImpl>(jobs);
    g->sink = std::move(sink);
    g->start();
    impl_ = std::move(g);
  } else {
    impl_ = std::make_unique<ZstdImpl>(jobs);
    impl_->sink = std::move(sink);
  }
}

LayerCompressor::~LayerCompressor() = default;

void LayerCompressor::write(const char* data, size_t len) {
  impl_->in_sha.update(data, len);
  impl_->in_size += static_cast<int64_t>(len);
  impl_->write(data, len);
}

CompressedLayer LayerCompressor::finish() {
  impl_->finish();
  return {impl_->in_sha.digest(), impl_->out_sha.digest(), impl_->out_size, impl_->in_size};
}

std::string encoder_id(Compression c) {
  static const std::string gzip = "zlib " + library_of(reinterpret_cast<const void*>(&deflate)) + " level 1, " +
                                  std::to_string(kBlock >> 20) + " MiB blocks, revision " +
                                  std::to_string(kGzipRevision);
  static const std::string zstd = std::string("zstd ") + ZSTD_versionString() + " level 3, workers";
  return c == Compression::kGzip ? gzip : zstd;
}

}  // namespace imgtool::image
