#pragma once
// Store: the one storage interface every part of Ferry reads and writes through.
//
// A store is a flat namespace of keys (byte strings) mapping to immutable objects, like an S3
// bucket. Directories are implied by '/' in keys. Backends: memory (tests), local (disks and
// NFS/NAS paths), s3 (any S3-compatible endpoint), http(s) (read-only).
//
// Contract (checked for every backend by storage/testing/store_conformance):
//  - A write appears complete or not at all: Writer::Commit() publishes the whole object at once;
//    a writer destroyed or aborted before Commit() leaves nothing visible.
//  - Read() delivers bytes in order to a sink; a range starting past the end is kOutOfRange, one
//    ending past the end is cut at the end. Transient faults are retried inside the backend,
//    resuming where the sink left off, never delivering a byte twice.
//  - List() pages are in byte order of keys. With recursive=false, keys below a '/' after the
//    prefix are folded into common prefixes ("dir/").
//  - Delete() of a missing key succeeds (S3 semantics); callers that care Stat() first.
//  - Missing objects are kNotFound; errors name the operation and the URL.
// Thread-safety: every method may be called concurrently; a Writer is used by one thread.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/hash.h"
#include "base/status.h"
#include "base/time_format.h"

namespace ferry::storage {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::optional<SystemTime> modified;
  std::string etag;                             // opaque version tag ("" when the backend has none)
  std::map<std::string, std::string> metadata;  // user metadata; filled by Stat(), not List()
};

struct ByteRange {
  uint64_t offset = 0;
  std::optional<uint64_t> length;  // nullopt = to the end
};

struct ReadOptions {
  std::optional<ByteRange> range;
  std::string if_match;  // non-empty: kFailedPrecondition unless the etag matches
  // When set, filled with the object's size, etag and user metadata before the first byte
  // reaches the sink (from the GET answer's headers: no extra request).
  ObjectInfo* info = nullptr;
};

// Receives data in order; a non-OK status stops the read and is returned by Read().
using ByteSink = std::function<Status(std::string_view chunk)>;
// Told how many more bytes ReadInto() placed; a non-OK status stops the read and is returned.
using ReadProgress = std::function<Status(size_t bytes)>;

struct WriteOptions {
  bool if_none_match = false;  // create only: kAlreadyExists (or kFailedPrecondition) if present
  std::map<std::string, std::string> metadata;  // lower-case names, ASCII values
  std::string content_type;
  // Local files: fsync the directory after the rename, so the name is durable when the write
  // returns. False: the caller makes it durable later (the copy engine syncs each directory once
  // before it reports success); the data is fsynced before the
  // rename either way, so a name that survives a crash always has all of its bytes.
  bool sync_directory = true;
  // Local files: Commit() finishes the file but gives it its name only with a batch of others,
  // made durable by one filesystem sync (local/publisher.h), at the latest at the store's next
  // Flush(), which the caller must call before it relies on the names. Commit's ObjectInfo
  // describes the file to be. A process killed in between leaves nothing (the file never got a
  // name). Other stores publish at Commit() as always.
  bool publish_later = false;
};

// Streams one object into a store. Append() any number of times, then Commit() or Abort().
// Destroying an uncommitted writer aborts it.
class Writer {
 public:
  virtual ~Writer() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual Result<ObjectInfo> Commit() = 0;
  virtual void Abort() = 0;
};

