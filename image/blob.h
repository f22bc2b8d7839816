// Concrete BlobReaders shared by the transports.
//
//   StringReader     bytes already in memory.
//   FileReader       a file on disk.
//   VerifyingReader  wraps another reader; hashes while reading and, at the end,
//                    throws imgtool::Error if digest or size differ from the
//                    descriptor ("everything read by digest is re-hashed").
//   PipeReader       a bounded in-memory channel: a producer thread push()es,
//                    the consumer read()s. Used to turn libcurl's push-style
//                    callbacks into a pull-style BlobReader.
//   GrowingBlob      a StreamingBlob over a PipeReader: the producer push()es
//                    bytes as it makes them and end()s with the descriptor.
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/hash.h"
#include "image/image.h"

namespace imgtool::image {

class StringReader : public BlobReader {
 public:
  explicit StringReader(std::string s) : s_(std::move(s)) {}
  size_t read(char* buf, size_t len) override;

 private:
  std::string s_;
  size_t pos_ = 0;
};

class FileReader : public BlobReader {
 public:
  explicit FileReader(const std::filesystem::path& p);  // throws Error if missing
  size_t read(char* buf, size_t len) override;

 private:
  std::ifstream in_;
  std::string path_;
};

class VerifyingReader : public BlobReader {
 public:
  // `where` names the source in the error ("docker://host/repo").
  VerifyingReader(std::unique_ptr<BlobReader> inner, Descriptor d, std::string where);
  size_t read(char* buf, size_t len) override;

 private:
  std::unique_ptr<BlobReader> inner_;
  Descriptor d_;
  std::string where_;
  Sha256 sha_;
  int64_t seen_ = 0;
  bool done_ = false;
};

class PipeReader : public BlobReader {
 public:
  explicit PipeReader(size_t capacity = 8 << 20) : cap_(capacity) {}
  // Producer side. push() blocks while full; returns false if the reader was closed.
  bool push(const char* data, size_t len);
  void finish(std::exception_ptr err = nullptr);  // end of stream (optionally with an error)
  // Consumer side. close() tells the producer to stop (e.g. reader destroyed early).
  size_t read(char* buf, size_t len) override;
  // Like read(), without a copy: replaces `out` with the next pushed chunk
  // (or its unread rest); returns its size, 0 at the end.
  size_t read_chunk(std::string& out);
  void close();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> chunks_;
  size_t front_off_ = 0, size_ = 0, cap_;
  bool finished_ = false, closed_ = false;
  std::exception_ptr err_;
};

// The StreamingBlob a producer (the daemon source's compressor) feeds while it
// makes the blob. Contract: the producer calls end(d) after its last push(),
// or fail(e); exactly one of them, always (the reader waits for it). Once the
// reader abandon()s, push() returns false at once and the producer carries on
// without it (it still writes its own copy, e.g. the layer cache).
class GrowingBlob : public StreamingBlob {
 public:
  explicit GrowingBlob(std::string media_type, size_t capacity = 8 << 20)
      : media_type_(std::move(media_type)), pipe_(capacity) {}
  bool push(const char* data, size_t len) { return pipe_.push(data, len); }
  void end(const Descriptor& d);
  void fail(std::exception_ptr err);
  size_t read(char* buf, size_t len) override { return pipe_.read(buf, len); }
  const std::string& media_type() const override { return media_type_; }
  std::optional<Descriptor> descriptor() const override;
  void abandon() override { pipe_.close(); }

 private:
  std::string media_type_;
  PipeReader pipe_;
  mutable std::mutex mu_;
  std::optional<Descriptor> d_;
};

// Runs `producer` on its own thread, feeding a PipeReader that read() drains;
// an exception in the producer surfaces from read(). Destroying the reader
// early closes the pipe (the producer's push() returns false) and joins.
class ThreadedReader : public BlobReader {
 public:
  explicit ThreadedReader(std::function<void(PipeReader&)> producer, size_t capacity = 16 << 20);
  ~ThreadedReader() override;
  size_t read(char* buf, size_t len) override { return pipe_.read(buf, len); }
  size_t read_chunk(std::string& out) { return pipe_.read_chunk(out); }

 private:
  PipeReader pipe_;
  std::thread worker_;
};

}  // namespace imgtool::image
