// The CLI is a table of subcommands. Each cmd_<name>.cc fills an options
// struct from flags and calls the library; the library never reads flags.
// A subcommand registers itself with a static Registration object, so adding
// one means adding one file (cli/CMakeLists.txt globs cmd_*.cc).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace imgtool::cli {

// setup() adds flags to `sub` and returns the action to run when `sub` was
// chosen. The action returns the process exit code (0 ok, 1 check failed,
// 2 bad input). Exceptions are mapped by main(): InputError -> 2, others -> 1.
using Action = std::function<int()>;
struct Subcommand {
  std::string name;
  std::string help;
  std::function<Action(CLI::App& sub)> setup;
};

std::vector<Subcommand>& registry();

struct Registration {
  explicit Registration(Subcommand s) { registry().push_back(std::move(s)); }
};

}  // namespace imgtool::cli
