#pragma once
// Resume journal of one large object copy.
//
// A text file in the state directory, named after a hash of (source URL, destination URL).
// Line 1 is a JSON header naming the source version (size, ETag), the part size and when the
// copy began. It is written *before* the destination's part write starts, as an intent; the
// write's resume token (S3 upload id or local temporary file) follows on its own line,
// `token ...` (percent-encoded), once the destination has made it. So a copy killed between the
// two leaves a journal with a start time and no token, and the next run discards what the
// destination began since then (Store::AbortPartWritesSince) instead of leaving it for good.
// Each completed part then appends "part N CRC32C" (one write() of a short line, atomic with
// O_APPEND). The part's data is durable at the destination before its line is written, so a line
// never claims a part that is not there; a lost line only means the part is copied again. A
// journal whose header does not match the current source (changed object, other part size) is
// discarded. Version 1 journals (the token in the header) are still read.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"
#include "base/time_format.h"

namespace ferry::transfer {

struct JournalHeader {
  std::string src_url, dst_url;
  uint64_t size = 0;
  std::string src_etag;
  uint64_t part_size = 0;
  std::string token;  // destination resume token ("" in an intent: SetToken adds it)
  std::optional<SystemTime> started;  // when the copy began (the intent's time)
};

class Journal final {
 public:
  // The state directory: `configured`, else $FERRY_STATE_DIR, else $XDG_STATE_HOME/ferry, else
  // $HOME/.local/state/ferry; transfers/ below it holds the journals.
  static std::string StateDir(const std::string& configured);
  static std::string PathFor(const std::string& state_dir, const std::string& src_url,
                             const std::string& dst_url);

  struct Loaded {
    std::string token;                  // "" when the run was killed before it had one
    std::optional<SystemTime> started;  // version 2 journals
    std::map<int, uint32_t> parts;      // part number -> CRC32C
    // False when the journal is for the same source and destination but another version of
    // the source (size, ETag) or another part size: its parts are useless and its `token`
    // names what to discard (parts is empty then).
    bool matches = true;
  };
  // The journal at `path` for `want`'s source and destination; nullopt when there is none.
  static std::optional<Loaded> Load(const std::string& path, const JournalHeader& want);

  // Writes a fresh journal (header only), replacing any old one.
  static Result<std::unique_ptr<Journal>> Create(const std::string& path,
                                                 const JournalHeader& header);
  // Opens an existing journal for appending more parts.
  static Result<std::unique_ptr<Journal>> Append(const std::string& path);

  ~Journal();
  // Records the destination's resume token after an intent (a header without one).
  Status SetToken(std::string_view token);
  Status PartDone(int number, uint32_t crc);  // thread-safe
  void Remove();                              // the copy finished or was abandoned

 private:
  Journal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status AppendLine(const std::string& line);
  const std::string path_;
  Mutex mu_;
  int fd_ GUARDED_BY(mu_);
};

}  // namespace ferry::transfer
