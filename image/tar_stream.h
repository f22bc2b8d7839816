// A tar read as a stream from a BlobReader, in any compression libarchive knows (gzip, zstd, none):
// the one feed callback and error hand-over for image/'s readers of layer contents (normalize.h,
// image_diff.h). Entries in stream order; data through read_data().
//
//   TarStream t(*blob, "layer " + d.digest);
//   while (archive_entry* e = t.next()) { … t.read_data(buf, n) … }
#pragma once
#include <archive.h>

#include <exception>
#include <string>

#include "image/image.h"

namespace imgtool::image {

class TarStream {
 public:
  // Opens the stream; Error naming `what` when it is no archive libarchive can read.
  TarStream(BlobReader& in, std::string what);
  ~TarStream();
  TarStream(const TarStream&) = delete;
  TarStream& operator=(const TarStream&) = delete;
  // The next entry (valid until the next call), nullptr at the end; Error naming `what` for a broken
  // stream, or the reader's own exception.
  archive_entry* next();
  // Bytes of the current entry's data, 0 at its end; Error as next().
  size_t read_data(char* buf, size_t len);

 private:
  static la_ssize_t feed(archive*, void* self, const void** out);
  [[noreturn]] void fail(const std::string& doing);
  BlobReader& in_;
  std::string what_, buf_;
  std::exception_ptr err_;
  archive* a_ = nullptr;
};

}  // namespace imgtool::image
