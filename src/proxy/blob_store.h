#pragma once
// BlobStore: content-addressed blobs in any storage::Store (a local directory, an NFS path,
// an S3 bucket).
//
// Layout: <prefix>blobs/<algorithm>/<hex[0:2]>/<hex>, e.g. blobs/sha256/ab/ab12...
// Publish rule: a blob is written through a VerifyingWriter, which streams into a Writer for
// the final key and calls Writer::Commit() only after the byte count and the digest match.
// Writer::Commit() is the store's atomic publish (local: write to an unnamed or temporary file,
// fsync, rename; S3: one PUT or CompleteMultipartUpload, nothing visible before), so a key
// under blobs/ only ever holds verified bytes, also after kill -9 or a full disk. Because the
// key is the digest, two processes publishing the same blob write identical bytes: the last
// rename or PUT wins and nothing is lost, so no lock is needed (NFS, S3).
// Thread-safety: all methods may be called concurrently; a VerifyingWriter by one thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/digest.h"
#include "storage/store.h"

namespace ferry::proxy {

// Streams one blob into the store, hashing as it goes; publishes it only when it is verified.
// Destroying an unfinished writer aborts it (nothing published).
class VerifyingWriter final {
 public:
  // The bytes go to `writer`; Finish() commits it.
  VerifyingWriter(Digest digest, uint64_t size, std::string url,
                  std::unique_ptr<storage::Writer> writer);
  // The bytes are in a file already (BlobStore::NewWriter's `spool_file`): Append() only hashes
  // them and Finish() runs `publish`, which gives the file the blob's name.
  VerifyingWriter(Digest digest, uint64_t size, std::string url, std::function<Status()> publish);
  ~VerifyingWriter();
  VerifyingWriter(const VerifyingWriter&) = delete;
  VerifyingWriter& operator=(const VerifyingWriter&) = delete;

  // kDataLoss when the data runs past the expected size; store errors as they come (a full
  // disk is kResourceExhausted). After an error the writer is aborted.
  Status Append(std::string_view data);
  // Checks the size and the digest, then commits. kDataLoss (nothing published) on a mismatch.
  Status Finish();
  void Abort();
  uint64_t bytes() const { return hasher_.bytes(); }
  // True when Finish() publishes the caller's file instead of bytes written here.
  bool links() const { return publish_ != nullptr; }

 private:
  Digest digest_;
  uint64_t size_;
  std::string url_;
  std::unique_ptr<storage::Writer> writer_;  // null once finished or aborted, or linking
  std::function<Status()> publish_;          // the linking form; null once finished or aborted
  bool done_ = false;
  BlobHasher hasher_;
};

struct StoredBlob {
  Digest digest;
  uint64_t size = 0;
  std::optional<SystemTime> modified;
};

class BlobStore final {
 public:
  // `prefix` is "" or ends in '/'.
  BlobStore(std::shared_ptr<storage::Store> store, std::string prefix = "");

  std::string KeyFor(const Digest& digest) const;
  std::string UrlFor(const Digest& digest) const { return store_->UrlFor(KeyFor(digest)); }
  storage::Store& store() { return *store_; }
  // The blob's file when the store has local files (Store::LocalPathFor); nullopt elsewhere.
  std::optional<std::string> LocalPathFor(const Digest& digest) const {
    return store_->LocalPathFor(KeyFor(digest));
  }
  const std::string& prefix() const { return prefix_; }

  // The size of a published blob; kNotFound when it is not cached.
  Result<uint64_t> Stat(const Digest& digest);
  // Streams a range of a published blob (Store::Read semantics).
  Status Read(const Digest& digest, const storage::ByteRange& range, const storage::ByteSink& sink);
  // Starts writing a blob of `size` bytes (see VerifyingWriter). `spool_file`, when given, is a
  // local file the caller fills with the same bytes, in order, before Finish() (InflightBlob's
  // spool). Where the store can take that file as it is (Store::LinkLocalFile: a local store on
  // the same filesystem and mount), Append() then only hashes, and Finish() publishes the file
  // by a hard link: one write per byte instead of two. Elsewhere the bytes go to a Writer as
  // without it; a store that refuses the link at Finish() gets the file copied once, and every
  // later blob is written through a Writer.
  Result<std::unique_ptr<VerifyingWriter>> NewWriter(const Digest& digest, uint64_t size,
                                                     const std::string& spool_file = "");
  Status Delete(const Digest& digest);

  // Lists every published blob (the startup scan that rebuilds sizes). Objects under blobs/
  // whose key is not a well-formed content address (foreign files, a future layout) are
  // reported in `foreign` and left alone.
  struct ScanResult {
    std::vector<StoredBlob> blobs;
    std::vector<std::string> foreign;
  };
  Result<ScanResult> Scan();

 private:
  storage::WriteOptions WriteOptionsFor(const Digest& digest) const;
  // Publishes `file` as the blob by a link, or by a copy when the store refuses the link.
  Status LinkOrCopy(const Digest& digest, const std::string& file);

  std::shared_ptr<storage::Store> store_;
  std::string prefix_;
  std::atomic<bool> link_refused_{false};
};

}  // namespace ferry::proxy
