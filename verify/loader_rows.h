// The loader rows of `imgtool verify`: can the libraries Paddle loads be FOUND at run time, and is
// what the loader finds (scan/loader.h) the library the image claims?
// Rows (each names the file, what the loader does, and the fix):
//   loader.<lib>     one per library the installed Paddle GPU build loads (required: fail when
//                    unfound; a feature's: warn naming the feature); cuDNN's version against the
//                    io.imgtool.cudnn claim
//   base.<lib>       a CUDA base image (label io.imgtool.base.cuda): every library of nvidia/cuda's
//                    -cudnn-runtime set resolves, at the version kb/cuda_wheels.yaml pins
//   contents.loader.<soname>  any other CUDA library the image holds is findable
#pragma once
#include <string>
#include <vector>

#include "matrix/kb.h"
#include "scan/contents_facts.h"
#include "scan/contents_tree.h"
#include "verify/claims_model.h"
#include "verify/report_model.h"

namespace imgtool::verify {

// loader.<lib> rows: the libraries the installed Paddle GPU build loads (none for a CPU build),
// and the sonames they covered (for check_loader_paths).
struct PaddleLibraryRows {
  std::vector<CheckResult> rows;
  std::vector<std::string> sonames;
};
PaddleLibraryRows check_paddle_libraries(const scan::ContentsTree& tree, const scan::ContentsFacts& facts,
                                         const std::vector<std::string>& env, const Claims& claims,
                                         const matrix::KnowledgeBase& kb);

// base.<lib> rows: a CUDA base's library set at the KB's pins (`cuda` = the base's CUDA, "12.6").
std::vector<CheckResult> check_base_libraries(const scan::ContentsTree& tree, const scan::ContentsFacts& facts,
                                              const std::vector<std::string>& env, const std::string& cuda,
                                              const matrix::KnowledgeBase& kb);

// contents.loader.<soname> rows: every CUDA library the image holds that no loader.<lib> row
// covered (`covered` = sonames already checked) is findable by a plain dlopen, or in Paddle's own
// folders (<site>/paddle/libs, the pip layout <site>/nvidia/*/lib).
std::vector<CheckResult> check_loader_paths(const scan::ContentsTree& tree, const scan::ContentsFacts& facts,
                                            const std::vector<std::string>& env,
                                            const std::vector<std::string>& covered = {});

}  // namespace imgtool::verify
