// Registry credentials and authentication challenges.
//
//   Credentials        what a user has for one registry host (never printed).
//   Challenge          one parsed `WWW-Authenticate` challenge (Basic or Bearer).
//   find_credentials   Docker's lookup order in $DOCKER_CONFIG/config.json
//                      (default ~/.docker/config.json):
//                        credHelpers[host] -> credsStore -> auths[host]
//                      A helper is `docker-credential-<name> get` (host on stdin,
//                      {"ServerURL","Username","Secret"} on stdout); Username
//                      "<token>" means Secret is an identity token.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace imgtool::image {

struct Credentials {
  std::string username;
  std::string password;
  std::string identity_token;  // OAuth2 refresh token (identitytoken / "<token>")
  bool empty() const { return username.empty() && password.empty() && identity_token.empty(); }
};

struct Challenge {
  std::string scheme;                         // lower-case: "basic", "bearer"
  std::map<std::string, std::string> params;  // realm, service, scope, error ...
};

// Parses a WWW-Authenticate header value (one or more challenges).
std::vector<Challenge> parse_challenges(const std::string& header);

// Where the lookup happened, for messages: "credHelpers[host] (docker-credential-x)" etc.
struct CredentialLookup {
  std::optional<Credentials> creds;
  std::string source;
};

// Looks up credentials for `host` ("registry.corp:5000"; Docker Hub's API hosts under the key Docker
// writes for them, "https://index.docker.io/v1/"). Missing config = none.
// Throws imgtool::InputError if config.json is not valid JSON.
CredentialLookup find_credentials(const std::string& host);

// Base64 (standard alphabet, padded) for Basic auth.
std::string base64_encode(const std::string& s);
std::string base64_decode(const std::string& s);

}  // namespace imgtool::image
