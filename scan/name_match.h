// The file and folder names gather_facts() recognises, matched by plain
// string code, never std::regex: a layer's paths are hostile input (a 50 KB
// path made libstdc++'s recursive regex overflow the stack), and these
// patterns are simple enough to state exactly. Each function gives the
// pattern it implements; inputs are normalised absolute paths (contents_tree.h).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace imgtool::scan::names {

// "python3.11" -> "3.11" (python(3\.\d+)).
std::optional<std::string> python_dir(std::string_view component);

// ^(?:/.*)?/lib/python(3\.\d+)/os\.py$ -> the version.
std::optional<std::string> stdlib_python(std::string_view path);

// ^(.*/lib/python(3\.\d+)/(?:site|dist)-packages)/.+$ (the LAST such folder).
struct SitePackages {
  std::string dir;     // ".../lib/python3.11/site-packages"
  std::string python;  // "3.11"
};
std::optional<SitePackages> site_packages(std::string_view path);

// ^(.*)/(paddlepaddle(?:[_-][a-z0-9]+)?)-([^/-]+)\.dist-info$
struct Dist {
  std::string parent, name, version;
};
std::optional<Dist> paddle_dist(std::string_view path);

// `prefix` + \d+(?:\.\d+)*  ("libcudart.so." + "12.6.77") -> "12.6.77".
std::optional<std::string> versioned(std::string_view base, std::string_view prefix);

// ^NAME(?:_cu\d+)?(?:_libs)?-(\d+(?:\.\d+)*)\.dist-info$ ("_libs" only if allow_libs) -> the version.
std::optional<std::string> lib_dist(std::string_view base, std::string_view name, bool allow_libs);

// First line of a pyvenv.cfg matching \s*version(?:_info)?\s*=\s*(\d+\.\d+) -> "3.11".
std::optional<std::string> venv_version(std::string_view text);

// The first NAME\s*=\s*'([^']*)' in a Python source ("" if none).
std::string py_string_var(std::string_view text, std::string_view name);

}  // namespace imgtool::scan::names
