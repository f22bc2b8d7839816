// GPU architectures as CUDA counts them, and the code a library holds for them: which GPUs it can
// run on. A pure model (no I/O): scan/gpu_code.h reads it off a library's fat binaries, the KB
// records it per Paddle build (compiled_archs), images carry it (io.imgtool.cuda-archs), and
// select/doctor/run-config hold a host's GPU against it.
//
// CUDA's rules: a cubin for sm_XY runs on a GPU of compute capability X.Z for Z >= Y (same major);
// PTX for compute_XY is JIT-compiled by the driver for any GPU of capability >= X.Y. The
// arch-specific targets (sm_90a, sm_100a: CUDA 12.0 / 12.8) run on X.Y exactly; the
// family-specific ones (sm_100f, sm_103f: CUDA 12.9) on the family, X.Z for Z >= Y; arch- and
// family-specific PTX (compute_90a, compute_100f) carries forward no further than its cubin would
// (CUDA C++ Programming Guide, "Feature Availability": ../shared/reference/compat_facts.json).
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace imgtool {

// An arch with its variant, as one int: the arch (90) in the low bits, kArchSpecific (sm_90a) or
// kArchFamily (sm_100f) above them. A plain arch is its own number.
inline constexpr int kArchSpecific = 1 << 16, kArchFamily = 1 << 17;
inline constexpr int arch_number(int key) { return key & 0xffff; }

struct GpuCode {
  int containers = 0;
  std::map<int, int> cubin;  // arch key (80 = sm_80, 90|kArchSpecific = sm_90a) -> containers holding a cubin for it
  std::map<int, int> ptx;    // arch key (80 = compute_80) -> containers holding PTX for it

  bool empty() const { return containers == 0; }
  // Architectures present in at least half of the containers (the library's own targets, not a
  // stray third-party kernel's).
  std::vector<int> main_cubins() const;
  std::vector<int> main_ptx() const;
  // Containers that hold code a GPU of compute capability `cc` (86 = 8.6) can run: a cubin of
  // the same major with a minor not above its own, or PTX for an arch not above it (the driver
  // JIT-compiles it).
  int runnable_on(int cc) const;
  void merge(const GpuCode& other);
  void add_container(const std::vector<int>& cubins, const std::vector<int>& ptxs);  // each sorted, unique
  // "sm_61,sm_70,sm_75,sm_80,sm_86" (+ ",compute_86" for PTX): the main targets, the form of the
  // io.imgtool.cuda-archs label and the KB's compiled_archs.
  std::string text() const;

  // served[cc] = containers holding code a GPU of compute capability cc (10..999) can run: what
  // runnable_on() needs (a container serves a GPU through any one of its entries). Fixed size,
  // whatever the input: a crafted library with a container of every shape costs no more memory.
  static constexpr int kMaxCc = 1000;
  std::array<int, kMaxCc> served{};
};

// "sm_86" / "compute_80" / "8.6" / "86" -> 86; nullopt otherwise (a compute capability: no variant).
std::optional<int> parse_arch(const std::string& text);
// One entry of the text() form, variants included: "sm_90a" -> 90|kArchSpecific, "compute_100f" ->
// 100|kArchFamily (and ptx = true), "sm_86" -> 86; nullopt for anything else.
struct ArchEntry {
  int key = 0;
  bool ptx = false;
};
std::optional<ArchEntry> parse_arch_entry(const std::string& item);
// Whether code for arch key `key` (a cubin, or PTX when `ptx`) runs on compute capability `cc` (90).
bool arch_runs_on(int key, bool ptx, int cc);
// 90|kArchSpecific -> "90a".
std::string arch_key_text(int key);
// Parses the text() form back: nullopt for a malformed list.
std::optional<GpuCode> parse_archs(const std::string& text);
// 86 -> "8.6".
std::string cc_text(int cc);

// "" when a GPU of compute capability `cc` ("9.0") can run code compiled for `archs` (the text()
// form: "sm_61,…,sm_86[,compute_86]"), else why not, in the words of the error users meet
// ("… no kernel image is available for execution on the device"). "" too when either is unknown.
std::string kernel_gap(const std::string& archs, const std::string& cc);

}  // namespace imgtool
