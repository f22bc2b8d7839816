#include "matrix/matrix_file.h"

#include <filesystem>
#include <functional>
#include <set>

#include "core/error.h"
#include "core/hash.h"
#include "core/refname.h"
#include "matrix/tag_template.h"
#include "matrix/yaml_doc.h"

namespace imgtool::matrix {

namespace {

const std::set<std::string> kSettingKeys = {"repository",    "base_image", "base_digest",   "pip_requirement",
                                            "pip_index_url", "wheelhouse", "template",      "build",
                                            "python_from",   "cuda_base",  "tensorrt_index"};

using ValueCheck = std::function<void(const YamlDoc&, const YAML::Node&, const KnowledgeBase&)>;

void one_of(const YamlDoc& d, const YAML::Node& n, const std::set<std::string>& allowed, const std::string& what) {
  if (n.IsScalar() && allowed.count(n.Scalar())) return;
  std::string list;
  for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  d.fail(n, "expected " + what + " (" + list + "), found " + describe(n));
}

template <class Known>
void known_version(const YamlDoc& d, const YAML::Node& n, const std::string& what, Known known,
                   const std::string& file) {
  std::string v = d.version_of(n);
  if (!known(v)) d.fail(n, "expected a " + what + " listed in the knowledge base (" + file + "), found '" + v + "'");
}

// How each axis value is validated; the table also defines which axes exist.
const std::map<std::string, ValueCheck>& axis_checks() {
  static const std::map<std::string, ValueCheck> t = {
      {"paddle",
       [](auto& d, auto& n, auto& kb) {
         known_version(
             d, n, "Paddle version", [&](auto& v) { return kb.paddle_release(v); }, "kb/paddle.yaml");
       }},
      {"cuda",
       [](auto& d, auto& n, auto& kb) {
         known_version(
             d, n, "CUDA version (major.minor)", [&](auto& v) { return kb.cuda(v) && v.find('.') == v.rfind('.'); },
             "kb/cuda.yaml");
       }},
      {"python",
       [](auto& d, auto& n, auto& kb) {
         known_version(
             d, n, "Python version (major.minor)",
             [&](auto& v) { return kb.python_eol(v) && v.find('.') == v.rfind('.'); }, "kb/python.yaml");
       }},
      {"cudnn", [](auto& d, auto& n, auto&) { d.version_of(n); }},
      // trt: a TensorRT version, or none (the image ships no TensorRT; matrix.cc, rules.cc).
      {"trt",
       [](auto& d, auto& n, auto&) {
         if (!n.IsScalar() || n.Scalar() != "none") d.version_of(n);
       }},
      {"os",
       [](auto& d, auto& n, auto&) {
         if (!n.IsScalar() || n.Scalar().empty())
           d.fail(n, "expected an OS label like ubuntu22.04, found " + describe(n));
       }},
      {"variant",
       [](auto& d, auto& n, auto&) {
         one_of(d, n, {"gpu", "cpu"}, "a variant");
       }},
      {"flavor",
       [](auto& d, auto& n, auto&) {
         one_of(d, n, {"runtime", "devel"}, "a flavor");
       }},
  };
  return t;
}

// Values Docker would refuse later (at build or push time), refused now at their position.
using SettingCheck = std::function<std::optional<std::string>(const std::string&)>;
const std::map<std::string, SettingCheck>& setting_checks() {
  static const std::map<std::string, SettingCheck> t = {
      {"repository", [](auto& v) { return refname::check_name(v, false); }},
      {"base_image", [](auto& v) { return refname::check_name(v, true); }},
      {"base_digest",
       [](auto& v) -> std::optional<std::string> {
         if (v.empty() || is_sha256_digest(v)) return std::nullopt;
         return "expected sha256:<64 hex digits>, found '" + v + "'";
       }},
  };
  return t;
}

void check_setting(const YamlDoc& d, const YAML::Node& n, const std::string& key, const std::string& value) {
  auto check = setting_checks().find(key);
  if (check == setting_checks().end()) return;
  if (auto why = check->second(value)) d.fail(n, "'" + key + "': " + *why);
}

std::string expand_string(const YamlDoc& d, const YAML::Node& n) {
  if (!n.IsScalar()) d.fail(n, "expected a string, found " + describe(n));
  std::string out, missing;
  if (!expand_env(n.Scalar(), out, missing))
    d.fail(n, "expected environment variable ${" + missing + "} to be set (or a default: ${" + missing +
                  ":-value}), found it unset");
  return out;
}

Settings read_settings(const YamlDoc& d, const YAML::Node& map, bool allow_axes) {
  Settings s;
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string k = it->first.Scalar();
    if (allow_axes && axis_checks().count(k)) continue;
    if (!kSettingKeys.count(k)) {
      std::string list;
      for (auto& a : axis_names())
        if (allow_axes) list += a + ", ";
      for (auto& a : kSettingKeys) list += a + (a == *kSettingKeys.rbegin() ? "" : ", ");
      d.fail(it->first, "expected an axis or setting (" + list + "), found unknown key '" + k + "'");
    }
    if (k == "build") {
      d.expect_map(it->second, "'build' values");
      for (auto b = it->second.begin(); b != it->second.end(); ++b)
        s.build[b->first.Scalar()] = expand_string(d, b->second);
      continue;
    }
    if (k == "python_from") one_of(d, it->second, {"apt", "base"}, "where Python comes from");
    if (k == "cuda_base") one_of(d, it->second, {"nvidia", "wheels", "none"}, "the CUDA base a GPU cell starts from");
    std::string v = expand_string(d, it->second);
    check_setting(d, it->second, k, v);
    if (k == "wheelhouse" && !v.empty() && std::filesystem::path(v).is_relative())
      v = (std::filesystem::absolute(d.file()).parent_path() / v).lexically_normal().string();
    s.values[k] = v;
  }
  return s;
}

Axes read_entry_axes(const YamlDoc& d, const YAML::Node& map, const KnowledgeBase& kb) {
  Axes a;
  for (auto it = map.begin(); it != map.end(); ++it) {
    auto check = axis_checks().find(it->first.Scalar());
    if (check == axis_checks().end()) continue;
    check->second(d, it->second, kb);
    a[it->first.Scalar()] = it->second.Scalar();
  }
  return a;
}

std::vector<Entry> read_entries(const YamlDoc& d, const YAML::Node& list, const KnowledgeBase& kb, bool is_include) {
  std::vector<Entry> out;
  if (!list.IsDefined() || list.IsNull()) return out;
  if (!list.IsSequence()) d.fail(list, "expected a list of cells, found " + describe(list));
  for (const auto& n : list) {
    d.expect_map(n, is_include ? "an include entry" : "an exclude entry");
    Entry e{read_entry_axes(d, n, kb), {}, d.where(n)};
    if (is_include) {
      e.settings = read_settings(d, n, true);
    } else {
      std::set<std::string> allowed(axis_names().begin(), axis_names().end());
      d.check_keys(n, allowed, "an exclude entry (axes only)");
    }
    if (e.axes.empty() && !is_include) d.fail(n, "expected at least one axis in an exclude entry, found none");
    out.push_back(e);
  }
  return out;
}

void read_axes(const YamlDoc& d, const YAML::Node& axes, const KnowledgeBase& kb, MatrixSpec& m) {
  std::set<std::string> allowed(axis_names().begin(), axis_names().end());
  d.check_keys(axes, allowed, "axes");
  m.axes_where = d.where(axes);
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    std::string name = it->first.Scalar();
    YAML::Node vals = it->second;  // a handle copy: it->second dies with the iterator proxy
    if (vals.IsScalar()) {         // "python: 3.11" is a one-value axis
      axis_checks().at(name)(d, vals, kb);
      m.axes[name].push_back(vals.Scalar());
      continue;
    }
    if (!vals.IsSequence() || vals.size() == 0)
      d.fail(vals, "expected a non-empty list of values for axis '" + name + "', found " + describe(vals));
    for (const auto& v : vals) {
      axis_checks().at(name)(d, v, kb);
      m.axes[name].push_back(v.Scalar());
    }
  }
}

