// Tag templates: "{paddle}-gpu-cuda{cuda}-cudnn{cudnn}[-trt{trt}]".
//   {name}  a placeholder (see kPlaceholders in tag_template.cc:
//           paddle, variant, cuda, cudnn, trt, python, py, os, flavor, dev)
//   [...]   an optional group: emitted only when every placeholder inside is non-empty
// The default templates reproduce Paddle's official naming:
//   gpu "{paddle}-gpu-cuda{cuda}-cudnn{cudnn}[-trt{trt}][-{dev}]"  -> 3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5
//   cpu "{paddle}[-{dev}]"                                          -> 3.1.0
#pragma once
#include <map>
#include <optional>
#include <string>

namespace imgtool::matrix {

inline constexpr const char* kDefaultGpuTagTemplate = "{paddle}-gpu-cuda{cuda}-cudnn{cudnn}[-trt{trt}][-{dev}]";
inline constexpr const char* kDefaultCpuTagTemplate = "{paddle}[-{dev}]";

// Returns an error message ("unknown placeholder '{pyver}' (known: …)",
// "unbalanced '['") or nullopt when the template is valid.
std::optional<std::string> check_tag_template(const std::string& tmpl);

// Renders a checked template. `values` maps placeholder names to values.
std::string render_tag(const std::string& tmpl, const std::map<std::string, std::string>& values);

}  // namespace imgtool::matrix
