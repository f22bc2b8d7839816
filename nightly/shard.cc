#include "nightly/shard.h"

#include <algorithm>
#include <stdexcept>

#include "core/error.h"
#include "core/hash.h"

namespace imgtool::nightly {

Shard parse_shard(const std::string& text) {
  Shard s;
  auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    s.index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("trailing");
    s.count = std::stoi(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("--shard: expected i/n (e.g. 1/4), found '" + text + "'");
  }
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw InputError("--shard: expected 1 <= i <= n, found '" + text + "'");
  return s;
}

int shard_of(const std::string& tag, int count) {
  int best = 1;
  std::string best_score;
  for (int j = 1; j <= count; ++j) {
    std::string score = sha256_hex(tag + "\n" + std::to_string(j));  // fixed-width hex: string order = number order
    if (score > best_score) best = j, best_score = score;
  }
  return best;
}

std::vector<builder::GeneratedCell> select_shard(std::vector<builder::GeneratedCell> cells, const Shard& s) {
  std::sort(cells.begin(), cells.end(), [](auto& a, auto& b) { return a.cell.tag < b.cell.tag; });
  std::vector<builder::GeneratedCell> mine;
  for (auto& c : cells)
    if (shard_of(c.cell.tag, s.count) == s.index) mine.push_back(std::move(c));
  return mine;
}

}  // namespace imgtool::nightly
