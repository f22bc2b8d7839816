#include "dockerfiles/template.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/fs.h"
#include "dockerfiles/test_util.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::dockerfiles;
using imgtool::dockerfiles::testing::error_of;

TEST_CASE("placeholders are replaced by the cell's values") {
  Values v{{"paddle", "3.1.0"}, {"python", "3.10"}};
  CHECK(render_text("FROM x\nRUN pip install paddle=={{paddle}} # py{{ python }}\n", v, "t") ==
        "FROM x\nRUN pip install paddle==3.1.0 # py3.10\n");
}

TEST_CASE("sections keep or drop lines; a lone empty placeholder drops its line") {
  Values v{{"gpu", "1"}, {"cuda", "12.6"}, {"trt", ""}, {"labels", ""}};
  std::string t =
      "{{! a template comment, dropped }}\n"
      "A\n{{#gpu}}\nENV CUDA={{cuda}}\n{{#trt}}\nENV TRT={{trt}}\n{{/trt}}\n{{^trt}}\nENV "
      "NO_TRT=1\n{{/trt}}\n{{/gpu}}\n"
      "{{labels}}\nZ\n";
  CHECK(render_text(t, v, "t") == "A\nENV CUDA=12.6\nENV NO_TRT=1\nZ\n");
  v["gpu"] = "";
  CHECK(render_text(t, v, "t") == "A\nZ\n");
}

TEST_CASE("an unknown placeholder names the template file and line, even in an inactive section") {
  Values v{{"gpu", ""}, {"paddle", "3.1.0"}};
  auto msg = error_of([&] { render_text("FROM x\n\nRUN echo {{padle}}\n", v, "dockerfiles/t.Dockerfile.in"); });
  CHECK(msg.find("dockerfiles/t.Dockerfile.in:3: unknown placeholder {{padle}}") == 0);
  CHECK(msg.find("paddle") != std::string::npos);  // lists the known names
  msg = error_of([&] { render_text("{{#gpu}}\nENV A={{cdua}}\n{{/gpu}}\n", v, "t"); });
  CHECK(msg.find("t:2: unknown placeholder {{cdua}}") == 0);
}

TEST_CASE("malformed templates fail with file:line") {
  Values v{{"gpu", "1"}};
  CHECK(error_of([&] { render_text("A\n{{#gpu}}\nB\n", v, "t"); }).find("t:2: section {{#gpu}} is never closed") == 0);
  CHECK(error_of([&] { render_text("{{/gpu}}\n", v, "t"); }).find("t:1: {{/gpu}} closes no open section") == 0);
  CHECK(error_of([&] { render_text("RUN {{gpu\n", v, "t"); }).find("t:1: '{{' without") == 0);
  CHECK(error_of([&] { render_text("RUN {{Bad Name}}\n", v, "t"); }).find("t:1: malformed placeholder") == 0);
}

TEST_CASE("partials are rendered with the same values and named in errors") {
  imgtool::testing::ScratchDir d("tmpl");
  write_file_atomic(d.path / "x.Dockerfile.in", "FROM base\n{{> setup}}\nUSER {{user}}\n");
  write_file_atomic(d.path / "partials/setup.Dockerfile.in", "{{! comment }}\nRUN setup {{user}}\n");
  TemplateDir dir(d.path, "dockerfiles/");
  std::vector<SourceFile> used;
  CHECK(dir.render("x", {{"user", "paddle"}}, &used) == "FROM base\nRUN setup paddle\nUSER paddle\n");
  REQUIRE(used.size() == 2);
  CHECK(used[1].label == "dockerfiles/partials/setup.Dockerfile.in");
  write_file_atomic(d.path / "partials/setup.Dockerfile.in", "RUN a\nRUN {{nope}}\n");
  CHECK(error_of([&] {
          dir.render("x", {{"user", "p"}});
        }).find("dockerfiles/partials/setup.Dockerfile.in:2: unknown placeholder {{nope}}") == 0);
  CHECK(error_of([&] {
          dir.render("missing", {});
        }).find("dockerfiles/missing.Dockerfile.in: template file not found") == 0);
}
