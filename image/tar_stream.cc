#include "image/tar_stream.h"

#include <archive.h>
#include <archive_entry.h>

#include "core/error.h"

namespace imgtool::image {

TarStream::TarStream(BlobReader& in, std::string what) : in_(in), what_(std::move(what)), buf_(1 << 20, '\0') {
  a_ = archive_read_new();
  archive_read_support_filter_all(a_);
  archive_read_support_format_tar(a_);
  if (archive_read_open(a_, this, nullptr, &TarStream::feed, nullptr) != ARCHIVE_OK) {
    std::string msg = archive_error_string(a_) ? archive_error_string(a_) : "?";
    archive_read_free(a_);
    if (err_) std::rethrow_exception(err_);
    throw Error(what_ + ": cannot read it as a tar: " + msg);
  }
}

TarStream::~TarStream() { archive_read_free(a_); }

la_ssize_t TarStream::feed(archive*, void* self, const void** out) {
  auto* t = static_cast<TarStream*>(self);
  try {
    *out = t->buf_.data();
    return static_cast<la_ssize_t>(t->in_.read(t->buf_.data(), t->buf_.size()));
  } catch (...) {
    t->err_ = std::current_exception();
    return -1;
  }
}

void TarStream::fail(const std::string& doing) {
  if (err_) std::rethrow_exception(err_);
  throw Error(what_ + ": " + doing + ": " + (archive_error_string(a_) ? archive_error_string(a_) : "?"));
}

archive_entry* TarStream::next() {
  archive_entry* e = nullptr;
  int rc = archive_read_next_header(a_, &e);
  if (rc == ARCHIVE_EOF) {
    if (err_) std::rethrow_exception(err_);
    return nullptr;
  }
  if (rc != ARCHIVE_OK) fail("broken tar");
  return e;
}

size_t TarStream::read_data(char* buf, size_t len) {
  la_ssize_t n = archive_read_data(a_, buf, len);
  if (n < 0) fail("reading an entry's data");
  return static_cast<size_t>(n);
}

}  // namespace imgtool::image
