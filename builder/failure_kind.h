// Which build failures are worth retrying. A retry only helps when the cause
// is outside the build's inputs: the network or a registry having a bad
// moment, or the engine's cache image removed under a running build ("unknown
// parent image id": another build's stage removal or a user's image prune). A failing RUN step, a missing file, a
// syntax error, a timeout: the same inputs give the same failure, so they are never retried.
#pragma once
#include <string>
#include <string_view>

namespace imgtool::builder {

struct FailureKind {
  bool transient = false;
  std::string marker;  // the text that decided it ("TLS handshake timeout"), empty if deterministic
};

// Looks for a known transient failure in a build's output (case-insensitive).
FailureKind classify_failure(std::string_view output);

}  // namespace imgtool::builder
