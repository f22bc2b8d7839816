#include "core/json_file.h"

#include "core/error.h"
#include "core/fs.h"

namespace imgtool {

std::string line_col_at(const std::string& text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw InputError(path.string() + ": expected a readable file (" + what + "), found " + e.what());
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    if (auto p = msg.find("syntax error"); p != std::string::npos) msg = msg.substr(p);
    throw InputError(path.string() + ":" + line_col_at(text, e.byte ? e.byte - 1 : 0) + ": expected " + what +
                     " in JSON, found " + msg);
  }
}

}  // namespace imgtool
