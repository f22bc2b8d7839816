// InflatingReader: ISA-L gzip (single and multi-member, header fields, what
// pigz-style parallel blocks produce), libzstd frames, passthrough, and the
// errors of truncated or corrupt streams; also fed one byte at a time.
#include "image/inflate.h"

#include <doctest/doctest.h>

#include <random>

#include "core/error.h"
#include "image/blob.h"
#include "image/compress.h"
#include "image/inflate_state.h"
#include "image/testing/blob_readers.h"
#include "tests/error_of.h"

using namespace imgtool;
using namespace imgtool::image;

using imgtool::testing::error_of;

namespace {

std::string sample(size_t text_bytes, size_t random_bytes, unsigned seed) {
  std::string s;
  for (size_t i = 0; s.size() < text_bytes; ++i)
    s += "usr/lib/python3.11/site-packages/file" + std::to_string(i) + "\n";
  s.resize(text_bytes);
  std::mt19937 rng(seed);
  for (size_t i = 0; i < random_bytes; ++i) s.push_back(static_cast<char>(rng()));
  return s;
}

std::string compress(const std::string& data, Compression c) {
  std::string out;
  LayerCompressor lc(c, 2, [&](const char* p, size_t n) { out.append(p, n); });
  lc.write(data.data(), data.size());
  lc.finish();
  return out;
}

// Serves its bytes in pieces of 1, 2, ... 7 bytes, to cross every boundary.
struct DribbleReader : BlobReader {
  explicit DribbleReader(std::string b) : bytes(std::move(b)) {}
  size_t read(char* buf, size_t len) override {
    size_t n = std::min({len, bytes.size() - pos, size_t(1 + calls++ % 7)});
    std::copy_n(bytes.data() + pos, n, buf);
    pos += n;
    return n;
  }
  std::string bytes;
  size_t pos = 0, calls = 0;
};

std::string inflate_all(BlobReader& compressed, size_t chunk = 1 << 20) {
  InflatingReader r(compressed, "test layer");
  std::string out, buf(chunk, '\0');
  while (size_t n = r.read(buf.data(), buf.size())) out.append(buf.data(), n);
  return out;
}

std::string inflate_all(const std::string& compressed, size_t chunk = 1 << 20) {
  StringReader r(compressed);
  return inflate_all(r, chunk);
}

}  // namespace

TEST_CASE("inflate: ISA-L reads the parallel-block gzip the compressor writes, and reports what it read") {
  std::string data = sample(3 << 20, (1 << 20) + 12345, 1);  // text blocks and stored (random) blocks
  std::string gz = compress(data, Compression::kGzip);
  StringReader in(gz);
  InflatingReader r(in, "layer");
  CHECK(r.codec() == Codec::kGzip);
  std::string out, buf(1 << 20, '\0');
  while (size_t n = r.read(buf.data(), buf.size())) out.append(buf.data(), n);
  CHECK(out == data);
  CHECK(r.decoded_bytes() == static_cast<int64_t>(data.size()));
  CHECK(r.compressed_bytes() == static_cast<int64_t>(gz.size()));
}

TEST_CASE("inflate: gzip members one after another are one stream; header fields are skipped") {
  std::string a = sample(300000, 70000, 2), b = sample(5000, 100, 3);
  std::string first = compress(a, Compression::kGzip), second = compress(b, Compression::kGzip);
  second[3] |= 0x08;  // FLG.FNAME: a zero-terminated name follows the header
  second.insert(10, std::string("layer.tar\0", 10));
  CHECK(inflate_all(first + second) == a + b);
  DribbleReader slow(first + second + first);
  CHECK(inflate_all(slow, 4093) == a + b + a);
  CHECK(inflate_all(compress("", Compression::kGzip)).empty());
}

TEST_CASE("inflate: bytes after the last gzip member that start no member end the stream (as libarchive reads it)") {
  std::string a = sample(100000, 0, 4);
  std::string gz = compress(a, Compression::kGzip);
  CHECK(inflate_all(gz + std::string(512, '\0')) == a);
  CHECK(inflate_all(gz + "not gzip") == a);
}

TEST_CASE("inflate: zstd frames one after another are one stream") {
  std::string a = sample(2 << 20, 50000, 5), b = sample(1000, 0, 6);
  std::string z = compress(a, Compression::kZstd) + compress(b, Compression::kZstd);
  StringReader in(z);
  CHECK(InflatingReader(in, "x").codec() == Codec::kZstd);
  CHECK(inflate_all(z) == a + b);
  DribbleReader slow(z);
  CHECK(inflate_all(slow, 1000) == a + b);
}

