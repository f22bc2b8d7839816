// ParallelGunzip: the chunks of compress.h's layers are decoded by the workers;
// every other gzip (sync flushes that refer back, marks that are chance bytes,
// no marks at all, a hostile ratio) gives the same bytes a sequential decoder
// gives; trailers, truncation, corruption and the source's own errors. Small
// Limits make many chunks out of little data.
#include "image/gunzip_parallel.h"

#include <doctest/doctest.h>
#include <isa-l/igzip_lib.h>

#include <random>

#include "core/error.h"
#include "image/blob.h"
#include "image/compress.h"
#include "image/testing/blob_readers.h"
#include "tests/error_of.h"

using namespace imgtool;
using namespace imgtool::image;
using imgtool::testing::error_of;

namespace {

const ParallelGunzip::Limits kSmall{64 << 10, 256 << 10, 128 << 10};

// Lines of words from a small vocabulary: compresses about 3x, with matches everywhere.
std::string words(size_t bytes, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < bytes) {
    s += "w" + std::to_string(rng() % 2000);
    s += rng() % 8 == 0 ? '\n' : ' ';
  }
  s.resize(bytes);
  return s;
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

std::string compress_layer(const std::string& data) {
  std::string out;
  LayerCompressor lc(Compression::kGzip, 2, [&](const char* p, size_t n) { out.append(p, n); });
  lc.write(data.data(), data.size());
  lc.finish();
  return out;
}

// One gzip member by ISA-L's streaming deflate, fed `block` bytes a call with `flush`:
// SYNC_FLUSH leaves 00 00 FF FF marks after which blocks still refer back (pigz's
// default); NO_FLUSH with one block is ordinary gzip, no marks at all.
std::string isal_gzip(const std::string& data, size_t block, int flush) {
  isal_zstream s;
  isal_deflate_init(&s);
  std::vector<uint8_t> level(ISAL_DEF_LVL1_DEFAULT);
  s.level = 1;
  s.level_buf = level.data();
  s.level_buf_size = static_cast<uint32_t>(level.size());
  s.gzip_flag = IGZIP_GZIP;
  s.flush = flush;
  std::string out(data.size() + data.size() / 2 + (1 << 16), '\0');
  s.next_out = reinterpret_cast<uint8_t*>(out.data());
  s.avail_out = static_cast<uint32_t>(out.size());
  for (size_t at = 0; at < data.size(); at += block) {
    size_t n = std::min(block, data.size() - at);
    s.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(data.data() + at));
    s.avail_in = static_cast<uint32_t>(n);
    s.end_of_stream = at + n == data.size();
    REQUIRE(isal_deflate(&s) == COMP_OK);
    REQUIRE(s.avail_in == 0);
  }
  out.resize(out.size() - s.avail_out);
  return out;
}

// The gzip header of compress.h's and ISA-L's members is the fixed 10 bytes.
struct Decoded {
  std::string out;
  ParallelGunzip::Stats stats;
  ParallelGunzip::Rest rest;
};

Decoded gunzip(BlobReader& src, std::string first, unsigned jobs, ParallelGunzip::Limits lim = kSmall,
               size_t chunk = 100000) {
  ParallelGunzip g(src, std::vector<uint8_t>(first.begin(), first.end()), "test layer", jobs, lim);
  Decoded d;
  std::string buf(chunk, '\0');
  while (size_t n = g.read(reinterpret_cast<uint8_t*>(buf.data()), buf.size())) d.out.append(buf.data(), n);
  d.stats = g.stats();
  d.rest = g.release();
  return d;
}

Decoded gunzip(const std::string& gz, unsigned jobs, ParallelGunzip::Limits lim = kSmall) {
  StringReader src(gz.substr(10));
  return gunzip(src, "", jobs, lim);
}

// Serves 1..4093 bytes a call, to cut chunks anywhere.
struct RaggedReader : BlobReader {
  explicit RaggedReader(std::string b) : bytes(std::move(b)) {}
  size_t read(char* buf, size_t len) override {
    size_t n = std::min({len, bytes.size() - pos, size_t(1 + (calls++ * 7919) % 4093)});
    std::copy_n(bytes.data() + pos, n, buf);
    pos += n;
    return n;
  }
  std::string bytes;
  size_t pos = 0, calls = 0;
};

}  // namespace

TEST_CASE("parallel gunzip: the chunks of compress.h's layers are decoded by the workers, byte for byte") {
  std::string data = words(3 << 20, 1) + random_bytes(1 << 20, 2) + words(2 << 20, 3);
  std::string gz = compress_layer(data);
  // Marks after every 1 MiB of data (but none in the stored random MiB), cuts at the first
  // mark past 64 KiB of input, no cut without a mark before 2 MiB: every chunk is a worker's.
  ParallelGunzip::Limits lim{64 << 10, 2 << 20, 4 << 20};
  Decoded d = gunzip(gz, 4, lim);
  CHECK(d.out == data);
  CHECK(d.rest.bytes.empty());
  CHECK(d.rest.eof);
  CHECK_MESSAGE(d.stats.chunks >= 5, d.stats.chunks);
  CHECK_MESSAGE(d.stats.parallel == d.stats.chunks, d.stats.parallel, " of ", d.stats.chunks);

  RaggedReader ragged(gz.substr(10));
  Decoded r = gunzip(ragged, "", 3, lim, 777);
  CHECK(r.out == data);
  CHECK(r.stats.parallel == r.stats.chunks);
  Decoded alone = gunzip(gz, 0, lim);  // no threads: the same chunks, used the same way
  CHECK(alone.out == data);
  CHECK(alone.stats.parallel == alone.stats.chunks);
  CHECK(alone.stats.chunks == d.stats.chunks);
  // With small limits the stored MiB is cut without marks: those chunks are decoded in order.
  Decoded small = gunzip(gz, 2);
  CHECK(small.out == data);
  CHECK(small.stats.parallel < small.stats.chunks);
}

