// Small string helpers, once: case, joining, trimming, quoting and XML escaping.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace imgtool::strings {

std::string lower(std::string_view s);
std::string upper(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string trim(std::string_view s);
// Seconds since 1970 as RFC 3339 UTC, to the second: 1767225600 -> "2026-01-01T00:00:00Z".
std::string utc_rfc3339(int64_t seconds);  // blanks (space, tab, CR, LF) at both ends
// A Python project name as PEP 503 compares them: lower case, each run of -_. one '-'
// ("PaddlePaddle_GPU" -> "paddlepaddle-gpu").
std::string pep503_name(std::string_view name);
// The parts between `sep` (empty parts kept: "a,,b" -> {"a", "", "b"}; "" -> {""}).
std::vector<std::string> split(std::string_view s, char sep);
// Lines without their "\n" / "\r\n" (a last line without a newline counts; no empty last line).
std::vector<std::string> split_lines(std::string_view s);
// 'value' for an error message: whole up to 120 bytes, else its first 60 and its size
// ('abc…' (200000 bytes)), so a message about a value of any length stays one readable line;
// printable() (below), so the value cannot be a terminal escape sequence.
std::string quoted(std::string_view value);
// printable() first (XML 1.0 forbids most C0 characters even as references), then &, <, >, "
// and ' escaped: well-formed in XML/HTML text and attribute values, whatever `s` holds.
std::string xml_escape(std::string_view s);

// The one filter for untrusted text (registry messages, build output, probe reasons, names
// from images and registries) on its way to a terminal, a report or a JSON message: every
// control character — C0 (U+0000–U+001F), DEL, C1 (U+0080–U+009F) — and every byte that is
// not part of valid UTF-8 becomes a visible escape (ESC -> \x1b, a bad byte 0xff -> \xff,
// U+009B -> \u009b; U+FFFE/U+FFFF, illegal in XML, -> \ufffe), and so does every code point
// that hides or reorders text (bidi overrides and isolates U+202A–202E, U+2066–2069, marks,
// zero-width characters, U+2028/2029: U+202E -> \u202e), so an ESC sequence cannot repaint a
// terminal, a name cannot read backwards or pass for another, and the text is legal XML data. Nothing is cut (a long
// value is kept whole), other text — backslashes included — is unchanged, and printable(printable(s))
// == printable(s). printable() makes one line (tab and newline escaped too); printable_lines()
// keeps tab and newline (a CR before a newline is dropped), for multi-line text.
std::string printable(std::string_view text);
std::string printable_lines(std::string_view text);

// `url` for a message or a report: its query and fragment replaced by "?…" (a pre-signed
// URL's X-Amz-Signature, a token), then printable(). "https://s3/b/blob?X-Amz-Signature=…"
// -> "https://s3/b/blob?…".
std::string url_for_message(std::string_view url);

}  // namespace imgtool::strings
