// Where imgtool finds its data files (matrix/kb, matrix/*.yaml, dockerfiles/,
// smoke/probe). $IMGTOOL_DATA_DIR overrides; the default is the source tree
// the binary was built from.
#pragma once
#include <cstdlib>
#include <string>

namespace imgtool {

std::string data_dir();

// Cache root for downloads and state: $IMGTOOL_CACHE, else
// $XDG_CACHE_HOME/imgtool, else $HOME/.cache/imgtool, else the account's home
// from getpwuid() (never a shared /tmp). Made private on first use
// (ensure_private_dir): InputError if it is not.
std::string cache_dir();

// Creates `dir` (and its parents) with mode 0700 if missing; then requires a
// folder owned by the effective user and not writable by group or others.
// InputError (exit 2) naming the folder, its owner/mode and the fix otherwise.
void ensure_private_dir(const std::string& dir);

}  // namespace imgtool
