// The double beside the engine model (as image/memory.h is beside the image
// model): an in-memory Docker engine that builder/, verify/ (smoke and
// verify's smoke part) and the nightly unit tests all use. No process, no
// socket. Thread-safe (the builder builds from several threads).
//
//   images     by ID and by name; a built or loaded image is a real OCI image
//              in a MemoryStore (config JSON with its labels, no layers), so its
//              ID IS its config digest and save() serves it like the real engine.
//   build      succeeds by default (the image gets the request's labels); a
//              per-image script of outcomes injects faults, consumed in order:
//                "ok"            success
//                "throw:MSG"     build() throws imgtool::Error(MSG) (engine gone)
//                "timeout"       the run timed out (exit 124)
//                anything else   a failed build whose stderr is that text (exit 1)
//   run        answered by `on_run` (default: exit 0, no output); a request
//              whose image the engine lacks fails as docker does (exit 125).
//   unreachable  every call throws a retryable imgtool::Error (engine down).
//   stages     with stage_mark_arg/label set, a full build also leaves its first stage
//              untagged, labelled with the build's mark (as the template's LABEL does);
//   list       list_images() filters the images by their labels; dangling =
//              no name left (a rebuilt name moves to the new image, as in docker).
//   calls      a log of every call, in order: "inspect REF", "build IMAGE",
//              "run IMAGE", "save REF", "load NAME", "list LABEL[,LABEL…][ dangling]",
//              "remove REF"; and the typed
//              build and run requests.
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "image/memory.h"

namespace imgtool::engine {

class FakeEngine : public Engine {
 public:
  FakeEngine();

  // ---- set-up (tests) ----
  // Adds an image known by `names` (and by its ID). An empty info.id gets the
  // digest of a config made from the labels (stored, so save() can serve it).
  ImageInfo add_image(const std::vector<std::string>& names, ImageInfo info = {});
  // The image `ref` names, to change in place (nullptr when absent).
  ImageInfo* find(const std::string& ref);
  std::map<std::string, std::deque<std::string>> build_script;  // image name -> outcomes
  std::function<RunResult(const RunRequest&)> on_run;           // default: exit 0
  std::string kind = "fake";                                    // builder_kind()
  bool unreachable = false;                                     // every call throws (retryable)
  bool load_reencodes = false;                                  // load() gives another image ID
  bool reproducible_builds = false;  // the same labels give the same image (config), as a reproducible build
  // The classic builder's leftover first stage: a build whose request carries the build arg
  // `stage_mark_arg` gets the label `stage_mark_label` = its value on a `--target` image and, for a
  // full build, on one more image left untagged (the first stage). Empty: no such image.
  std::string stage_mark_arg, stage_mark_label;

  // ---- what happened ----
  std::vector<std::string> calls;
  std::vector<BuildRequest> builds;
  std::vector<RunRequest> runs;
  bool called(const std::string& prefix) const;  // any call starting with prefix
  std::shared_ptr<image::MemoryStore> store() const { return store_; }

  // ---- Engine ----
  std::optional<ImageInfo> inspect(const std::string& ref) override;
  BuildResult build(const BuildRequest& r) override;
  std::string builder_kind() override { return kind; }
  RunResult run(const RunRequest& r) override;
  std::unique_ptr<image::ImageSource> save(const std::string& ref) override;
  LoadResult load(image::ImageSource& src, const std::string& name,
                  const std::function<void(const std::string&)>& log = {}) override;
  std::vector<ImageInfo> list_images(const ImageFilter& f) override;
  bool remove(const std::string& ref) override;

 private:
  void enter(const std::string& call);  // logs the call; throws when unreachable
  ImageInfo* find_locked(const std::string& ref);
  ImageInfo store_image(const std::map<std::string, std::string>& labels, const std::string& salt);
  void name_image(const std::string& name, const std::string& id);

  std::recursive_mutex mu_;
  std::shared_ptr<image::MemoryStore> store_;
  std::map<std::string, ImageInfo> images_;   // id -> image
  std::map<std::string, std::string> names_;  // name:tag -> id
  int built_ = 0;
};

}  // namespace imgtool::engine
