// The real validators run-config's output must pass (tests only; real tools, no imitation):
//   k8s      kubernetes-validate --strict -k runconf::kK8sVersion, many files in one call
//   compose  docker-compose -f FILE config
//   docker   the line split back into words by /bin/sh; every flag before the image known to
//            `docker run --help` (a flag with a value type takes the next word), then the
//            image, then the command; and the docker CLI itself parses the words: its flag and
//            value checks run before it connects, so pointed at no daemon it must stop at
//            "Cannot connect to the Docker daemon" (an unknown flag or bad value stops earlier).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace imgtool::runconf::testing {

// The words a POSIX shell makes of `line` (sh itself splits and unquotes it).
std::vector<std::string> shell_words(const std::string& line);

// "" when `line` is a `docker run` of `image` with `command` that docker accepts; else what is wrong.
std::string docker_run_problem(const std::string& line, const std::string& image,
                               const std::vector<std::string>& command);

// "" when `docker-compose -f file config` accepts the file; else its output.
std::string compose_problem(const std::filesystem::path& file);

// kubernetes-validate --strict over all `files` at once: file -> "" (passed) or what it said.
std::map<std::string, std::string> k8s_problems(const std::vector<std::filesystem::path>& files);

}  // namespace imgtool::runconf::testing
