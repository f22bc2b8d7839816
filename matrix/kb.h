// The compatibility knowledge base: facts about CUDA, drivers, GPUs, cuDNN,
// Paddle releases, Python and nvidia/cuda images, read from the YAML files in
// matrix/kb/ (data a release engineer edits; adding a Paddle or CUDA release
// is a data-only change). Every fact carries the public `source` it came from
// and an `unconfirmed` flag; a kept cell that relies on an unconfirmed fact
// gets a warning.
//
// Files (all under one folder; the schema is in matrix/README.md, "Knowledge base"):
//   kb.yaml      version: "<kb release>"
//   cuda.yaml    CUDA toolkit -> minimum drivers
//   arch.yaml    GPU architecture (compute capability) -> first/last CUDA
//   gpus.yaml    GPU models (CONTRACT: read by the smoke probe through GpuSpec)
//   cudnn.yaml   cuDNN -> CUDA versions it supports
//   paddle.yaml  Paddle releases -> Python range, GPU builds, pip specs, published tags
//   python.yaml  Python end of life
//   images.yaml  nvidia/cuda tags per CUDA (full version, cuDNN tag, OS list); CPU base per OS
//   os.yaml      OS -> the Python versions its package archive provides (apt)
//   libraries.yaml  NVIDIA libraries -> soname per major; what a complete CUDA base holds; what
//                   each range of Paddle builds loads at run time and how it asks for it
//   cuda_wheels.yaml  CUDA -> NVIDIA's PyPI wheels a local base is made of (scripts/make-cuda-base.sh);
//                     `not_pinned`: the newest releases of those packages the KB knows and pins nowhere
//   tensorrt.yaml TensorRT -> CUDA versions it supports
//   cudnn.yaml also lists `apt`: cuDNN packages of NVIDIA's apt repository (what an image installs)
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/version.h"

