#include "image/gunzip_parallel.h"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "core/buffer.h"
#include "core/error.h"
#include "image/inflate_state.h"

namespace imgtool::image {

namespace gunzip_chunks {  // named: ParallelGunzip::Impl holds these

constexpr size_t kReadSize = 1u << 20;
constexpr size_t kWindow = 32u << 10;  // deflate's largest distance
const uint8_t kMark[4] = {0x00, 0x00, 0xff, 0xff};

uint32_t le32_at(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

using Decoder = InflateState;  // ~200 KiB, from inflate_state.h's pool

Decoder raw_decoder() {
  Decoder s = take_inflate_state();
  isal_inflate_init(s.get());
  s->crc_flag = ISAL_DEFLATE;
  return s;
}

using Bytes = Buffer;  // core/buffer.h: written right after it grows, never zero-filled

// A piece of the compressed stream, from `offset` (bytes after the gzip header).
struct Chunk {
  int64_t offset = 0;
  Bytes in;
  bool speculative = false;  // starts at a mark: a worker decodes it on its own
  // The worker's result (valid once `done`).
  Decoder state;
  Bytes out;
  bool failed = false, full = false, done = false;
  std::atomic<bool> abandoned{false};
};
using ChunkPtr = std::shared_ptr<Chunk>;

// Decodes a chunk from its first byte with no history, up to `max_output` bytes.
void decode_alone(Chunk& c, size_t max_output) {
  c.state = raw_decoder();
  inflate_state& s = *c.state;
  s.next_in = c.in.data();
  s.avail_in = static_cast<uint32_t>(c.in.size());
  c.out.resize(std::min(max_output, std::max<size_t>(4 * c.in.size(), kWindow)));
  size_t used = 0;
  for (;;) {
    s.next_out = c.out.data() + used;
    s.avail_out = static_cast<uint32_t>(c.out.size() - used);
    int rc = isal_inflate(&s);
    used = static_cast<size_t>(s.next_out - c.out.data());
    if (rc < 0 || c.abandoned.load(std::memory_order_relaxed)) {
      c.failed = true;
      break;
    }
    if (s.avail_out > 0 || s.block_state == ISAL_BLOCK_FINISH) break;  // all the input it had is decoded
    if (c.out.size() >= max_output) {
      c.full = true;  // more may follow: read() carries on with this state
      break;
    }
    c.out.resize(std::min(max_output, 2 * c.out.size()));
  }
  c.out.resize(used);
}

}  // namespace gunzip_chunks

namespace gc = gunzip_chunks;

struct ParallelGunzip::Impl {
  BlobReader& src;
  std::string where;
  Limits limits;
  size_t max_in_flight;

  // Shared with the reader and worker threads, under `mu`.
  std::mutex mu;
  std::condition_variable cv;      // any change below
  std::deque<gc::ChunkPtr> queue;  // cut, not yet taken by read()
  std::deque<gc::ChunkPtr> tasks;  // speculative chunks for the workers
  bool stop = false, ended = false, eof = false;
  std::exception_ptr src_error;
  std::atomic<int64_t> src_bytes{0};
  std::vector<std::thread> threads;

  // read()'s side.
  gc::Decoder dec;          // the decoder in use (null before the first chunk)
  gc::ChunkPtr at, before;  // the chunk `dec` reads, and the one before it
  gc::ChunkPtr pending;     // a worker's output being handed out
  size_t pending_pos = 0;
  bool filled = false;  // dec's last call filled its output: it may hold more
  uint32_t crc = 0;
  uint64_t total = 0;
  bool finished = false, released = false;
  Rest rest;
  Stats stats;

  // The reader's side: the piece still growing, and how far it was searched for marks.
  gc::ChunkPtr growing;
  size_t searched = 0;
  bool inline_mode;  // jobs == 0: no threads, read() does it all, in order
  size_t read_size;  // one read of src: 1 MiB, less when the limits are tiny (tests)

