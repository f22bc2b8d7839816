// The HTTP `Link` header (RFC 8288, Web Linking), as registries send it to page
// tag lists (`Link: </v2/r/tags/list?last=a&n=1000>; rel="next"`).
//
// Data model: a header value is a comma-separated list of link-values
//   link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
//   link-param = token BWS [ "=" BWS ( token / quoted-string ) ]
// and one Link is its target (the URI-Reference as sent, not resolved: the
// caller resolves it against the URL it requested), its relation types and its
// other parameters.
//
// Contracts
//   - rel is a token or a quoted-string holding one or more relation types
//     separated by spaces ("next prev"); types and parameter names compare
//     case-insensitively (stored lower-case). Only the first `rel` of a
//     link-value counts (RFC 8288 §3.3); so does the first of any parameter.
//   - Commas and semicolons inside <…> and inside quoted strings are data.
//   - Empty list elements (", ,") are skipped (RFC 9110 §5.6.1).
//   - Anything else that does not follow the grammar throws imgtool::Error
//     naming the byte offset: a caller following links fails closed rather
//     than guessing (a missed `next` would silently truncate a listing).
//   - Linear in the input; no recursion, no regex.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgtool::image {

struct Link {
  std::string target;                         // the URI-Reference between < and >
  std::vector<std::string> rels;              // relation types, lower-case
  std::map<std::string, std::string> params;  // other parameters: lower-case name -> value (unquoted)
  bool has_rel(std::string_view rel) const;   // rel: lower-case
};

// Every link-value of a Link header value (several header fields joined with ", ").
std::vector<Link> parse_link_header(std::string_view value);

// The target of the one link with relation `rel` (lower-case), nullopt when
// there is none. Two such links with different targets throw imgtool::Error.
std::optional<std::string> find_link(const std::vector<Link>& links, std::string_view rel);

}  // namespace imgtool::image
