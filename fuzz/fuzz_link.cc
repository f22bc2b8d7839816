// RFC 8288 Link headers (what a registry, or a man in the middle, sends to page a tag list):
// parse, pick `next`, resolve it as list_tags does; then a round trip — the parsed links written
// back in canonical form must parse to the same links, else abort.
#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "image/http.h"
#include "image/link_header.h"

namespace {

using imgtool::image::Link;

std::string quote(const std::string& v) {
  std::string out = "\"";
  for (char c : v) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::string canonical(const std::vector<Link>& links) {
  std::string out;
  for (const auto& l : links) {
    out += (out.empty() ? "<" : ", <") + l.target + ">";
    std::string rel;
    for (const auto& r : l.rels) rel += (rel.empty() ? "" : " ") + r;
    if (!l.rels.empty()) out += "; rel=" + quote(rel);
    for (const auto& [k, v] : l.params) out += "; " + k + "=" + quote(v);
  }
  return out;
}

bool same(const std::vector<Link>& a, const std::vector<Link>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].target != b[i].target || a[i].rels != b[i].rels || a[i].params != b[i].params) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  std::vector<Link> links;
  if (!imgtool::fuzz::expect_refusal_or_result([&] { links = imgtool::image::parse_link_header(s); })) return 0;
  for (const auto& l : links)
    if (l.target.find('>') != std::string::npos) abort();
  imgtool::fuzz::expect_refusal_or_result([&] {
    if (auto next = imgtool::image::find_link(links, "next"))
      imgtool::image::resolve_url("https://registry.example:5000/v2/ai/paddle/tags/list?n=1000", *next);
  });
  if (!same(imgtool::image::parse_link_header(canonical(links)), links)) abort();
  return 0;
}
