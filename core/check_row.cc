#include "core/check_row.h"

namespace imgtool {

const char* status_name(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kSkip:
      return "skip";
  }
  return "?";
}

}  // namespace imgtool
