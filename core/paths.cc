#include "core/paths.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace imgtool {

// IMGTOOL_DATA_DIR_DEFAULT is defined for this one file only (core/CMakeLists.txt): an absolute
// path in every TU's flags would make each checkout miss the compiler cache.
std::string data_dir() {
  const char* v = std::getenv("IMGTOOL_DATA_DIR");
  if (v && *v) return v;
  return IMGTOOL_DATA_DIR_DEFAULT;
}

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : "";
}

std::string account_home() {
  if (std::string h = env("HOME"); !h.empty()) return h;
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir && *pw->pw_dir) return pw->pw_dir;
  throw InputError(
      "cache folder: expected $HOME, $XDG_CACHE_HOME or $IMGTOOL_CACHE, found none set and no home "
      "directory for uid " +
      std::to_string(::geteuid()) + "; set IMGTOOL_CACHE=/path/to/private/folder");
}

std::string octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

}  // namespace

std::string cache_dir() {
  std::string dir = env("IMGTOOL_CACHE");
  if (dir.empty() && !env("XDG_CACHE_HOME").empty()) dir = env("XDG_CACHE_HOME") + "/imgtool";
  if (dir.empty()) dir = account_home() + "/.cache/imgtool";
  ensure_private_dir(dir);
  return dir;
}

void ensure_private_dir(const std::string& dir) {
  std::filesystem::path p(dir);
  if (p.has_parent_path() && p.parent_path() != p) std::filesystem::create_directories(p.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw InputError(dir + ": cannot create the folder: " + std::strerror(errno));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(dir + ": expected a folder, found " + (errno == ENOENT ? "nothing" : "something else"));
  if (st.st_uid != ::geteuid())
    throw InputError(dir + ": expected a folder owned by uid " + std::to_string(::geteuid()) + ", found owner uid " +
                     std::to_string(st.st_uid) +
                     " (someone else's folder: choose another with IMGTOOL_CACHE or --state)");
  if (st.st_mode & 022)
    throw InputError(dir + ": expected a folder only its owner can write (mode 0700), found mode " + octal(st.st_mode) +
                     "; fix: chmod 700 " + dir);
}

}  // namespace imgtool
