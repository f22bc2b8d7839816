// bench/gunzip.sh's decoder: decodes a gzip blob (a registry's layer file) with
// image::InflatingReader and `jobs` decoders, discarding the output; prints
// "MiB seconds chunks-in-parallel". Not a test (a bench tool, no assertions).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "image/blob.h"
#include "image/inflate.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gunzip_bench BLOB JOBS\n");
    return 2;
  }
  imgtool::image::FileReader file(argv[1]);
  imgtool::image::InflatingReader r(file, argv[1], static_cast<unsigned>(std::atoi(argv[2])));
  std::vector<char> buf(1 << 20);
  auto t0 = std::chrono::steady_clock::now();
  size_t total = 0;
  while (size_t n = r.read(buf.data(), buf.size())) total += n;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.1f %.3f %zu\n", static_cast<double>(total) / (1 << 20), s, r.parallel_chunks());
  return 0;
}
