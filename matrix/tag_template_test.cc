#include "matrix/tag_template.h"

#include <doctest/doctest.h>

using namespace imgtool::matrix;

TEST_CASE("tag templates: optional groups and placeholder checks") {
  std::map<std::string, std::string> v = {
      {"paddle", "3.1.0"}, {"cuda", "12.6"}, {"cudnn", "9.5"}, {"trt", ""}, {"dev", ""}};
  CHECK(render_tag(kDefaultGpuTagTemplate, v) == "3.1.0-gpu-cuda12.6-cudnn9.5");
  v["trt"] = "10.5";
  CHECK(render_tag(kDefaultGpuTagTemplate, v) == "3.1.0-gpu-cuda12.6-cudnn9.5-trt10.5");
  CHECK(render_tag(kDefaultCpuTagTemplate, v) == "3.1.0");
  v["dev"] = "dev";
  CHECK(render_tag(kDefaultCpuTagTemplate, v) == "3.1.0-dev");
  CHECK(!check_tag_template(kDefaultGpuTagTemplate));
  CHECK(check_tag_template("{paddle}-{pyver}")->find("unknown placeholder '{pyver}'") != std::string::npos);
  CHECK(check_tag_template("{paddle}[-{trt}"));
  CHECK(check_tag_template("{paddle"));
}
