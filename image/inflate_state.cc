#include "image/inflate_state.h"

#include <isa-l/igzip_lib.h>

#include <mutex>
#include <vector>

namespace imgtool::image {
namespace {

class StatePool {
 public:
  // Never destroyed: a state released during exit still finds its pool.
  static StatePool& get() {
    static auto* pool = new StatePool;
    return *pool;
  }
  inflate_state* take() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        inflate_state* s = free_.back();
        free_.pop_back();
        return s;
      }
    }
    return new inflate_state;  // not zeroed: isal_inflate_init() sets what is read
  }
  void give(inflate_state* s) {
    {
      std::lock_guard lock(mu_);
      if (free_.size() < kKeep) return free_.push_back(s);
    }
    delete s;
  }

 private:
  static constexpr size_t kKeep = 16;  // a few per core in flight: 3.2 MiB at most
  std::mutex mu_;
  std::vector<inflate_state*> free_;
};

}  // namespace

void InflateStateRelease::operator()(inflate_state* s) const { StatePool::get().give(s); }

InflateState take_inflate_state() { return InflateState(StatePool::get().take()); }

}  // namespace imgtool::image
