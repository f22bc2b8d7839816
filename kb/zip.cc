#include "kb/zip.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/strings.h"

namespace imgtool::kb {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr size_t kLocalHeader = 30, kCentralHeader = 46, kEndRecord = 22, kZip64End = 56, kZip64Locator = 20;
constexpr uint64_t kMaxDirectory = 64u << 20;  // a wheel of 3,500 files has 350 KB
constexpr size_t kChunk = 1 << 20;
constexpr uint16_t kFlagEncrypted = 0x0001, kFlagDescriptor = 0x0008, kFlagStrongEncryption = 0x0040;
constexpr uint32_t kOverflow32 = 0xffffffff;

uint16_t le16(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | u[1] << 8);
}
uint32_t le32(const char* p) { return le16(p) | static_cast<uint32_t>(le16(p + 2)) << 16; }
uint64_t le64(const char* p) { return le32(p) | static_cast<uint64_t>(le32(p + 4)) << 32; }

std::string bytes_at(ZipInput& in, uint64_t at, size_t n) {
  std::string s(n, '\0');
  in.read(at, s.data(), n);
  return s;
}

struct EndRecord {
  uint64_t entries = 0, dir_size = 0, dir_offset = 0;
  uint64_t dir_end = 0;  // where the directory must end: the (zip64) end record
};

// Python's _EndRecData: the last 22 bytes when they are an end record without a comment, else
// the last signature in the final 64 KiB + 22 bytes. Its comment must end the file.
uint64_t find_end_record(ZipInput& in, const std::string& where) {
  uint64_t size = in.size();
  if (size >= kEndRecord) {
    std::string last = bytes_at(in, size - kEndRecord, kEndRecord);
    if (le32(last.data()) == kEndSig && le16(last.data() + 20) == 0) return size - kEndRecord;
  }
  uint64_t start = size > kEndRecord + 0xffff ? size - kEndRecord - 0xffff : 0;
  std::string tail = bytes_at(in, start, size - start);
  size_t pos = tail.rfind(std::string("PK\x05\x06", 4));
  if (pos == std::string::npos || tail.size() - pos < kEndRecord)
    throw InputError(where + ": expected a wheel (a zip file), found no end-of-central-directory record");
  if (pos + kEndRecord + le16(tail.data() + pos + 20) != tail.size())
    throw InputError(where + ": expected the end-of-central-directory record's comment to end the file, found " +
                     std::to_string(tail.size() - pos - kEndRecord) + " bytes after the record");
  return start + pos;
}

// The zip64 end record sits right before its locator, which sits right before the end record
// (where Python looks for it); the locator's offset must agree.
void read_zip64(ZipInput& in, uint64_t end_at, EndRecord& r, const std::string& where) {
  if (end_at < kZip64Locator + kZip64End) throw InputError(where + ": expected a zip64 end record, found none");
  uint64_t record_at = end_at - kZip64Locator - kZip64End;
  std::string loc = bytes_at(in, end_at - kZip64Locator, kZip64Locator);
  std::string rec = bytes_at(in, record_at, kZip64End);
  if (le32(rec.data()) != kZip64EndSig || le64(loc.data() + 8) != record_at || le64(rec.data() + 4) != kZip64End - 12)
    throw InputError(where + ": expected a zip64 end record right before its locator, found none");
  if (le32(loc.data() + 4) != 0 || le32(loc.data() + 16) != 1 || le32(rec.data() + 16) != 0 ||
      le32(rec.data() + 20) != 0 || le64(rec.data() + 24) != le64(rec.data() + 32))
    throw InputError(where + ": expected a single-disk zip, found a zip64 record for several disks");
  r = {le64(rec.data() + 32), le64(rec.data() + 40), le64(rec.data() + 48), record_at};
}

