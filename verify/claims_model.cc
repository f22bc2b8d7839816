#include "verify/claims_model.h"

#include <regex>

#include "matrix/label_claims.h"

namespace imgtool::verify {

namespace {


// token regex -> field; group 1 = value. Order matters (cudnn before cuda).
const std::vector<std::pair<std::regex, std::string>> kTagTokens = {
    {std::regex(R"(^cudnn(\d+(?:\.\d+)*)$)"), "cudnn"},
    {std::regex(R"(^cuda(\d+(?:\.\d+)*)$)"), "cuda"},
    {std::regex(R"(^(?:trt|tensorrt)(\d+(?:\.\d+)*)$)"), "tensorrt"},
    {std::regex(R"(^py(?:thon)?(\d+\.\d+)$)"), "python"},
    {std::regex(R"(^(gpu|cpu)$)"), "variant"},
};

}  // namespace

std::string Claims::label(const std::string& field) const {
  auto it = labels.find(field);
  return it == labels.end() ? "" : it->second;
}

std::map<std::string, std::string> parse_tag_claims(const std::string& tag) {
  std::map<std::string, std::string> out;
  static const std::regex paddle(R"(^\d+\.\d+(?:\.\d+)*(?:(?:rc|b|a|\.post)\d+)?$)");
  static const std::regex py_compact(R"(^py(3)(\d{1,2})$)");
  size_t start = 0;
  for (int i = 0; start <= tag.size(); ++i) {
    size_t end = tag.find('-', start);
    std::string tok = tag.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? tag.size() + 1 : end + 1;
    std::smatch m;
    if (i == 0 && std::regex_match(tok, paddle)) out["paddle"] = tok;
    if (std::regex_match(tok, m, py_compact)) out["python"] = std::string(m[1]) + "." + std::string(m[2]);
    for (const auto& [re, field] : kTagTokens)
      if (std::regex_match(tok, m, re)) {
        out[field] = m[1];
        break;
      }
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
