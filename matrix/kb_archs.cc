// The knowledge base, one fact family: GPU architectures (arch.yaml) and GPUs (gpus.yaml), and finding a GPU by the
// name a user gives. Its readers (KbLoader, matrix/kb_read.h) and its queries (KnowledgeBase, matrix/kb.h).
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "matrix/kb.h"
#include "matrix/kb_read.h"
#include "matrix/yaml_doc.h"

namespace imgtool::matrix {

using namespace kb_read;

namespace {
// The memory size a lowercased query names, as ([0-9]+)\s*gb?\b found it: the first run of
// digits followed by "g" or "gb" as a word's end. Written out (std::regex recursed once per
// character of a long query) and bounded (a run of more than 6 digits names no GPU).
std::optional<int> memory_gb(std::string_view lq) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto word_ends = [&](size_t at) {
    return at >= lq.size() || !(std::isalnum(static_cast<unsigned char>(lq[at])) || lq[at] == '_');
  };
  for (size_t i = 0; i < lq.size();) {
    if (!digit(lq[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < lq.size() && digit(lq[end])) ++end;
    size_t g = end;
    while (g < lq.size() && std::isspace(static_cast<unsigned char>(lq[g]))) ++g;
    bool named = g < lq.size() && lq[g] == 'g' && word_ends(g + 1 < lq.size() && lq[g + 1] == 'b' ? g + 2 : g + 1);
    if (named) return end - i > 6 ? std::nullopt : std::optional<int>(std::stoi(std::string(lq.substr(i, end - i))));
    i = end;
  }
  return std::nullopt;
}

// Narrows candidates by a memory size ("40GB", "80 GB") and form factor word in the query.
std::vector<const GpuSpec*> narrow(std::vector<const GpuSpec*> c, const std::string& lq) {
  auto keep = [&](auto pred) {
    std::vector<const GpuSpec*> k;
    for (auto* g : c)
      if (pred(*g)) k.push_back(g);
    if (!k.empty()) c = k;
  };
  if (auto gb = c.size() > 1 ? memory_gb(lq) : std::nullopt)
    keep([&](const GpuSpec& g) { return int(g.memory_gb + 0.5) == *gb; });
  if (c.size() > 1)
    keep([&](const GpuSpec& g) {
      std::string f = strings::lower(g.form), base = f.substr(0, 3);  // "sxm4" also answers to "sxm"
      return !f.empty() && (contains_word(lq, f) || (base == "sxm" && contains_word(lq, base)));
    });
  return c;
}
}  // namespace

void KbLoader::arch(const YamlDoc& d, KnowledgeBase& kb) {
  for (const auto& n : seq(d, "arch")) {
    d.check_keys(n, {"name", "cc", "first_cuda", "last_cuda", "source", "unconfirmed", "note"}, "an architecture");
    ArchSupport a;
    read_fact(d, n, a);
    a.name = d.str(n, "name");
    for (const auto& c : n["cc"]) a.cc.push_back(d.version_of(c));
    if (a.cc.empty()) d.fail(n, "expected 'cc' to list compute capabilities, found none");
    a.first_cuda = d.version(n, "first_cuda");
    a.last_cuda = d.version(n, "last_cuda", false);
    kb.archs_.push_back(a);
  }
}

void KbLoader::gpus(const YamlDoc& d, KnowledgeBase& kb) {
  for (const auto& n : seq(d, "gpus")) {
    d.check_keys(n,
                 {"name", "aliases", "form", "cc", "memory_gb", "bw_GBps", "fp32_tflops", "fp16_tensor_tflops",
                  "bf16_tensor_tflops", "source", "unconfirmed", "note", "host_cpu"},
                 "a GPU");
    GpuSpec g;
    g.name = d.str(n, "name");
    g.aliases = d.str_list(n, "aliases");
    g.form = d.str(n, "form", false);
    g.cc = d.version(n, "cc");
    g.host_cpu = d.str(n, "host_cpu", false);
    if (!g.host_cpu.empty() && g.host_cpu != "arm64" && g.host_cpu != "amd64")
      d.fail(n["host_cpu"], "expected host_cpu arm64 or amd64, found '" + g.host_cpu + "'");
    g.memory_gb = d.number_or_null(n, "memory_gb");
    g.bw_GBps = d.number_or_null(n, "bw_GBps");
    g.fp32_tflops = d.number_or_null(n, "fp32_tflops");
    g.fp16_tensor_tflops = d.number_or_null(n, "fp16_tensor_tflops");
    g.bf16_tensor_tflops = d.number_or_null(n, "bf16_tensor_tflops");
    Fact f;
    read_fact(d, n, f);
    g.source = f.source;
    g.unconfirmed = f.unconfirmed;
    kb.gpus_.push_back(g);
  }
}

std::vector<const GpuSpec*> KnowledgeBase::find_gpus(std::string_view q) const {
  std::string lq = strings::lower(q);
  for (auto& g : gpus_)
    if (strings::lower(g.name) == lq) return {&g};
  // Aliases: equal to the query, or contained in it as a whole word; the longest wins.
  std::vector<const GpuSpec*> best;
  size_t best_len = 0;
  for (auto& g : gpus_)
    for (auto& a : g.aliases) {
      if (strings::lower(a) != lq && !contains_word(lq, strings::lower(a))) continue;
      if (a.size() > best_len) best.clear(), best_len = a.size();
      if (a.size() == best_len && std::find(best.begin(), best.end(), &g) == best.end()) best.push_back(&g);
    }
  return narrow(best, lq);
}

const GpuSpec* KnowledgeBase::find_gpu(std::string_view q) const {
  auto c = find_gpus(q);
  return c.size() == 1 ? c.front() : nullptr;
}

const ArchSupport* KnowledgeBase::arch_for_cc(std::string_view cc) const {
  return find_if_ptr(archs_, [&](auto& a) { return std::find(a.cc.begin(), a.cc.end(), cc) != a.cc.end(); });
}

}  // namespace imgtool::matrix
