#include "core/signal_cleanup.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

namespace imgtool {
namespace {

// A slot is free (0), being filled or emptied by its owner (1), or holding a path (2): the
// handler reads only slots in state 2, whose path no one writes meanwhile.
constexpr int kSlots = 128;
enum : int { kFree = 0, kBusy = 1, kHeld = 2 };
std::atomic<int> g_state[kSlots];
char g_path[kSlots][PATH_MAX];

// What getdents64(2) returns, record by record (the kernel's struct linux_dirent64).
struct Dirent64 {
  unsigned long long ino;
  long long off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

constexpr int kMaxDepth = 32;  // deeper trees are left (a private temp folder is shallow)

bool dot_or_dotdot(const char* n) { return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')); }

// Removes `name` in `dirfd`: a file or link by unlinkat, a folder by emptying it first
// (re-read from its start until empty, since removing entries while reading may skip some).
void remove_at(int dirfd, const char* name, int depth) {
  if (::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT || depth > kMaxDepth) return;
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  for (int pass = 0; pass < 4; ++pass) {
    ::lseek(fd, 0, SEEK_SET);
    bool removed_any = false;
    alignas(8) char buf[1024];
    for (long n; (n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;)
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<Dirent64*>(buf + off);
        off += d->reclen;
        if (dot_or_dotdot(d->name)) continue;
        remove_at(fd, d->name, depth + 1);
        removed_any = true;
      }
    if (!removed_any) break;
  }
  ::close(fd);
  ::unlinkat(dirfd, name, AT_REMOVEDIR);
}

}  // namespace

void CleanupSlot::hold(const std::filesystem::path& dir) {
  release();
  std::error_code ec;
  std::string abs = std::filesystem::absolute(dir, ec).string();
  if (ec || abs.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i)
    if (int free = kFree; g_state[i].compare_exchange_strong(free, kBusy)) {
      std::memcpy(g_path[i], abs.c_str(), abs.size() + 1);
      g_state[i].store(kHeld);
      slot_ = i;
      return;
    }
}

void CleanupSlot::release() {
  if (slot_ < 0) return;
  g_state[slot_].store(kFree);
  slot_ = -1;
}

void remove_registered_dirs() noexcept {
  int saved = errno;
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == kHeld) remove_at(AT_FDCWD, g_path[i], 0);
  errno = saved;
}

}  // namespace imgtool
