#include "transfer/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/crc32c.h"
#include "base/errno_status.h"
#include "base/hash.h"
#include "base/strings.h"

namespace ferry::transfer {

std::string Journal::StateDir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* d = std::getenv("FERRY_STATE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) return std::string(x) + "/ferry";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/state/ferry";
}

std::string Journal::PathFor(const std::string& state_dir, const std::string& src_url,
                             const std::string& dst_url) {
  std::string id = Sha256Hex(src_url + "\n" + dst_url).substr(0, 32);
  return state_dir + "/transfers/" + id + ".journal";
}

namespace {
nlohmann::json ToJson(const JournalHeader& h) {
  return {{"src", h.src_url},         {"dst", h.dst_url}, {"size", h.size}, {"etag", h.src_etag},
          {"part_size", h.part_size}, {"token", h.token}, {"version", 1}};
}
}  // namespace

std::optional<Journal::Loaded> Journal::Load(const std::string& path, const JournalHeader& want) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  if (j.value("src", "") != want.src_url || j.value("dst", "") != want.dst_url) {
    return std::nullopt;
  }
  Loaded out{.token = j.value("token", "")};
  if (j.value("size", uint64_t{0}) != want.size || j.value("etag", "") != want.src_etag ||
      j.value("part_size", uint64_t{0}) != want.part_size) {
    out.matches = false;
    return out;
  }
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word, crc_hex;
    int n = 0;
    uint32_t crc = 0;
    if (ls >> word >> n >> crc_hex && word == "part" && n > 0 && ParseCrc32cHex(crc_hex, &crc)) {
      out.parts[n] = crc;
    }  // a torn last line is ignored
  }
  return out;
}

Result<std::unique_ptr<Journal>> Journal::Create(const std::string& path, const JournalHeader& h) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return ErrnoToStatus(ec.value(), "create state directory for '" + path + "'");
  std::string tmp = path + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << ToJson(h).dump() << "\n";
    if (!out) return ErrnoToStatus(errno, "write journal '" + tmp + "'");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return ErrnoToStatus(errno, "rename journal '" + tmp + "'");
  return Append(path);
}

Result<std::unique_ptr<Journal>> Journal::Append(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "open journal '" + path + "'");
  return std::unique_ptr<Journal>(new Journal(path, fd));
}

Journal::~Journal() {
  MutexLock lock(mu_);
  if (fd_ >= 0) ::close(fd_);
}

Status Journal::PartDone(int number, uint32_t crc) {
  std::string line = "part " + std::to_string(number) + " " + Crc32cHex(crc) + "\n";
  MutexLock lock(mu_);
  if (fd_ < 0) return Status();
  if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    return ErrnoToStatus(errno, "append to journal '" + path_ + "'");
  }
  return Status();
}

void Journal::Remove() {
  MutexLock lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
}

}  // namespace ferry::transfer
