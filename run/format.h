// The three outputs of `imgtool run-config` (render.h). Its own header because what a
// profile's `gpus: auto` becomes depends on it (image_facts.h: resolve_gpus).
#pragma once
#include <string>

namespace imgtool::runconf {

enum class Format { kDocker, kCompose, kK8s };
Format parse_format(const std::string& s);  // InputError naming --format on anything else

}  // namespace imgtool::runconf