void read_tag_template(const YamlDoc& d, const YAML::Node& n, MatrixSpec& m) {
  m.tag_template = {{"gpu", kDefaultGpuTagTemplate}, {"cpu", kDefaultCpuTagTemplate}};
  if (!n.IsDefined() || n.IsNull()) return;
  auto set = [&](const std::string& variant, const YAML::Node& t) {
    if (!t.IsScalar()) d.fail(t, "expected a tag template string, found " + describe(t));
    if (auto err = check_tag_template(t.Scalar())) d.fail(t, "expected a valid tag template, found " + *err);
    m.tag_template[variant] = t.Scalar();
  };
  if (n.IsScalar()) {
    set("gpu", n);
    set("cpu", n);
    return;
  }
  d.check_keys(n, {"gpu", "cpu"}, "tag_template");
  for (auto it = n.begin(); it != n.end(); ++it) set(it->first.Scalar(), it->second);
}

}  // namespace

const std::vector<std::string>& axis_names() {
  static const std::vector<std::string> names = {"variant", "paddle", "cuda", "cudnn", "trt", "python", "os", "flavor"};
  return names;
}

void Settings::merge_from(const Settings& o) {
  for (auto& [k, v] : o.values) values[k] = v;
  for (auto& [k, v] : o.build) build[k] = v;
}

namespace {
MatrixSpec read_matrix(const YamlDoc& d, const KnowledgeBase& kb) {
  const std::string& path = d.file();
  const YAML::Node& root = d.root();
  d.check_keys(
      root, {"repository", "tag_template", "only_published", "defaults", "axes", "include", "exclude", "description"},
      "a matrix file");
  MatrixSpec m;
  m.file = path;
  if (root["repository"]) {
    m.repository = d.str(root, "repository");
    check_setting(d, root["repository"], "repository", m.repository);
  }
  m.only_published = d.boolean(root, "only_published", false);
  d.str(root, "description", false);  // free text, but text: a list or mapping here is a mistake
  read_tag_template(d, root["tag_template"], m);
  if (root["defaults"]) {
    d.expect_map(root["defaults"], "defaults");
    m.defaults = read_settings(d, root["defaults"], false);
  }
  if (!root["axes"] && !root["include"]) d.fail(root, "expected 'axes' or 'include', found neither");
  if (root["axes"]) read_axes(d, root["axes"], kb, m);
  m.exclude = read_entries(d, root["exclude"], kb, false);
  m.include = read_entries(d, root["include"], kb, true);
  if (m.axes_where.empty()) m.axes_where = d.where(root);
  return m;
}
}  // namespace

MatrixSpec read_matrix_file(const std::string& path, const KnowledgeBase& kb) {
  return read_matrix(YamlDoc::load(path), kb);
}

MatrixSpec read_matrix_text(const std::string& text, const std::string& name, const KnowledgeBase& kb) {
  return read_matrix(YamlDoc::parse(text, name), kb);
}

}  // namespace imgtool::matrix
