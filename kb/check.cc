#include "kb/check.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/strings.h"
#include "image/http.h"
#include "image/registry.h"
#include "kb/index_page.h"

namespace imgtool::kb {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kPaddleStable = "https://www.paddlepaddle.org.cn/packages/stable/";
constexpr size_t kMaxPageBytes = 32u << 20;  // PyPI's paddlepaddle page is ~0.3 MB; a cap, not an estimate

// Which rule a page's releases go through.
enum class Rule { paddle, paddle_cuda, nvidia };

struct Source {
  Rule rule;
  std::string package;  // the project on the index
  std::string url;
  std::string cuda;   // paddle_cuda: the CUDA of the KB's builds on that index ("12.6")
  std::string index;  // paddle_cuda: "cu126"
};

// A page once fetched: its releases, or why there are none.
struct Fetched {
  std::vector<IndexRelease> releases;
  std::string error;
  bool retryable = false;
  std::exception_ptr bad_page;  // InputError from the page reader: rethrown in source order
};

std::string trimmed(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// An index base URL: http(s), and plain http only to a loopback host (image/http.h's rule).
void check_index_url(const std::string& url, const std::string& what) {
  image::UrlOrigin o;
  try {
    o = image::url_origin(url);
  } catch (const Error&) {
    throw InputError(what + ": expected an http(s) URL like https://pypi.org, found " + strings::quoted(url));
  }
  if (o.scheme == "http" && !image::is_loopback_host(o.host))
    throw InputError(what +
                     ": expected https (plain http only to a loopback mirror: 127.0.0.1, localhost, [::1]), found " +
                     strings::quoted(url));
}

bool plain_http(const std::string& url) { return url.rfind("http://", 0) == 0; }

FetchPage http_fetch(const CheckOptions& o) {
  auto client = std::make_shared<image::HttpClient>(
      image::HttpOptions{.allow_http = plain_http(o.pypi) || plain_http(o.paddle_index), .timeout = o.timeout});
  return [client](const std::string& url) {
    // A loopback mirror's redirect is not followed: it could lead to plain http elsewhere.
    image::HttpResponse r = client->send({.url = url, .max_body = kMaxPageBytes, .follow_redirects = !plain_http(url)});
    return Page{r.status, std::move(r.body)};
  };
}

// The cuXYZ indexes of Paddle's that the KB's GPU builds name, each with the CUDA of those builds.
std::vector<std::pair<std::string, std::string>> paddle_indexes(const matrix::KnowledgeBase& kb) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& rel : kb.paddles())
    for (const auto& b : rel.gpu) {
      if (b.index_url.rfind(kPaddleStable, 0) != 0) continue;
      std::string seg = trimmed(b.index_url.substr(kPaddleStable.size()));
      if (std::none_of(out.begin(), out.end(), [&](auto& p) { return p.first == seg; })) out.push_back({seg, b.cuda});
    }
  std::sort(out.begin(), out.end());  // cu102 … cu130
  return out;
}

std::vector<std::string> nvidia_packages(const matrix::KnowledgeBase& kb) {
  std::vector<std::string> out;
  for (const auto& base : kb.cuda_wheel_bases())
    for (const auto& w : base.wheels)
      if (std::find(out.begin(), out.end(), w.package) == out.end()) out.push_back(w.package);
  return out;
}

std::vector<Source> sources_of(const matrix::KnowledgeBase& kb, const CheckOptions& o) {
  std::string pypi = trimmed(o.pypi), paddle = trimmed(o.paddle_index);
  std::vector<Source> out;
  for (const char* name : {"paddlepaddle", "paddlepaddle-gpu"})
    out.push_back({Rule::paddle, name, pypi + "/pypi/" + name + "/json"});
  for (const auto& [seg, cuda] : paddle_indexes(kb))
    out.push_back({Rule::paddle_cuda, "paddlepaddle-gpu", paddle + "/" + seg + "/paddlepaddle-gpu/", cuda, seg});
  for (const auto& name : nvidia_packages(kb)) out.push_back({Rule::nvidia, name, pypi + "/pypi/" + name + "/json"});
  return out;
}

// `what` went wrong reading `url`, said so that the URL is in it once.
std::string at_url(const std::string& url, const std::string& what) {
  return what.find(url) != std::string::npos ? what : "GET " + url + ": " + what;
}

std::string status_error(const std::string& url, const Page& p) {
  bool retry = p.status == 429 || p.status >= 500;
  return at_url(url, "HTTP " + std::to_string(p.status) +
                         (retry ? " (a retry may help)" : " (a retry will not help: is the URL right?)"));
}

Fetched fetch_one(const Source& s, const FetchPage& fetch) {
  Fetched f;
  try {
    Page p = fetch(s.url);
    if (p.status != 200) {
      f.error = status_error(s.url, p);
      f.retryable = p.status == 429 || p.status >= 500;
      return f;
    }
    f.releases = s.rule == Rule::paddle_cuda ? read_simple_page(p.body, s.url, s.package)
                                             : read_pypi_json(p.body, s.url, s.package);
  } catch (const InputError&) {
    f.bad_page = std::current_exception();
  } catch (const Error& e) {
    f.error = at_url(s.url, e.what()) + (e.retryable ? " (a retry may help)" : " (a retry will not help)");
    f.retryable = e.retryable;
  } catch (const std::exception& e) {
    f.error = at_url(s.url, e.what());
  }
  return f;
}

