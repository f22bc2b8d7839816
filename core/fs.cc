#include "core/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace imgtool {

namespace {

void write_all(int fd, std::string_view content, const fs::path& tmp) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    content.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

AtomicFile::AtomicFile(const fs::path& path, unsigned mode) : path_(path), mode_(mode) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  // mkstemp: a fresh name, created O_EXCL (never an existing file or a planted
  // symlink), mode 0600 until the final mode is set on the descriptor.
  std::string tmp = path.string() + ".tmp-XXXXXX";
  fd_ = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot create a temporary file beside " + path.string() + ": " + std::strerror(errno));
  tmp_ = tmp;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::write(std::string_view bytes) { write_all(fd_, bytes, tmp_); }

void AtomicFile::commit(const fs::path& to) {
  const fs::path& dest = to.empty() ? path_ : to;
  if (::fchmod(fd_, mode_) != 0 || ::fsync(fd_) != 0)
    throw Error("cannot write " + tmp_.string() + ": " + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  fs::rename(tmp_, dest, ec);
  if (ec) throw Error("cannot rename " + tmp_.string() + " to " + dest.string() + ": " + ec.message());
  committed_ = true;
  fsync_dir(dest.parent_path());  // the rename itself survives a crash
}

void write_file_atomic(const fs::path& path, std::string_view content, unsigned mode) {
  AtomicFile f(path, mode);
  f.write(content);
  f.commit();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {
// "out/", "out/." and "./out" all name the folder "out": without this, "out/" had an empty
// file name, so the staging folder went inside it and the final rename failed, leaving it.
fs::path folder_name(const fs::path& p) {
  fs::path n = p.lexically_normal();
  if (!n.has_filename() && n.has_relative_path()) n = n.parent_path();
  if (n.empty() || n.filename() == "." || n.filename() == ".." || !n.has_relative_path())
    throw InputError("'" + p.string() + "': expected a folder path with a name (like out or out/), found none");
  return n;
}
}  // namespace

namespace {

fs::path make_private_dir(const fs::path& parent, const std::string& prefix) {
  std::string tmpl = (parent / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    throw Error("cannot create a private temporary folder in " + parent.string() + ": " + std::strerror(errno));
  return tmpl;
}

// Why no folder can be made at a place the user named (errno of mkdir/mkdtemp there), or
// nullptr when the failure is not the place's (a full disk, too many files: exit 1, retry later).
const char* place_refuses(int e) {
  switch (e) {
    case EACCES:
    case EPERM:
      return "permission denied";
    case EROFS:
      return "a read-only file system";
    case ENOENT:
      return "no such folder, or one that takes no new folders (like /proc)";
    case ENOTDIR:
      return "a file where a folder should be";
    default:
      return nullptr;
  }
}

// The staging folder beside `final` (StagingDir): a place that refuses new folders is the
// user's choice of path, so InputError naming it; other failures stay Error.
fs::path make_staging_dir(const fs::path& final) {
  fs::path parent = final.has_parent_path() ? final.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string tmpl = (parent / ("." + final.filename().string() + ".tmp-XXXXXX")).string();
  int e = ec.value();
  if (!e && !::mkdtemp(tmpl.data())) e = errno;
  if (!e) return tmpl;
  if (const char* why = place_refuses(e))
    throw InputError("'" + final.string() + "': expected a place where a folder can be made, found " + parent.string() +
                     ": " + why);
  throw Error("cannot create a folder beside " + final.string() + " in " + parent.string() + ": " + std::strerror(e));
}

}  // namespace

PrivateTempDir::PrivateTempDir(const std::string& prefix, const fs::path& parent)
    : path_(make_private_dir(parent.empty() ? fs::temp_directory_path() : parent, prefix)) {
  on_signal_.hold(path_);
}

PrivateTempDir::~PrivateTempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

// The staging folder is made by mkdtemp beside the final one (same filesystem: commit() is a
// rename), so no one can plant it or a link in its place.
StagingDir::StagingDir(fs::path final_dir) : final_(folder_name(final_dir)) {
  tmp_ = make_staging_dir(final_);
  on_signal_.hold(tmp_);
  fs::permissions(tmp_, fs::perms(0755));  // the output folder it becomes is meant to be read
}

StagingDir::~StagingDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
}

void StagingDir::commit() {
  fs::path old = final_;
  old += ".old-" + std::to_string(::getpid());
  bool had_old = fs::exists(final_);
  if (had_old) fs::rename(final_, old);
  fs::rename(tmp_, final_);
  on_signal_.release();  // the folder is the output now: a signal leaves it
  committed_ = true;
  if (had_old) fs::remove_all(old);
}

}  // namespace imgtool
