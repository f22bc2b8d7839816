#include "tests/test_dirs.h"

namespace imgtool::testing {

std::string source_dir() { return IMGTOOL_SOURCE_DIR; }
std::string binary_dir() { return IMGTOOL_BINARY_DIR; }

}  // namespace imgtool::testing
