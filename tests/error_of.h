// The message of whatever std::exception f throws, or "" when it throws nothing.
#pragma once
#include <exception>
#include <functional>
#include <string>

namespace imgtool::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace imgtool::testing
