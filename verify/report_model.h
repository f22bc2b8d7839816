// The result of `imgtool verify`: one row per check, each saying what was
// expected, what was found and, when it failed, the likely fix. Rendered as a
// human table, JSON, or JUnit XML (report_render.h). The static checks and
// the GPU smoke part both append rows to the same Report.
#pragma once
#include <string>
#include <vector>

#include "core/check_row.h"

namespace imgtool::verify {

// The one check-row model (core/check_row.h), under verify's names.
using Status = CheckStatus;
using CheckResult = CheckRow;
using imgtool::status_name;

struct Report {
  std::string image;   // the reference as given
  std::string digest;  // the manifest digest checked
  std::vector<CheckResult> checks;
  bool ok() const;  // no kFail
  void add(CheckResult c) { checks.push_back(std::move(c)); }
};

}  // namespace imgtool::verify
