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
  if (::fchmod(fd_, mode_) != 0 || ::fsync(fd_) != 0) throw Error("cannot write " + tmp_.string() + ": " + std::strerror(errno));
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
  fs::path parent = final_.has_parent_path() ? final_.parent_path() : fs::path(".");
  fs::create_directories(parent);
  tmp_ = make_private_dir(parent, "." + final_.filename().string() + ".tmp-");
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