// Every source's page, `parallel` at a time; results in source order.
std::vector<Fetched> fetch_all(const std::vector<Source>& sources, const FetchPage& fetch, int parallel) {
  std::vector<Fetched> out(sources.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < sources.size();) out[i] = fetch_one(sources[i], fetch);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, parallel) && static_cast<size_t>(t) < sources.size(); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (auto& f : out)
    if (f.bad_page) std::rethrow_exception(f.bad_page);
  return out;
}

bool counts(const IndexRelease& r) { return r.version.final && !r.yanked; }

// The KB file to edit, in the KB folder as it was named (--kb DIR, or the data folder's matrix/kb).
std::string kb_file(const matrix::KnowledgeBase& kb, const std::string& name) {
  return (fs::path(kb.dir()) / name).string();
}

Version oldest_paddle(const matrix::KnowledgeBase& kb) {
  std::optional<Version> oldest;
  for (const auto& rel : kb.paddles())
    for (const auto& v : rel.versions)
      if (auto pv = Version::parse(v); pv && (!oldest || *pv < *oldest)) oldest = pv;
  return oldest ? *oldest : Version{{0}, "0"};
}

// The KB's spelling of Paddle version `v` and its release row; nullptr when no row lists it.
const matrix::PaddleRelease* paddle_row(const matrix::KnowledgeBase& kb, const Version& v, std::string* spelled) {
  for (const auto& rel : kb.paddles())
    for (const auto& text : rel.versions)
      if (auto pv = Version::parse(text); pv && *pv == v) {
        *spelled = text;
        return &rel;
      }
  return nullptr;
}

const matrix::PaddleRelease* series_row(const matrix::KnowledgeBase& kb, const std::string& series) {
  for (const auto& rel : kb.paddles())
    if (rel.series == series) return &rel;
  return nullptr;
}

// Everything the rules share: the KB, where stale releases go, the Paddle dates PyPI gives.
struct Judge {
  const matrix::KnowledgeBase& kb;
  Version oldest;
  std::vector<StaleRelease>& stale;
  std::map<std::string, std::string> paddle_dates;  // release numbers -> earliest PyPI day

  void add(const Source& s, const IndexRelease& r, std::string date, std::string reason, const char* file) {
    stale.push_back({s.package, r.version.text, std::move(date), std::move(reason), kb_file(kb, file), s.url});
  }

  void paddle(const Source& s, const std::vector<IndexRelease>& rs) {
    for (const auto& r : rs) {
      if (!counts(r) || r.version.release < oldest) continue;
      std::string& d = paddle_dates[r.version.release.text];
      if (d.empty() || r.date < d) d = r.date;
      std::string series = r.version.release.truncated(2), spelled;
      if (paddle_row(kb, r.version.release, &spelled)) continue;
      const matrix::PaddleRelease* row = series_row(kb, series);
      add(s, r, r.date,
          row ? "not in the " + series + " series' versions (" + strings::join(row->versions, ", ") + ")"
              : "a new series " + series + " (no release row)",
          "paddle.yaml");
    }
  }

  void paddle_cuda(const Source& s, const std::vector<IndexRelease>& rs) {
    for (const auto& r : rs) {
      if (!counts(r) || r.version.release < oldest) continue;
      std::string spelled;
      const matrix::PaddleRelease* row = paddle_row(kb, r.version.release, &spelled);
      if (row && row->build_for(s.cuda, spelled)) continue;
      std::string version = r.version.release.text;
      std::string reason =
          "on Paddle's " + s.index + " index; " +
          (row ? "the KB has no CUDA " + s.cuda + " build of " + spelled : "no release row lists " + version);
      add(s, r, paddle_dates.count(version) ? paddle_dates[version] : "", reason, "paddle.yaml");
    }
  }

  void nvidia(const Source& s, const std::vector<IndexRelease>& rs) {
    std::string pin = kb.newest_pin(s.package);
    const matrix::UnpinnedWheel* seen = kb.unpinned_wheel(s.package);
    Version known = *Version::parse(seen ? seen->version : pin);
    for (const auto& r : rs)
      if (counts(r) && known < r.version.release)
        add(s, r, r.date,
            "newer than the KB's newest pin " + pin + (seen ? " and its not_pinned " + seen->version : ""),
            "cuda_wheels.yaml");
  }
};

using RuleFn = void (Judge::*)(const Source&, const std::vector<IndexRelease>&);

