#include "nightly/step_records.h"

#include "core/json_file.h"

namespace imgtool::nightly {

void record_smoke(builder::StateStore& s, const std::string& tag, const std::string& key, const SmokeStep& step) {
  s.record_step({"smoke", tag, key, to_string(step.status), nlohmann::json(step).dump(), 0});
}

std::optional<SmokeStep> passed_smoke(builder::StateStore& s, const std::string& tag, const std::string& key) {
  auto rec = s.step("smoke", tag, key);
  if (!rec || rec->value != to_string(SmokeStatus::pass)) return std::nullopt;
  try {
    auto j = parse_json_or_discarded(rec->detail);
    if (j.is_discarded()) return std::nullopt;
    SmokeStep step = j.get<SmokeStep>();
    step.status = SmokeStatus::cached;
    step.seconds = 0;
    return step;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void record_gate(builder::StateStore& s, const std::string& tag, const std::string& key, GateStatus status) {
  s.record_step({"gate", tag, key, to_string(status), "", 0});
}

bool gate_passed(builder::StateStore& s, const std::string& tag, const std::string& key) {
  auto rec = s.step("gate", tag, key);
  return rec && rec->value == to_string(GateStatus::pass);
}

void record_publish(builder::StateStore& s, const std::string& tag, const std::string& ref, const PublishRecord& r) {
  s.record_step({"publish", tag, ref, r.digest, r.image_id, 0});
}

std::optional<PublishRecord> last_publish(builder::StateStore& s, const std::string& tag, const std::string& ref) {
  auto rec = s.step("publish", tag, ref);
  if (!rec) return std::nullopt;
  return PublishRecord{rec->value, rec->detail};
}

}  // namespace imgtool::nightly