// Writes one object as independent, numbered parts (from 1; every part but the last has
// part_size bytes), concurrently and in any order: an S3 multipart upload, or a local temporary
// file filled with pwrite(). Commit() publishes the object once all parts are written; Abort()
// discards the parts. Destroying the writer without either keeps the parts so a later writer
// with the same resume_token() continues (the copy engine's resume).
class PartWriter {
 public:
  virtual ~PartWriter() = default;
  // Thread-safe.
  virtual Status WritePart(int number, std::string_view data) = 0;
  // True where each part is sent with its SHA-256 (S3 with signed payloads, the default): a
  // caller that hashes several parts at once (base/sha256_lanes.h: four SHA-NI streams in one
  // thread, ~1.6x one) passes the digests to WritePartWithSha256 and saves the per-part hash.
  // Default: false.
  virtual bool wants_sha256() const { return false; }
  // WritePart of a part whose SHA-256 the caller computed. Thread-safe. Default: WritePart.
  virtual Status WritePartWithSha256(int number, std::string_view data, const Sha256Digest& sha256);
  // MD5 hex of the parts an earlier writer already stored, when the backend can tell (S3
  // ListParts); empty otherwise.
  virtual Result<std::map<int, std::string>> StoredParts() = 0;
  virtual Result<ObjectInfo> Commit() = 0;
  // Commit() adding `metadata` to what the write started with, for values known only once every
  // part is written (the copy engine's CRC32C of data read once). For objects up to
  // Capabilities::commit_metadata_limit bytes. S3 records it with a CopyObject of the completed
  // object onto itself, so the object is briefly visible without it. Default: kUnimplemented.
  virtual Result<ObjectInfo> CommitWithMetadata(const std::map<std::string, std::string>& metadata);
  virtual void Abort() = 0;
  // Names this unfinished write for a later NewPartWriter (S3 upload id, local temp file).
  virtual std::string resume_token() const = 0;
  // CRC32C of bytes [offset, offset+length) as stored, where the backend can read them back
  // (local temporary files): lets a resume check parts instead of trusting a journal.
  // Default: kUnimplemented.
  virtual Result<uint32_t> StoredCrc32c(uint64_t offset, uint64_t length);
  // True while parts go to the device with O_DIRECT, past the page cache (local store on ext4 or
  // xfs: local_store.h). Default: false.
  virtual bool direct_io() const { return false; }
};

struct PartWriteOptions {
  WriteOptions write;        // metadata is set when the write starts
  uint64_t size = 0;         // total object size
  uint64_t part_size = 0;    // size of every part but the last
  std::string resume_token;  // continue an earlier writer ("" = start fresh)
};

struct ListOptions {
  std::string prefix;
  bool recursive = true;
  // Stores with symbolic links (local): follow every link, also out of the listed tree, and
  // descend into linked directories (loops are still detected and skipped). Default: links that
  // resolve outside the directory holding `prefix` and links to directories are not followed;
  // they are reported in ListPage::skipped. Other stores ignore it.
  bool follow_symlinks = false;
  std::string continuation;  // ListPage::next of the previous page
  // Only keys after this one (S3's start-after); ignored when `continuation` is set.
  std::string start_after;
  int max_keys = 1000;
};

// An entry a listing saw but does not return as an object: why it is left out.
enum class SkipKind {
  kLinkOutsideTree,  // a symbolic link resolving outside the listed directory
  kLinkToDirectory,  // a link to a directory inside the tree (its target is listed by its name)
  kLinkLoop,         // a directory that is its own ancestor (by device and inode)
  kDanglingLink,     // a link whose target does not exist
  kNotRegularFile,   // fifo, socket, device
};
std::string_view SkipKindName(SkipKind kind);
struct SkippedEntry;
class Store;
// "'URL': symbolic link to '/etc' outside the listed tree" and the like, for warnings.
std::string DescribeSkipped(const Store& store, const SkippedEntry& entry);
// Whether a user should be warned (links out of the tree, loops, dangling links) rather than
// told at info level (links to directories inside the tree, special files).
bool SkipIsWarning(SkipKind kind);

struct SkippedEntry {
  std::string key;  // where it would have been listed; directories end in '/'
  SkipKind kind;
  std::string detail;  // e.g. the link's target
};

struct ListPage {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> prefixes;  // common prefixes, each ending in '/'
  std::vector<SkippedEntry> skipped;  // entries left out (local links, special files)
  std::string next;                   // "" when this is the last page
};

