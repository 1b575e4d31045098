#pragma once
// POSIX tar (ustar + pax) as WebDataset shards use it: a writer that produces byte-identical
// output for identical input, and a push parser that reads a shard as it streams in.
//
// Writer: regular files only; mode 0644, uid/gid 0, mtime 0, empty user/group names, so a shard
// depends on nothing but the sample names and bytes. A name that does not fit ustar's
// name/prefix fields, or a size of 8 GiB or more, gets a pax extended header ('x') first, as
// Python's tarfile and GNU tar write and read them. The archive ends with two zero blocks.
//
// Parser: accepts ustar, pax ('x' per-file, 'g' global ignored) and GNU long names ('L');
// directories and other non-regular entries are skipped. Each header's checksum is verified.
// Errors name the byte offset: a bad header checksum, an unparsable size, data ending inside
// an entry (truncated). A stream that ends at an entry boundary without the two zero blocks is
// accepted (Python's tarfile does too).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::shard {

inline constexpr uint64_t kTarBlock = 512;

// The header block(s) for one regular file of `size` bytes named `name`.
std::string TarFileHeader(std::string_view name, uint64_t size);
// Zero bytes that pad a file of `size` bytes to the block size.
std::string TarPadding(uint64_t size);
// The end-of-archive marker (two zero blocks).
std::string TarEnd();
// Bytes a file adds to an archive: headers + data + padding.
uint64_t TarEntrySize(std::string_view name, uint64_t size);

struct TarEntry {
  std::string name;
  uint64_t size = 0;
  uint64_t header_offset = 0;  // offset of its first header block (pax/GNU headers included)
  uint64_t data_offset = 0;
};

// Push parser. Feed() any chunking of the stream; callbacks fire in order:
// on_entry(entry) once its header is parsed, on_data(chunk) for its bytes (possibly split),
// on_end_of_entry() after its last byte. Call Finish() at end of stream.
class TarParser final {
 public:
  struct Callbacks {
    std::function<Status(const TarEntry&)> on_entry;
    std::function<Status(std::string_view)> on_data;
    std::function<Status()> on_end_of_entry;
  };
  // `base_offset`: the stream starts at this offset of the archive (a ranged read), which must
  // be a header boundary; offsets in entries and errors are archive offsets.
  TarParser(Callbacks callbacks, uint64_t base_offset = 0)
      : cb_(std::move(callbacks)), offset_(base_offset) {}

  Status Feed(std::string_view data);
  Status Finish();
  bool at_end() const { return state_ == State::kEnd; }
  uint64_t offset() const { return offset_; }  // archive offset of the next byte expected

 private:
  enum class State { kHeader, kData, kPadding, kMeta, kEnd };
  Status OnHeader();
  Status Fail(const std::string& what, uint64_t at) const;

  Callbacks cb_;
  State state_ = State::kHeader;
  uint64_t offset_ = 0;
  std::string header_;      // partial header block
  std::string meta_;        // pax / GNU long-name payload being collected
  char meta_type_ = 0;      // 'x', 'g' or 'L' while collecting meta_
  uint64_t remaining_ = 0;  // bytes left in the current data / padding / meta section
  uint64_t padding_after_ = 0;
  bool skip_data_ = false;    // the current entry is not a regular file
  std::string pending_name_;  // from a pax path= or GNU 'L' record
  std::optional<uint64_t> pending_size_;
  uint64_t entry_start_ = 0;  // offset of the first header of the current entry
  bool entry_started_ = false;
  int zero_blocks_ = 0;
};

}  // namespace ferry::shard
