// imgtool: thin front end. Builds the CLI11 app from the subcommand table and
// maps exceptions to exit codes (see core/error.h).
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>

#include "cli/subcommand.h"
#include "core/error.h"
#include "core/process.h"
#include "core/strings.h"

namespace imgtool::cli {
std::vector<Subcommand>& registry() {
  static std::vector<Subcommand> r;
  return r;
}

namespace {
// CLI11 answers an unknown first word with "The following argument was not expected";
// say instead which word was not a subcommand and what the subcommands are.
std::optional<std::string> unknown_subcommand(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  std::string word = argv[1], names;
  for (auto& s : registry()) {
    if (s.name == word) return std::nullopt;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  return "unknown subcommand '" + word + "': expected one of " + names + " (see imgtool --help)";
}
}  // namespace

}  // namespace imgtool::cli

int main(int argc, char** argv) {
  using namespace imgtool;
  end_children_on_signal();  // a killed or interrupted run ends its docker builds too
  CLI::App app{
      "imgtool: build, verify, sign and publish matrices of GPU Docker images for PaddlePaddle.\n"
      "Exit codes: 0 ok, 1 a check or operation failed, 2 bad input or usage."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("imgtool 0.1.0"));
  auto& reg = cli::registry();
  std::sort(reg.begin(), reg.end(), [](auto& a, auto& b) { return a.name < b.name; });
  if (auto why = cli::unknown_subcommand(argc, argv)) {
    std::cerr << "imgtool: " << *why << "\n";
    return 2;
  }
  std::map<CLI::App*, cli::Action> actions;
  for (auto& s : reg) {
    CLI::App* sub = app.add_subcommand(s.name, s.help);
    actions[sub] = s.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    for (auto& [sub, act] : actions)
      if (sub->parsed()) return act();
    return 2;
  } catch (const InputError& e) {  // messages carry names and text from files, registries and images
    std::cerr << "imgtool: " << strings::printable_lines(e.what()) << "\n";
    return 2;
  } catch (const CheckFailed& e) {
    std::cerr << "imgtool: " << strings::printable_lines(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "imgtool: error: " << strings::printable_lines(e.what()) << "\n";
    return 1;
  }
}
