// Shared by the libFuzzer targets: what an input may legitimately end in. A parser that
// refuses input throws one of imgtool's own errors (a one-line message for the user); any
// other exception escaping (nlohmann::json::type_error, std::out_of_range, ...) is a bug,
// so it is not caught here and libFuzzer reports it as a crash ("deadly signal").
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace imgtool::fuzz {

// True when f returned, false when it refused the input.
template <class F>
bool expect_refusal_or_result(F&& f) {
  try {
    f();
    return true;
  } catch (const imgtool::InputError&) {
  } catch (const imgtool::CheckFailed&) {
  } catch (const imgtool::Error&) {
  }
  return false;
}

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace imgtool::fuzz
