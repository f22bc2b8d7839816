#include "image/blob.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace imgtool::image {

size_t StringReader::read(char* buf, size_t len) {
  size_t n = std::min(len, s_.size() - pos_);
  std::memcpy(buf, s_.data() + pos_, n);
  pos_ += n;
  return n;
}

FileReader::FileReader(const std::filesystem::path& p) : in_(p, std::ios::binary), path_(p.string()) {
  if (!in_) throw Error("cannot open " + path_);
}

size_t FileReader::read(char* buf, size_t len) {
  in_.read(buf, static_cast<std::streamsize>(len));
  if (in_.bad()) throw Error("read error on " + path_);
  return static_cast<size_t>(in_.gcount());
}

VerifyingReader::VerifyingReader(std::unique_ptr<BlobReader> inner, Descriptor d, std::string where)
    : inner_(std::move(inner)), d_(std::move(d)), where_(std::move(where)) {}

size_t VerifyingReader::read(char* buf, size_t len) {
  if (done_) return 0;
  size_t n = inner_->read(buf, len);
  sha_.update(buf, n);
  seen_ += static_cast<int64_t>(n);
  if (d_.size > 0 && seen_ > d_.size)
    throw Error(where_ + ": blob " + d_.digest + " is longer than its descriptor size " + std::to_string(d_.size));
  if (n > 0) return n;
  done_ = true;
  std::string got = sha_.digest();
  if (got != d_.digest)
    throw Error(where_ + ": digest mismatch: expected " + d_.digest + ", content hashes to " + got +
                " (the source served wrong or corrupted bytes)");
  if (d_.size > 0 && seen_ != d_.size)
    throw Error(where_ + ": blob " + d_.digest + " has " + std::to_string(seen_) + " bytes, descriptor says " +
                std::to_string(d_.size));
  return 0;
}

bool PipeReader::push(const char* data, size_t len) {
  if (len == 0) return true;
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return closed_ || size_ < cap_; });
  if (closed_) return false;
  chunks_.emplace_back(data, len);
  size_ += len;
  cv_.notify_all();
  return true;
}

void PipeReader::finish(std::exception_ptr err) {
  std::lock_guard lk(mu_);
  finished_ = true;
  err_ = err;
  cv_.notify_all();
}

size_t PipeReader::read(char* buf, size_t len) {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return finished_ || size_ > 0; });
  if (size_ == 0) {
    if (err_) std::rethrow_exception(err_);
    return 0;
  }
  size_t done = 0;
  while (done < len && !chunks_.empty()) {
    auto& f = chunks_.front();
    size_t n = std::min(len - done, f.size() - front_off_);
    std::memcpy(buf + done, f.data() + front_off_, n);
    done += n;
    front_off_ += n;
    if (front_off_ == f.size()) {
      chunks_.pop_front();
      front_off_ = 0;
    }
  }
  size_ -= done;
  cv_.notify_all();
  return done;
}

size_t PipeReader::read_chunk(std::string& out) {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return finished_ || size_ > 0; });
  if (size_ == 0) {
    if (err_) std::rethrow_exception(err_);
    out.clear();
    return 0;
  }
  auto& f = chunks_.front();
  if (front_off_ == 0) {
    out.swap(f);
  } else {
    out.assign(f, front_off_, std::string::npos);
    front_off_ = 0;
  }
  chunks_.pop_front();
  size_ -= out.size();
  cv_.notify_all();
  return out.size();
}

void PipeReader::close() {
  std::lock_guard lk(mu_);
  closed_ = true;
  cv_.notify_all();
}

void GrowingBlob::end(const Descriptor& d) {
  {
    std::lock_guard lk(mu_);
    d_ = d;  // before the pipe ends: a reader that saw the end finds the descriptor
  }
  pipe_.finish();
}

void GrowingBlob::fail(std::exception_ptr err) { pipe_.finish(err); }

std::optional<Descriptor> GrowingBlob::descriptor() const {
  std::lock_guard lk(mu_);
  return d_;
}

ThreadedReader::ThreadedReader(std::function<void(PipeReader&)> producer, size_t capacity) : pipe_(capacity) {
  worker_ = std::thread([this, producer = std::move(producer)] {
    try {
      producer(pipe_);
      pipe_.finish();
    } catch (...) {
      pipe_.finish(std::current_exception());
    }
  });
}

ThreadedReader::~ThreadedReader() {
  pipe_.close();
  worker_.join();
}

}  // namespace imgtool::image