TEST_CASE("inflate: anything else passes through unchanged") {
  std::string tar = sample(70000, 3000, 7);
  StringReader in(tar);
  CHECK(InflatingReader(in, "x").codec() == Codec::kNone);
  CHECK(inflate_all(tar) == tar);
  CHECK(inflate_all(std::string("\x1f")) == "\x1f");
  CHECK(inflate_all(std::string()).empty());
}

TEST_CASE("inflate: truncated and corrupt streams are errors naming the layer and the codec") {
  std::string data = sample(1 << 20, 1 << 18, 8);
  std::string gz = compress(data, Compression::kGzip), zst = compress(data, Compression::kZstd);
  std::string e = error_of([&] { inflate_all(gz.substr(0, gz.size() / 2)); });
  CHECK_MESSAGE(e.find("test layer: expected a valid gzip stream, found a truncated stream") == 0, e);
  e = error_of([&] { inflate_all(zst.substr(0, zst.size() / 2)); });
  CHECK_MESSAGE(e.find("test layer: expected a valid zstd stream, found a truncated stream") == 0, e);
  std::string bad = gz;
  bad[bad.size() - 6] ^= 0x55;  // inside the CRC-32 trailer
  e = error_of([&] { inflate_all(bad); });
  CHECK_MESSAGE(e.find("CRC-32 mismatch") != std::string::npos, e);
  bad = zst;
  bad[4] = '\xff';  // the frame header descriptor, with its reserved bit set
  e = error_of([&] { inflate_all(bad); });
  CHECK_MESSAGE(e.find("expected a valid zstd stream") != std::string::npos, e);
}

using imgtool::image::testing::CutReader;

TEST_CASE("inflate: the compressed reader's exception comes back as it was") {
  CutReader cut(compress(sample(1 << 20, 1 << 20, 9), Compression::kGzip));
  try {
    inflate_all(cut);
    FAIL("expected the reader's error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "connection cut by the test");
    CHECK(e.retryable);
  }
}

TEST_CASE("inflate: with jobs > 1 a big gzip layer is decoded in parallel; with 1, in order; the same bytes") {
  std::string data;
  for (unsigned seed = 20; data.size() < (12u << 20); ++seed) data += sample(1 << 20, 600000, seed);
  std::string gz = compress(data, Compression::kGzip) + compress("second member", Compression::kGzip);
  for (unsigned jobs : {1u, 4u}) {
    CAPTURE(jobs);
    StringReader in(gz);
    InflatingReader r(in, "layer", jobs);
    std::string out, buf(1 << 20, '\0');
    while (size_t n = r.read(buf.data(), buf.size())) out.append(buf.data(), n);
    CHECK(out == data + "second member");
    CHECK(r.compressed_bytes() == static_cast<int64_t>(gz.size()));
    if (jobs == 1)
      CHECK(r.parallel_chunks() == 0);
    else
      CHECK_MESSAGE(r.parallel_chunks() >= 2, r.parallel_chunks());
  }
}

TEST_CASE("inflate: drain() reads the rest of the blob, past what read() needed") {
  std::string gz = compress(sample(6 << 20, 1 << 20, 30), Compression::kGzip) + std::string(5000, 'x');
  for (unsigned jobs : {1u, 3u}) {
    CAPTURE(jobs);
    StringReader in(gz);
    InflatingReader r(in, "layer", jobs);
    std::string buf(1000, '\0');
    CHECK(r.read(buf.data(), buf.size()) == 1000);
    CHECK(r.drain() == static_cast<int64_t>(gz.size()));
    char c;
    CHECK(in.read(&c, 1) == 0);
  }
  CutReader cut(compress(sample(6 << 20, 3 << 20, 31), Compression::kGzip));  // cut past the first MiB
  InflatingReader r(cut, "layer", 2);
  std::string buf(1000, '\0');
  r.read(buf.data(), buf.size());
  CHECK(error_of([&] { r.drain(); }) == "connection cut by the test");
}

TEST_CASE("inflate: decoder states come back to the pool and are reused, one gzip layer after another") {
  std::string data = sample(300000, 1000, 7), gz = compress(data, Compression::kGzip);
  inflate_state* first = nullptr;
  {
    InflateState s = take_inflate_state();
    first = s.get();
  }  // released: the pool keeps it
  InflateState again = take_inflate_state();
  CHECK(again.get() == first);
  again.reset();
  // Readers one after another: each takes a pooled state, reads right, gives it back.
  for (int i = 0; i < 3; ++i) CHECK(inflate_all(gz) == data);
  InflateState after = take_inflate_state();
  CHECK(after.get() == first);
}
