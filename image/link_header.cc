#include "image/link_header.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/strings.h"

namespace imgtool::image {
namespace {

// RFC 9110 §5.6.2 tchar.
bool is_tchar(unsigned char c) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return std::isalnum(c) || kExtra.find(static_cast<char>(c)) != std::string_view::npos;
}

// A cursor over one header value; every refusal names the offset.
struct LinkCursor {
  std::string_view s;
  size_t i = 0;

  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  void skip_ows() {
    while (!done() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  [[noreturn]] void fail(const std::string& expected) const {
    std::string found = done() ? "the end" : strings::quoted(s.substr(i, 20));
    throw Error("Link header: expected " + expected + " at offset " + std::to_string(i) + ", found " + found +
                " (RFC 8288)");
  }
  void expect(char c, const char* what) {
    if (peek() != c) fail(what);
    ++i;
  }

  std::string target() {
    expect('<', "'<' starting a link target");
    size_t end = s.find('>', i);
    if (end == std::string_view::npos) fail("'>' closing the link target");
    std::string t(s.substr(i, end - i));
    i = end + 1;
    return t;
  }

  std::string token(const char* what) {
    size_t b = i;
    while (!done() && is_tchar(static_cast<unsigned char>(s[i]))) ++i;
    if (i == b) fail(what);
    return std::string(s.substr(b, i - b));
  }

  // quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE, returned unescaped.
  std::string quoted() {
    std::string v;
    for (++i; !done() && s[i] != '"'; ++i) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '\\' && i + 1 < s.size()) c = static_cast<unsigned char>(s[++i]);
      if ((c < 0x20 && c != '\t') || c == 0x7f) fail("a character allowed in a quoted string");
      v += static_cast<char>(c);
    }
    expect('"', "'\"' closing a quoted string");
    return v;
  }

  // link-param after its ';': name, and the value ("" when there is none).
  std::pair<std::string, std::string> param() {
    skip_ows();
    std::string name = strings::lower(token("a parameter name"));
    skip_ows();
    if (peek() != '=') return {name, ""};
    ++i;
    skip_ows();
    return {name, peek() == '"' ? quoted() : token("a parameter value (token or quoted string)")};
  }
};

// "next  prev" -> {"next", "prev"}, lower-case.
std::vector<std::string> relation_types(const std::string& v) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < v.size()) {
    size_t e = v.find_first_of(" \t", i);
    if (e == std::string::npos) e = v.size();
    if (e > i) out.push_back(strings::lower(v.substr(i, e - i)));
    i = e + 1;
  }
  return out;
}

Link link_value(LinkCursor& c) {
  Link l;
  l.target = c.target();
  bool have_rel = false;
  for (c.skip_ows(); c.peek() == ';'; c.skip_ows()) {
    ++c.i;
    auto [name, value] = c.param();
    if (name == "rel") {
      if (!have_rel) l.rels = relation_types(value);
      have_rel = true;
    } else {
      l.params.emplace(name, value);  // the first occurrence wins
    }
  }
  return l;
}

}  // namespace

bool Link::has_rel(std::string_view rel) const { return std::find(rels.begin(), rels.end(), rel) != rels.end(); }

std::vector<Link> parse_link_header(std::string_view value) {
  LinkCursor c{value};
  std::vector<Link> out;
  while (true) {
    while (c.skip_ows(), c.peek() == ',') ++c.i;  // empty list elements
    if (c.done()) return out;
    out.push_back(link_value(c));
    c.skip_ows();
    if (!c.done() && c.peek() != ',') c.fail("',' or ';' after a link");
  }
}

std::optional<std::string> find_link(const std::vector<Link>& links, std::string_view rel) {
  std::optional<std::string> found;
  for (const auto& l : links) {
    if (!l.has_rel(rel)) continue;
    if (found && *found != l.target)
      throw Error("Link header: expected at most one rel=\"" + std::string(rel) + "\" target, found " +
                  strings::quoted(*found) + " and " + strings::quoted(l.target));
    found = l.target;
  }
  return found;
}

}  // namespace imgtool::image
