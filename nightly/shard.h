// Sharding a nightly across runners: `imgtool nightly --shard i/n` and the CI
// matrices `imgtool plan --emit github|gitlab` writes (emit/) call the same
// shard_of(), so the cells a runner builds are the cells its matrix entry names.
//
// Assignment is rendezvous (highest-random-weight) hashing of the cell's tag:
// each shard j scores sha256(tag + "\n" + j) and the cell goes to the best
// score. It depends on the tag and n only, so adding or removing a cell never
// moves another one; going from n to n+1 runners moves only the cells the new
// shard wins (about 1/(n+1) of them), never one between old shards.
#pragma once
#include <string>
#include <vector>

#include "builder/generated_cell.h"

namespace imgtool::nightly {

struct Shard {
  int index = 1;  // 1-based
  int count = 1;
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "i/n" with 1 <= i <= n; InputError otherwise.
Shard parse_shard(const std::string& text);

// The 1-based shard of `tag` among `count` shards (rendezvous hashing, above).
int shard_of(const std::string& tag, int count);

// The cells of shard `s` (shard_of(tag, s.count) == s.index), sorted by tag.
// Every cell lands in exactly one shard.
std::vector<builder::GeneratedCell> select_shard(std::vector<builder::GeneratedCell> cells, const Shard& s);

}  // namespace imgtool::nightly
