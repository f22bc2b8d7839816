#include "scan/stream_scans.h"

namespace imgtool::scan {

StreamScans::~StreamScans() {
  {
    std::lock_guard lk(mu_);
    for (auto& s : streams_) s->abandon();  // the producer's push() returns false from now on
  }
  wait();
}

std::function<void(std::shared_ptr<image::StreamingBlob>)> StreamScans::callback() {
  return [this](std::shared_ptr<image::StreamingBlob> tar) {
    std::lock_guard lk(mu_);
    std::string where = where_ + " layer #" + std::to_string(streams_.size() + 1) + " of the save stream";
    streams_.push_back(tar);
    threads_.emplace_back([this, tar, where] { scan(tar, where); });
  };
}

void StreamScans::scan(const std::shared_ptr<image::StreamingBlob>& tar, const std::string& where) {
  try {
    auto layer = tree_.scan_unmerged(*tar, where);
    if (auto d = tar->descriptor()) {
      std::lock_guard lk(mu_);
      done_[d->digest] = std::move(layer);
    }
  } catch (...) {
    // Not found by its diff_id: the caller reads the layer from the source again, where this
    // failure shows with the layer's own name. The producer carries on without this stream.
    tar->abandon();
  }
}

void StreamScans::wait() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lk(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

std::shared_ptr<const ScannedLayer> StreamScans::find(const std::string& diff_id) const {
  std::lock_guard lk(mu_);
  auto it = done_.find(diff_id);
  return it == done_.end() ? nullptr : it->second;
}

size_t StreamScans::scanned() const {
  std::lock_guard lk(mu_);
  return done_.size();
}

}  // namespace imgtool::scan