TEST_CASE("parallel gunzip: the default limits on a layer of 24 MiB") {
  std::string data = words(24 << 20, 4);
  std::string gz = compress_layer(data);
  Decoded d = gunzip(gz, 2, {});
  CHECK(d.out == data);
  CHECK_MESSAGE(d.stats.parallel >= 3, d.stats.parallel, " of ", d.stats.chunks);
}

TEST_CASE("parallel gunzip: sync flushes that refer back are decoded in order, never from a chunk's own decode") {
  std::string data = words(3 << 20, 6);
  std::string gz = isal_gzip(data, 256 << 10, SYNC_FLUSH);
  for (unsigned jobs : {4u, 0u}) {
    Decoded d = gunzip(gz, jobs);
    CHECK(d.out == data);
    // Each chunk after the first starts at a mark, but its decode without history
    // fails (a reference before its start): only the member's first chunk is a worker's.
    CHECK(d.stats.chunks >= 6);
    CHECK(d.stats.parallel == 1);
  }
}

TEST_CASE("parallel gunzip: 00 00 FF FF inside stored data is a false mark, and changes nothing") {
  std::string data = random_bytes(3 << 20, 7);
  for (size_t at = 1000; at + 4 < data.size(); at += 9973) data.replace(at, 4, std::string("\0\0\xff\xff", 4));
  std::string gz = compress_layer(data);  // random: stored blocks, the planted marks among their bytes
  Decoded d = gunzip(gz, 4);
  CHECK(d.out == data);
  CHECK(d.stats.chunks >= 20);
  // The true marks (every 1 MiB) are rarely the first past a cut: most chunks begin at a planted one.
  CHECK(d.stats.parallel < d.stats.chunks);
}

TEST_CASE("parallel gunzip: a stream without marks is decoded in order") {
  std::string data = words(1 << 20, 8);
  std::string gz = isal_gzip(data, data.size(), NO_FLUSH);  // one deflate stream, no flush: ordinary gzip
  Decoded d = gunzip(gz, 4);
  CHECK(d.out == data);
}

TEST_CASE("parallel gunzip: a chunk that inflates past the output limit is finished by read()") {
  std::string data = std::string(6 << 20, '\0') + words(1 << 20, 9) + std::string(5 << 20, 'a');
  std::string gz = compress_layer(data);
  ParallelGunzip::Limits lim{4 << 10, 64 << 10, 64 << 10};  // 64 KiB of output per worker at most
  Decoded d = gunzip(gz, 2, lim);
  CHECK(d.out == data);
  CHECK(d.stats.parallel >= 1);
}

TEST_CASE("parallel gunzip: what follows the trailer is handed back") {
  std::string a = words(1 << 20, 10);
  std::string gz = compress_layer(a);
  std::string tail = compress_layer("next member") + "and then some bytes";
  for (unsigned jobs : {2u, 0u}) {
    Decoded d = gunzip(gz + tail, jobs);
    CHECK(d.out == a);
    CHECK(std::string(d.rest.bytes.begin(), d.rest.bytes.end()) == tail);
    CHECK(d.rest.eof);
  }
}

TEST_CASE("parallel gunzip: trailer, truncation and corruption are errors naming the layer") {
  std::string data = words(2 << 20, 11) + random_bytes(300000, 12);
  std::string gz = compress_layer(data);
  std::string bad = gz;
  bad[bad.size() - 6] ^= 0x55;  // the CRC-32
  std::string e = error_of([&] { gunzip(bad, 3); });
  CHECK_MESSAGE(e == "test layer: expected a valid gzip stream, found CRC-32 mismatch", e);
  bad = gz;
  bad[bad.size() - 2] ^= 0x01;  // the size
  e = error_of([&] { gunzip(bad, 3); });
  CHECK_MESSAGE(e == "test layer: expected a valid gzip stream, found a trailer whose size is not the data's", e);
  for (size_t cut : {gz.size() / 3, gz.size() - 5, size_t(20)}) {
    e = error_of([&] { gunzip(gz.substr(0, cut), 3); });
    CHECK_MESSAGE(
        e == "test layer: expected a valid gzip stream, found a truncated stream (it ends before its trailer)", e);
  }
  bad = gz;
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) bad[i] = '\xfe';  // garbage in a later chunk
  e = error_of([&] { gunzip(bad, 3); });
  CHECK_MESSAGE(e.rfind("test layer: expected a valid gzip stream, found ", 0) == 0, e);
}

TEST_CASE("parallel gunzip: the source's exception, thrown on the reader thread, comes back as it was") {
  image::testing::CutReader cut(compress_layer(words(2 << 20, 13)).substr(10), 50000);
  try {
    gunzip(cut, "", 3);
    FAIL("expected the reader's error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "connection cut by the test");
    CHECK(e.retryable);
  }
}

TEST_CASE("parallel gunzip: abandoned early, it stops its threads and says what it read") {
  std::string gz = compress_layer(words(4 << 20, 14));
  StringReader src(gz.substr(10));
  ParallelGunzip g(src, {}, "test layer", 2, kSmall);
  std::string buf(1000, '\0');
  CHECK(g.read(reinterpret_cast<uint8_t*>(buf.data()), buf.size()) == 1000);
  ParallelGunzip::Rest r = g.release();
  CHECK(r.bytes.empty());
  CHECK(g.source_bytes() > 0);
  CHECK(g.source_bytes() <= static_cast<int64_t>(gz.size() - 10));
}
