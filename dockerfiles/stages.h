// What the generator knows about the stages of a Dockerfile it rendered, handed
// to the builder in cell.json ("build": {"stage", "stage_key"}; cell_file.h), so the
// builder never parses a Dockerfile itself:
//   stage      the name of the first stage (`FROM <base> AS build`) when a later
//              FROM follows it (a shared stage worth building once); else "".
//   stage_key  12 hex chars of sha256 over that stage's text (its FROM line up
//              to the next FROM): cells with equal keys share the stage; "" when
//              there is no such stage. The generator hashes it again with the
//              context's wheels (generate.cc: the stage copies them), so the same
//              text over other wheels is another stage.
#pragma once
#include <string>
#include <string_view>

namespace imgtool::dockerfiles {

struct SharedStage {
  std::string stage;
  std::string stage_key;
};

SharedStage shared_stage(std::string_view dockerfile);

}  // namespace imgtool::dockerfiles
