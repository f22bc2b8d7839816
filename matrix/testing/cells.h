// Test helper: a matrix::Cell as tests of the areas above the matrix need one -- Paddle 3.2.0 on
// Python 3.11 on the local Debian base, the repository "paddle" -- each test setting what it is about
// on top. One builder instead of a hand-filled Cell in every test file.
#pragma once
#include <string>

#include "matrix/cell.h"

namespace imgtool::matrix::testing {

inline Cell cell(const std::string& tag, const std::string& variant = "cpu") {
  Cell c;
  c.tag = tag;
  c.variant = variant;
  c.repository = "paddle";
  c.paddle = "3.2.0";
  c.python = "3.11";
  c.os = "debian12";
  c.base_image = "imgtool-base/debian:bookworm-py3";
  if (variant == "gpu") {
    c.cuda = "12.6";
    c.min_driver = "525.60.13";
  }
  return c;
}

}  // namespace imgtool::matrix::testing
