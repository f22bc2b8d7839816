// The grammar of Docker image names (distribution/reference), without regex:
//   name      := [domain "/"] path
//   domain    := host-component ("." host-component)* [":" port] | "[" ipv6 "]" [":" port]
//   path      := component ("/" component)*,  component := [a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*
//   tag       := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
// The first "/"-part of a name is a domain when it has a "." or ":", is "localhost", or has
// upper case (as Docker's splitDockerDomain decides). Used where a name Docker would refuse
// later must be refused now: matrix files (repository, base_image) and image references.
// Hand-written (no std::regex): linear time and no recursion, whatever the input length.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace imgtool::refname {

bool is_path_component(std::string_view s);
bool is_path(std::string_view s);  // component ("/" component)*
bool is_tag(std::string_view s);
bool is_domain(std::string_view s);  // HOST[:PORT] or [IPV6][:PORT]
// Whether a name's first "/"-part is its domain (".", ":", "localhost" or upper case), as above.
bool looks_like_domain(std::string_view first);

// Checks a Docker image name "[DOMAIN/]PATH" (with_tag: optionally ":TAG" and/or
// "@sha256:<hex>" after it). Returns what is wrong ("expected …, found …"), or nothing.
std::optional<std::string> check_name(std::string_view s, bool with_tag);

}  // namespace imgtool::refname
