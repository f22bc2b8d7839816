#include "image/config.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_file.h"
#include "core/strings.h"

namespace imgtool::image {
namespace {

using nlohmann::json;

// A key or value from the blob, shown in one line (escaped, bounded).
std::string shown(const std::string& s) {
  return strings::quoted(json(s).dump(-1, ' ', false, json::error_handler_t::replace));
}

// Reads members of one config blob; every refusal names the blob and the field.
struct ConfigReader {
  std::string what;

  [[noreturn]] void fail(const std::string& path, const std::string& expected, const std::string& found) const {
    throw InputError(what + ": expected \"" + path + "\" " + expected + ", found " + found);
  }
  // The member, or nullptr when absent or null (an OPTIONAL member may be either).
  static const json* member(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  std::string string(const json& obj, const char* key, const std::string& path, bool required) const {
    const json* v = member(obj, key);
    if (v && !v->is_string()) fail(path, "to be a string", v->type_name());
    std::string s = v ? v->get<std::string>() : "";
    if (required && s.empty()) fail(path, "(REQUIRED by the OCI image spec)", v ? "an empty string" : "none");
    return s;
  }
  std::vector<std::string> strings(const json& obj, const char* key, const std::string& path) const {
    const json* v = member(obj, key);
    if (!v) return {};
    if (!v->is_array()) fail(path, "to be a list of strings", v->type_name());
    std::vector<std::string> out;
    for (const auto& e : *v) {
      if (!e.is_string())
        fail(path, "entries to be strings", std::string(e.type_name()) + " at index " + std::to_string(out.size()));
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  std::map<std::string, std::string> string_map(const json& obj, const char* key, const std::string& path) const {
    const json* v = member(obj, key);
    if (!v) return {};
    if (!v->is_object()) fail(path, "to map names to strings", v->type_name());
    std::map<std::string, std::string> out;
    for (const auto& [k, e] : v->items()) {
      if (!e.is_string()) fail(path, "values to be strings", std::string(e.type_name()) + " at " + shown(k));
      out[k] = e.get<std::string>();
    }
    return out;
  }
  const json* object(const json& obj, const char* key, const std::string& path, bool required) const {
    const json* v = member(obj, key);
    if (v && !v->is_object()) fail(path, "to be an object", v->type_name());
    if (!v && required) fail(path, "(REQUIRED by the OCI image spec)", "none");
    return v;
  }
};

struct StringMember {
  const char* key;
  std::string ImageConfig::*to;
  bool required;
};
struct ListMember {
  const char* key;
  std::vector<std::string> ImageConfig::*to;
};

const StringMember kTopStrings[] = {{"architecture", &ImageConfig::architecture, true},
                                    {"os", &ImageConfig::os, true},
                                    {"variant", &ImageConfig::variant, false},
                                    {"created", &ImageConfig::created, false},
                                    {"author", &ImageConfig::author, false}};
const StringMember kRunStrings[] = {{"User", &ImageConfig::user, false},
                                    {"WorkingDir", &ImageConfig::working_dir, false}};
const ListMember kRunLists[] = {
    {"Env", &ImageConfig::env}, {"Entrypoint", &ImageConfig::entrypoint}, {"Cmd", &ImageConfig::cmd}};

void read_runtime(const ConfigReader& in, const json& run, ImageConfig& c) {
  for (const auto& f : kRunStrings) c.*f.to = in.string(run, f.key, std::string("config.") + f.key, false);
  for (const auto& f : kRunLists) c.*f.to = in.strings(run, f.key, std::string("config.") + f.key);
  c.labels = in.string_map(run, "Labels", "config.Labels");
}

void read_rootfs(const ConfigReader& in, const json& top, ImageConfig& c) {
  const json& rootfs = *in.object(top, "rootfs", "rootfs", true);
  if (std::string type = in.string(rootfs, "type", "rootfs.type", true); type != "layers")
    in.fail("rootfs.type", "to be \"layers\"", shown(type));
  if (!ConfigReader::member(rootfs, "diff_ids")) in.fail("rootfs.diff_ids", "(REQUIRED by the OCI image spec)", "none");
  c.diff_ids = in.strings(rootfs, "diff_ids", "rootfs.diff_ids");
}

}  // namespace

std::string ImageConfig::label(const std::string& name) const {
  auto it = labels.find(name);
  return it == labels.end() ? "" : it->second;
}

std::map<std::string, std::string> ImageConfig::env_map() const {
  std::map<std::string, std::string> out;
  for (const auto& kv : env)
    if (size_t eq = kv.find('='); eq != std::string::npos && eq > 0) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  return out;
}

std::optional<std::string> ImageConfig::env_value(const std::string& name) const {
  auto m = env_map();
  auto it = m.find(name);
  return it == m.end() ? std::nullopt : std::optional(it->second);
}

ImageConfig parse_image_config(std::string_view bytes, const std::string& what) {
  json j = parse_json_or_discarded(bytes);
  if (j.is_discarded()) throw InputError(what + ": expected a JSON object, found text that is not JSON");
  if (!j.is_object()) throw InputError(what + ": expected a JSON object, found " + j.type_name());
  ConfigReader in{what};
  ImageConfig c;
  for (const auto& f : kTopStrings) c.*f.to = in.string(j, f.key, f.key, f.required);
  if (const json* run = in.object(j, "config", "config", false)) read_runtime(in, *run, c);
  read_rootfs(in, j, c);
  return c;
}

ImageConfig read_image_config(ImageSource& src, const Manifest& m) {
  Descriptor d = m.config();
  return parse_image_config(read_all(*src.open_blob(d)), "image config " + d.digest + " of " + src.describe());
}

}  // namespace imgtool::image