namespace imgtool::matrix {

// Where a fact comes from. Every fact in the KB has one.
struct Fact {
  std::string source;        // public source (URL, document, commit)
  bool unconfirmed = false;  // not confirmed from a primary source: keep marked, warn on use
  std::string note;          // free text from the data file
};

// CONTRACT with verify/ (smoke thresholds). Peak figures are dense (no
// sparsity); 0 means "not applicable / unknown" (null in gpus.yaml).
struct GpuSpec {
  std::string name;                  // as nvidia-smi prints it: "Tesla V100-SXM2-32GB"
  std::vector<std::string> aliases;  // family names shared by variants: "V100" (ambiguous alone)
  std::string form;                  // "SXM2", "PCIe", "NVL", … (may be empty)
  std::string cc;                    // compute capability "7.0"
  std::string host_cpu;              // "arm64": comes only with an Arm CPU (Grace, GB10, Jetson); "" = any
  double memory_gb = 0, bw_GBps = 0, fp32_tflops = 0, fp16_tensor_tflops = 0, bf16_tensor_tflops = 0;
  std::string source;
  bool unconfirmed = false;
};

struct CudaRelease : Fact {
  std::string cuda;               // "12.6" (major.minor)
  std::string min_driver_full;    // driver of the toolkit release (GA), "560.28.03"; "" = not known
  std::string min_driver_compat;  // minimum driver under minor-version compatibility, "525.60.13"
};

// Compute capabilities from `first_cuda` up to and including `last_cuda`
// (empty last_cuda = still supported by every CUDA in the KB).
struct ArchSupport : Fact {
  std::string name;             // "Volta"
  std::vector<std::string> cc;  // {"7.0"}
  std::string first_cuda, last_cuda;
};

// An inclusive range of versions ("11.0".."11.8"); a one-version range has from == to.
struct VersionRange {
  std::string from, to;
  bool contains(const Version& v) const;  // compares on the precision of from/to (11.8 ∋ 11.8.0)
  std::string text() const;               // "11.0-11.8" or "12.6"
};

struct CudnnSupport : Fact {
  VersionRange cudnn;              // "9.5.0".."9.5.1"
  std::vector<VersionRange> cuda;  // CUDA versions this cuDNN release supports
};

struct PipSpec {
  std::string requirement;  // "paddlepaddle-gpu==3.1.0" ({version} already substituted)
  std::string index_url;    // "https://www.paddlepaddle.org.cn/packages/stable/cu126/" or empty (PyPI)
};

// How an image gets TensorRT: the nvidia/cuda bases ship none, so a build that
// claims TensorRT names the pip requirement of NVIDIA's TensorRT Python wheels.
struct TrtInstall : Fact {
  std::string requirement;  // pinned, "tensorrt-cu12==10.5.0"; empty = no install spec known
  std::string index_url;    // empty = PyPI
  std::string cuda_major;   // the CUDA major its libraries are built for ("12"); rule trt-cuda-major
};

// One GPU build of a Paddle release. cudnn/trt are what Paddle built against;
// trt is empty when the release's images ship no TensorRT.
// A driver floor a project documents for its own builds (stricter than
// NVIDIA's minor-version floor, e.g. Paddle's ">= 550.54.14" for CUDA 12.6).
struct DriverFloor : Fact {
  std::string driver;  // empty = none documented
};

// GPU architectures a build's wheels are reported to hold, not read from a wheel (Paddle's own
// run-time check printing its compiled list, a build script): shown beside a refusal, never used
// to accept a GPU.
struct ReportedArchs : Fact {
  std::string archs;  // "sm_60,…,sm_86"
};

struct PaddleGpuBuild : Fact {
  std::string cuda, cudnn, trt;
  DriverFloor min_driver;              // Paddle's documented floor (min_driver: in kb/paddle.yaml)
  std::string requirement, index_url;  // templates with {version}
  TrtInstall trt_pip;                  // how TensorRT `trt` is installed (trt_pip: in kb/paddle.yaml)
  // The wheel pip-installs its own CUDA libraries (Requires-Dist nvidia-*): its image needs a base
  // with none (one cuDNN in the image, the one Paddle pins).
  bool pip_cuda_libraries = false;
  std::string compiled_archs;         // "sm_61,…,sm_86[,compute_86]" (`imgtool kb derive`); "" = unknown
  std::string archs_source;           // where compiled_archs was read (the wheel and its sha256)
  ReportedArchs reported_archs;       // reported_archs: in kb/paddle.yaml (UNCONFIRMED until read)
  std::vector<std::string> versions;  // the release's versions this build exists for; empty = all
};

struct PaddleRelease : Fact {
  std::string series;                 // "2.6"
  std::vector<std::string> versions;  // "2.6.0", "2.6.1", "2.6.2"
  VersionRange python;                // supported CPython versions
  std::vector<PaddleGpuBuild> gpu;
  std::string cpu_requirement, cpu_index_url;  // templates with {version}
  Fact cpu_fact;
  std::vector<std::string> published;              // published docker tags (without repository), may use {version}
  std::vector<std::string> published_unconfirmed;  // seen, not confirmed from Paddle's docs
  Fact published_fact;
  // The build for `cuda` that exists for `version` (a build may name the versions it exists for;
  // empty version: any).
  const PaddleGpuBuild* build_for(std::string_view cuda, std::string_view version = "") const;
  bool has_version(std::string_view v) const;
};

struct PythonEol : Fact {
  std::string python;  // "3.10"
  std::string eol;     // "2026-10-31" (ISO date; approximate dates are marked in note)
};

// nvidia/cuda images of one CUDA major.minor.
struct CudaImages : Fact {
  std::string cuda;             // "12.6"
  std::string full;             // "12.6.3": the tag's version
  std::string cudnn_tag;        // "cudnn8" | "cudnn9" | "cudnn" (NVIDIA's naming changed over time)
  std::string cudnn_shipped;    // cuDNN inside the cudnn image, "9.5.1.17" (may be empty)
  std::vector<std::string> os;  // "ubuntu22.04", …
};

// The Python versions an OS's package archive provides (apt-get install pythonX.Y pythonX.Y-venv).
struct OsPython : Fact {
  std::string os;                            // "ubuntu20.04" (the OS label of matrix files and nvidia/cuda tags)
  std::string name;                          // "Ubuntu 20.04 (focal)"
  std::vector<std::string> python;           // "3.8", "3.9"
  std::string default_python;                // "3.8"
  bool provides(std::string_view py) const;  // on major.minor
};

struct CpuBase : Fact {
  std::string os;     // "ubuntu22.04"
  std::string image;  // "ubuntu:22.04"
};

// One NVIDIA library: the soname each major ships (the name the dynamic loader is asked for), the
// PyPI package that carries it and the folder it lies in inside that wheel. `keyed_by` says whose
// major picks the row: the CUDA toolkit's ("12"), cuDNN's ("9") or TensorRT's ("10").
struct NvidiaLibrary : Fact {
  std::string lib;                                // "cublas"
  std::string keyed_by = "cuda";                  // "cuda" | "cudnn" | "tensorrt"
  std::map<std::string, std::string> sonames;     // "12" -> "libcublas.so.12"; "12.9" overrides "12"
  std::map<std::string, std::string> packages;    // "12" -> "nvidia-cublas-cu12"
  std::map<std::string, std::string> wheel_dirs;  // "12" -> "nvidia/cublas/lib"
  // `version` a major ("12") or a CUDA line ("12.9": its own row, else its major's); "" when none.
  std::string soname(std::string_view version) const;
  std::string unversioned() const;  // "libcublas.so": a development link's name
};

// The libraries of nvidia/cuda's -cudnn-runtime image for one CUDA major: what a complete base holds.
struct RuntimeSet : Fact {
  std::string cuda_major;         // "12"
  std::vector<std::string> libs;  // NvidiaLibrary::lib names
};

// One library a range of Paddle GPU builds loads at run time (phi/backends/dynload): every one is
// dlopen()ed on first use of its feature, none is linked. need: "required" (Paddle's GPU paths
// use it: a missing one fails the image) or "feature" (one feature needs it: a warning naming it).
struct PaddleLoad {
  std::string lib, need, feature;
};
struct PaddleLoads : Fact {
  VersionRange paddle;                    // the Paddle versions ("2.4-2.6")
  bool pip_cuda_libraries = false;        // the builds whose wheels bring nvidia-* packages
  std::string dlopen = "soname";          // the name asked for: "unversioned" (libcublas.so) or "soname"
  std::vector<std::string> unversioned;   // libs asked for by the unversioned name even so
  std::vector<std::string> pip_provides;  // pip builds: the libs the wheel's nvidia-* requirements bring
  std::map<std::string, std::vector<std::string>> extra_dirs;  // lib -> absolute folders tried after the loader
  std::vector<PaddleLoad> libs;
};

// A CUDA base made from NVIDIA's PyPI wheels (scripts/make-cuda-base.sh), per CUDA release.
struct CudaWheel {
  std::string package, version;
  std::vector<std::string> provides;  // the sonames it ships
};
struct CudaWheelBase : Fact {
  std::string cuda, cuda_full, cudnn;  // "12.6", "12.6.3", "9.5.1.17"
  std::vector<CudaWheel> wheels;
  // The image scripts/make-cuda-base.sh tags: imgtool-base/cuda:<cuda>-cudnn<major>-runtime-bookworm.
  std::string image() const;
  const CudaWheel* wheel_providing(std::string_view soname) const;
};

// A newer release of a pinned package that no base pins, on purpose (each base carries its CUDA
// release's libraries and the cuDNN/NCCL its Paddle or nvidia/cuda image uses): the newest final
// version the KB has seen on PyPI (cuda_wheels.yaml `not_pinned`). `imgtool kb check` reports a
// package's releases newer than both its newest pin and this.
struct UnpinnedWheel : Fact {
  std::string package, version;  // "nvidia-cudnn-cu12", "9.28.0.42"
  std::string date;              // the version's upload day on PyPI, YYYY-MM-DD
};

// A cuDNN package of NVIDIA's CUDA apt repository (what nvidia/cuda's cudnn images apt-install):
// an image on a runtime base gets exactly the cuDNN Paddle was built with from it.
struct CudnnApt : Fact {
  std::string cudnn;               // "8.2.1"
  std::string package;             // "libcudnn8=8.2.1.32-1+cuda11.3"
  std::vector<VersionRange> cuda;  // CUDA versions the package's build supports
  std::vector<std::string> os;     // OS labels whose repository serves it
};

// TensorRT release (range) -> CUDA versions it supports.
struct TensorRtSupport : Fact {
  VersionRange trt;
  std::vector<VersionRange> cuda;
};

class KnowledgeBase {
 public:
  // Reads every file listed above from `dir`. Throws InputError
  // "file:line:col: expected …, found …" on bad data (missing source, bad version…).
  static KnowledgeBase load(const std::string& dir);
  // imgtool::data_dir() + "/matrix/kb".
  static KnowledgeBase load_default();

