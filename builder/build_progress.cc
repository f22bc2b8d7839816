#include "builder/build_progress.h"

#include <fstream>
#include <cctype>
#include <vector>

#include "core/strings.h"

namespace imgtool::builder {
namespace {

constexpr std::streamoff kTailBytes = 64 << 10;  // a step line is near the end of what a build printed
constexpr size_t kMaxLine = 160;

// Reads "<digits>/<digits>" at `p`, advancing it; false when that is not there.
bool fraction_at(std::string_view l, size_t& p, int& a, int& b) {
  auto digits = [&](int& out) {
    size_t from = p;
    out = 0;
    while (p < l.size() && std::isdigit(static_cast<unsigned char>(l[p])) && p - from < 6) out = out * 10 + (l[p++] - '0');
    return p > from;
  };
  if (!digits(a) || p >= l.size() || l[p] != '/') return false;
  ++p;
  return digits(b);
}

// "Step 3/9 : RUN …" (classic) or "#7 [build 2/5] RUN …" / "#7 [3/9] RUN …" (BuildKit plain).
bool step_of(std::string_view l, int& step, int& total) {
  size_t p = 0;
  int a = 0, b = 0;
  if (l.substr(0, 5) == "Step ") {
    p = 5;
    if (fraction_at(l, p, a, b) && l.substr(p, 2) == " :") return step = a, total = b, true;
    return false;
  }
  if (l.empty() || l[0] != '#') return false;
  size_t open = l.find(" [");
  if (open == std::string_view::npos || open > 8) return false;
  size_t close = l.find(']', open);
  if (close == std::string_view::npos) return false;
  std::string_view inside = l.substr(open + 2, close - open - 2);
  p = inside.rfind(' ') == std::string_view::npos ? 0 : inside.rfind(' ') + 1;  // after "stage "
  if (fraction_at(inside, p, a, b) && p == inside.size()) return step = a, total = b, true;
  return false;
}

// The line without terminal control: escape sequences (ESC [ … final byte) and other control
// characters go, so build output (pip's colours, a hostile RUN) never drives the user's terminal.
std::string printable(std::string_view l) {
  std::string out;
  for (size_t i = 0; i < l.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(l[i]);
    if (c == 0x1b) {
      if (i + 1 < l.size() && l[i + 1] == '[')
        for (i += 2; i < l.size() && !(l[i] >= '@' && l[i] <= '~'); ++i) {
        }
      continue;
    }
    if (c < 0x20 || c == 0x7f) continue;
    out += static_cast<char>(c);
  }
  return out;
}

std::string tail_of(const std::filesystem::path& log) {
  std::ifstream in(log, std::ios::binary | std::ios::ate);
  if (!in) return "";
  std::streamoff size = in.tellg();
  std::streamoff from = size > kTailBytes ? size - kTailBytes : 0;
  in.seekg(from);
  std::string s(static_cast<size_t>(size - from), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

}  // namespace

BuildStepProgress parse_build_progress(std::string_view log) {
  BuildStepProgress p;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(start, end - start);
    start = end + 1;
    std::string t = strings::trim(printable(line));
    if (t.empty()) continue;
    step_of(t, p.step, p.total);
    p.last_line = t.size() > kMaxLine ? t.substr(0, kMaxLine) + "…" : t;
  }
  return p;
}

ProgressWatcher::ProgressWatcher(Emit emit, std::chrono::milliseconds every)
    : emit_(std::move(emit)), every_(every), thread_([this] { loop(); }) {}

ProgressWatcher::~ProgressWatcher() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ProgressWatcher::watch(const std::string& name, const std::filesystem::path& log) {
  std::lock_guard<std::mutex> l(mu_);
  watched_[name] = {log, std::chrono::steady_clock::now(), 0};
}

void ProgressWatcher::forget(const std::string& name) {
  poll(name);  // the step it ended on, if no line said it yet: every build with a step shows at least one
  std::lock_guard<std::mutex> l(mu_);
  watched_.erase(name);
}

void ProgressWatcher::loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    wake_.wait_for(l, every_, [this] { return stop_; });
    if (stop_) break;
    l.unlock();
    poll();
    l.lock();
  }
}

void ProgressWatcher::poll(const std::string& only) {
  std::vector<std::pair<std::string, Watched>> now;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [name, w] : watched_)
      if (only.empty() || name == only) now.emplace_back(name, w);
  }
  for (auto& [name, w] : now) {
    BuildStepProgress p = parse_build_progress(tail_of(w.log));
    if (p.step == 0 || p.step == w.reported_step) continue;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = watched_.find(name);
      if (it == watched_.end()) continue;  // finished meanwhile
      it->second.reported_step = p.step;
    }
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - w.started).count();
    emit_("build " + name + ": step " + std::to_string(p.step) + "/" + std::to_string(p.total) + ", " +
          std::to_string(secs) + " s: " + p.last_line);
  }
}

}  // namespace imgtool::builder
