// Reading YAML (and JSON, parsed by the same YAML reader so every node keeps
// its line and column) with errors a user can act on: every failure is one
// line "file:line:col: expected …, found …" thrown as InputError.
#pragma once
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

namespace imgtool::matrix {

// A parsed file plus its name, so helpers can point at positions in it.
class YamlDoc {
 public:
  // Parses `path`. The text must be UTF-8 and no mapping may repeat a key (both refused
  // with file:line:col). JSON files (".json") are syntax-checked with nlohmann_json
  // first, so JSON syntax errors are reported in JSON terms.
  static YamlDoc load(const std::string& path);
  static YamlDoc parse(const std::string& text, const std::string& name);

  const YAML::Node& root() const { return root_; }
  const std::string& file() const { return file_; }

  // "file:line:col" of a node (1-based), or "file" when the node has no mark.
  std::string where(const YAML::Node& n) const;
  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const;

  // Throws unless `map` is a mapping whose keys are all in `allowed`.
  void expect_map(const YAML::Node& n, const std::string& what) const;
  void check_keys(const YAML::Node& map, const std::set<std::string>& allowed, const std::string& what) const;
  // Scalars. `required` keys missing -> error at the map's position.
  std::string str(const YAML::Node& map, const std::string& key, bool required = true) const;
  // A scalar that must parse as a dotted version ("12.6"); empty if optional and absent.
  std::string version(const YAML::Node& map, const std::string& key, bool required = true) const;
  std::string version_of(const YAML::Node& scalar) const;
  bool boolean(const YAML::Node& map, const std::string& key, bool dflt) const;
  // A scalar or a sequence of scalars, as strings.
  std::vector<std::string> str_list(const YAML::Node& map, const std::string& key, bool required = true) const;
  // Number or null (0).
  double number_or_null(const YAML::Node& map, const std::string& key) const;

 private:
  void check_unique_keys(const YAML::Node& n, size_t* visits = nullptr) const;
  std::string file_;
  YAML::Node root_;
};

// Describes a node for "found …" in messages: "a sequence", "'abc'", "nothing".
std::string describe(const YAML::Node& n);

// Expands ${NAME} and ${NAME:-default} (environment variables) in a string;
// an unset (or empty) variable without a default is an error reported by the caller. Returns false and sets `missing`
// on failure.
bool expand_env(const std::string& in, std::string& out, std::string& missing);

}  // namespace imgtool::matrix
