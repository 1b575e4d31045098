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
#include "base/json_text.h"
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
// Names of local files need not be UTF-8, which JSON text must be: the header holds URLs with
// each invalid byte replaced by U+FFFD (the journal's file name, a hash of the exact URLs, tells
// journals apart), and Load compares against the same replacement. Tokens must stay exact: their
// line is percent-encoded.
std::string Lossy(const std::string& s) {
  return nlohmann::json::parse(JsonText(nlohmann::json(s))).get<std::string>();
}

nlohmann::json ToJson(const JournalHeader& h) {
  nlohmann::json j = {{"src", h.src_url},   {"dst", h.dst_url},         {"size", h.size},
                      {"etag", h.src_etag}, {"part_size", h.part_size}, {"token", h.token},
                      {"version", 2}};
  if (h.started) {
    j["started_ms"] =
        std::chrono::duration_cast<std::chrono::milliseconds>(h.started->time_since_epoch())
            .count();
  }
  return j;
}
}  // namespace

std::optional<Journal::Loaded> Journal::Load(const std::string& path, const JournalHeader& want) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  if (j.value("src", "") != Lossy(want.src_url) || j.value("dst", "") != Lossy(want.dst_url)) {
    return std::nullopt;
  }
  Loaded out{.token = j.value("token", "")};
  if (auto ms = j.find("started_ms"); ms != j.end() && ms->is_number_integer()) {
    out.started = SystemTime(std::chrono::milliseconds(ms->get<int64_t>()));
  }
  bool matches = j.value("size", uint64_t{0}) == want.size &&
                 j.value("etag", "") == Lossy(want.src_etag) &&
                 j.value("part_size", uint64_t{0}) == want.part_size;
  while (std::getline(in, line)) {
    if (StartsWith(line, "token ")) {
      if (auto token = PercentDecode(std::string_view(line).substr(6))) out.token = *token;
      continue;
    }
    if (!matches) continue;
    std::istringstream ls(line);
    std::string word, crc_hex;
    int n = 0;
    uint32_t crc = 0;
    if (ls >> word >> n >> crc_hex && word == "part" && n > 0 && ParseCrc32cHex(crc_hex, &crc)) {
      out.parts[n] = crc;
    }  // a torn last line is ignored
  }
  out.matches = matches;
  return out;
}

Result<std::unique_ptr<Journal>> Journal::Create(const std::string& path, const JournalHeader& h) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return ErrnoToStatus(ec.value(), "create state directory for '" + path + "'");
  std::string tmp = path + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << JsonText(ToJson(h)) << "\n";
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

Status Journal::SetToken(std::string_view token) {
  return AppendLine("token " + PercentEncode(token) + "\n");
}

Status Journal::PartDone(int number, uint32_t crc) {
  return AppendLine("part " + std::to_string(number) + " " + Crc32cHex(crc) + "\n");
}

Status Journal::AppendLine(const std::string& line) {
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
