// The matrix file as written (YAML or JSON), validated against the KB but not
// yet expanded. Format (matrix/README.md has the full description):
//
//   repository: paddle
//   tag_template: {gpu: "...", cpu: "..."}     # or one string for both; optional
//   only_published: true                      # keep only tags Paddle published (KB)
//   defaults: {base_image:, base_digest:, pip_requirement:, pip_index_url:, wheelhouse:, template:, build: {}}
//   axes: {paddle: [...], variant: [gpu, cpu], cuda: [...], cudnn: [...], trt: [...],
//          python: [...], os: [...], flavor: [runtime, devel]}
//   exclude: [ {axis: value, ...} ]            # drops every combination matching all given axes
//   include: [ {axis: value, ..., setting: value} ]   # GitHub-Actions semantics, see expand.h
//
// String settings expand ${VAR} and ${VAR:-default}; a relative wheelhouse is
// resolved against the matrix file's folder.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "matrix/kb.h"

namespace imgtool::matrix {

using Axes = std::map<std::string, std::string>;  // axis name -> value

// Axis names in expansion order.
const std::vector<std::string>& axis_names();

// Base image / package source / build values, from `defaults` or an include entry.
struct Settings {
  std::map<std::string, std::string>
      values;  // repository, base_image, base_digest, pip_requirement, pip_index_url, wheelhouse, template
  std::map<std::string, std::string> build;  // -> Cell::overrides
  void merge_from(const Settings& o);        // o's values win
  std::string get(const std::string& k) const {
    auto it = values.find(k);
    return it == values.end() ? "" : it->second;
  }
};

struct Entry {  // one include/exclude item
  Axes axes;
  Settings settings;
  std::string where;  // "file:line:col"
};

struct MatrixSpec {
  std::string file;
  std::string repository = "paddle";
  std::map<std::string, std::string> tag_template;  // "gpu"/"cpu" -> template
  bool only_published = false;
  std::map<std::string, std::vector<std::string>> axes;
  std::string axes_where;
  std::vector<Entry> include, exclude;
  Settings defaults;
};

// Parses and validates (keys, versions known to the KB, template placeholders).
// Throws InputError "file:line:col: expected …, found …".
MatrixSpec read_matrix_file(const std::string& path, const KnowledgeBase& kb);
// The same for text already in memory; `name` stands for the file in messages and decides
// JSON (".json") or YAML, and is where relative wheelhouse paths start (fuzz/ uses this).
MatrixSpec read_matrix_text(const std::string& text, const std::string& name, const KnowledgeBase& kb);

}  // namespace imgtool::matrix
