// --reproducible and --normalize-rules, for `build` and `nightly`: each built image normalized with
// its cell's SOURCE_DATE_EPOCH and loaded back under its name (builder/normalize_built.h), so a
// rebuild gives the same image ID and the same pushed digest (`imgtool reproduce` checks one).
#pragma once
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>

#include "builder/build_driver.h"
#include "image/normalize.h"

namespace imgtool::cli {

struct ReproducibleFlag {
  bool on = false;
  std::string rules;
  void add(CLI::App& sub) {
    sub.add_flag("--reproducible", on,
                 "normalize each built image (path order, mtimes clamped to the cell's SOURCE_DATE_EPOCH, build "
                 "records dropped, fixed gzip) and load it back under its name: a rebuild gives the same digest");
    sub.add_option("--normalize-rules", rules, "--reproducible: the rules file (default: image/normalize_rules.tsv)");
  }
  // Reads the rules file (bad input: refused before anything is built).
  void apply(builder::BuildOptions& o) const {
    o.normalize = on;
    if (on)
      o.normalize_rules =
          image::read_normalize_rules(rules.empty() ? image::default_normalize_rules() : std::filesystem::path(rules));
  }
};

}  // namespace imgtool::cli
