// Axes x exclude x include -> combinations, like a CI matrix:
//  1. the cartesian product of `axes` (CPU combinations drop cuda/cudnn/trt,
//     then duplicates collapse);
//  2. `exclude` removes every combination that matches all of an entry's axes;
//  3. each `include` entry is merged into every combination whose values it
//     does not contradict on the matrix's own axes (adding its other axes and
//     settings); if it fits none, it becomes a new combination, whose missing
//     axes are taken from axes that have a single value.
#pragma once
#include <vector>

#include "matrix/matrix_file.h"

namespace imgtool::matrix {

struct Combo {
  Axes axes;
  Settings settings;  // matrix defaults merged with include settings
  std::string where;  // where it came from ("file:line:col" of axes or the include entry)
};

// Throws InputError when a new include combination lacks a required axis.
std::vector<Combo> expand(const MatrixSpec& m);

// "paddle 2.6.2 × cuda 12.6" for the axes that are set, in axis order.
std::string describe_axes(const Axes& a, const std::vector<std::string>& only = {});

}  // namespace imgtool::matrix