  Impl(BlobReader& s, std::vector<uint8_t> first, std::string w, unsigned jobs, Limits lim)
      : src(s), where(std::move(w)), limits(lim), max_in_flight(jobs + 2), inline_mode(jobs == 0) {
    // Pieces of at least 16 bytes: the 8 bytes a decoder reads ahead (where the trailer is
    // looked for) then lie in the last two chunks, the ones read() still holds.
    limits.target = std::max<size_t>(limits.target, 16);
    limits.max_input = std::max(limits.max_input, limits.target);
    read_size = std::min(gc::kReadSize, std::max<size_t>(limits.max_input, 4096));
    growing = std::make_shared<gc::Chunk>();
    growing->in.assign(first.data(), first.data() + first.size());
    growing->speculative = true;  // the member's deflate stream starts here
    if (inline_mode) return;
    try {
      threads.emplace_back([this] { read_source(); });
      for (unsigned i = 0; i < jobs; ++i) threads.emplace_back([this] { work(); });
    } catch (...) {
      halt();
      throw;
    }
  }

  ~Impl() { halt(); }

  [[noreturn]] void corrupt(const std::string& why) const {
    throw Error(where + ": expected a valid gzip stream, found " + why);
  }

  void halt() {
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_all();
    for (auto& t : threads)
      if (t.joinable()) t.join();
    if (growing) queue.push_back(std::exchange(growing, nullptr));  // inline mode: what was read, not yet cut
  }

  // ---- reader thread: reads src, cuts chunks at marks ----

