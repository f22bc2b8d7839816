// Renderings of a verify Report: human table, JSON, JUnit XML (one testsuite,
// one testcase per check; failures carry expected/found/fix in the message).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "verify/report_model.h"

namespace imgtool::verify {

std::string render_table(const Report& r);
nlohmann::json report_json(const Report& r);
std::string render_junit(const Report& r);

}  // namespace imgtool::verify
