// The one labels -> claims reading (matrix/label_claims.h).
#include "matrix/label_claims.h"

#include <doctest/doctest.h>

#include "matrix/labels.h"

using namespace imgtool;
using namespace imgtool::matrix;

TEST_CASE("read_label_claims: every io.imgtool.* label into its field; absent ones read as empty") {
  LabelClaims c = read_label_claims({{"io.imgtool.paddle", "3.2.0"},
                                     {"io.imgtool.python", "3.11"},
                                     {"io.imgtool.variant", "gpu"},
                                     {"io.imgtool.flavor", "devel"},
                                     {"io.imgtool.cuda", "12.6"},
                                     {"io.imgtool.cudnn", "9.5"},
                                     {"io.imgtool.tensorrt", "10.5"},
                                     {"io.imgtool.min-driver", "560.28.03"},
                                     {"io.imgtool.cuda-archs", "sm_80,sm_86"},
                                     {"io.imgtool.tag", "3.2.0-gpu-cuda12.6-cudnn9.5"},
                                     {"io.imgtool.inputs-hash", "sha256:abc"},
                                     {"io.imgtool.kb-version", "2026.11"},
                                     {"io.imgtool.stage-key", "0123456789ab"},
                                     {"io.imgtool.base.cuda", "11.8"},
                                     {"org.opencontainers.image.version", "ignored"}});
  CHECK(c.paddle == "3.2.0");
  CHECK(c.python == "3.11");
  CHECK(c.variant == "gpu");
  CHECK(c.flavor == "devel");
  CHECK(c.cuda == "12.6");
  CHECK(c.cudnn == "9.5");
  CHECK(c.tensorrt == "10.5");
  CHECK(c.min_driver == "560.28.03");
  CHECK(c.cuda_archs == "sm_80,sm_86");
  CHECK(c.tag == "3.2.0-gpu-cuda12.6-cudnn9.5");
  CHECK(c.inputs_hash == "sha256:abc");
  CHECK(c.kb_version == "2026.11");
  CHECK(c.stage_key == "0123456789ab");
  CHECK(c.stage_of.empty());
  CHECK(c.base_cuda == "11.8");
  // claims(): exactly the labels::kClaims, by field name.
  auto claims = c.claims();
  CHECK(claims.size() == labels::kClaims.size());
  for (const char* l : labels::kClaims) CHECK(claims.count(std::string(labels::field(l))) == 1);
  CHECK(claims.at("min-driver") == "560.28.03");
  CHECK(claims.at("cuda-archs") == "sm_80,sm_86");

  LabelClaims none = read_label_claims({});
  CHECK(none.variant.empty());
  CHECK(none.tag.empty());
  CHECK(none.claims().empty());
}

TEST_CASE("read_label_claims: an empty label claims nothing") {
  LabelClaims c =
      read_label_claims({{"io.imgtool.paddle", ""}, {"io.imgtool.variant", "cpu"}, {"io.imgtool.stage-of", "x"}});
  CHECK(c.claims() == std::map<std::string, std::string>{{"variant", "cpu"}});
  CHECK(c.stage_of == "x");
}

TEST_CASE("labels::source_date_epoch: a number of 1 to 12 digits, else 0 (an image's label is its own word)") {
  CHECK(labels::source_date_epoch("1795651200") == 1795651200);
  CHECK(labels::source_date_epoch("0") == 0);
  for (const char* bad : {"", "-1", "1e9", " 12", "12 ", "1234567890123", "0x10"})
    CHECK_MESSAGE(labels::source_date_epoch(bad) == 0, bad);
}
