// A zip file read as pip reads it (Python's zipfile): by its CENTRAL DIRECTORY, the list at the
// end of the file, never by the local headers in front of each entry's data (which a streaming
// reader such as libarchive's zip_streamable follows). A crafted zip can tell those two readers
// different stories (one version file at offset 0 for the stream, another listed in the
// directory for pip), so ZipReader refuses every zip in which they could differ.
//
// Format (PKWARE APPNOTE.TXT 6.3.10: 4.3.7 local file header, 4.3.9 data descriptor, 4.3.12
// central directory header, 4.3.14/4.3.15 zip64 end record and locator, 4.3.16 end record,
// 4.5.3 zip64 extra field):
//   [local header 30 B, name, extra][data][data descriptor if flag bit 3] ... one per entry
//   [central directory: one 46 B header + name + extra + comment per entry]
//   [zip64 end record 56 B + locator 20 B, only when sizes or counts overflow 32 bits]
//   [end record 22 B + comment]
//
// Refused (InputError, one line naming the file and, where there is one, the entry):
//   - no end record, or one whose comment does not end the file; a multi-disk zip
//   - a directory that does not end where the (zip64) end record begins, or that does not hold
//     the number of entries the end record says
//   - a name that is empty, absolute, holds NUL (Python cuts a name there) or a ".", ".." or
//     empty segment (pip normalises those: two names for one file); the same name twice
//   - an entry whose local header is not at the directory's offset, names another file or
//     declares another compression method, flags or (without a data descriptor) sizes
//   - bytes the directory does not list: the entries must tile the file from offset 0 to the
//     directory, only a data descriptor (12 to 24 bytes) may follow an entry's data
//   - when an entry is read: encryption, a method other than stored (0) or deflate (8), data
//     that does not inflate to exactly its declared size, a CRC-32 that does not match
// Checks that need only the directory run in the constructor; the local headers are checked by
// walk(), one pass over the file in order.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace imgtool::kb {

// Random access to the zip's bytes. read() fills exactly n bytes or throws InputError.
class ZipInput {
 public:
  virtual ~ZipInput() = default;
  virtual uint64_t size() const = 0;
  virtual void read(uint64_t at, char* out, size_t n) = 0;
};

// A file opened for reading (InputError naming `path` when it cannot be).
class FileZipInput : public ZipInput {
 public:
  explicit FileZipInput(const std::string& path);
  ~FileZipInput() override;
  uint64_t size() const override { return size_; }
  void read(uint64_t at, char* out, size_t n) override;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Bytes in memory (tests, the fuzz target); `bytes` must outlive it.
class MemoryZipInput : public ZipInput {
 public:
  explicit MemoryZipInput(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  void read(uint64_t at, char* out, size_t n) override;

 private:
  std::string_view bytes_;
};

// One central directory entry: what pip sees.
struct ZipEntry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0, size = 0;  // size: the declared uncompressed size
  uint64_t local_offset = 0;               // where its local header starts
};

// What walk() does with each entry, in file order.
class ZipVisitor {
 public:
  virtual ~ZipVisitor() = default;
  // Whether to read this entry: if so its bytes go to data() (exactly e.size of them, in
  // chunks), then end(). May throw to refuse the zip.
  virtual bool want(const ZipEntry& e) = 0;
  virtual void data(const char* p, size_t n) = 0;
  virtual void end(const ZipEntry& e) = 0;
};

class ZipReader {
 public:
  // Reads the end record and the directory and checks them. `where` names the zip in errors
  // (printable() is applied to it and to every entry name).
  ZipReader(ZipInput& in, std::string where);
  const std::vector<ZipEntry>& entries() const { return entries_; }  // in file order
  // One pass over the file in order, each local header checked against the directory. `raw`,
  // when set, sees every byte of the file exactly once, in order (to hash it); without it the
  // entries no one wants are not read.
  void walk(ZipVisitor& v, const std::function<void(const char*, size_t)>& raw = {});

 private:
  ZipInput& in_;
  std::string where_;
  std::vector<ZipEntry> entries_;
  uint64_t directory_offset_ = 0;
};

}  // namespace imgtool::kb
