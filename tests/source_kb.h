// The source tree's knowledge base (matrix/kb), loaded once per test binary.
#pragma once
#include <string>

#include "matrix/kb.h"
#include "tests/test_dirs.h"

namespace imgtool::testing {

inline const matrix::KnowledgeBase& source_kb() {
  static const matrix::KnowledgeBase kb = matrix::KnowledgeBase::load(imgtool::testing::source_dir() + "/matrix/kb");
  return kb;
}

}  // namespace imgtool::testing
