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

std::optional<size_t> json_too_deep_at(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

const nlohmann::json& json_member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}

nlohmann::json parse_json_or_discarded(std::string_view text) {
  if (json_too_deep_at(text)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

nlohmann::ordered_json parse_ordered_json_or_discarded(std::string_view text) {
  if (json_too_deep_at(text)) return nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  return nlohmann::ordered_json::parse(text, nullptr, false);
}

nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what, size_t max_bytes) {
  std::error_code ec;
  if (auto size = std::filesystem::file_size(path, ec); !ec && size > max_bytes)
    throw InputError(path.string() + ": expected " + what + " of at most " + std::to_string(max_bytes) +
                     " bytes, found " + std::to_string(size) + " bytes");
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw InputError(path.string() + ": expected a readable file (" + what + "), found " + e.what());
  }
  return parse_json_text(text, path.string(), what + " in JSON");
}

nlohmann::json parse_json_text(const std::string& text, const std::string& name, const std::string& expected) {
  if (auto at = json_too_deep_at(text))
    throw InputError(name + ":" + line_col_at(text, *at) + ": expected " + expected + " nested at most " +
                     std::to_string(kMaxJsonDepth) + " levels deep, found deeper nesting");
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