RuleFn rule_of(Rule r) {
  static const std::pair<Rule, RuleFn> rules[] = {
      {Rule::paddle, &Judge::paddle}, {Rule::paddle_cuda, &Judge::paddle_cuda}, {Rule::nvidia, &Judge::nvidia}};
  for (auto& [rule, fn] : rules)
    if (rule == r) return fn;
  return &Judge::nvidia;  // unreachable: every Rule is in the table
}

// UTC calendar day `s` (YYYY-MM-DD) as days since the epoch; nullopt when it is no real day.
std::optional<long> day_number(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
  std::chrono::year_month_day d{std::chrono::year{std::stoi(s.substr(0, 4))},
                                std::chrono::month{static_cast<unsigned>(std::stoi(s.substr(5, 2)))},
                                std::chrono::day{static_cast<unsigned>(std::stoi(s.substr(8, 2)))}};
  if (!d.ok()) return std::nullopt;
  return std::chrono::sys_days(d).time_since_epoch().count();
}

std::string dated(const std::string& date) { return date.empty() ? "date not listed" : date; }

}  // namespace

CheckOptions mirror_options(const std::string& url, const std::string& flag, CheckOptions base) {
  check_index_url(url, flag);
  base.pypi = trimmed(url);
  base.paddle_index = trimmed(url) + "/packages/stable";
  return base;
}

std::string StaleRelease::line() const {
  return package + " " + version + " (" + dated(date) + "): " + reason + " — " + file;
}

bool CheckReport::complete() const {
  return std::all_of(sources.begin(), sources.end(), [](const SourceResult& s) { return s.error.empty(); });
}

int CheckReport::exit_code() const { return stale.empty() && complete() ? 0 : 1; }

long days_between(const std::string& from, const std::string& to, const std::string& what) {
  auto a = day_number(from), b = day_number(to);
  if (!a || !b) throw InputError(what + ": expected real dates YYYY-MM-DD, found " + strings::quoted(a ? to : from));
  return *b - *a;
}

std::string utc_today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

CheckReport check_kb(const matrix::KnowledgeBase& kb, const CheckOptions& o) {
  check_index_url(o.pypi, "PyPI index URL");
  check_index_url(o.paddle_index, "Paddle index URL");
  CheckReport r{kb.dir(), kb.version(), kb.released(), o.today.empty() ? utc_today() : o.today};
  r.age_days = days_between(r.released, r.today, "the KB's age (kb.yaml released, today)");
  std::vector<Source> sources = sources_of(kb, o);
  std::vector<Fetched> pages = fetch_all(sources, o.fetch ? o.fetch : http_fetch(o), o.parallel);
  Judge judge{kb, oldest_paddle(kb), r.stale, {}};
  for (size_t i = 0; i < sources.size(); ++i) {  // Paddle's PyPI pages first: they date the cuXYZ pages' releases
    const Source& s = sources[i];
    std::string name = s.rule == Rule::paddle_cuda ? s.package + " (" + s.index + ")" : s.package;
    r.sources.push_back({name, s.url, static_cast<int>(pages[i].releases.size()), pages[i].error, pages[i].retryable});
    if (!pages[i].error.empty()) continue;
    (judge.*rule_of(s.rule))(s, pages[i].releases);
  }
  return r;
}

std::string render_text(const CheckReport& r) {
  std::ostringstream s;
  int read = 0;
  for (const auto& src : r.sources) read += src.error.empty() ? 1 : 0;
  s << "KB " << r.kb_version << " (" << r.kb_dir << "): released " << r.released << ", " << r.age_days
    << " day(s) old on " << r.today << "\n";
  s << "pages: " << read << " of " << r.sources.size() << " read\n";
  if (!r.stale.empty()) s << "stale: " << r.stale.size() << " release(s) the indexes have and the KB lacks\n";
  for (const auto& st : r.stale) s << "  " << st.line() << "\n";
  if (!r.complete()) s << "not read:\n";
  for (const auto& src : r.sources)
    if (!src.error.empty()) s << "  " << src.package << ": " << src.error << "\n";
  s << "kb check: "
    << (!r.stale.empty() ? "STALE"
        : r.complete()   ? "up to date"
                         : "INCOMPLETE — nothing stale on the pages read")
    << "\n";
  return s.str();
}

json to_json(const CheckReport& r) {
  json j = {
      {"kind", "imgtool-kb-check"}, {"kb", {{"dir", r.kb_dir}, {"version", r.kb_version}, {"released", r.released}}},
      {"today", r.today},           {"age_days", r.age_days},
      {"complete", r.complete()},   {"ok", r.exit_code() == 0}};
  j["stale"] = json::array();
  for (const auto& st : r.stale)
    j["stale"].push_back({{"package", st.package},
                          {"version", st.version},
                          {"date", st.date},
                          {"reason", st.reason},
                          {"file", st.file},
                          {"url", st.url},
                          {"line", st.line()}});
  j["sources"] = json::array();
  for (const auto& src : r.sources)
    j["sources"].push_back({{"package", src.package},
                            {"url", src.url},
                            {"releases", src.releases},
                            {"error", src.error},
                            {"retryable", src.retryable}});
  return j;
}

}  // namespace imgtool::kb
