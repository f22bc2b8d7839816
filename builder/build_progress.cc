#include "builder/build_progress.h"

#include <algorithm>
#include <cctype>
#include <fstream>
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
    while (p < l.size() && std::isdigit(static_cast<unsigned char>(l[p])) && p - from < 6)
      out = out * 10 + (l[p++] - '0');
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

// The line without its colours: CSI sequences (ESC [ … final byte, pip's colours) and other C0
// characters go; strings::printable then escapes anything else (C1, bytes not UTF-8), so build
// output (a hostile RUN) never drives the user's terminal.
std::string without_colours(std::string_view l) {
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
    std::string t = strings::trim(strings::printable(without_colours(line)));
    if (t.empty()) continue;
    step_of(t, p.step, p.total);
    size_t cut = kMaxLine;
    while (cut < t.size() && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    p.last_line = t.size() > kMaxLine ? t.substr(0, cut) + "…" : t;
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
  poll(name);  // the step it ended on, if no event said it yet: every build with a step shows at least one
  std::chrono::steady_clock::time_point started;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = watched_.find(name);
    if (it == watched_.end()) return;
    started = it->second.started;
    watched_.erase(it);
  }
  emit_({name,
         {},
         std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count(),
         true});
}

std::string to_line(const ProgressEvent& e) {
  return "build " + e.name + ": step " + std::to_string(e.progress.step) + "/" + std::to_string(e.progress.total) +
         ", " + std::to_string(e.seconds) + " s: " + e.progress.last_line;
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
    emit_({name, p, secs, false});
  }
}

ProgressPrinter::Mode ProgressPrinter::mode_for(bool quiet, bool is_tty, const char* no_color) {
  if (quiet) return Mode::quiet;
  return is_tty && !(no_color && *no_color) ? Mode::tty : Mode::plain;
}

ProgressPrinter::ProgressPrinter(std::ostream& out, std::string prefix, Mode mode, size_t width)
    : out_(out), prefix_(std::move(prefix)), mode_(mode), width_(width) {}

void ProgressPrinter::clear_block() {
  for (size_t i = 0; i < drawn_; ++i) out_ << "\033[1A\r\033[K";  // up one line, erase it
  drawn_ = 0;
}

void ProgressPrinter::draw_block() {
  for (auto& [name, text] : live_) out_ << (prefix_ + ": " + text).substr(0, width_) << '\n';
  drawn_ = live_.size();
  out_ << std::flush;
}

void ProgressPrinter::line(const std::string& text) {
  std::lock_guard<std::mutex> l(mu_);
  if (mode_ == Mode::quiet && text.rfind("FAILED", 0) != 0) return;
  if (mode_ != Mode::tty) {
    out_ << prefix_ << ": " << text << std::endl;
    return;
  }
  clear_block();
  out_ << prefix_ << ": " << text << '\n';
  draw_block();
}

void ProgressPrinter::progress(const ProgressEvent& e) {
  std::lock_guard<std::mutex> l(mu_);
  if (mode_ == Mode::quiet || (mode_ == Mode::plain && e.done)) return;
  if (mode_ == Mode::plain) {
    out_ << prefix_ << ": " << to_line(e) << std::endl;
    return;
  }
  clear_block();
  auto it = std::find_if(live_.begin(), live_.end(), [&](auto& p) { return p.first == e.name; });
  if (e.done) {
    if (it != live_.end()) live_.erase(it);
  } else if (it == live_.end()) {
    live_.emplace_back(e.name, to_line(e));
  } else {
    it->second = to_line(e);
  }
  draw_block();
}

}  // namespace imgtool::builder
