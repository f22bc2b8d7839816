// What the generator knows about the stages of a Dockerfile it rendered, handed
// to the builder in cell.json ("build": {"stage", "stage_key"}), and the one
// reader of its stages the builder calls (final_stage), so the builder never
// parses a Dockerfile itself:
//   stage      the name of the first stage (`FROM <base> AS build`) when a later
//              FROM follows it (a shared stage worth building once); else "".
//   stage_key  12 hex chars of sha256 over that stage's text (its FROM line up
//              to the next FROM): cells with equal keys share the stage; "" when
//              there is no such stage.
#pragma once
#include <string>
#include <string_view>

namespace imgtool::dockerfiles {

struct SharedStage {
  std::string stage;
  std::string stage_key;
};

SharedStage shared_stage(std::string_view dockerfile);

// The last stage of `dockerfile`: from its last FROM line (any case) to the end; the whole text
// when it has no FROM. The builder reads the labels it already sets from here.
std::string_view final_stage(std::string_view dockerfile);

}  // namespace imgtool::dockerfiles
