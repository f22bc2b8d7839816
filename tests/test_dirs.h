// Where a test finds the source tree (data files, fixtures) and the build tree (the built CLI).
// Defined once per build in tests/test_dirs.cc, the only file compiled with those absolute paths:
// flags holding them in every test file would make each checkout miss the compiler cache.
#pragma once
#include <string>

namespace imgtool::testing {

std::string source_dir();
std::string binary_dir();

}  // namespace imgtool::testing