// Where the copy engine gets an object's checksum when it compares or verifies without
// copying.
enum class ChecksumSource {
  // None to be had (http(s): ETags are opaque, no checksum metadata).
  kNone,
  // The ferry-crc32c metadata stored with the object, and the ETag where it is 32 hex digits
  // (the MD5 of a single-part upload): objects are immutable, so both describe the bytes (S3,
  // memory).
  kStoredMetadata,
  // Computed by reading the data: reads are cheap, and stored metadata (xattrs) can outlive an
  // in-place rewrite by another program, so it is not trusted (local disks, NFS).
  kReadData,
};

struct Capabilities {
  bool writable = true;
  bool listable = true;
  bool server_side_copy = false;
  bool conditional_write = false;  // WriteOptions::if_none_match is enforced
  bool batch_delete = false;
  bool arbitrary_keys = true;  // keys with "//", "." segments, trailing '/' are objects
  bool user_metadata = true;   // WriteOptions::metadata is kept and returned by Stat()
  bool part_writes = false;    // NewPartWriter() is implemented
  // Largest object whose part write can add metadata at commit (CommitWithMetadata); 0: none.
  uint64_t commit_metadata_limit = 0;
  // Objects are files of a filesystem mounted on this machine (local disk, NFS): each key has a
  // path (LocalPathFor), directories exist in their own right (IsDirectory), and there is no
  // request round trip per operation.
  bool local_files = false;
  ChecksumSource checksums = ChecksumSource::kNone;
  // An object can change in place while it is read (another program writing a file): a read
  // pinned with ReadOptions::if_match when it starts may still see a later version, so a copy
  // checks the object again after reading it. False for stores of immutable objects (S3).
  bool in_place_updates = false;
};

// What a store tells about itself (ferry auth, ferry doctor, ferry run's preflight). Never holds
// a secret: access key ids are masked, secrets and session tokens are left out.
struct StoreDescription {
  std::string kind;        // "s3", "local", "http", "https", "memory"
  std::string endpoint;    // where requests go ("http://127.0.0.1:7480"); local: the root
  std::string region;      // s3 only
  std::string addressing;  // s3 only: "path" or "virtual-hosted"
  // True for stores that sign their requests (s3). Then exactly one of `credentials` (what is
  // used) and `credentials_error` (why nothing could be resolved) is set.
  bool signs_requests = false;
  struct Credentials {
    std::string source;      // "environment variables", "profile default", "web identity", ...
    std::string access_key;  // masked ("AKIA…MPLE"); "" when anonymous
    std::string identity;    // role ARN or profile name when known
    bool anonymous = false;
    bool temporary = false;  // a session token that expires
    std::optional<SystemTime> expires;
    std::string summary;  // all of the above in one line, as `ferry auth` prints it
  };
  std::optional<Credentials> credentials;
  Status credentials_error;
};

class Store {
 public:
  virtual ~Store() = default;

  // A URL naming `key` in this store, for messages and listings.
  virtual std::string UrlFor(std::string_view key) const = 0;
  virtual Capabilities capabilities() const = 0;

