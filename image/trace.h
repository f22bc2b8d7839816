// Timing log for performance work: with IMGTOOL_TRACE=1 in the environment,
// trace() writes "imgtool trace +SECONDS [thread] message" lines to stderr
// (seconds since the first trace call site was reached in this process).
// Without it, trace() costs one cached flag test.
#pragma once
#include <string>

namespace imgtool::image {

bool trace_enabled();
void trace(const std::string& msg);

}  // namespace imgtool::image
