// Reading JSON imgtool did not write: a file a user handed us, a registry's body, a probe's
// output, a Job's log. Every failure names the file (and the line:col of a syntax error) and
// says what was expected, as one line thrown as InputError.
//
// Depth: nlohmann parses iteratively, but dump(), copies and every walk over a value recurse, so
// a few hundred KB of `[[[[…` would overflow the stack later, far from the parse. Every untrusted
// document is therefore refused at the parse when it nests deeper than kMaxJsonDepth (no
// document imgtool reads legitimately nests past a dozen levels).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace imgtool {

inline constexpr int kMaxJsonDepth = 100;

// "line:col" (1-based) of byte offset `byte` in `text`.
std::string line_col_at(const std::string& text, size_t byte);

// The byte offset of the bracket that opens level max_depth + 1 in `text` (strings skipped), or
// nullopt. One linear pass, no recursion; text that is not JSON is scanned the same way.
std::optional<size_t> json_too_deep_at(std::string_view text, int max_depth = kMaxJsonDepth);

// json::parse(text, nullptr, false) bounded: the discarded value on a syntax error AND on a
// document nested deeper than kMaxJsonDepth, so callers keep their one is_discarded() check.
nlohmann::json parse_json_or_discarded(std::string_view text);
nlohmann::ordered_json parse_ordered_json_or_discarded(std::string_view text);

// j[key] when j is an object holding it, else a null value: for walking documents imgtool did not
// write (a probe's output, a pod list) without a type_error on every missing or odd field.
const nlohmann::json& json_member(const nlohmann::json& j, const char* key);

// Parses `text` read from `name`; `expected` says what it should be ("valid JSON",
// "a nightly report in JSON"). Every nlohmann error becomes one InputError line
// "NAME:L:C: expected EXPECTED, found …": a syntax error at its byte, a number
// too large for a double (out_of_range.406) at that number, nesting past kMaxJsonDepth
// at the bracket that goes too deep.
nlohmann::json parse_json_text(const std::string& text, const std::string& name, const std::string& expected);

// Reads and parses `path`. `what` names the expected content in messages
// ("a nightly report"). Throws InputError "PATH[:L:C]: expected WHAT …, found …".
// A file larger than max_bytes is refused before it is read whole.
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what,
                              size_t max_bytes = size_t{64} << 20);

}  // namespace imgtool