  void push(gc::ChunkPtr c) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return stop || inline_mode || queue.size() < max_in_flight; });
    queue.push_back(c);
    if (c->speculative && !stop && !inline_mode) tasks.push_back(c);
    cv.notify_all();
  }

  // Where the piece of `in` from `start` ends: at the first mark whose end is
  // limits.target bytes or more past `start` (the next piece begins with a
  // block: speculative), else at limits.max_input (not speculative); 0 when
  // neither is in `in` yet. Marks are searched from `searched` on.
  size_t piece_end(const gc::Bytes& in, size_t start, size_t& searched, bool& mark) const {
    size_t width = sizeof gc::kMark;
    size_t from = std::max(searched, start + limits.target - std::min(limits.target, width));
    size_t limit = start + limits.max_input;
    auto hit = std::search(in.begin() + static_cast<ptrdiff_t>(std::min(from, in.size())), in.end(), gc::kMark,
                           gc::kMark + width);
    size_t hit_end = hit == in.end() ? 0 : static_cast<size_t>(hit - in.begin()) + width;
    mark = hit_end != 0 && hit_end <= limit;
    if (mark) return hit_end;
    if (in.size() >= limit) return limit;
    searched = std::max(from, in.size() - std::min(in.size(), width - 1));  // a mark may straddle the end
    return 0;
  }

  // Cuts `c` into pieces, pushes every whole one (each byte copied once) and
  // returns the last, still growing.
  gc::ChunkPtr cut(gc::ChunkPtr c, size_t& searched) {
    std::vector<std::pair<size_t, bool>> ends;  // where a piece ends; whether the next is speculative
    size_t start = 0;
    bool mark = false;
    while (size_t end = piece_end(c->in, start, searched, mark)) {
      ends.emplace_back(end, mark);
      start = end;
    }
    if (ends.empty()) return c;
    std::vector<gc::ChunkPtr> pieces;
    for (size_t i = 0; i < ends.size(); ++i) {
      size_t from = ends[i].first, to = i + 1 < ends.size() ? ends[i + 1].first : c->in.size();
      auto p = std::make_shared<gc::Chunk>();
      p->offset = c->offset + static_cast<int64_t>(from);
      p->speculative = ends[i].second;
      p->in.assign(c->in.begin() + static_cast<ptrdiff_t>(from), c->in.begin() + static_cast<ptrdiff_t>(to));
      pieces.push_back(std::move(p));
    }
    searched = searched > ends.back().first ? searched - ends.back().first : 0;
    c->in.resize(ends.front().first);
    push(c);
    for (size_t i = 0; i + 1 < pieces.size(); ++i) push(pieces[i]);
    return pieces.back();
  }

  // One read of src and the cuts it allows; false once src ended or failed
  // (the last piece pushed, so that no byte read is lost).
  bool read_step() {
    try {
      growing = cut(growing, searched);
      gc::Bytes& in = growing->in;
      size_t old = in.size(), n = 0;
      in.resize(old + read_size);
      try {
        n = src.read(reinterpret_cast<char*>(in.data() + old), read_size);
      } catch (...) {
        in.resize(old);  // none of the room made for the read is data
        throw;
      }
      in.resize(old + n);
      src_bytes += static_cast<int64_t>(n);
      if (n > 0) return true;
      std::lock_guard<std::mutex> l(mu);
      eof = true;
    } catch (...) {
      std::lock_guard<std::mutex> l(mu);
      src_error = std::current_exception();
    }
    end_reading();
    return false;
  }

  void end_reading() {
    push(growing);
    growing = nullptr;
    std::lock_guard<std::mutex> l(mu);
    ended = true;
    cv.notify_all();
  }

  bool stopping() {
    std::lock_guard<std::mutex> l(mu);
    return stop;
  }

  void read_source() {
    while (!stopping())
      if (!read_step()) return;
    end_reading();
  }

  // ---- worker threads ----

  void work() {
    for (;;) {
      gc::ChunkPtr c;
      {
        std::unique_lock<std::mutex> l(mu);
        cv.wait(l, [&] { return stop || !tasks.empty(); });
        if (stop) return;
        c = tasks.front();
        tasks.pop_front();
      }
      if (!c->abandoned) gc::decode_alone(*c, limits.max_output);
      std::lock_guard<std::mutex> l(mu);
      c->done = true;
      cv.notify_all();
    }
  }

  // ---- read()'s side ----

  gc::ChunkPtr take() {
    if (inline_mode)
      while (queue.empty() && !ended && read_step()) {
      }
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return !queue.empty() || ended; });
    if (queue.empty()) return nullptr;
    gc::ChunkPtr c = queue.front();
    queue.pop_front();
    cv.notify_all();
    return c;
  }

  // A worker's decode of `c`, or false when it has none (stopped, or never started).
  bool wait_decoded(gc::Chunk& c) {
    if (inline_mode && !c.done) {
      gc::decode_alone(c, limits.max_output);
      c.done = true;
    }
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return c.done || stop; });
    return c.done && !c.failed;
  }

  // `dec` consumed all its input and stands between two blocks, holding nothing.
  bool at_block_boundary() const {
    if (!dec) return true;  // the member's start
    const inflate_state& s = *dec;
    // ISAL_BLOCK_HDR with nothing saved: it began to read a header and found no input.
    bool between = s.block_state == ISAL_BLOCK_NEW_HDR || (s.block_state == ISAL_BLOCK_HDR && s.tmp_in_size == 0);
    return !filled && s.avail_in == 0 && between && s.read_in_length == 0 && s.tmp_out_valid == s.tmp_out_processed &&
           s.copy_overflow_length == 0 && s.write_overflow_len == 0;
  }

  void next_chunk() {
    gc::ChunkPtr c = take();
    if (!c) {
      if (src_error) std::rethrow_exception(src_error);
      corrupt("a truncated stream (it ends before its trailer)");
    }
    before = at;
    at = c;
    bool first = !dec;
    if (c->speculative && !c->in.empty() && at_block_boundary() && wait_decoded(*c) &&
        (first || c->out.size() >= gc::kWindow || c->state->block_state == ISAL_BLOCK_FINISH)) {
      dec = std::move(c->state);  // its next_in/avail_in still point into c->in
      pending = c;
      pending_pos = 0;
      filled = c->full;
      ++stats.parallel;
    } else {
      c->abandoned = true;
      if (!dec) dec = gc::raw_decoder();
      dec->next_in = c->in.data();
      dec->avail_in = static_cast<uint32_t>(c->in.size());
    }
    ++stats.chunks;
  }

  size_t emit_pending(uint8_t* out, size_t len) {
    size_t n = std::min(len, pending->out.size() - pending_pos);
    std::memcpy(out, pending->out.data() + pending_pos, n);
    pending_pos += n;
    if (pending_pos == pending->out.size()) pending->out.release();  // hand the memory back early
    return n;
  }

  size_t decode(uint8_t* out, size_t len) {
    dec->next_out = out;
    dec->avail_out = static_cast<uint32_t>(std::min<size_t>(len, UINT32_MAX));
    uint32_t in_before = dec->avail_in;
    int rc = isal_inflate(dec.get());
    if (rc < 0) corrupt(isal_inflate_error(rc));
    size_t n = static_cast<size_t>(dec->next_out - out);
    filled = dec->avail_out == 0;
    if (n == 0 && !filled && dec->avail_in == in_before && in_before > 0 && dec->block_state != ISAL_BLOCK_FINISH)
      corrupt("a stream the decoder cannot advance");
    return n;
  }

  bool may_decode() const { return dec && (dec->avail_in > 0 || filled || dec->block_state == ISAL_BLOCK_INPUT_DONE); }

  // Bytes of the stream from `from` on: the chunks still held, then what the
  // stopped reader thread left in the queue. Stops the threads.
  std::vector<uint8_t> bytes_from(int64_t from) {
    halt();
    std::vector<uint8_t> out;
    auto add = [&](const gc::ChunkPtr& c) {
      if (!c) return;
      int64_t end = c->offset + static_cast<int64_t>(c->in.size());
      if (end <= from) return;
      size_t skip = static_cast<size_t>(std::max<int64_t>(0, from - c->offset));
      out.insert(out.end(), c->in.begin() + static_cast<ptrdiff_t>(skip), c->in.end());
    };
    add(before);
    add(at);
    for (const auto& c : queue) add(c);
    queue.clear();
    return out;
  }

  // The member's deflate stream ended: its trailer (CRC-32, size) follows the
  // last whole byte the decoder used; the bits it holds are bytes it read ahead.
  void end_member() {
    int64_t used = at->offset + (dec->next_in - at->in.data()) - dec->read_in_length / 8;
    std::vector<uint8_t> b = bytes_from(used);
    released = true;
    rest.eof = eof;
    rest.error = src_error;
    while (b.size() < 8 && !rest.eof && !rest.error) more_from_src(b);
    if (b.size() < 8) {
      if (rest.error) std::rethrow_exception(rest.error);
      corrupt("a truncated stream (it ends before its trailer)");
    }
    if (gc::le32_at(b.data()) != crc) corrupt("CRC-32 mismatch");
    if (gc::le32_at(b.data() + 4) != static_cast<uint32_t>(total)) corrupt("a trailer whose size is not the data's");
    rest.bytes.assign(b.begin() + 8, b.end());
    finished = true;
  }

  // The reader thread has stopped: read on in this thread.
  void more_from_src(std::vector<uint8_t>& b) {
    size_t old = b.size();
    b.resize(old + 4096);
    try {
      size_t n = src.read(reinterpret_cast<char*>(b.data() + old), 4096);
      src_bytes += static_cast<int64_t>(n);
      b.resize(old + n);
      rest.eof = n == 0;
    } catch (...) {
      b.resize(old);
      rest.error = std::current_exception();
    }
  }

  size_t read(uint8_t* out, size_t len) {
    for (;;) {
      size_t n = 0;
      if (pending && pending_pos < pending->out.size())
        n = emit_pending(out, len);
      else if (finished)
        return 0;
      else if (dec && dec->block_state == ISAL_BLOCK_FINISH && !filled)
        end_member();
      else if (may_decode())
        n = decode(out, len);
      else
        next_chunk();
      if (n > 0) {
        crc = crc32_gzip_refl(crc, out, n);
        total += n;
        return n;
      }
    }
  }

  Rest release_rest() {
    if (!released) {
      halt();
      released = true;
      rest.eof = eof;
      rest.error = src_error;
    }
    return std::move(rest);
  }
};

const char* isal_inflate_error(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
      return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
      return "invalid lookback distance";
    case ISAL_INVALID_WRAPPER:
      return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
      return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "CRC-32 mismatch";
    case ISAL_NEED_DICT:
      return "needs a preset dictionary";
    default:
      return "unknown error";
  }
}

ParallelGunzip::ParallelGunzip(BlobReader& src, std::vector<uint8_t> first, std::string where, unsigned jobs,
                               Limits limits)
    : impl_(std::make_unique<Impl>(src, std::move(first), std::move(where), jobs, limits)) {}

ParallelGunzip::~ParallelGunzip() = default;

size_t ParallelGunzip::read(uint8_t* out, size_t len) { return impl_->read(out, len); }

ParallelGunzip::Rest ParallelGunzip::release() { return impl_->release_rest(); }

int64_t ParallelGunzip::source_bytes() const { return impl_->src_bytes.load(); }

ParallelGunzip::Stats ParallelGunzip::stats() const { return impl_->stats; }

}  // namespace imgtool::image
