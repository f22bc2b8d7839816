#include "nightly/nightly_kb.h"

#include <exception>
#include <optional>

#include "matrix/kb.h"

namespace imgtool::nightly {
namespace {

matrix::KnowledgeBase load_kb(const std::string& dir) {
  return dir.empty() ? matrix::KnowledgeBase::load_default() : matrix::KnowledgeBase::load(dir);
}

// The check's verdict: its stale releases and the pages it could not read, as the report lists them.
void take_check(KbState& s, const kb::CheckReport& r) {
  for (const auto& st : r.stale) s.stale.push_back(st.line());
  for (const auto& src : r.sources)
    if (!src.error.empty()) s.errors.push_back(src.package + ": " + src.error);
  s.check = !r.stale.empty() ? KbCheckStatus::stale
            : r.complete()   ? KbCheckStatus::up_to_date
                             : KbCheckStatus::incomplete;
}

}  // namespace

KbState kb_state(const KbCheckOptions& o, const std::string& today) {
  KbState s;
  s.index = o.check ? o.mirror : "";
  try {
    std::optional<matrix::KnowledgeBase> loaded;
    const matrix::KnowledgeBase& kb = o.kb ? *o.kb : loaded.emplace(load_kb(o.dir));
    s.version = kb.version();
    s.released = kb.released();
    s.age_days = kb::days_between(s.released, today, "the KB's age");
    if (!o.check) return s;
    kb::CheckOptions index = o.index;
    index.today = today;
    take_check(s, kb::check_kb(kb, index));
  } catch (const std::exception& e) {
    s.check = KbCheckStatus::error;
    s.errors.push_back(e.what());
  }
  return s;
}

}  // namespace imgtool::nightly
