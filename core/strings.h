// Small string helpers, once: case, joining, trimming, quoting and XML escaping.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace imgtool::strings {

std::string lower(std::string_view s);
std::string upper(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string trim(std::string_view s);  // blanks (space, tab, CR, LF) at both ends
// The parts between `sep` (empty parts kept: "a,,b" -> {"a", "", "b"}; "" -> {""}).
std::vector<std::string> split(std::string_view s, char sep);
// Lines without their "\n" / "\r\n" (a last line without a newline counts; no empty last line).
std::vector<std::string> split_lines(std::string_view s);
// 'value' for an error message: whole up to 120 bytes, else its first 60 and its size
// ('abc…' (200000 bytes)), so a message about a value of any length stays one readable line.
std::string quoted(std::string_view value);
// &, <, >, " and ' escaped: safe in XML/HTML text and attribute values.
std::string xml_escape(std::string_view s);

}  // namespace imgtool::strings