EndRecord read_end_record(ZipInput& in, const std::string& where) {
  uint64_t at = find_end_record(in, where);
  std::string e = bytes_at(in, at, kEndRecord);
  if (le16(e.data() + 4) != 0 || le16(e.data() + 6) != 0 || le16(e.data() + 8) != le16(e.data() + 10))
    throw InputError(where + ": expected a single-disk zip, found an end record for several disks");
  EndRecord r{le16(e.data() + 10), le32(e.data() + 12), le32(e.data() + 16), at};
  if (at >= kZip64Locator && le32(bytes_at(in, at - kZip64Locator, 4).data()) == kZip64LocatorSig)
    read_zip64(in, at, r, where);
  if (r.dir_offset > r.dir_end || r.dir_end - r.dir_offset != r.dir_size)
    throw InputError(where + ": expected the central directory (" + std::to_string(r.dir_size) + " bytes at offset " +
                     std::to_string(r.dir_offset) + ") to end at the end record (offset " + std::to_string(r.dir_end) +
                     "), found it does not: bytes before or after it");
  if (r.dir_size > kMaxDirectory)
    throw InputError(where + ": expected a central directory of at most 64 MiB, found " + std::to_string(r.dir_size) +
                     " bytes");
  return r;
}

// The zip64 extra field (0x0001): 8-byte values for the fields the header set to 0xffffffff,
// in the order size, compressed size, offset (Python's _decodeExtra).
void apply_zip64_extra(std::string_view extra, ZipEntry& e, const std::string& where) {
  for (size_t i = 0; i + 4 <= extra.size();) {
    uint16_t id = le16(extra.data() + i), len = le16(extra.data() + i + 2);
    if (i + 4 + len > extra.size()) throw InputError(where + ": expected extra fields that fit, found one cut short");
    size_t at = i + 4;
    for (uint64_t* field : {&e.size, &e.compressed_size, &e.local_offset}) {
      if (id != 1 || *field != kOverflow32) continue;
      if (at + 8 > i + 4 + len) throw InputError(where + ": expected a zip64 extra field with 8 more bytes");
      *field = le64(extra.data() + at);
      at += 8;
    }
    i += 4 + len;
  }
}

// Why pip could take `name` for another file's name, or "" when it cannot.
std::string name_problem(const std::string& name) {
  if (name.empty()) return "an empty name";
  if (name.find('\0') != std::string::npos) return "a NUL byte (Python cuts the name there)";
  if (name[0] == '/') return "an absolute name";
  std::string body = name.back() == '/' ? name.substr(0, name.size() - 1) : name;  // a directory entry
  for (const auto& seg : strings::split(body, '/'))
    if (seg.empty() || seg == "." || seg == "..") return "a '" + seg + "' segment (pip normalises it away)";
  return "";
}

ZipEntry central_header(const std::string& dir, size_t& i, const std::string& where) {
  if (dir.size() - i < kCentralHeader || le32(dir.data() + i) != kCentralSig)
    throw InputError(where + ": expected a central directory header at directory offset " + std::to_string(i) +
                     ", found none");
  const char* h = dir.data() + i;
  size_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
  if (dir.size() - i - kCentralHeader < name_len + extra_len + comment_len)
    throw InputError(where + ": expected a central directory header that fits the directory, found one cut short");
  ZipEntry e{dir.substr(i + kCentralHeader, name_len),
             le16(h + 8),
             le16(h + 10),
             le32(h + 16),
             le32(h + 20),
             le32(h + 24),
             le32(h + 42)};
  std::string at = where + ": " + strings::printable(e.name);
  apply_zip64_extra(std::string_view(dir).substr(i + kCentralHeader + name_len, extra_len), e, at);
  if (std::string why = name_problem(e.name); !why.empty())
    throw InputError(at + ": expected a plain relative entry name, found " + why);
  i += kCentralHeader + name_len + extra_len + comment_len;
  return e;
}

std::vector<ZipEntry> read_directory(ZipInput& in, const EndRecord& r, const std::string& where) {
  std::string dir = bytes_at(in, r.dir_offset, r.dir_size);
  std::vector<ZipEntry> entries;
  std::set<std::string> names;
  for (size_t i = 0; i < dir.size();) {
    entries.push_back(central_header(dir, i, where));
    if (!names.insert(entries.back().name).second)
      throw InputError(where + ": " + strings::printable(entries.back().name) +
                       ": expected each name once in the central directory, found it twice");
  }
  if (entries.size() != r.entries)
    throw InputError(where + ": expected " + std::to_string(r.entries) +
                     " central directory entries (the end record's count), found " + std::to_string(entries.size()));
  std::stable_sort(entries.begin(), entries.end(),
                   [](const ZipEntry& a, const ZipEntry& b) { return a.local_offset < b.local_offset; });
  return entries;
}

// A raw inflate stream (zip's deflate has no zlib or gzip header).
struct Inflater {
  z_stream z{};
  explicit Inflater(const std::string& where) {
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw Error(where + ": cannot start zlib's inflate");
  }
  ~Inflater() { inflateEnd(&z); }
};

}  // namespace

