// The knowledge base (matrix/kb.h): its files loaded in order and hashed into its version. Each fact
// family's readers and queries have a file of their own (matrix/kb_read.h names them).
#include "matrix/kb.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <optional>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/paths.h"
#include "core/strings.h"
#include "matrix/kb_read.h"
#include "matrix/yaml_doc.h"

namespace imgtool::matrix {

using namespace kb_read;

bool VersionRange::contains(const Version& v) const {
  auto f = Version::parse(from), t = Version::parse(to);
  if (!f || !t) return false;
  // Compare on the range's precision: "11.8" contains 11.8.0 and 11.8.89.
  Version vf = *Version::parse(v.truncated(f->parts.size()));
  Version vt = *Version::parse(v.truncated(t->parts.size()));
  return *f <= vf && vt <= *t;
}

std::string VersionRange::text() const { return from == to ? from : from + "-" + to; }

void KbLoader::version(const YamlDoc& d, KnowledgeBase& kb) {
  d.check_keys(d.root(), {"version", "released", "note"}, "kb.yaml");
  kb.version_ = d.str(d.root(), "version");
  kb.released_ = d.str(d.root(), "released");
  if (!iso_date(kb.released_))
    d.fail(d.root()["released"],
           "expected the day the facts were last checked, YYYY-MM-DD, found '" + kb.released_ + "'");
}

namespace {

using FileLoader = std::function<void(const YamlDoc&, KnowledgeBase&)>;
// The KB files, in the order they are hashed into version().
const std::vector<std::pair<std::string, FileLoader>>& kb_files() {
  static const std::vector<std::pair<std::string, FileLoader>> files = {
      {"kb.yaml", KbLoader::version},
      {"cuda.yaml", KbLoader::cuda},
      {"arch.yaml", KbLoader::arch},
      {"gpus.yaml", KbLoader::gpus},
      {"cudnn.yaml", KbLoader::cudnn},
      {"paddle.yaml", KbLoader::paddle},
      {"python.yaml", KbLoader::python},
      {"images.yaml", KbLoader::images},
      {"os.yaml", KbLoader::os},
      {"libraries.yaml", KbLoader::libraries},
      {"cuda_wheels.yaml", KbLoader::cuda_wheels},
      {"tensorrt.yaml", KbLoader::tensorrt},
  };
  return files;
}

}  // namespace

KnowledgeBase KnowledgeBase::load(const std::string& dir) {
  KnowledgeBase kb;
  kb.dir_ = dir;
  Sha256 h;
  for (const auto& [name, loader] : kb_files()) {
    std::string path = dir + "/" + name;
    if (!std::filesystem::exists(path)) throw InputError(path + ": expected a knowledge-base file, found none");
    std::string text = read_file(path);
    h.update(name);
    h.update(text);
    loader(YamlDoc::parse(text, path), kb);
  }
  kb.version_ += "+sha256:" + h.hex().substr(0, 12);
  return kb;
}

KnowledgeBase KnowledgeBase::load_default() { return load(data_dir() + "/matrix/kb"); }
}  // namespace imgtool::matrix
