#include "core/strings.h"

#include <cctype>
#include <ctime>

namespace imgtool::strings {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) (i ? out.append(sep) : out).append(parts[i]);
  return out;
}

std::string trim(std::string_view s) {
  const char* blanks = " \t\r\n";
  auto b = s.find_first_not_of(blanks);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(blanks) - b + 1));
}

std::string quoted(std::string_view value) {
  if (value.size() <= 120) return "'" + printable(value) + "'";
  size_t cut = 60;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return "'" + printable(value.substr(0, cut)) + "…' (" + std::to_string(value.size()) + " bytes)";
}

namespace {

// The code point of the valid UTF-8 sequence starting at s[i] and its length; length 0 when
// the bytes there are not one (a stray continuation byte, an overlong form, a surrogate,
// past U+10FFFF or cut short).
size_t utf8_at(std::string_view s, size_t i, char32_t& cp) {
  auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned char c = b(0);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? (c <= 0xEF ? 3 : 0) : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0) return 0;
  cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  return overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF ? 0 : n;
}

std::string hex_escape(const char* prefix, unsigned v, int digits) {
  static const char* hex = "0123456789abcdef";
  std::string out = prefix;
  for (int d = digits - 1; d >= 0; --d) out += hex[(v >> (4 * d)) & 0xF];
  return out;
}

// Code points that are valid text but hide or reorder what a reader sees: bidirectional
// overrides, embeddings, isolates and marks (a "Trojan Source" line reads other than it runs),
// zero-width characters (a name that looks like another) and the Unicode line/paragraph separators.
struct HiddenRange {
  char32_t first, last;
};
constexpr HiddenRange kHidden[] = {
    {0x0000, 0x009F},  // C0, DEL, C1
    {0x061C, 0x061C},  // ARABIC LETTER MARK
    {0x200B, 0x200F},  // zero width space/non-joiner/joiner, LRM, RLM
    {0x2028, 0x202E},  // line/paragraph separators, LRE RLE PDF LRO RLO
    {0x2060, 0x2064},  // word joiner, invisible operators
    {0x2066, 0x2069},  // LRI RLI FSI PDI
    {0xFEFF, 0xFEFF},  // zero width no-break space (BOM)
    {0xFFFE, 0xFFFF},  // not XML characters
};

bool hidden(char32_t cp) {
  for (const auto& r : kHidden)
    if (cp >= r.first && cp <= r.last) return true;
  return false;
}

std::string printable_text(std::string_view s, bool keep_lines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += s[i++];
    } else if (keep_lines && (c == '\n' || c == '\t')) {
      out += s[i++];
    } else if (keep_lines && c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') {
      ++i;  // CRLF -> LF
    } else if (c < 0x80) {
      out += hex_escape("\\x", c, 2), ++i;  // C0, DEL
    } else if (char32_t cp; size_t n = utf8_at(s, i, cp)) {
      out += hidden(cp) ? hex_escape("\\u", static_cast<unsigned>(cp), 4) : std::string(s.substr(i, n));
      i += n;
    } else {
      out += hex_escape("\\x", c, 2), ++i;  // not UTF-8
    }
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text) { return printable_text(text, false); }
std::string printable_lines(std::string_view text) { return printable_text(text, true); }

std::string url_for_message(std::string_view url) {
  size_t q = url.find_first_of("?#");
  return printable(q == std::string_view::npos ? url : std::string(url.substr(0, q)) + "?…");
}

std::string xml_escape(std::string_view raw) {
  std::string s = printable_lines(raw);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = s.find(sep, start)) != std::string_view::npos; start = at + 1)
    out.emplace_back(s.substr(start, at - start));
  out.emplace_back(s.substr(start));
  return out;
}

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    std::string_view line = s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.emplace_back(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

std::string pep503_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool sep = c == '-' || c == '_' || c == '.';
    if (!sep)
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (out.empty() || out.back() != '-')
      out += '-';
  }
  return out;
}

std::string utc_rfc3339(int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace imgtool::strings
