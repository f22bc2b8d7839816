// Errors that cross layer boundaries. A message a user reads says what was
// expected, what was found, and (where known) what to do.
//
// Exit-code contract of the CLI (see README.md):
//   0  ok
//   1  a check failed / an operation failed (CheckFailed, Error)
//   2  bad input or usage (InputError)
#pragma once
#include <stdexcept>
#include <string>

namespace imgtool {

// An operational failure (I/O, network, docker). `retryable` says whether the
// same call may succeed later (network reset, 429, 5xx), so callers can decide.
struct Error : std::runtime_error {
  explicit Error(const std::string& what, bool retryable = false) : std::runtime_error(what), retryable(retryable) {}
  bool retryable;
};

// Bad input from a user: a file, a field, a flag. The message is one line,
// "where: what was expected, what was found". Maps to exit code 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A verification or policy check that did not pass. Maps to exit code 1.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace imgtool
