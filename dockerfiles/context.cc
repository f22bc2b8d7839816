#include "dockerfiles/context.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.h"
#include "core/hash.h"
#include "core/strings.h"

namespace imgtool::dockerfiles {
namespace {

namespace fs = std::filesystem;

// Wheel file names use the normalised project name: "paddlepaddle-gpu" ->
// "paddlepaddle_gpu" (PEP 427/503), compared case-insensitively.
std::string wheel_prefix(const std::string& requirement) {
  auto eq = requirement.find("==");
  std::string name = requirement.substr(0, std::min(eq, requirement.find('[')));
  std::string out;
  for (char c : name) out += (c == '-' || c == '.') ? '_' : static_cast<char>(std::tolower(c));
  return out + "-" + requirement.substr(eq + 2) + "-";
}

// A wheel file name's project (normalised: lower case, runs of -_. as '-', PEP 503) and version.
std::pair<std::string, std::string> wheel_name_version(const std::string& file, const std::string& cell_tag) {
  auto parts = strings::split(file, '-');
  if (parts.size() < 5 || !file.ends_with(".whl") || parts[0].empty() || parts[1].empty())
    throw InputError("cell " + cell_tag + ": " + strings::quoted(file) +
                     " is no wheel file name (expected NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)");
  return {strings::pep503_name(parts[0]), parts[1]};
}

}  // namespace

std::string wheel_lock(const std::vector<ContextFile>& files, const matrix::Cell& cell) {
  const std::string& cell_tag = cell.tag;
  // The pinned requirement's own project: only its pinned version (a wheelhouse may serve several cells).
  auto eq = cell.pip_requirement.find("==");
  std::string pinned =
      strings::pep503_name(cell.pip_requirement.substr(0, std::min(eq, cell.pip_requirement.find('['))));
  std::string pinned_version = eq == std::string::npos ? "" : cell.pip_requirement.substr(eq + 2);
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> by_name;  // name -> version, hashes
  for (const auto& f : files) {
    if (!f.dest.ends_with(".whl")) continue;
    auto [name, version] = wheel_name_version(fs::path(f.dest).filename().string(), cell_tag);
    if (name == pinned && version != pinned_version) continue;
    auto& [v, hashes] = by_name[name];
    if (!v.empty() && v != version)
      throw InputError("cell " + cell_tag + ": the wheelhouse holds " + name + " " + v + " and " + version +
                       "; a hash lock pins one version (remove the other wheel)");
    v = version;
    hashes.push_back(f.sha256);
  }
  std::string out;
  for (auto& [name, vh] : by_name) {
    out += name + "==" + vh.first;
    std::sort(vh.second.begin(), vh.second.end());
    for (const auto& h : vh.second) out += " --hash=sha256:" + h.substr(h.find(':') + 1);
    out += "\n";
  }
  return out;
}

std::vector<ContextFile> wheelhouse_files(const matrix::Cell& cell) {
  fs::path dir = cell.wheelhouse;
  if (!fs::is_directory(dir))
    throw InputError("cell " + cell.tag + ": wheelhouse " + strings::quoted(cell.wheelhouse) + " is not a folder");
  std::vector<ContextFile> files;
  for (auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".whl")
      files.push_back({e.path(), "wheels/" + e.path().filename().string(), ""});
  std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return a.dest < b.dest; });
  std::string want = "wheels/" + wheel_prefix(cell.pip_requirement);
  if (std::none_of(files.begin(), files.end(), [&](auto& f) { return strings::lower(f.dest).rfind(want, 0) == 0; }))
    throw InputError("cell " + cell.tag + ": wheelhouse " + strings::quoted(cell.wheelhouse) + " has no wheel for " +
                     strings::quoted(cell.pip_requirement) + " (expected a file " +
                     strings::quoted(want.substr(7) + "*.whl") + ")");
  for (auto& f : files) f.sha256 = "sha256:" + sha256_file_hex(f.source.string());
  return files;
}

size_t place_context_files(const std::vector<ContextFile>& files, const fs::path& cell_dir) {
  size_t linked = 0;
  for (auto& f : files) {
    fs::path dest = cell_dir / f.dest;
    fs::create_directories(dest.parent_path());
    std::error_code ec;
    fs::create_hard_link(f.source, dest, ec);
    if (!ec) {
      ++linked;
      continue;
    }
    fs::copy_file(f.source, dest, fs::copy_options::overwrite_existing);  // other filesystem
  }
  return linked;
}

}  // namespace imgtool::dockerfiles