  // Case-insensitive. Every row the query can mean: the row whose name (as
  // nvidia-smi prints it) equals the query; else rows with an alias equal to
  // it or contained in it as a whole word (longest alias wins), narrowed by a
  // memory size ("40GB") and/or form factor ("PCIe", "SXM4") in the query.
  // More than one row = the query is ambiguous ("A100").
  std::vector<const GpuSpec*> find_gpus(std::string_view query) const;
  // The one row find_gpus() names, or nullptr when none or ambiguous.
  const GpuSpec* find_gpu(std::string_view query) const;
  // "<version field>+sha256:<first 12 hex of the files' bytes>".
  std::string version() const { return version_; }
  std::string dir() const { return dir_; }

  const CudaRelease* cuda(std::string_view mm) const;                   // by "12.6" (or "12.6.3")
  const PaddleRelease* paddle_release(std::string_view version) const;  // by "2.6.2"
  const PythonEol* python_eol(std::string_view py) const;
  const CudaImages* cuda_images(std::string_view mm) const;
  const CpuBase* cpu_base(std::string_view os) const;
  const OsPython* os_python(std::string_view os) const;
  const ArchSupport* arch_for_cc(std::string_view cc) const;
  const NvidiaLibrary* library(std::string_view lib) const;
  const RuntimeSet* runtime_set(std::string_view cuda_major) const;
  // The load table of Paddle `version` for a build with or without pip CUDA libraries.
  const PaddleLoads* paddle_loads(std::string_view version, bool pip_cuda_libraries) const;
  const CudaWheelBase* cuda_wheels(std::string_view mm) const;
  // The highest version any base pins of `package` ("" when none pins it).
  std::string newest_pin(std::string_view package) const;
  const UnpinnedWheel* unpinned_wheel(std::string_view package) const;
  // An apt package of cuDNN `cudnn` (on its precision) built for `cuda`, served for `os`.
  const CudnnApt* cudnn_apt(std::string_view cudnn, std::string_view cuda, std::string_view os) const;
  std::vector<const TensorRtSupport*> tensorrt_facts(std::string_view trt) const;
  // kb.yaml `released`: the day the facts were last checked against their sources (YYYY-MM-DD).
  std::string released() const { return released_; }
  // cuDNN facts whose range overlaps `cudnn` on its precision ("8.9" overlaps 8.9.0-8.9.1 and 8.9.5-8.9.6).
  std::vector<const CudnnSupport*> cudnn_facts(std::string_view cudnn) const;

