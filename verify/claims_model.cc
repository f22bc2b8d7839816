#include "verify/claims_model.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "matrix/label_claims.h"

namespace imgtool::verify {

namespace {

// Tag tokens are read by plain string code, never std::regex: a tag can come from an image's
// io.imgtool.tag label (hostile), and libstdc++'s regex recursed once per character of a
// repeated group, so a megabyte label overflowed the stack. Each function states the
// expression it implements (\d = [0-9]).

// \d+ at s[p], advancing p past it; false when no digit is there.
bool digits_at(std::string_view s, size_t& p) {
  size_t from = p;
  while (p < s.size() && s[p] >= '0' && s[p] <= '9') ++p;
  return p > from;
}

// (?:\.\d+)* at s[p], advancing p past it.
void dotted_at(std::string_view s, size_t& p) {
  for (size_t q = p; q < s.size() && s[q] == '.' && digits_at(s, ++q);) p = q;
}

// ^\d+(?:\.\d+)*$
bool is_dotted_version(std::string_view s) {
  size_t p = 0;
  if (!digits_at(s, p)) return false;
  dotted_at(s, p);
  return p == s.size();
}

// ^\d+\.\d+$
bool is_two_part_version(std::string_view s) {
  size_t p = 0;
  return digits_at(s, p) && p < s.size() && s[p++] == '.' && digits_at(s, p) && p == s.size();
}

// ^\d+\.\d+(?:\.\d+)*(?:(?:rc|b|a|\.post)\d+)?$ (a Paddle release: 3.2.0, 3.0.0rc1, 2.6.1.post2)
bool is_paddle_version(std::string_view s) {
  size_t p = 0;
  if (!digits_at(s, p) || p >= s.size() || s[p++] != '.' || !digits_at(s, p)) return false;
  dotted_at(s, p);
  for (std::string_view pre : {"rc", "b", "a", ".post"})
    if (s.substr(p).starts_with(pre)) {
      size_t q = p + pre.size();
      return digits_at(s, q) && q == s.size();
    }
  return p == s.size();
}

// ^py(3)(\d{1,2})$ -> "3.<digits>" (py311 -> 3.11)
std::string compact_python(std::string_view tok) {
  std::string_view rest = tok.substr(std::min<size_t>(3, tok.size()));
  bool ok = tok.starts_with("py3") && !rest.empty() && rest.size() <= 2 &&
            std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; });
  return ok ? "3." + std::string(rest) : "";
}

// One token kind: ^(?:PREFIX|…)(VALUE)$ -> field = VALUE (or the whole token, for gpu|cpu).
struct TagToken {
  std::vector<std::string_view> prefixes;
  bool (*value_ok)(std::string_view);
  const char* field;
  bool whole_token = false;
};

// Order matters (cudnn before cuda); the first kind that matches a token wins.
const TagToken kTagTokens[] = {
    {{"cudnn"}, is_dotted_version, "cudnn"},               // ^cudnn(\d+(?:\.\d+)*)$
    {{"cuda"}, is_dotted_version, "cuda"},                 // ^cuda(\d+(?:\.\d+)*)$
    {{"trt", "tensorrt"}, is_dotted_version, "tensorrt"},  // ^(?:trt|tensorrt)(\d+(?:\.\d+)*)$
    {{"py", "python"}, is_two_part_version, "python"},     // ^py(?:thon)?(\d+\.\d+)$
    {{"gpu", "cpu"}, [](std::string_view v) { return v.empty(); }, "variant", true},  // ^(gpu|cpu)$
};

// The field and value `tok` claims, or nullptr.
const TagToken* token_kind(std::string_view tok, std::string& value) {
  for (const TagToken& k : kTagTokens)
    for (std::string_view pre : k.prefixes)
      if (tok.starts_with(pre) && k.value_ok(tok.substr(pre.size()))) {
        value = std::string(k.whole_token ? tok : tok.substr(pre.size()));
        return &k;
      }
  return nullptr;
}

}  // namespace

std::string Claims::label(const std::string& field) const {
  auto it = labels.find(field);
  return it == labels.end() ? "" : it->second;
}

std::map<std::string, std::string> parse_tag_claims(const std::string& tag) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  for (int i = 0; start <= tag.size(); ++i) {
    size_t end = tag.find('-', start);
    std::string_view tok =
        std::string_view(tag).substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? tag.size() + 1 : end + 1;
    if (i == 0 && is_paddle_version(tok)) out["paddle"] = tok;
    if (std::string py = compact_python(tok); !py.empty()) out["python"] = py;
    std::string value;
    if (const TagToken* k = token_kind(tok, value)) out[k->field] = value;
  }
  // Paddle's CPU tags carry no variant token: a bare "{paddle}" tag claims cpu.
  if (!out.empty() && out.count("paddle") && !out.count("variant") && !out.count("cuda")) out["variant"] = "cpu";
  return out;
}

Claims read_claims(const image::ImageConfig& config, const std::string& tag) {
  matrix::LabelClaims l = matrix::read_label_claims(config.labels);
  Claims c;
  c.labels = l.claims();
  c.tag = tag.empty() ? l.tag : tag;
  c.from_tag = parse_tag_claims(c.tag);
  c.env = config.env_map();
  if (auto it = c.env.find("NVIDIA_REQUIRE_CUDA"); it != c.env.end()) c.require_cuda = it->second;
  c.base_cuda = l.base_cuda;
  return c;
}

}  // namespace imgtool::verify
