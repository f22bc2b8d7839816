// The image config (OCI image spec "image-config"; Docker's image JSON is the same document), typed
// and parsed ONCE from the config blob, as go-containerregistry's v1.ConfigFile: every reader of an
// image's labels, environment, platform or diff_ids takes this struct, never the JSON.
//
// Per the spec: `architecture`, `os` and `rootfs` (type "layers", `diff_ids`) are REQUIRED;
// everything else is OPTIONAL, and `config` or any of its members may be absent or null (= empty).
// A member of the wrong type (a label whose value is not a string, an Env entry that is a number)
// is refused, not skipped: InputError, one line naming the blob and the field,
//   "image config sha256:…: expected \"config.Labels\" values to be strings, found number at \"io.imgtool.cuda\"".
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/image.h"

namespace imgtool::image {

struct ImageConfig {
  std::string architecture;  // "amd64"
  std::string os;            // "linux"
  std::string variant;       // "v8" ("" = none)
  std::string created;       // RFC 3339 as written ("" = absent)
  std::string author;
  // config: the defaults a container of the image runs with.
  std::string user;                           // config.User
  std::vector<std::string> env;               // config.Env, "NAME=VALUE" in order
  std::vector<std::string> entrypoint, cmd;   // config.Entrypoint, config.Cmd
  std::string working_dir;                    // config.WorkingDir
  std::map<std::string, std::string> labels;  // config.Labels
  std::vector<std::string> diff_ids;          // rootfs.diff_ids, bottom layer first

  // The label's value, "" when absent.
  std::string label(const std::string& name) const;
  // config.Env as NAME -> VALUE (a later entry wins, as in a container; entries without '=' left out).
  std::map<std::string, std::string> env_map() const;
  std::optional<std::string> env_value(const std::string& name) const;
};

// Parses a config blob. `what` names it in errors ("image config sha256:…"). Throws InputError.
ImageConfig parse_image_config(std::string_view bytes, const std::string& what);

// The config of the image `m` (a manifest of `src`): read through src (digest checked, at most
// kMaxSmallBlobBytes) and parsed.
ImageConfig read_image_config(ImageSource& src, const Manifest& m);

}  // namespace imgtool::image
