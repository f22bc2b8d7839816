// --kb DIR, the knowledge base a command plans and judges with, registered in one place. The
// command loads it ONCE (load()) and passes it down; nothing below loads another.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "matrix/kb.h"

namespace imgtool::cli {

struct KbFlag {
  std::string dir;  // "" = <data dir>/matrix/kb
  void add(CLI::App& sub) { sub.add_option("--kb", dir, "knowledge-base folder (default: <data dir>/matrix/kb)"); }
  // InputError naming a missing file of the folder.
  matrix::KnowledgeBase load() const {
    return dir.empty() ? matrix::KnowledgeBase::load_default() : matrix::KnowledgeBase::load(dir);
  }
};

}  // namespace imgtool::cli
