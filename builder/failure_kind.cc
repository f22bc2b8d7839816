#include "builder/failure_kind.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/strings.h"

namespace imgtool::builder {
namespace {

// Lower-case markers of failures outside the build's inputs. Kept as data:
// add a line when a new transient message is seen in the wild.
constexpr std::array kTransientMarkers = {
    "tls handshake timeout",
    "connection reset by peer",
    "connection reset",
    "i/o timeout",
    "temporary failure in name resolution",
    "no such host",
    "connection refused",
    "unexpected eof",
    "net/http: request canceled",
    "toomanyrequests",
    "429 too many requests",
    "500 internal server error",
    "502 bad gateway",
    "503 service unavailable",
    "504 gateway timeout",
    "received unexpected http status: 5",
    "error pulling image configuration: download failed",
    // The classic builder's cache image removed under a running build (another build's stage
    // removal pruning a parent they shared, a `docker image prune`): the retry builds it again.
    "unknown parent image id",
    "no such image: sha256:",
};

}  // namespace

FailureKind classify_failure(std::string_view output) {
  std::string text = strings::lower(output);
  for (const char* m : kTransientMarkers)
    if (text.find(m) != std::string::npos) return {true, m};
  return {};
}

}  // namespace imgtool::builder
