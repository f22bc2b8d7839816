#include "core/fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace imgtool {

void write_file_atomic(const fs::path& path, std::string_view content, unsigned mode) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp.string());
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw Error("cannot write " + tmp.string());
  }
  ::chmod(tmp.c_str(), mode);
  fs::rename(tmp, path);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

StagingDir::StagingDir(fs::path final_dir) : final_(std::move(final_dir)) {
  fs::path parent = final_.has_parent_path() ? final_.parent_path() : fs::path(".");
  fs::create_directories(parent);
  tmp_ = parent / ("." + final_.filename().string() + ".tmp-" + std::to_string(::getpid()));
  fs::remove_all(tmp_);
  fs::create_directories(tmp_);
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
  committed_ = true;
  if (had_old) fs::remove_all(old);
}

}  // namespace imgtool