  virtual Result<ObjectInfo> Stat(std::string_view key) = 0;
  virtual Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) = 0;
  // Reads like Read() into memory the caller owns: the bytes go to the front of `dst` in order,
  // `progress` is told of each span placed, and the count placed is returned (fewer than
  // dst.size() when the object or range ends first). More bytes than `dst` holds: kDataLoss.
  // Default: Read(), each chunk copied into `dst`; local files override it to read straight
  // into `dst` (an upload's parts then cost no copy between the page cache and the request).
  virtual Result<size_t> ReadInto(std::string_view key, const ReadOptions& options,
                                  std::span<char> dst, const ReadProgress& progress);
  virtual Result<std::unique_ptr<Writer>> NewWriter(std::string_view key,
                                                    const WriteOptions& options) = 0;
  virtual Result<ListPage> List(const ListOptions& options) = 0;
  virtual Status Delete(std::string_view key) = 0;

  // Deletes many keys; one status per key. Default: Delete() each. S3 batches 1000 a request.
  virtual std::vector<Status> DeleteMany(std::span<const std::string> keys);

  // Copies src to dst inside this store. Default: streams through Read() and a Writer;
  // backends with a server-side copy override it.
  virtual Status Copy(std::string_view src_key, std::string_view dst_key);

  // Server-side copy from another store (S3: another bucket on the same endpoint). Default:
  // kUnimplemented; callers then stream the data.
  virtual Status CopyFrom(Store& src, std::string_view src_key, std::string_view dst_key);

  // Optional: writing an object as parallel parts. Default: kUnimplemented.
  virtual Result<std::unique_ptr<PartWriter>> NewPartWriter(std::string_view key,
                                                            const PartWriteOptions& options);
  // Discards the parts of an unfinished part write that no writer will resume (the copy engine's
  // journal no longer matches its source): S3 aborts the multipart upload, the local store
  // removes its temporary file. A token that names nothing (already gone) is OK. Default: OK
  // (stores without part writes have nothing to discard).
  virtual Status AbortPartWrite(std::string_view key, std::string_view resume_token);
  // Discards the unfinished part writes to `key` begun (local: last written) at or after `since`
  // by the store's clock, and returns how many: what a copy killed between starting a part write
  // and journaling its token left behind (transfer/resume_plan.h). S3 aborts the key's multipart
  // uploads initiated since then (exact key, not the prefix); the local store removes the key's
  // marked temporary files. Default: 0 (stores without part writes have nothing to discard).
  virtual Result<size_t> AbortPartWritesSince(std::string_view key, SystemTime since);

  // Transient failures this store retried so far (for transfer reports).
  virtual uint64_t retry_count() const { return 0; }

  // Where the store points and which credentials it uses, for people (ferry auth, doctor, run's
  // preflight). May resolve credentials (an STS or instance metadata request) but sends nothing
  // to the store's endpoint. Default: the kind left empty and the endpoint UrlFor("").
  virtual StoreDescription Describe();

  // Whether `key` names a directory. Only stores with Capabilities::local_files have
  // directories in their own right; elsewhere (the default) a prefix is not one: false.
  virtual bool IsDirectory(std::string_view key);
  // The filesystem path of `key` for stores with Capabilities::local_files ("" = the root);
  // nullopt elsewhere (the default) and for keys that are not valid paths.
  virtual std::optional<std::string> LocalPathFor(std::string_view key) const;
  // Publishes the local file at `path` as `key` without copying its bytes: the file gets the
  // key's name too (a hard link), the way a Writer's Commit() names its file (metadata, fsync,
  // link or rename over the key, directory fsync; WriteOptions' metadata, if_none_match and
  // sync_directory apply). `path` keeps its own name, and nobody may write the file afterwards:
  // it is the object now. kUnimplemented for stores without local files (the default) and where
  // the file is on another filesystem or mount (EXDEV): write the bytes with a Writer then.
  virtual Result<ObjectInfo> LinkLocalFile(std::string_view key, const std::string& path,
                                           const WriteOptions& options);
  // Publishes what writes with WriteOptions::publish_later left waiting and makes their names
  // durable; returns the writes that failed since the last Flush() (their files never got a
  // name: `key` and the size Commit() reported), and failures of no one write with an empty
  // key (a directory's fsync). Default: none.
  struct FlushFailure {
    std::string key;
    uint64_t size = 0;
    Status status;
  };
  virtual std::vector<FlushFailure> Flush();

  // Helpers built on the interface.
  Result<std::string> ReadAll(std::string_view key, const ReadOptions& options = {});
  // Writes a whole object from memory. Default: a Writer; S3 sends one PUT without copying.
  virtual Result<ObjectInfo> WriteAll(std::string_view key, std::string_view data,
                                      const WriteOptions& options = {});
  // Calls `fn` for every page until the listing ends or `fn` fails.
  Status ListAll(ListOptions options, const std::function<Status(const ListPage&)>& fn);
};

// Builds one page from a sorted key range (memory store, tests): applies prefix, delimiter
// folding, continuation and max_keys. `keys` must be sorted; `info(i)` describes key i.
ListPage PageFromSortedKeys(const std::vector<std::string>& keys,
                            const std::function<ObjectInfo(size_t)>& info,
                            const ListOptions& options);

}  // namespace ferry::storage
