// The nightly report's knowledge-base section (NightlyReport::kb): the KB's version, released day
// and age always; with KbCheckOptions::check, also `imgtool kb check`'s verdict (kb/check.h, the
// same call), so a nightly run with network says when the facts behind its cells have gone stale.
// Off by default: a nightly without network must not fail or wait on the package indexes.
#pragma once
#include <string>

#include "kb/check.h"
#include "nightly/nightly_model.h"

namespace imgtool::nightly {

struct KbCheckOptions {
  bool check = false;      // nightly --kb-check (or --kb-index): read the package indexes
  kb::CheckOptions index;  // the indexes (nightly --kb-index URL: kb::mirror_options), timeout; tests inject fetch
  std::string mirror;      // --kb-index URL as given, for the report; "" = PyPI and Paddle's own index
  std::string dir;         // the KB folder; "" = KnowledgeBase::load_default() (the one the cells are planned with)
  const matrix::KnowledgeBase* kb = nullptr;  // the run's one KB, loaded by the caller (nightly --kb); wins over dir
};

// The KB's state on `today` (YYYY-MM-DD). Never throws: a KB that does not load, a malformed page or
// a date that is no date becomes check = error with the reason in `errors` (the nightly's cells are
// not the KB check's to fail).
KbState kb_state(const KbCheckOptions& o, const std::string& today);

}  // namespace imgtool::nightly
