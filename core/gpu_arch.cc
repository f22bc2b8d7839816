#include "core/gpu_arch.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace imgtool {

namespace {

std::vector<int> at_least_half(const std::map<int, int>& counts, int containers) {
  std::vector<int> out;
  for (auto [arch, n] : counts)
    if (2 * n >= containers) out.push_back(arch);
  return out;
}

}  // namespace

std::vector<int> GpuCode::main_cubins() const { return at_least_half(cubin, containers); }
std::vector<int> GpuCode::main_ptx() const { return at_least_half(ptx, containers); }

void GpuCode::add_container(const std::vector<int>& cubins, const std::vector<int>& ptxs) {
  ++containers;
  for (int a : cubins) ++cubin[a];
  for (int a : ptxs) ++ptx[a];
  // A cubin for sm_XY serves X.Y up to X.9 (sm_XYa: X.Y only); plain PTX for compute_XY serves
  // every cc from X.Y up (arch- and family-specific PTX as its cubin).
  std::array<bool, kMaxCc> serves{};
  for (int a : cubins)
    for (int cc = arch_number(a); cc >= 0 && cc < kMaxCc && cc / 10 == arch_number(a) / 10; ++cc)
      serves[cc] = serves[cc] || arch_runs_on(a, false, cc);
  int lowest_ptx = kMaxCc;
  for (int a : ptxs) {
    if (a == arch_number(a)) lowest_ptx = std::min(lowest_ptx, std::max(a, 0));
    for (int cc = arch_number(a); a != arch_number(a) && cc < kMaxCc && cc / 10 == arch_number(a) / 10; ++cc)
      serves[cc] = serves[cc] || arch_runs_on(a, true, cc);
  }
  for (int cc = lowest_ptx; cc < kMaxCc; ++cc) serves[cc] = true;
  for (int cc = 0; cc < kMaxCc; ++cc) served[cc] += serves[cc];
}

bool arch_runs_on(int key, bool ptx, int cc) {
  int a = arch_number(key);
  if (key & kArchSpecific) return cc == a;
  if ((key & kArchFamily) || !ptx) return cc / 10 == a / 10 && cc % 10 >= a % 10;
  return cc >= a;
}

std::string arch_key_text(int key) {
  return std::to_string(arch_number(key)) + (key & kArchSpecific ? "a" : key & kArchFamily ? "f" : "");
}

int GpuCode::runnable_on(int cc) const { return cc >= 0 && cc < kMaxCc ? served[cc] : 0; }

void GpuCode::merge(const GpuCode& o) {
  containers += o.containers;
  for (auto [a, n] : o.cubin) cubin[a] += n;
  for (auto [a, n] : o.ptx) ptx[a] += n;
  for (int cc = 0; cc < kMaxCc; ++cc) served[cc] += o.served[cc];
}

std::string GpuCode::text() const {
  std::string out;
  for (int a : main_cubins()) out += (out.empty() ? "" : ",") + std::string("sm_") + arch_key_text(a);
  for (int a : main_ptx()) out += (out.empty() ? "" : ",") + std::string("compute_") + arch_key_text(a);
  return out;
}

std::optional<int> parse_arch(const std::string& text) {
  std::string t = text;
  for (const char* prefix : {"sm_", "compute_"})
    if (t.rfind(prefix, 0) == 0) t = t.substr(std::strlen(prefix));
  if (t.size() == 3 && t[1] == '.') t = {t[0], t[2]};
  if (t.size() == 4 && t[2] == '.') t = {t[0], t[1], t[3]};  // "10.0" -> "100"
  if (t.empty() || t.size() > 3 || t.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int v = std::stoi(t);
  return v >= 10 ? std::optional<int>(v) : std::nullopt;
}

std::optional<ArchEntry> parse_arch_entry(const std::string& item) {
  bool ptx = item.rfind("compute_", 0) == 0;
  if (!ptx && item.rfind("sm_", 0) != 0) return std::nullopt;
  std::string t = item;
  int variant = 0;
  if (!t.empty() && (t.back() == 'a' || t.back() == 'f')) {
    variant = t.back() == 'a' ? kArchSpecific : kArchFamily;
    t.pop_back();
  }
  if (t.find('.') != std::string::npos) return std::nullopt;  // "sm_8.6" is not the text() form
  auto arch = parse_arch(t);
  if (!arch) return std::nullopt;
  return ArchEntry{*arch | variant, ptx};
}

std::optional<GpuCode> parse_archs(const std::string& text) {
  std::set<int> cubins, ptxs;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    auto entry = parse_arch_entry(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!entry) return std::nullopt;
    (entry->ptx ? ptxs : cubins).insert(entry->key);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  GpuCode c;
  c.add_container({cubins.begin(), cubins.end()}, {ptxs.begin(), ptxs.end()});
  return c;
}

std::string kernel_gap(const std::string& archs, const std::string& cc) {
  auto code = parse_archs(archs);
  auto device = parse_arch(cc);
  if (!code || !device || code->runnable_on(*device) > 0) return "";
  bool ptx = !code->ptx.empty();
  std::string specific;  // why sm_100a is no help to a 10.3 GPU
  for (auto [key, n] : code->cubin)
    if ((key & kArchSpecific) && arch_number(key) / 10 == *device / 10)
      specific += (specific.empty() ? "" : ", ") + std::string("sm_") + arch_key_text(key);
  if (!specific.empty()) specific = "; arch-specific " + specific + " runs on its own compute capability only";
  return "its GPU code is " + archs + (ptx ? "" : " (machine code only, no PTX to JIT-compile)") + specific +
         ": nothing runs on compute capability " + cc_text(*device) +
         " (\"no kernel image is available for execution on the device\")";
}

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

}  // namespace imgtool
