#include "image/inflate.h"

#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "image/gunzip_parallel.h"
#include "image/inflate_state.h"

namespace imgtool::image {

std::string codec_name(Codec c) {
  switch (c) {
    case Codec::kGzip:
      return "gzip";
    case Codec::kZstd:
      return "zstd";
    default:
      return "none";
  }
}

namespace {

constexpr size_t kInBuf = 1 << 20;

bool is_gzip(const uint8_t* p, size_t n) { return n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8; }

uint32_t le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

// A zstd frame, or a skippable frame (which libzstd steps over), starts the stream.
bool is_zstd(const uint8_t* p, size_t n) {
  return n >= 4 && (le32(p) == ZSTD_MAGICNUMBER || (le32(p) & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START);
}

unsigned inflate_jobs(unsigned asked) {
  if (asked > 0) return asked;
  if (const char* e = std::getenv("IMGTOOL_INFLATE_JOBS"); e && std::atoi(e) > 0)
    return static_cast<unsigned>(std::atoi(e));
  return std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

struct InflatingReader::Impl {
  BlobReader& src;
  std::string where;
  unsigned jobs;
  std::unique_ptr<ParallelGunzip> par;  // the first gzip member, while it is decoded in parallel
  size_t par_chunks = 0;
  std::exception_ptr src_error;   // what src threw on the parallel reader's thread
  Buffer in = Buffer(16 << 10);   // not zero-filled: reads fill it; doubles to kInBuf when a read fills it
  size_t in_pos = 0, in_end = 0;  // unread input is in[in_pos, in_end)
  bool src_eof = false, done = false, detected = false;
  Codec codec = Codec::kNone;
  int64_t compressed = 0, decoded = 0;
  InflateState gz;  // ~200 KiB (inflate_state.h's pool), taken for gzip only
  ZSTD_DCtx* zd = nullptr;
  bool between_frames = true;  // zstd: the last call ended a frame

  Impl(BlobReader& s, std::string w, unsigned j) : src(s), where(std::move(w)), jobs(inflate_jobs(j)) {}
  ~Impl() { ZSTD_freeDCtx(zd); }

  [[noreturn]] void corrupt(const std::string& why) const {
    throw Error(where + ": expected a valid " + codec_name(codec) + " stream, found " + why);
  }

  // Reads more input after the unread rest (moved to the front). False at the end.
  bool refill() {
    if (src_error) std::rethrow_exception(src_error);
    if (src_eof) return false;
    if (in_pos > 0) {
      std::memmove(in.data(), in.data() + in_pos, in_end - in_pos);
      in_end -= in_pos;
      in_pos = 0;
    }
    if (in_end == in.size() && in.size() < kInBuf) in.resize(std::min(kInBuf, 2 * in.size()));
    size_t n = src.read(reinterpret_cast<char*>(in.data() + in_end), in.size() - in_end);
    compressed += static_cast<int64_t>(n);
    in_end += n;
    if (n == 0) src_eof = true;
    return n > 0;
  }

  // Ensures at least `want` unread bytes unless the input ends first.
  size_t lookahead(size_t want) {
    while (in_end - in_pos < want && refill()) {
    }
    return in_end - in_pos;
  }

  void detect() {
    detected = true;
    size_t n = lookahead(4);
    const uint8_t* p = in.data() + in_pos;
    codec = is_gzip(p, n) ? Codec::kGzip : is_zstd(p, n) ? Codec::kZstd : Codec::kNone;
    if (codec == Codec::kGzip) gz = new_state();
    if (codec == Codec::kGzip && !(jobs > 1 && start_parallel())) start_member();
    if (codec == Codec::kZstd && !(zd = ZSTD_createDCtx())) throw Error("zstd: out of memory");
  }

  // A pooled state with no output window yet (start_member() keeps the window it finds).
  static InflateState new_state() {
    InflateState s = take_inflate_state();
    s->next_out = nullptr;
    s->avail_out = 0;
    return s;
  }

  // isal_inflate_init() resets the whole state: the output window is kept across it.
  void start_member() {
    if (!gz) gz = new_state();
    uint8_t* next_out = gz->next_out;
    uint32_t avail_out = gz->avail_out;
    isal_inflate_init(gz.get());
    gz->crc_flag = ISAL_GZIP;
    gz->next_out = next_out;
    gz->avail_out = avail_out;
  }

  // A blob that does not end within its first MiB: the gzip header is parsed
  // here (ISA-L), the deflate stream after it goes to ParallelGunzip. A smaller
  // blob, or a header longer than that MiB, is read by the sequential path.
  bool start_parallel() {
    size_t n = lookahead(kInBuf);
    if (src_eof) return false;
    inflate_state& s = *gz;
    isal_inflate_init(&s);
    isal_gzip_header h;
    isal_gzip_header_init(&h);
    s.next_in = in.data() + in_pos;
    s.avail_in = static_cast<uint32_t>(n);
    if (isal_read_gzip_header(&s, &h) != ISAL_DECOMP_OK) return false;
    std::vector<uint8_t> first(s.next_in, in.data() + in_end);
    par = std::make_unique<ParallelGunzip>(src, std::move(first), where, jobs);
    in_pos = in_end = 0;
    return true;
  }

  // The parallel member ended (or is abandoned): what its reader thread read
  // beyond it becomes this reader's input.
  void end_parallel() {
    ParallelGunzip::Rest r = par->release();
    compressed += par->source_bytes();
    par_chunks = par->stats().parallel;
    par.reset();
    if (r.bytes.size() > in.size()) in.resize(r.bytes.size());
    std::copy(r.bytes.begin(), r.bytes.end(), in.begin());
    in_pos = 0;
    in_end = r.bytes.size();
    src_eof = r.eof;
    src_error = r.error;
  }

  size_t read_none(uint8_t* out, size_t len) {
    if (in_pos == in_end && !refill()) return 0;
    size_t n = std::min(len, in_end - in_pos);
    std::memcpy(out, in.data() + in_pos, n);
    in_pos += n;
    return n;
  }

  // After a member's trailer: another member follows only if its magic does.
  void next_member() {
    if (is_gzip(in.data() + in_pos, lookahead(3)))
      start_member();
    else
      done = true;
  }

  size_t read_gzip(uint8_t* out, size_t len) {
    if (par) {
      if (size_t n = par->read(out, len)) return n;
      end_parallel();
      next_member();
    }
    inflate_state& s = *gz;
    s.next_out = out;
    s.avail_out = static_cast<uint32_t>(std::min<size_t>(len, UINT32_MAX));
    while (s.avail_out > 0 && !done) {
      bool more = in_pos < in_end || refill();  // without input ISA-L may still flush what it holds
      size_t in_before = in_pos;
      uint32_t out_before = s.avail_out;
      s.next_in = in.data() + in_pos;
      s.avail_in = static_cast<uint32_t>(in_end - in_pos);
      int rc = isal_inflate(&s);
      if (rc < 0) corrupt(isal_inflate_error(rc));
      in_pos = static_cast<size_t>(s.next_in - in.data());  // ISA-L hands back the bytes past the trailer
      if (s.block_state == ISAL_BLOCK_FINISH) {
        next_member();
        continue;
      }
      if (in_pos == in_before && s.avail_out == out_before)
        corrupt(more ? "a stream the decoder cannot advance" : "a truncated stream (it ends before its trailer)");
    }
    return static_cast<size_t>(s.next_out - out);
  }

  size_t read_zstd(uint8_t* out, size_t len) {
    ZSTD_outBuffer o{out, len, 0};
    while (o.pos < o.size && !done) {
      if (in_pos == in_end && !refill() && between_frames) {
        done = true;
        break;
      }
      size_t before = o.pos;
      ZSTD_inBuffer i{in.data() + in_pos, in_end - in_pos, 0};
      size_t r = ZSTD_decompressStream(zd, &o, &i);
      if (ZSTD_isError(r)) corrupt(ZSTD_getErrorName(r));
      in_pos += i.pos;
      between_frames = r == 0;
      if (src_eof && in_pos == in_end && !between_frames && o.pos == before && o.pos < o.size)
        corrupt("a truncated stream (it ends inside a frame)");
    }
    return o.pos;
  }
};

InflatingReader::InflatingReader(BlobReader& compressed, std::string where, unsigned jobs)
    : impl_(std::make_unique<Impl>(compressed, std::move(where), jobs)) {}

InflatingReader::~InflatingReader() = default;

Codec InflatingReader::codec() {
  if (!impl_->detected) impl_->detect();
  return impl_->codec;
}

size_t InflatingReader::read(char* buf, size_t len) {
  auto* out = reinterpret_cast<uint8_t*>(buf);
  size_t n = 0;
  switch (codec()) {
    case Codec::kGzip:
      n = impl_->read_gzip(out, len);
      break;
    case Codec::kZstd:
      n = impl_->read_zstd(out, len);
      break;
    case Codec::kNone:
      n = impl_->read_none(out, len);
      break;
  }
  impl_->decoded += static_cast<int64_t>(n);
  return n;
}

int64_t InflatingReader::compressed_bytes() const {
  return impl_->compressed + (impl_->par ? impl_->par->source_bytes() : 0);
}

int64_t InflatingReader::drain() {
  Impl& m = *impl_;
  if (m.par) m.end_parallel();
  m.in_pos = m.in_end = 0;
  while (m.refill()) m.in_pos = m.in_end;
  return m.compressed;
}

size_t InflatingReader::parallel_chunks() const {
  return impl_->par ? impl_->par->stats().parallel : impl_->par_chunks;
}
int64_t InflatingReader::decoded_bytes() const { return impl_->decoded; }

}  // namespace imgtool::image
