#include "emit/bake.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "builder/build_driver.h"
#include "core/error.h"
#include "matrix/labels.h"
#include "nightly/nightly_steps.h"

namespace imgtool::emit {
namespace {

using json = nlohmann::json;

// Cells of one group, keyed by stage key ("" = a Dockerfile without a shared
// stage: such a cell is a group of its own, named after its target).
std::map<std::string, std::vector<const builder::GeneratedCell*>> groups(
    const std::vector<builder::GeneratedCell>& cells) {
  std::map<std::string, std::vector<const builder::GeneratedCell*>> g;
  for (auto& c : cells) {
    if (!c.generate_error.empty() || c.dir.empty()) continue;
    g[c.stage_key.empty() ? "cell-" + bake_target(c.cell.tag) : c.stage_key].push_back(&c);
  }
  return g;
}

std::string hash_hex12(const std::string& inputs_hash) {
  auto colon = inputs_hash.find(':');
  return inputs_hash.substr(colon == std::string::npos ? 0 : colon + 1, 12);
}

json target(const builder::GeneratedCell& c, const std::string& group_key, const BakeOptions& o) {
  json t;
  t["context"] = std::filesystem::relative(c.dir, o.out_dir).generic_string();
  t["dockerfile"] = "Dockerfile";
  t["platforms"] = {"linux/amd64"};
  json labels = {{labels::kInputsHash, c.inputs_hash}, {labels::kTag, c.cell.tag}};
  if (!c.kb_version.empty()) labels[labels::kKbVersion] = c.kb_version;
  t["labels"] = labels;
  if (o.registry.empty()) {
    t["tags"] = {builder::local_image(c.cell, "")};
    return t;
  }
  image::Reference ref = nightly::cell_reference(nightly::parse_registry(o.registry), c.cell);
  t["tags"] = {ref.with_tag(c.cell.tag + "-in" + hash_hex12(c.inputs_hash)).within_transport()};
  std::string cache = "type=registry,ref=" + ref.with_tag("buildcache-" + group_key).within_transport();
  t["cache-from"] = {cache};
  t["cache-to"] = {cache + ",mode=max"};
  return t;
}

}  // namespace

std::string bake_target(const std::string& tag) {
  std::string t = tag;
  for (char& ch : t)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
  return t;
}

std::vector<BakeFile> bake_files(const std::vector<builder::GeneratedCell>& cells, const BakeOptions& o) {
  std::map<std::string, std::string> seen;  // target -> tag
  std::vector<BakeFile> files;
  for (auto& [key, members] : groups(cells)) {
    BakeFile f{"bake-" + key + ".json", {}, ""};
    json doc = {{"group", {{"default", {{"targets", json::array()}}}}}, {"target", json::object()}};
    for (auto* c : members) {
      std::string name = bake_target(c->cell.tag);
      auto [it, fresh] = seen.emplace(name, c->cell.tag);
      if (!fresh)
        throw InputError("plan --emit bake: tags '" + it->second + "' and '" + c->cell.tag +
                         "' both give bake target '" + name + "' (expected tags distinct after [^A-Za-z0-9_-] -> _)");
      f.targets.push_back(name);
      doc["group"]["default"]["targets"].push_back(name);
      doc["target"][name] = target(*c, key, o);
    }
    f.json = doc.dump(2) + "\n";
    files.push_back(std::move(f));
  }
  if (files.empty()) throw InputError("plan --emit bake: expected at least one generated cell, found none");
  return files;
}

std::string bake_script(const std::vector<BakeFile>& files) {
  std::string s =
      "#!/bin/sh\n"
      "# Written by `imgtool plan --emit bake`. One `docker buildx bake` per target: bake cancels\n"
      "# every target of an invocation when one fails, so each runs alone and a failure stops\n"
      "# nothing else. Targets of one file share their first stage (and its registry cache), so\n"
      "# the first builds it and the rest reuse it. Extra arguments go to every bake call\n"
      "# (e.g. --push, --builder NAME). Exit 1 names the failed targets.\n"
      "set -u\n"
      "cd \"$(dirname \"$0\")\" || exit 2\n"
      "failed=\"\"\n"
      "bake() { f=$1; t=$2; shift 2; docker buildx bake -f \"$f\" \"$@\" \"$t\" || failed=\"$failed $t\"; }\n";
  for (auto& f : files)
    for (auto& t : f.targets) s += "bake " + f.name + " " + t + " \"$@\"\n";
  s += "if [ -n \"$failed\" ]; then echo \"bake: failed:$failed\" >&2; exit 1; fi\n"
       "echo \"bake: all targets built\"\n";
  return s;
}

}  // namespace imgtool::emit
