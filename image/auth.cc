#include "image/auth.h"

#include <openssl/evp.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/json_file.h"
#include "core/process.h"
#include "image/reference.h"

namespace imgtool::image {
namespace {

void skip_ws(const std::string& s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
}

std::string read_token(const std::string& s, size_t& i) {
  size_t b = i;
  while (i < s.size() && s[i] != '=' && s[i] != ' ' && s[i] != ',' && s[i] != '\t') ++i;
  return s.substr(b, i - b);
}

std::string read_value(const std::string& s, size_t& i) {
  if (i < s.size() && s[i] == '"') {
    std::string v;
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      v += s[i];
    }
    ++i;
    return v;
  }
  size_t b = i;
  while (i < s.size() && s[i] != ',' && s[i] != ' ') ++i;
  return s.substr(b, i - b);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::filesystem::path docker_config_path() {
  if (const char* d = std::getenv("DOCKER_CONFIG"); d && *d) return std::filesystem::path(d) / "config.json";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : "/") / ".docker" / "config.json";
}

std::optional<Credentials> from_helper(const std::string& helper, const std::string& host) {
  std::string prog = "docker-credential-" + helper;
  if (!have_program(prog)) return std::nullopt;
  RunOptions o;
  o.stdin_data = host;
  o.timeout = std::chrono::seconds(30);
  auto r = run({prog, "get"}, o);
  if (!r.ok()) return std::nullopt;  // "credentials not found" is a non-zero exit
  auto j = parse_json_or_discarded(r.out);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  Credentials c;
  std::string user = j.value("Username", ""), secret = j.value("Secret", "");
  if (user == "<token>")
    c.identity_token = secret;
  else
    c.username = user, c.password = secret;
  if (c.empty()) return std::nullopt;
  return c;
}

std::optional<Credentials> from_auths(const nlohmann::json& auths, const std::string& host) {
  for (const std::string& key : {host, "https://" + host, "http://" + host}) {
    if (!auths.contains(key)) continue;
    const auto& e = auths[key];
    Credentials c;
    std::string userpass = base64_decode(e.value("auth", ""));
    if (auto colon = userpass.find(':'); colon != std::string::npos) {
      c.username = userpass.substr(0, colon);
      c.password = userpass.substr(colon + 1);
    }
    if (e.contains("username")) c.username = e.value("username", "");
    if (e.contains("password")) c.password = e.value("password", "");
    c.identity_token = e.value("identitytoken", "");
    if (!c.empty()) return c;
  }
  return std::nullopt;
}

}  // namespace

std::vector<Challenge> parse_challenges(const std::string& h) {
  std::vector<Challenge> out;
  size_t i = 0;
  while (true) {
    skip_ws(h, i);
    if (i >= h.size()) break;
    std::string tok = read_token(h, i);
    if (i < h.size() && h[i] == '=' && !out.empty()) {  // a parameter of the current challenge
      ++i;
      out.back().params[lower(tok)] = read_value(h, i);
    } else if (!tok.empty()) {
      out.push_back({lower(tok), {}});
    } else {
      ++i;
    }
  }
  return out;
}

CredentialLookup find_credentials(const std::string& registry_host) {
  // Docker keeps Docker Hub's credentials under its v1 index URL, whatever API host serves the pull.
  const std::string host = is_docker_hub(registry_host) ? "https://index.docker.io/v1/" : registry_host;
  auto path = docker_config_path();
  if (!std::filesystem::exists(path)) return {};
  auto j = parse_json_or_discarded(read_file(path));
  if (j.is_discarded() || !j.is_object())
    throw InputError(path.string() + ": expected a JSON object (Docker config), found invalid JSON");
  if (j.contains("credHelpers") && j["credHelpers"].contains(host)) {
    std::string helper = j["credHelpers"][host].get<std::string>();
    return {from_helper(helper, host), "credHelpers (docker-credential-" + helper + ")"};
  }
  if (j.contains("credsStore")) {
    std::string helper = j["credsStore"].get<std::string>();
    if (auto c = from_helper(helper, host)) return {c, "credsStore (docker-credential-" + helper + ")"};
  }
  if (j.contains("auths")) {
    if (auto c = from_auths(j["auths"], host)) return {c, path.string() + " auths"};
  }
  return {};
}

std::string base64_encode(const std::string& s) {
  std::string out(4 * ((s.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string base64_decode(const std::string& s) {
  if (s.empty()) return {};
  std::string out(3 * (s.size() / 4) + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  if (n < 0) return {};
  size_t pad = 0;
  if (s.size() >= 1 && s[s.size() - 1] == '=') ++pad;
  if (s.size() >= 2 && s[s.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

}  // namespace imgtool::image
