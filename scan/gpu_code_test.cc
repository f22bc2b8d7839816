// FatbinScanner on synthetic fat binaries laid out as nvcc lays them out (containers 8-byte
// aligned in a sea of other bytes), fed whole and in every chunking, plus bytes that hold the
// magic without being a container. The real libraries of paddlepaddle-gpu 2.6.2 are read in
// kb/derive_test.cc.
#include "scan/gpu_code.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "scan/testing/fatbin_bytes.h"

using namespace imgtool;
using namespace imgtool::scan;
using namespace imgtool::scan::testing;

namespace {

void pad8(std::string& s, std::mt19937& rng) {
  while (s.size() % 8) s.push_back(static_cast<char>(rng()));
}

std::string noise(size_t n, std::mt19937& rng) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// An ELF-ish file: noise, then the section of containers (8-aligned), then more noise.
std::string library(std::mt19937& rng) {
  std::string f = noise(1000, rng);
  pad8(f, rng);
  // a false magic: the magic at an aligned offset with a header that is no container's
  std::string fake;
  put32(fake, 0xBA55ED50), put16(fake, 7), put16(fake, 16), put64(fake, 99);
  f += fake;
  pad8(f, rng);
  for (int i = 0; i < 9; ++i) {
    f += fat_container({{2, 61, 300}, {2, 70, 200 + size_t(i)}, {2, 80, 50}, {2, 86, 7}});
    pad8(f, rng);
  }
  f += fat_container({{2, 90, 40}});  // a stray third-party kernel
  pad8(f, rng);
  f += fat_container({{2, 80, 10}, {1, 80, 33}});
  pad8(f, rng);
  f += noise(777, rng);
  return f;
}

GpuCode scan_in_chunks(const std::string& f, std::mt19937& rng, size_t max_chunk) {
  FatbinScanner s;
  for (size_t i = 0; i < f.size();) {
    size_t n = std::min<size_t>(1 + rng() % max_chunk, f.size() - i);
    s.feed(f.data() + i, n);
    i += n;
  }
  return s.result();
}

}  // namespace

TEST_CASE("fatbin containers: every cubin and PTX entry counted once per container, a false magic ignored") {
  std::mt19937 rng(7);
  std::string f = library(rng);
  FatbinScanner s;
  s.feed(f.data(), f.size());
  const GpuCode& c = s.result();
  CHECK(c.containers == 11);
  CHECK(c.cubin.at(61) == 9);
  CHECK(c.cubin.at(80) == 10);
  CHECK(c.cubin.at(90) == 1);
  CHECK(c.ptx.at(80) == 1);
  CHECK(c.main_cubins() == std::vector<int>{61, 70, 80, 86});
  CHECK(c.text() == "sm_61,sm_70,sm_80,sm_86");
  CHECK(c.runnable_on(86) == 10);  // sm_86 and sm_80 cubins and compute_80 PTX serve an 8.6 GPU
  CHECK(c.runnable_on(90) == 2);   // the stray sm_90 kernel and the PTX: not the library
  CHECK(c.runnable_on(75) == 9);
  CHECK(c.runnable_on(60) == 0);
}

TEST_CASE("fatbin scan: the same result whatever the chunk sizes") {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    std::string f = library(rng);
    FatbinScanner whole;
    whole.feed(f.data(), f.size());
    for (size_t max_chunk : {1, 3, 17, 40, 4096}) {
      GpuCode c = scan_in_chunks(f, rng, max_chunk);
      INFO("seed " << seed << ", chunks up to " << max_chunk);
      CHECK(c.served == whole.result().served);
      CHECK(c.containers == whole.result().containers);
    }
  }
}

TEST_CASE("fatbin scan: noise only, truncated containers and an empty file hold no code") {
  std::mt19937 rng(3);
  FatbinScanner s;
  std::string n = noise(1 << 16, rng);
  s.feed(n.data(), n.size());
  CHECK(s.result().empty());
  std::string c = fat_container({{2, 80, 100}});
  FatbinScanner t;
  t.feed(c.data(), c.size() - 30);  // the file ends inside the container
  CHECK(t.result().empty());
  FatbinScanner e;
  e.feed("", 0);
  CHECK(e.result().empty());
}

namespace {

// Resident memory now (/proc/self/statm), not the peak: an earlier test's freed peak cannot hide growth.
long resident_kib() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// `entries` header-only entries (32 bytes each, archs cycling through `archs`), 1 MiB of them.
std::string entry_chunk(const std::vector<FatEntry>& archs) {
  std::string chunk;
  for (size_t i = 0; chunk.size() < (1 << 20); ++i)
    chunk += fat_entry({archs[i % archs.size()].kind, archs[i % archs.size()].arch, 0, 32});
  return chunk;
}

// One container of `entries` such entries, fed a chunk at a time: the input never exists whole.
void feed_many_entries(FatbinScanner& s, uint64_t entries, const std::string& chunk) {
  std::string head;
  put32(head, 0xBA55ED50), put16(head, 1), put16(head, 16), put64(head, entries * 32);
  s.feed(head.data(), head.size());
  uint64_t per_chunk = chunk.size() / 32;
  for (uint64_t done = 0; done < entries; done += per_chunk)
    s.feed(chunk.data(), std::min(per_chunk, entries - done) * 32);
}

}  // namespace

TEST_CASE("fatbin scan: a container of 16 million entries costs no memory per entry, and counts as one") {
  const std::vector<FatEntry> archs = {{2, 80, 0}, {2, 86, 0}, {2, 90, 0}, {1, 90, 0}};
  std::string chunk = entry_chunk(archs);
  FatbinScanner s;
  long before = resident_kib();
  feed_many_entries(s, 16u << 20, chunk);
  long grown = resident_kib() - before;
  std::string tail(64, '\0');
  s.feed(tail.data(), tail.size());
  // Before the fix each entry cost 4 bytes (a vector of archs per container): 64 MiB here.
  CHECK_MESSAGE(grown < 8 * 1024, "resident memory grew by " << grown << " KiB while scanning");
  const GpuCode& c = s.result();
  CHECK(c.containers == 1);
  CHECK(c.text() == "sm_80,sm_86,sm_90,compute_90");
  // The same container written out small gives the same shape.
  std::string small = fat_container(archs);
  FatbinScanner t;
  t.feed(small.data(), small.size());
  CHECK(t.result().served == c.served);
}
