// Where imgtool finds its data files (matrix/kb, matrix/*.yaml, dockerfiles/,
// verify/probe). $IMGTOOL_DATA_DIR overrides; the default is the source tree
// the binary was built from.
#pragma once
#include <cstdlib>
#include <string>

namespace imgtool {

inline std::string data_dir() {
  const char* v = std::getenv("IMGTOOL_DATA_DIR");
  if (v && *v) return v;
  return IMGTOOL_DATA_DIR_DEFAULT;
}

// Cache root for downloads and state (~/.cache/imgtool, or $IMGTOOL_CACHE).
inline std::string cache_dir() {
  const char* v = std::getenv("IMGTOOL_CACHE");
  if (v && *v) return v;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/imgtool";
}

}  // namespace imgtool