FileZipInput::FileZipInput(const std::string& path) : path_(strings::printable(path)) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = fd_ < 0 ? std::strerror(errno) : "not a regular file";
    if (fd_ >= 0) ::close(fd_);
    throw InputError(path_ + ": expected a wheel file, found none (" + why + ")");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileZipInput::~FileZipInput() { ::close(fd_); }

void FileZipInput::read(uint64_t at, char* out, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw InputError(path_ + ": expected " + std::to_string(n) + " bytes at offset " + std::to_string(at) +
                       ", found " + (r < 0 ? std::strerror(errno) : "the end of the file"));
    done += static_cast<size_t>(r);
  }
}

void MemoryZipInput::read(uint64_t at, char* out, size_t n) {
  if (at > bytes_.size() || bytes_.size() - at < n)
    throw InputError("zip: expected " + std::to_string(n) + " bytes at offset " + std::to_string(at) +
                     ", found the end of the input");
  std::memcpy(out, bytes_.data() + at, n);
}

ZipReader::ZipReader(ZipInput& in, std::string where) : in_(in), where_(strings::printable(where)) {
  EndRecord r = read_end_record(in_, where_);
  entries_ = read_directory(in_, r, where_);
  directory_offset_ = r.dir_offset;
}

namespace {

// The file read once in order: every byte goes to `raw` (when set) as it is read.
struct ZipCursor {
  ZipInput& in;
  const std::function<void(const char*, size_t)>& raw;
  uint64_t pos = 0;
  std::vector<char> buf = std::vector<char>(kChunk);

  // Up to n (> 0) bytes at pos, in buf; returns how many.
  size_t chunk(uint64_t n) {
    size_t k = static_cast<size_t>(std::min<uint64_t>(n, buf.size()));
    in.read(pos, buf.data(), k);
    if (raw) raw(buf.data(), k);
    pos += k;
    return k;
  }
  std::string take(size_t n) {
    std::string s = bytes_at(in, pos, n);
    if (raw) raw(s.data(), n);
    pos += n;
    return s;
  }
  // n bytes no one reads but `raw`: skipped without it.
  void pass(uint64_t n) {
    if (!raw) pos += n;
    while (raw && n > 0) n -= chunk(n);
  }
};

// The bytes between the end of one entry's data (or the file's start) and the next header:
// none, or the data descriptor of an entry with flag bit 3 (12 to 24 bytes, too short to hide a
// local header of 30). Anything else is an entry the directory does not list, or an overlap.
void check_gap(uint64_t pos, uint64_t next, bool descriptor, const std::string& where) {
  uint64_t gap = next >= pos ? next - pos : 0;
  if (next < pos)
    throw InputError(where + ": expected entries that do not overlap, found one starting at offset " +
                     std::to_string(next) + ", inside the one before it (which ends at " + std::to_string(pos) + ")");
  if (gap != 0 && !(descriptor && gap >= 12 && gap <= 24))
    throw InputError(where + ": expected only entries the central directory lists, found " + std::to_string(gap) +
                     " unlisted bytes at offset " + std::to_string(pos) + " (an entry only a streaming reader sees)");
}

// The local header against the directory: the same name, method, flags and, unless a data
// descriptor carries them, the same CRC and sizes (0xffffffff: in a zip64 extra, checked there).
void check_local_header(const std::string& h, const std::string& name, const ZipEntry& e, const std::string& where) {
  auto differs = [](uint32_t local, uint64_t central) { return local != kOverflow32 && local != central; };
  std::string what = name != e.name ? "a local header naming " + strings::quoted(name)
                     : le16(h.data() + 8) != e.method || le16(h.data() + 6) != e.flags
                         ? "a local header with another method or flags"
                     : !(e.flags & kFlagDescriptor) &&
                             (le32(h.data() + 14) != e.crc || differs(le32(h.data() + 18), e.compressed_size) ||
                              differs(le32(h.data() + 22), e.size))
                         ? "a local header with another CRC or sizes"
                         : "";
  if (!what.empty())
    throw InputError(where + ": expected the local header at offset " + std::to_string(e.local_offset) +
                     " to agree with the central directory, found " + what);
}

// Hands `v` an entry's bytes, holding them to its declared size and CRC.
struct Delivery {
  ZipVisitor& v;
  const ZipEntry& e;
  std::string where;
  uint64_t produced = 0;
  uLong crc = crc32(0, nullptr, 0);

