// Dockerfile templates: plain text files a release engineer reads and edits
// (dockerfiles/<name>.Dockerfile.in, partials in dockerfiles/partials/).
//
// Syntax, line-oriented so a template reads like the Dockerfile it makes:
//   {{name}}                 replaced by values.at(name); an unknown name is an
//                            InputError "<file>:<line>: unknown placeholder …".
//                            A line that is just one placeholder rendering empty
//                            is dropped (no stray blank lines).
//   {{#name}} / {{^name}}    on a line of their own: the following lines up to
//   {{/name}}                {{/name}} are kept when name is non-empty (# ) or
//                            empty (^). Sections nest.
//   {{> partial}}            on a line of its own: partials/<partial>.Dockerfile.in,
//                            rendered with the same values.
//   {{! …                    a line starting with this is a template comment.
// Every line is checked, kept or not, so a typo in an inactive branch still fails.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace imgtool::dockerfiles {

using Values = std::map<std::string, std::string>;

// A file read while rendering: its path as shown in messages and its bytes
// (the generator hashes them: a template edit changes the inputs hash).
struct SourceFile {
  std::string label;  // e.g. "dockerfiles/paddle.Dockerfile.in"
  std::string bytes;
};

class TemplateDir {
 public:
  // `dir` holds <name>.Dockerfile.in and partials/. `label_prefix` is how
  // paths appear in messages (e.g. "dockerfiles/").
  explicit TemplateDir(std::filesystem::path dir, std::string label_prefix = "dockerfiles/");

  // Reads a file of the folder (relative path); InputError if absent.
  SourceFile read(const std::string& relative) const;

  // Renders <name>.Dockerfile.in. Appends every file read to *used (if given).
  std::string render(const std::string& name, const Values& values, std::vector<SourceFile>* used = nullptr) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string label_prefix_;
};

// Renders one template text. `file_label` names it in messages; `include`
// resolves {{> partial}} lines to their rendered text.
std::string render_text(const std::string& text, const Values& values, const std::string& file_label,
                        const std::function<std::string(const std::string&)>& include = nullptr);

}  // namespace imgtool::dockerfiles
