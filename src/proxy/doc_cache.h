#pragma once
// DocCache: the small documents `ferry serve`'s proxies remember besides blobs: index pages,
// API answers, what a branch resolved to, a file's metadata. Each document is a body plus a
// few named fields (content type, commit, ...) and the time it was fetched; whether it is
// fresh enough is the caller's rule (a TTL for a branch, forever for a commit).
//
// Documents live in the data store under <prefix>docs/<namespace>/<h[0:2]>/<h> (h = SHA-256 of
// the key, so any key is a safe object name), written with Writer::Commit (atomic: a reader
// sees the old or the new document, never half of one; no lock needed on NFS or S3, the last
// writer wins), and in a bounded in-memory LRU in front. They survive restarts, which is what
// --offline serves from. Keys must not contain secrets (hash a token before using it in a key).
// Writes to the store happen behind the caller, on one background thread: a local store's
// commit is two fsyncs (tens of ms on a VM disk), paid once per cold pip download otherwise
// (measured: +67% for 30 wheels behind a 300 Mbit link). A document is in memory at once and in
// the store shortly after; a crash before that loses only a page or metadata the next request
// fetches again. Flush() waits for the store; the destructor does too.
// Thread-safety: all methods are thread-safe.

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "storage/store.h"

namespace ferry::proxy {

struct Doc {
  std::string body;
  std::map<std::string, std::string> fields;
  int64_t fetched_ms = 0;  // milliseconds since the epoch

  // Age relative to `now_ms`.
  std::chrono::milliseconds Age(int64_t now_ms) const {
    return std::chrono::milliseconds(now_ms - fetched_ms);
  }
};

class DocCache final {
 public:
  // `prefix` is "" or ends in '/'. `memory_bytes`: the in-memory copies' total size at most.
  DocCache(std::shared_ptr<storage::Store> store, std::string prefix,
           size_t memory_bytes = 64u << 20);
  ~DocCache();  // writes what is still queued
  DocCache(const DocCache&) = delete;
  DocCache& operator=(const DocCache&) = delete;

  // The document, from memory or the store; nullopt when there is none (or it cannot be read:
  // the store's error is logged, a document is only an optimisation).
  std::optional<Doc> Get(std::string_view ns, std::string_view key) EXCLUDES(mu_);
  // Stores the document: in memory at once, in the store by the background writer (its errors
  // are logged; the memory copy is kept, so this process still benefits). Always OK.
  Status Put(std::string_view ns, std::string_view key, Doc doc) EXCLUDES(mu_);
  // Blocks until every document Put so far is written to the store; the first store error
  // since the last Flush(), or OK.
  Status Flush() EXCLUDES(mu_);

  std::string KeyFor(std::string_view ns, std::string_view key) const;

  static int64_t NowMs();

 private:
  void Remember(const std::string& id, const Doc& doc) REQUIRES(mu_);
  Status Write(const std::string& id, const std::string& data);
  void WriterLoop() EXCLUDES(mu_);

  std::shared_ptr<storage::Store> store_;
  std::string prefix_;
  size_t memory_bytes_;

  Mutex mu_;
  // Most recently used first.
  std::list<std::pair<std::string, Doc>> lru_ GUARDED_BY(mu_);
  std::map<std::string, std::list<std::pair<std::string, Doc>>::iterator> index_ GUARDED_BY(mu_);
  size_t used_ GUARDED_BY(mu_) = 0;

  // Write-behind: store key -> encoded document, in the order Put was called.
  CondVar cv_;
  std::list<std::pair<std::string, std::string>> queue_ GUARDED_BY(mu_);
  std::map<std::string, Doc> queued_ GUARDED_BY(mu_);  // what Get sees before it is written
  bool writing_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  Status write_error_ GUARDED_BY(mu_);
  std::thread writer_;
};

// Serialized form: one JSON line {"key","fetched_ms","fields"} then the raw body. Exposed for
// tests.
std::string EncodeDoc(std::string_view key, const Doc& doc);
// nullopt when malformed or written for another key (a hash collision or a foreign object).
std::optional<Doc> DecodeDoc(std::string_view key, std::string_view data);

}  // namespace ferry::proxy
