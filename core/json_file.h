// Reading a JSON file a user handed us: every failure names the file (and the line:col
// of a syntax error) and says what was expected, as one line thrown as InputError.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace imgtool {

// "line:col" (1-based) of byte offset `byte` in `text`.
std::string line_col_at(const std::string& text, size_t byte);

// Parses `text` read from `name`; `expected` says what it should be ("valid JSON",
// "a nightly report in JSON"). Every nlohmann error becomes one InputError line
// "NAME:L:C: expected EXPECTED, found …": a syntax error at its byte, a number
// too large for a double (out_of_range.406) at that number.
nlohmann::json parse_json_text(const std::string& text, const std::string& name, const std::string& expected);

// Reads and parses `path`. `what` names the expected content in messages
// ("a nightly report"). Throws InputError "PATH[:L:C]: expected WHAT …, found …".
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what);

}  // namespace imgtool