  void operator()(const char* p, size_t n) {
    if (n > e.size - produced)
      throw InputError(where + ": expected " + std::to_string(e.size) + " bytes (its declared size), found more");
    produced += n;
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n));
    v.data(p, n);
  }
  void finish() {
    if (produced != e.size || crc != e.crc)
      throw InputError(where + ": expected " + std::to_string(e.size) + " bytes with CRC-32 " + std::to_string(e.crc) +
                       " (the central directory's), found " + std::to_string(produced) + " with " +
                       std::to_string(crc));
  }
};

void read_stored(ZipCursor& c, Delivery& d) {
  if (d.e.compressed_size != d.e.size)
    throw InputError(d.where + ": expected a stored entry's two sizes to agree, found " +
                     std::to_string(d.e.compressed_size) + " and " + std::to_string(d.e.size));
  for (uint64_t left = d.e.size; left > 0;) {
    size_t k = c.chunk(left);
    d(c.buf.data(), k);
    left -= k;
  }
}

void read_deflated(ZipCursor& c, Delivery& d) {
  Inflater inf(d.where);
  std::vector<char> out(1 << 18);
  uint64_t left = d.e.compressed_size;
  for (int r = Z_OK; r != Z_STREAM_END;) {
    if (inf.z.avail_in == 0 && left == 0)
      throw InputError(d.where +
                       ": expected a deflate stream that ends within its compressed size, found it cut short");
    if (inf.z.avail_in == 0) {
      size_t k = c.chunk(left);
      left -= k;
      inf.z.next_in = reinterpret_cast<Bytef*>(c.buf.data());
      inf.z.avail_in = static_cast<uInt>(k);
    }
    inf.z.next_out = reinterpret_cast<Bytef*>(out.data());
    inf.z.avail_out = static_cast<uInt>(out.size());
    r = inflate(&inf.z, Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
      throw InputError(d.where + ": expected deflate data, found " + (inf.z.msg ? inf.z.msg : "a corrupt stream"));
    d(out.data(), out.size() - inf.z.avail_out);
  }
  if (inf.z.avail_in != 0 || left != 0)
    throw InputError(d.where + ": expected the deflate stream to fill its compressed size, found bytes after its end");
}

// One entry, its local header at c.pos: checked, then read if `v` wants it, else passed over.
void walk_entry(ZipCursor& c, const ZipEntry& e, ZipVisitor& v, uint64_t directory_offset, const std::string& where) {
  std::string h = c.take(kLocalHeader);
  if (le32(h.data()) != kLocalSig)
    throw InputError(where + ": expected a local header at offset " + std::to_string(e.local_offset) +
                     " (the central directory's), found none");
  check_local_header(h, c.take(le16(h.data() + 26)), e, where);
  c.take(le16(h.data() + 28));  // the extra field
  if (c.pos > directory_offset || directory_offset - c.pos < e.compressed_size)
    throw InputError(where + ": expected its data to end before the central directory, found it does not");
  if (!v.want(e)) return c.pass(e.compressed_size);
  if ((e.flags & (kFlagEncrypted | kFlagStrongEncryption)) || (e.method != 0 && e.method != 8))
    throw InputError(where + ": expected stored or deflated data, unencrypted, found method " +
                     std::to_string(e.method) + " with flags " + std::to_string(e.flags));
  Delivery d{v, e, where};
  e.method == 0 ? read_stored(c, d) : read_deflated(c, d);
  d.finish();
  v.end(e);
}

}  // namespace

void ZipReader::walk(ZipVisitor& v, const std::function<void(const char*, size_t)>& raw) {
  ZipCursor c{in_, raw};
  bool descriptor = false;
  for (const ZipEntry& e : entries_) {
    std::string where = where_ + ": " + strings::printable(e.name);
    check_gap(c.pos, e.local_offset, descriptor, where);
    c.pass(e.local_offset - c.pos);
    walk_entry(c, e, v, directory_offset_, where);
    descriptor = e.flags & kFlagDescriptor;
  }
  check_gap(c.pos, directory_offset_, descriptor, where_ + ": the central directory");
  c.pass(in_.size() - c.pos);
}

}  // namespace imgtool::kb
