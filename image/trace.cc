#include "image/trace.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

namespace imgtool::image {
namespace {

const auto kStart = std::chrono::steady_clock::now();

}  // namespace

bool trace_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("IMGTOOL_TRACE");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

void trace(const std::string& msg) {
  if (!trace_enabled()) return;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
  unsigned tid = static_cast<unsigned>(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 10000);
  std::fprintf(stderr, "imgtool trace +%8.3f [%04u] %s\n", s, tid, msg.c_str());
}

}  // namespace imgtool::image
