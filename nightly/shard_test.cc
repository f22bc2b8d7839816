// Sharding (shard.h): every cell in exactly one shard, balanced enough, and
// stable: a new cell never moves another; a new runner only takes cells.
#include "nightly/shard.h"

#include <doctest/doctest.h>

#include <map>

#include "core/error.h"

using namespace imgtool;
using namespace imgtool::builder;
using namespace imgtool::nightly;

namespace {

std::vector<GeneratedCell> cells_named(const std::vector<std::string>& tags) {
  std::vector<GeneratedCell> out;
  for (auto& t : tags) {
    GeneratedCell g;
    g.cell.tag = t;
    out.push_back(g);
  }
  return out;
}

std::vector<std::string> many_tags(int n, const std::string& prefix = "3.2.0-gpu-cuda12.6-py3.") {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

std::map<std::string, int> assignment(const std::vector<std::string>& tags, int n) {
  std::map<std::string, int> a;
  auto cells = cells_named(tags);
  for (int i = 1; i <= n; ++i)
    for (auto& c : select_shard(cells, {i, n})) {
      CHECK(a.count(c.cell.tag) == 0);  // disjoint
      a[c.cell.tag] = i;
    }
  return a;
}

}  // namespace

TEST_CASE("shards: complete, disjoint, sorted, and select_shard agrees with shard_of") {
  auto tags = many_tags(40);
  auto a = assignment(tags, 4);
  CHECK(a.size() == tags.size());
  for (auto& [tag, shard] : a) CHECK(shard_of(tag, 4) == shard);
  auto mine = select_shard(cells_named(tags), {2, 4});
  for (size_t i = 1; i < mine.size(); ++i) CHECK(mine[i - 1].cell.tag < mine[i].cell.tag);
  std::map<int, int> per_shard;
  for (auto& [tag, shard] : a) per_shard[shard]++;
  CHECK(per_shard.size() == 4);  // 40 cells over 4 shards: none is empty
  for (auto& [shard, n] : per_shard) CHECK(n >= 4);
  CHECK(shard_of("anything", 1) == 1);
}

TEST_CASE("shards: adding cells never reshuffles the others") {
  auto before = many_tags(30);
  auto after = before;
  for (auto& t : many_tags(7, "3.3.0-cpu-py3.")) after.push_back(t);
  auto a = assignment(before, 5), b = assignment(after, 5);
  for (auto& kv : a) CHECK_MESSAGE(b.at(kv.first) == kv.second, kv.first << " moved");
  // Removing a cell moves nothing either.
  auto fewer = std::vector<std::string>(before.begin() + 1, before.end());
  auto c = assignment(fewer, 5);
  for (auto& [tag, shard] : c) CHECK(a.at(tag) == shard);
}

TEST_CASE("shards: one more runner only takes cells, it never moves one between old shards") {
  auto tags = many_tags(60);
  auto a = assignment(tags, 4), b = assignment(tags, 5);
  int moved = 0;
  for (auto& [tag, shard] : a) {
    if (b.at(tag) == shard) continue;
    CHECK(b.at(tag) == 5);
    ++moved;
  }
  CHECK(moved > 0);
  CHECK(moved < 30);  // about 1/5 of them, far from a reshuffle
}

TEST_CASE("shards: i/n parsing") {
  CHECK(parse_shard("2/3").index == 2);
  CHECK(parse_shard("2/3").count == 3);
  for (auto bad : {"3/2", "1-2", "0/2", "1/0", "a/b", "1/2x", "", "/"}) CHECK_THROWS_AS(parse_shard(bad), InputError);
}
