// The nightly's typed records in the state store (state_store.h keeps rows of strings: step, tag,
// key, value, detail). Only this file knows how each step's record is spelled in those rows, so
// nightly.cc reads and writes steps, never strings:
//   smoke    key = image ID + "|gpus=…", value = the SmokeStatus word, detail = the SmokeStep JSON
//   gate     key = image ID + "|kb=…",   value = the GateStatus word
//   publish  key = the registry ref,     value = the pushed digest, detail = the image ID pushed
#pragma once
#include <optional>
#include <string>

#include "builder/state_store.h"
#include "nightly/nightly_model.h"

namespace imgtool::nightly {

void record_smoke(builder::StateStore& s, const std::string& tag, const std::string& key, const SmokeStep& step);
// The smoke a run passed for this tag and key (its status turned to `cached`, no seconds); none when
// there is none, it did not pass, or its record cannot be read (then the smoke runs again).
std::optional<SmokeStep> passed_smoke(builder::StateStore& s, const std::string& tag, const std::string& key);

void record_gate(builder::StateStore& s, const std::string& tag, const std::string& key, GateStatus status);
bool gate_passed(builder::StateStore& s, const std::string& tag, const std::string& key);

struct PublishRecord {
  std::string digest;    // what the ref's tag was moved to
  std::string image_id;  // the local image that was pushed
};
void record_publish(builder::StateStore& s, const std::string& tag, const std::string& ref, const PublishRecord& r);
std::optional<PublishRecord> last_publish(builder::StateStore& s, const std::string& tag, const std::string& ref);

}  // namespace imgtool::nightly
