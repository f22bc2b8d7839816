// Helpers shared by the dockerfiles tests.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "core/error.h"
#include "core/fs.h"

namespace imgtool::dockerfiles::testing {

// The message of the InputError f throws, or "(no InputError)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// Every regular file under dir, relative path -> bytes (to compare two generations).
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> m;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) m[std::filesystem::relative(e.path(), dir).string()] = read_file(e.path());
  return m;
}

}  // namespace imgtool::dockerfiles::testing