  const std::vector<CudaRelease>& cudas() const { return cudas_; }
  const std::vector<ArchSupport>& archs() const { return archs_; }
  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const std::vector<CudnnSupport>& cudnns() const { return cudnns_; }
  const std::vector<PaddleRelease>& paddles() const { return paddles_; }
  const std::vector<PythonEol>& pythons() const { return pythons_; }
  const std::vector<CudaImages>& images() const { return images_; }
  const std::vector<CpuBase>& cpu_bases() const { return cpu_bases_; }
  const std::vector<OsPython>& os_pythons() const { return os_pythons_; }
  const std::vector<NvidiaLibrary>& libraries() const { return libraries_; }
  const std::vector<CudaWheelBase>& cuda_wheel_bases() const { return cuda_wheels_; }
  const std::vector<UnpinnedWheel>& unpinned_wheels() const { return unpinned_wheels_; }
  const std::vector<CudnnApt>& cudnn_apts() const { return cudnn_apt_; }

 private:
  friend struct KbLoader;
  std::string dir_, version_, released_;
  std::vector<CudaRelease> cudas_;
  std::vector<ArchSupport> archs_;
  std::vector<GpuSpec> gpus_;
  std::vector<CudnnSupport> cudnns_;
  std::vector<PaddleRelease> paddles_;
  std::vector<PythonEol> pythons_;
  std::vector<CudaImages> images_;
  std::vector<CpuBase> cpu_bases_;
  std::vector<OsPython> os_pythons_;
  std::vector<NvidiaLibrary> libraries_;
  std::vector<RuntimeSet> runtime_sets_;
  std::vector<PaddleLoads> paddle_loads_;
  std::vector<CudaWheelBase> cuda_wheels_;
  std::vector<UnpinnedWheel> unpinned_wheels_;
  std::vector<CudnnApt> cudnn_apt_;
  std::vector<TensorRtSupport> tensorrt_;
};

}  // namespace imgtool::matrix
