// Lint for Dockerfile templates: flags downloads that skip verification.
// Generation fails on any finding (generate.h), so an insecure template never
// produces an image. Checked per logical line (backslash continuations joined),
// reported at the line where the instruction starts.
//
// Findings (rules in lint.cc's table):
//   --no-check-certificate, --allow-unauthenticated, --allow-insecure-repositories,
//   --force-yes, curl -k/--insecure, pip --trusted-host, ADD of a remote URL
//   (no checksum), and piping a download into a shell (curl … | sh, wget … | bash).
#pragma once
#include <string>
#include <vector>

namespace imgtool::dockerfiles {

struct LintFinding {
  std::string file;
  int line = 0;
  std::string rule;         // short id, e.g. "curl-insecure"
  std::string message;      // what is wrong and what to do
  std::string str() const;  // "<file>:<line>: <message> [<rule>]"
};

std::vector<LintFinding> lint_text(const std::string& text, const std::string& file_label);

// One line per finding, for an error message.
std::string format_findings(const std::vector<LintFinding>& findings);

}  // namespace imgtool::dockerfiles
