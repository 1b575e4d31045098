#include "shard/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <vector>

#include "base/errno_status.h"
#include "base/hash.h"
#include "base/log.h"

namespace ferry::shard {

namespace fs = std::filesystem;

std::string ShardCache::PathFor(const std::string& url, uint64_t size,
                                const std::string& crc) const {
  std::string h = Sha256Hex(url + "\n" + std::to_string(size) + "\n" + crc);
  return dir_ + "/" + h.substr(0, 32) + ".tar";
}

std::optional<std::string> ShardCache::Lookup(const std::string& url, uint64_t size,
                                              const std::string& crc) {
  if (!enabled() || crc.empty()) return std::nullopt;
  std::string path = PathFor(url, size, crc);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != size)
    return std::nullopt;
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used
  return path;
}

Result<std::string> ShardCache::TempPath(const std::string& url, uint64_t size,
                                         const std::string& crc) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cache dir '" + dir_ + "': " + ec.message());
  std::random_device rd;
  return PathFor(url, size, crc) + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(rd());
}

Status ShardCache::Publish(const std::string& temp, const std::string& url, uint64_t size,
                           const std::string& crc) {
  std::string path = PathFor(url, size, crc);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoToStatus(errno, "publish cached shard '" + path + "'");
    ::unlink(temp.c_str());
    return s;
  }
  Evict();
  return Status();
}

void ShardCache::Evict() {
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() != ".tar") continue;  // temp files of readers still filling them
    std::error_code ec2;
    uint64_t size = e.file_size(ec2);
    auto used = e.last_write_time(ec2);
    if (ec2) continue;
    entries.push_back({e.path(), size, used});
    total += size;
  }
  if (total <= capacity_) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const auto& e : entries) {
    if (total <= capacity_) break;
    if (fs::remove(e.path, ec)) total -= e.size;
  }
  Log(LogLevel::kDebug, "shard cache '{}' trimmed to {} bytes", dir_, total);
}

}  // namespace ferry::shard
