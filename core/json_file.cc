#include "core/json_file.h"

#include "core/error.h"
#include "core/fs.h"

namespace imgtool {

std::string line_col_at(const std::string& text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
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
  return parse_json_text(text, path.string(), what + " in JSON");
}

nlohmann::json parse_json_text(const std::string& text, const std::string& name, const std::string& expected) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    if (auto p = msg.find("syntax error"); p != std::string::npos) msg = msg.substr(p);
    throw InputError(name + ":" + line_col_at(text, e.byte ? e.byte - 1 : 0) + ": expected " + expected + ", found " +
                     msg);
  } catch (const nlohmann::json::exception& e) {  // out_of_range.406: "number overflow parsing '1E999'"
    std::string msg = e.what();
    size_t at = 0, q = msg.find('\''), q2 = msg.rfind('\'');
    if (q != std::string::npos && q2 > q) at = text.find(msg.substr(q + 1, q2 - q - 1));
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw InputError(name + ":" + line_col_at(text, at == std::string::npos ? 0 : at) + ": expected " + expected +
                     ", found " + msg);
  }
}

}  // namespace imgtool
