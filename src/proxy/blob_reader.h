#pragma once
// BlobReader: what the HTTP layer streams a response body from (BlobCache::Open).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/file_span.h"
#include "base/status.h"

namespace ferry::proxy {

// How an open was served.
enum class ReadSource : uint8_t {
  kHit,     // a published blob in the cache store
  kMiss,    // this open started the upstream fetch and reads it as it arrives
  kJoined,  // attached to a fetch already in flight
  kDirect,  // a range far ahead of the fetch, read from upstream directly (not verified)
};

class BlobReader {
 public:
  BlobReader(uint64_t offset, uint64_t length, uint64_t blob_size, ReadSource source)
      : offset_(offset), length_(length), blob_size_(blob_size), source_(source) {}
  virtual ~BlobReader() = default;
  BlobReader(const BlobReader&) = delete;
  BlobReader& operator=(const BlobReader&) = delete;

  // Copies up to `n` bytes of the range, in order, into `buf`; 0 at the end of the range.
  // Blocks until bytes are there. Never waits forever: a fetch that makes no progress for the
  // stall timeout fails with kDeadlineExceeded. Errors: the fetch's (kDataLoss for a truncated
  // or corrupt upstream, upstream codes), the store's. A range that includes the blob's last
  // byte ends (returns that byte, then 0) only once the whole blob is verified. Not
  // thread-safe: one reader per response. An error after some bytes went out means the
  // response is broken: the HTTP layer aborts it (closes the connection, or ends a chunked body
  // without its terminator), never ends it normally, so no client takes a partial or
  // unverified blob for a complete one.
  virtual Result<size_t> Read(char* buf, size_t n) = 0;

  // Instead of Read(), for readers whose bytes lie in a local file (a published blob in a local
  // store, the spool file of a fetch): waits as Read() does, then says where the next up to
  // `n` bytes of the range are, `length` bytes of `fd` from `offset` (the HTTP layer sends them
  // with sendfile(2)); length 0 at the end of the range, with Read()'s rule for the last byte.
  // `fd` stays open while the reader lives. kUnimplemented (the default, or after Read() was
  // used) when there is no such file: use Read().
  virtual Result<FileSpan> NextFileSpan(size_t n) {
    (void)n;
    return Status(StatusCode::kUnimplemented, "no local file behind this read");
  }

  // Makes a Read() blocked in another thread, and every later one, return kCancelled soon
  // (within 50 ms; a client went away, the server stops). A fetch the reader was attached to
  // goes on for its other readers and the cache. Thread-safe.
  void Cancel() { cancelled_ = true; }

  uint64_t offset() const { return offset_; }        // first byte of the range in the blob
  uint64_t length() const { return length_; }        // bytes in the range
  uint64_t blob_size() const { return blob_size_; }  // size of the whole blob
  ReadSource source() const { return source_; }

 protected:
  std::atomic<bool> cancelled_{false};

 private:
  uint64_t offset_, length_, blob_size_;
  ReadSource source_;
};

}  // namespace ferry::proxy
