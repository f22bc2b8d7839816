// Claims (claims_model.h) against the actual contents (contents_facts.h).
// One CheckResult per question, ids "claims.*"; every failure names what was
// expected, what was found and the likely fix. Rules, in short:
//   labels     every claim the variant needs is present (gpu: paddle, python,
//              variant, cuda, cudnn, min-driver; cpu: paddle, python, variant)
//   tag        every field the tag encodes equals the label (major.minor)
//   python     a Python X.Y is installed and Paddle sits in its site-packages
//   paddle     exactly one paddlepaddle* distribution, version = the claim
//   build      gpu claim <-> GPU build (rule in contents_facts.h)
//   cuda       libcudart version X.Y matches (major only if only the soname is
//              known); Paddle's compiled cuda_version matches too
//   cublas     present, same major as CUDA (gpu)
//   cudnn      libcudnn version matches; `libcudnn.so` resolves (or the pip
//              layout's libcudnn.so.N does) and no libcudnn.so is dangling
//   tensorrt   when claimed, libnvinfer / tensorrt dist-info matches
//   env        gpu: NVIDIA_REQUIRE_CUDA has cuda>=X.Y of the claim; cpu: unset
//   driver     min-driver >= the minor-version-compatibility floor of the CUDA major
//              (the lowest min_driver_compat the knowledge base lists for it)
#pragma once
#include <vector>

#include "matrix/kb.h"
#include "scan/contents_facts.h"
#include "verify/claims_model.h"
#include "verify/report_model.h"

namespace imgtool::verify {

// `kb` gives the driver floors (matrix/kb/cuda.yaml).
std::vector<CheckResult> check_claims(const Claims& claims, const scan::ContentsFacts& facts,
                                      const matrix::KnowledgeBase& kb);

// "12.6" vs "12.6.77": equal on the claim's components (also "3.2.0" vs
// "3.2.0rc1" is NOT equal, "3.2" vs "3.2.0" is).
bool version_matches(const std::string& claim, const std::string& found);

}  // namespace imgtool::verify
