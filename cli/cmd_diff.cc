// imgtool diff A B: two images compared (image/image_diff.h): same digest, or the config keys and
// the first differing layer's files. Exit 0 when the digests are equal, 1 when they differ.
#include <iostream>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "image/image_diff.h"
#include "image/transport.h"

namespace imgtool::cli {
namespace {

struct DiffFlags {
  std::string a, b;
  size_t max_files = 50;
  RegistryFlags registry;
};

int run_diff(const DiffFlags& f) {
  auto o = f.registry.transport();
  auto a = image::open_source(image::parse_reference(f.a), o);
  auto b = image::open_source(image::parse_reference(f.b), o);
  image::ImageDifference d = image::diff_images(*a, *b, f.max_files);
  std::cout << image::render_difference(d);
  return d.same ? 0 : 1;
}

Registration diff_registration{
    {"diff", "Compare two images: equal digests, or the config keys and the first differing layer's files",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<DiffFlags>();
       sub.add_option("A", f->a, "an image reference (docker-daemon:, oci:, docker://)")->required();
       sub.add_option("B", f->b, "the other image")->required();
       sub.add_option("--max-files", f->max_files, "differing files listed at most (default 50)");
       f->registry.add(sub);
       return [f] { return run_diff(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
