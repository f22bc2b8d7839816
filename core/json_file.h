// Reading a JSON file a user handed us: every failure names the file (and the line:col
// of a syntax error) and says what was expected, as one line thrown as InputError.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace imgtool {

// "line:col" (1-based) of byte offset `byte` in `text`.
std::string line_col_at(const std::string& text, size_t byte);

// Reads and parses `path`. `what` names the expected content in messages
// ("a nightly report"). Throws InputError "PATH[:L:C]: expected WHAT …, found …".
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what);

}  // namespace imgtool
