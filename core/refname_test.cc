#include "core/refname.h"

#include <doctest/doctest.h>

using namespace imgtool::refname;

TEST_CASE("Docker name grammar: what Docker accepts, and what it would refuse later") {
  for (const char* ok : {"paddle", "ai/paddle", "x/a.b_c__d---e", "localhost/x", "localhost:5000/ai/paddle",
                         "Registry.Example.com:443/ai/paddle", "[::1]:5000/x", "imgtool-base/debian"})
    CHECK_MESSAGE(!check_name(ok, false), std::string(ok));
  for (const char* bad : {"Paddle", "ai/Paddle", "ai//paddle", "ai/paddle/", "-ai", "a..b", "a___b", "ai/p_", "",
                          "exa mple/x", "host:port/x", "host-/x"})
    CHECK_MESSAGE(check_name(bad, false), std::string(bad));
  CHECK(!check_name("nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04", true));
  CHECK(!check_name("localhost:5000/b:t@sha256:" + std::string(64, 'a'), true));
  CHECK(check_name("nvidia/cuda:-bad", true)->find("expected a tag") != std::string::npos);
  CHECK(check_name("nvidia/cuda@sha256:12", true)->find("@sha256:<64 hex digits>") != std::string::npos);
  CHECK(!check_name("Nvidia/cuda:12", true));  // upper case makes "Nvidia" a registry host, as for Docker
  CHECK(check_name("NVIDIA/Cuda:12", true));
  CHECK(check_name(std::string(300, 'a'), false)->find("at most 255") != std::string::npos);
  // Long input: linear, no recursion (std::regex overflowed the stack here).
  CHECK(!is_path_component(std::string(1 << 20, 'a') + "-"));
  CHECK(is_tag("v1.0_rc-2"));
  CHECK(!is_tag(std::string(129, 'a')));
}
