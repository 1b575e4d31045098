// The per-object copy algorithm.
//
//  1. Skip: if the destination has the same size, compare CRC32Cs (metadata on S3, computed for
//     local files; single-part MD5 ETags when one side has no Ferry checksum). Equal: skip.
//  2. Server-side copy when the destination store can copy from the source store (same S3
//     endpoint); metadata, including the checksum, travels with it.
//  3. Objects up to 2 part sizes (or when the destination cannot write parts) are read whole
//     into memory, checksummed, and written with one atomic write carrying the checksum.
//  4. Larger objects go as parallel parts through a PartWriter, resuming from a journal; the
//     part CRCs combine into the full-object CRC, which must equal the source's. A local
//     source is read once: its combined CRC is recorded when the destination commits.
// A checksum mismatch is retried once, then fails with DATA_LOSS naming the object.
//
// Local sources can change under the reader (a job still writing its outputs). Every read opens
// with If-Match on the listed etag (inode, size, mtime), and once all bytes are read the file is
// stat'ed again: if it changed meanwhile the object fails with FAILED_PRECONDITION before
// anything is committed, so no torn mixture of two versions is ever written. With
// CopyOptions::leave_out_unstable_sources a failure whose source changed, vanished or cannot be
// read is recorded in CopyReport::unstable instead (see UnstableSource).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <span>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/crc32c.h"
#include "base/errno_status.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/mutex.h"
#include "base/strings.h"
#include "transfer/copy_engine.h"
#include "transfer/copy_internal.h"
#include "transfer/journal.h"
#include "transfer/resume_plan.h"

namespace ferry::transfer::internal {

namespace {

using storage::ObjectInfo;

std::optional<uint32_t> CrcFromMetadata(const ObjectInfo& info) {
  auto it = info.metadata.find(kCrcMetadataKey);
  uint32_t crc = 0;
  if (it != info.metadata.end() && ParseCrc32cHex(it->second, &crc)) return crc;
  return std::nullopt;
}

bool IsMd5Etag(const std::string& etag) {
  if (etag.size() != 32) return false;
  for (char c : etag) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The MD5 an ETag stands for: a store's 32-hex-digit ETag where its stored metadata describes
// the bytes (single-part S3 uploads); "" otherwise (opaque http(s) ETags, local file versions).
std::string Md5OfEtag(const storage::Capabilities& caps, const std::string& etag) {
  if (caps.checksums != storage::ChecksumSource::kStoredMetadata || !IsMd5Etag(etag)) return "";
  return etag;
}

// Checksums of this store's objects are computed by reading them (local files).
bool ReadsChecksums(const storage::Capabilities& caps) {
  return caps.checksums == storage::ChecksumSource::kReadData;
}

// Reads a whole object computing its CRC32C (and MD5 when asked), e.g. a local file.
Status Digest(RunContext& ctx, storage::Store& store, const std::string& key, uint32_t* crc,
              std::string* md5_hex) {
  Crc32c c;
  Md5Stream md5;
  Status s = store.Read(key, {}, [&](std::string_view chunk) -> Status {
    if (ctx.cancelled()) return Status(StatusCode::kCancelled, "copy interrupted");
    c.Update(chunk);
    if (md5_hex) md5.Update(chunk);
    return Status();
  });
  FERRY_RETURN_IF_ERROR(s);
  *crc = c.value();
  if (md5_hex) *md5_hex = HexEncode(md5.Final());
  return Status();
}

// Is the destination already a copy of the source? (Both exist with the same size.) `crc` is
// set to the content's CRC32C when the answer is yes and the check compared CRC32Cs.
Result<bool> SameContent(RunContext& ctx, const Item& item, std::optional<uint32_t>* crc) {
  storage::Store& src = *ctx.src_store;
  storage::Store& dst = *ctx.dst_store;
  const bool read_src = ReadsChecksums(ctx.src_caps), read_dst = ReadsChecksums(ctx.dst_caps);
  std::optional<uint32_t> src_crc, dst_crc;
  std::string src_etag = item.src.etag, dst_etag = item.dst->etag;
  // A stored checksum where the store's metadata can be trusted. A local file's checksum xattr
  // is not: it survives a rewrite in place by another program, so local files are always read.
  if (!read_dst) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo d, dst.Stat(item.dst_key));
    if (d.size != item.src.size) return false;
    dst_crc = CrcFromMetadata(d);
    dst_etag = d.etag;
  }
  if (!read_src) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo s, src.Stat(item.src_key));
    src_crc = CrcFromMetadata(s);
    src_etag = s.etag;
  }
  if (src_crc && dst_crc) {
    *crc = src_crc;
    return *src_crc == *dst_crc;
  }
  const std::string src_md5 = Md5OfEtag(ctx.src_caps, src_etag);
  const std::string dst_md5 = Md5OfEtag(ctx.dst_caps, dst_etag);
  if (!src_md5.empty() && src_md5 == dst_md5) return true;  // single-part uploads' MD5s
  // Compute what is missing from data that is cheap to read (local files): CRC32Cs when both
  // sides can have one, else the MD5 of the readable side against the other's MD5 ETag.
  if ((src_crc || read_src) && (dst_crc || read_dst)) {
    if (!src_crc) {
      uint32_t c = 0;
      FERRY_RETURN_IF_ERROR(Digest(ctx, src, item.src_key, &c, nullptr));
      src_crc = c;
    }
    if (!dst_crc) {
      uint32_t c = 0;
      FERRY_RETURN_IF_ERROR(Digest(ctx, dst, item.dst_key, &c, nullptr));
      dst_crc = c;
    }
    *crc = src_crc;
    return *src_crc == *dst_crc;
  }
  std::string md5;
  uint32_t ignored = 0;
  if (read_src && !dst_md5.empty()) {
    FERRY_RETURN_IF_ERROR(Digest(ctx, src, item.src_key, &ignored, &md5));
    return md5 == dst_md5;
  }
  if (read_dst && !src_md5.empty()) {
    FERRY_RETURN_IF_ERROR(Digest(ctx, dst, item.dst_key, &ignored, &md5));
    return md5 == src_md5;
  }
  return false;  // nothing to compare: copy again
}

Status Mismatch(RunContext& ctx, const Item& item, uint32_t want, uint32_t got) {
  return Status(StatusCode::kDataLoss,
                "checksum mismatch copying '" + ctx.src_store->UrlFor(item.src_key) + "' to '" +
                    ctx.dst_store->UrlFor(item.dst_key) + "': source CRC32C " + Crc32cHex(want) +
                    ", received " + Crc32cHex(got));
}

// Re-reads the written object (--verify).
Status VerifyWritten(RunContext& ctx, const Item& item, uint32_t want) {
  uint32_t got = 0;
  FERRY_RETURN_IF_ERROR(Digest(ctx, *ctx.dst_store, item.dst_key, &got, nullptr));
  if (got != want) {
    return Status(StatusCode::kDataLoss, "--verify: '" + ctx.dst_store->UrlFor(item.dst_key) +
                                             "' reads back with CRC32C " + Crc32cHex(got) +
                                             ", expected " + Crc32cHex(want));
  }
  return Status();
}

// After a source that can change in place (a local file) was read: is it still the object that
// was listed? (A change that the open-time If-Match could not see, e.g. an in-place rewrite or
// an append during the read.)
Status SourceStillAsListed(RunContext& ctx, const Item& item) {
  if (!ctx.src_caps.in_place_updates || item.src.etag.empty()) return Status();
  FERRY_ASSIGN_OR_RETURN(ObjectInfo now, ctx.src_store->Stat(item.src_key));
  if (now.etag == item.src.etag) return Status();
  return Status(StatusCode::kFailedPrecondition,
                "'" + ctx.src_store->UrlFor(item.src_key) + "' changed while being read (" +
                    std::to_string(item.src.size) + " bytes when listed, " +
                    std::to_string(now.size) + " now)");
}

}  // namespace

// Reads [offset, offset+len) of the source into `buf`, honouring the rate limit and progress.
// The bytes go straight into `buf` (Store::ReadInto: no copy in between for local files); a
// reused `buf` is neither freed nor zero-filled.
Status ReadRange(RunContext& ctx, const Item& item, uint64_t offset, uint64_t len, std::string& buf,
                 ObjectInfo* info) {
  storage::ReadOptions ro{
      .range = storage::ByteRange{offset, len}, .if_match = item.src.etag, .info = info};
  // An empty object is read with a plain GET, so its answer's headers (ETag, checksum
  // metadata) still verify it; a zero-length range would send no request at all.
  if (len == 0 && offset == 0) ro.range.reset();
  uint64_t counted = 0;
  Result<size_t> got = size_t{0};
  buf.resize_and_overwrite(static_cast<size_t>(len), [&](char* p, size_t n) {
    if (n >= (4u << 20)) AdviseHugePages(p, n);  // a part: 2 MiB pages, far fewer faults
    got = ctx.src_store->ReadInto(item.src_key, ro, std::span<char>(p, n),
                                  [&](size_t bytes) -> Status {
                                    if (ctx.cancelled())
                                      return Status(StatusCode::kCancelled, "copy interrupted");
                                    ctx.limiter.Acquire(bytes);
                                    ctx.counters.bytes_done += bytes;
                                    counted += bytes;
                                    return Status();
                                  });
    return got.ok() ? *got : 0;
  });
  if (!got.ok()) {
    ctx.counters.bytes_done -= std::min<uint64_t>(ctx.counters.bytes_done, counted);
    return got.status();
  }
  if (*got != len) {
    return Status(StatusCode::kDataLoss, "'" + ctx.src_store->UrlFor(item.src_key) + "' gave " +
                                             std::to_string(*got) + " bytes at offset " +
                                             std::to_string(offset) + ", expected " +
                                             std::to_string(len));
  }
  return Status();
}

Status SendPart(RunContext& ctx, PartsJob& job, int n, std::string_view data,
                const Sha256Digest* sha256) {
  const bool resumed = job.done.contains(n);
  const uint64_t len = data.size();
  if (resumed) ctx.counters.bytes_done -= len;  // counted as resumed
  uint32_t crc = Crc32cOf(data);
  job.crcs[static_cast<size_t>(n - 1)] = crc;
  if (resumed && crc == job.done.at(n)) return Status();
  if (resumed) {
    Log(LogLevel::kWarn, "part {} of '{}' changed since the interrupted copy; sending it again", n,
        job.src_url);
    ctx.bytes_resumed -= len;
  }
  Status s =
      sha256 ? job.writer.WritePartWithSha256(n, data, *sha256) : job.writer.WritePart(n, data);
  if (!s.ok()) ctx.counters.bytes_done -= len;
  if (s.ok() && job.journal) job.journal->PartDone(n, crc).IgnoreError();
  return s;
}

namespace {

// Objects up to this size are read into a buffer their copy thread keeps: no malloc, free and
// fresh pages for every small file of a tree (heaptrack: one 64 KiB allocation per object of a
// 2,000-file download before). At most this much stays allocated per thread; larger objects get
// their own.
constexpr uint64_t kThreadBufferMax = 1u << 20;
// Local files up to this size are published in batches (storage/local/publisher.h).
constexpr uint64_t kPublishLaterMax = 1u << 20;

Result<Outcome> CopyWhole(RunContext& ctx, const Item& item) {
  uint64_t size = item.src.size;
  ByteSemaphore::Lease lease = ctx.memory.Acquire(size);
  thread_local std::string thread_buffer;
  std::string own;
  std::string& data = size <= kThreadBufferMax ? thread_buffer : own;
  ObjectInfo info;
  FERRY_RETURN_IF_ERROR(ReadRange(ctx, item, 0, size, data, &info));
  // From here on the bytes read count as progress only once they are written.
  auto unread = [&](Status s) {
    ctx.counters.bytes_done -= std::min<uint64_t>(ctx.counters.bytes_done, size);
    return s;
  };
  if (Status s = SourceStillAsListed(ctx, item); !s.ok()) return unread(s);
  uint32_t crc = Crc32cOf(data);
  // A local file's checksum xattr survives a rewrite in place by another program: the bytes just
  // read are the source of truth there (ReadsChecksums), the stored CRC32C only elsewhere.
  auto src_crc = ReadsChecksums(ctx.src_caps) ? std::nullopt : CrcFromMetadata(info);
  if (src_crc && *src_crc != crc) return unread(Mismatch(ctx, item, *src_crc, crc));
  if (std::string md5 = Md5OfEtag(ctx.src_caps, info.etag); !src_crc && !md5.empty()) {
    // Uploaded by another tool in one PUT: its ETag is the MD5.
    if (HexEncode(Md5(data)) != md5) {
      return unread(Status(StatusCode::kDataLoss, "MD5 of '" + ctx.src_store->UrlFor(item.src_key) +
                                                      "' does not match its ETag"));
    }
    src_crc = crc;
  }
  if (ctx.cancelled()) return unread(Status(StatusCode::kCancelled, "copy interrupted"));
  storage::WriteOptions wo{.metadata = {{kCrcMetadataKey, Crc32cHex(crc)}}};
  // A local file's data is fsynced before its rename; its directory is fsynced once for all the
  // files copied into it (SyncDirectories), before the copy reports success. Small ones are
  // published in batches, one filesystem sync each (WriteOptions::publish_later; the engine
  // flushes the store before it reports success), unless each is read back right away.
  std::optional<std::string> path;
  if (ctx.dst_caps.local_files) path = ctx.dst_store->LocalPathFor(item.dst_key);
  if (path) wo.sync_directory = false;
  wo.publish_later = path && size <= kPublishLaterMax && !ctx.options.verify;
  auto written = ctx.dst_store->WriteAll(item.dst_key, data, wo);
  lease.Release();
  if (!written.ok()) return unread(written.status());
  if (path && !wo.publish_later) {
    {
      MutexLock lock(ctx.mu);
      ctx.unsynced_dirs.insert(path->substr(0, std::max<size_t>(path->rfind('/'), 1)));
    }
    FERRY_RETURN_IF_ERROR(SyncDirectories(ctx, /*at_least=*/256));
  }
  if (ReadsChecksums(ctx.src_caps) || src_crc)
    ++ctx.verified;
  else
    ++ctx.unverified;
  if (ctx.options.verify) FERRY_RETURN_IF_ERROR(VerifyWritten(ctx, item, crc));
  return Outcome{Outcome::kCopied, crc};
}

Result<Outcome> CopyInParts(RunContext& ctx, const Item& item) {
  const uint64_t size = item.src.size;
  const uint64_t part_size = ChoosePartSize(size, ctx.options.part_size);
  const int count = static_cast<int>((size + part_size - 1) / part_size);
  std::string src_url = ctx.src_store->UrlFor(item.src_key);
  std::string dst_url = ctx.dst_store->UrlFor(item.dst_key);

  // The full-object checksum: from the source's metadata, or computed from the data of a source
  // that must be read for it (a local file). The destination records it when the write starts
  // (S3 metadata is fixed at CreateMultipartUpload) or, where it can, when it commits: then the
  // parts' CRCs, combined, give it and the source is read once.
  std::optional<uint32_t> expected;
  const bool read_src = ReadsChecksums(ctx.src_caps);
  const bool crc_at_commit = read_src && size <= ctx.dst_caps.commit_metadata_limit;
  if (crc_at_commit) {
    // Computed from the parts below.
  } else if (read_src) {
    uint32_t c = 0;
    FERRY_RETURN_IF_ERROR(Digest(ctx, *ctx.src_store, item.src_key, &c, nullptr));
    expected = c;
  } else {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info, ctx.src_store->Stat(item.src_key));
    expected = CrcFromMetadata(info);
  }

  storage::PartWriteOptions pwo{.size = size, .part_size = part_size};
  if (expected) pwo.write.metadata[kCrcMetadataKey] = Crc32cHex(*expected);
  FERRY_ASSIGN_OR_RETURN(
      ResumePlan plan,
      PlanResume({.dst = ctx.dst_store.get(),
                  .dst_key = item.dst_key,
                  .header = {.src_url = src_url,
                             .dst_url = dst_url,
                             .size = size,
                             // A checksum computed from the source first checks every resumed
                             // part (the combined CRC must equal it): no version tag needed.
                             .src_etag = read_src && !crc_at_commit ? "" : item.src.etag,
                             .part_size = part_size},
                  .journal_path = Journal::PathFor(ctx.state_dir, src_url, dst_url),
                  .write = pwo}));
  std::unique_ptr<storage::PartWriter> writer = std::move(plan.writer);
  std::unique_ptr<Journal> journal = std::move(plan.journal);
  const std::map<int, uint32_t>& done = plan.done;
  if (plan.resumed_bytes) {
    ctx.bytes_resumed += plan.resumed_bytes;
    ctx.counters.bytes_done += plan.resumed_bytes;
    Log(LogLevel::kInfo, "resuming '{}': {} of {} already there", dst_url,
        HumanBytes(plan.resumed_bytes), HumanBytes(size));
  }

  std::vector<uint32_t> crcs(static_cast<size_t>(count));
  for (const auto& [n, crc] : done) crcs[static_cast<size_t>(n - 1)] = crc;
  // Parts of a one-read upload that an earlier run stored are read again and their CRCs compared
  // with the journal's (the local file may have been rewritten in place since): the full CRC32C
  // is then computed from this run's bytes only. A part that differs is uploaded again.
  const bool recheck = crc_at_commit && !done.empty();
  Latch latch(recheck ? count : count - static_cast<int>(done.size()));
  PartsJob job{.item = item,
               .writer = *writer,
               .journal = journal.get(),
               .done = done,
               .recheck = recheck,
               .size = size,
               .part_size = part_size,
               .count = count,
               .crcs = crcs,
               .latch = latch,
               .src_url = src_url};
  if (read_src && writer->wants_sha256()) {
    SendHashedParts(ctx, job);  // one reader, parts hashed four at a time
  } else {
    for (int n = 1; n <= count; ++n) {
      if (done.contains(n) && !recheck) continue;
      ctx.part_pool.Submit([&, n] {
        if (ctx.cancelled()) {
          return latch.Done(Status(StatusCode::kCancelled, "copy interrupted"));
        }
        const uint64_t len = job.PartLength(n);
        Status s;
        {
          ByteSemaphore::Lease lease = ctx.memory.Acquire(len);
          // Reused per thread: a fresh 8 MiB buffer per part costs thousands of page faults.
          thread_local std::string buf;
          s = ReadRange(ctx, item, job.PartOffset(n), len, buf, nullptr);
          if (s.ok()) s = SendPart(ctx, job, n, buf, nullptr);
          if (buf.capacity() > 2 * part_size) std::string().swap(buf);  // keep at most ~2 parts
        }
        latch.Done(std::move(s));
      });
    }
  }
  // The parts cannot be used by a later run: discard them and the journal.
  auto abandon = [&] {
    writer->Abort();
    if (journal) journal->Remove();
  };
  auto unread = [&](Status s) {
    abandon();
    ctx.counters.bytes_done -= std::min<uint64_t>(ctx.counters.bytes_done, size);
    return s;
  };
  Status s = latch.Wait();
  if (s.ok() && ctx.cancelled()) s = Status(StatusCode::kCancelled, "copy interrupted");
  if (!s.ok()) {
    // Interruptions keep the parts and journal for the next run; real failures clean up.
    if (!(IsRetryable(s) || s.code() == StatusCode::kCancelled)) abandon();
    return s;
  }
  uint32_t full = crcs[0];
  for (int n = 2; n <= count; ++n) {
    uint64_t len = n == count ? size - part_size * (count - 1) : part_size;
    full = Crc32cCombine(full, crcs[static_cast<size_t>(n - 1)], len);
  }
  if (Status still = SourceStillAsListed(ctx, item); !still.ok()) return unread(still);
  if (expected && *expected != full) return unread(Mismatch(ctx, item, *expected, full));
  auto committed = crc_at_commit ? writer->CommitWithMetadata({{kCrcMetadataKey, Crc32cHex(full)}})
                                 : writer->Commit();
  if (!committed.ok()) {
    if (!IsRetryable(committed.status())) abandon();
    return committed.status();
  }
  if (journal) journal->Remove();
  if (expected || crc_at_commit)
    ++ctx.verified;
  else
    ++ctx.unverified;
  if (ctx.options.verify) FERRY_RETURN_IF_ERROR(VerifyWritten(ctx, item, full));
  return Outcome{Outcome::kCopied, full};
}

// Why a copy that failed failed because of its source: the source changed since it was listed,
// vanished, or cannot be read. nullopt when it is still as listed and readable: then the failure
// was the destination's or the network's, a real failure.
std::optional<std::string> UnstableSource(RunContext& ctx, const Item& item,
                                          const Status& failure) {
  if (failure.code() == StatusCode::kCancelled) return std::nullopt;
  auto now = ctx.src_store->Stat(item.src_key);
  if (!now.ok()) {
    if (now.status().code() == StatusCode::kNotFound) return "vanished while being copied";
    return "cannot be read: " + now.status().message();
  }
  if (now->size != item.src.size || (!item.src.etag.empty() && now->etag != item.src.etag)) {
    return "changed while being copied";
  }
  storage::ReadOptions probe_range;
  if (now->size > 0) probe_range.range = storage::ByteRange{0, 1};
  Status probe =
      ctx.src_store->Read(item.src_key, probe_range, [](std::string_view) { return Status(); });
  if (!probe.ok()) return "cannot be read: " + probe.message();
  return std::nullopt;
}

Result<Outcome> CopyOrSkip(RunContext& ctx, const Item& item) {
  if (ctx.cancelled()) return Status(StatusCode::kCancelled, "copy interrupted");
  if (ctx.options.skip_unchanged && item.dst && item.dst->size == item.src.size) {
    std::optional<uint32_t> crc;
    FERRY_ASSIGN_OR_RETURN(bool same, SameContent(ctx, item, &crc));
    if (same) return Outcome{Outcome::kSkipped, crc};
  }
  if (ctx.src_caps.server_side_copy) {
    Status s = ctx.dst_store->CopyFrom(*ctx.src_store, item.src_key, item.dst_key);
    if (s.ok()) {
      ++ctx.server_side;
      ctx.counters.bytes_done += item.src.size;
      if (ctx.options.verify) {
        auto info = ctx.src_store->Stat(item.src_key);
        if (info.ok()) {
          if (auto crc = CrcFromMetadata(*info))
            FERRY_RETURN_IF_ERROR(VerifyWritten(ctx, item, *crc));
        }
      }
      return Outcome{Outcome::kCopied, std::nullopt};
    }
    if (s.code() != StatusCode::kUnimplemented) return s;
  }
  // Objects up to kWholeObjectLimit (or 2 parts) move in one request each way; larger ones in
  // parallel parts.
  constexpr uint64_t kWholeObjectLimit = 32ull << 20;
  uint64_t part_size = ChoosePartSize(item.src.size, ctx.options.part_size);
  bool parts = item.src.size > std::max(2 * part_size, kWholeObjectLimit) &&
               ctx.dst_store->capabilities().part_writes;
  Result<Outcome> r = Status();
  for (int attempt = 1; attempt <= 2; ++attempt) {
    r = parts ? CopyInParts(ctx, item) : CopyWhole(ctx, item);
    if (r.ok() || r.status().code() != StatusCode::kDataLoss || attempt == 2) break;
    Log(LogLevel::kWarn, "{}; copying again", r.status().message());
  }
  return r;
}

}  // namespace

Status SyncDirectories(RunContext& ctx, size_t at_least) {
  std::set<std::string> dirs;
  {
    MutexLock lock(ctx.mu);
    if (ctx.unsynced_dirs.empty() || ctx.unsynced_dirs.size() < at_least) return Status();
    dirs.swap(ctx.unsynced_dirs);
  }
  Status first;
  for (const std::string& dir : dirs) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd < 0 ? -1 : ::fsync(fd);
    int err = errno;
    if (fd >= 0) ::close(fd);
    // Some filesystems (and NFS clients) refuse fsync on directories: the renames are done.
    if (rc != 0 && err != EINVAL && err != EBADF && first.ok()) {
      first = ErrnoToStatus(err, "fsync directory '" + dir + "'");
    }
  }
  return first;
}

Result<Outcome> CopyItem(RunContext& ctx, const Item& item) {
  Result<Outcome> r = CopyOrSkip(ctx, item);
  if (r.ok() || !ctx.options.leave_out_unstable_sources) return r;
  std::optional<std::string> reason = UnstableSource(ctx, item, r.status());
  if (!reason) return r;
  Log(LogLevel::kDebug, "leaving out '{}': {} ({})", ctx.src_store->UrlFor(item.src_key), *reason,
      r.status().message());
  MutexLock lock(ctx.mu);
  ctx.report.unstable.push_back({item.src_key, *reason});
  return Outcome{Outcome::kLeftOut, std::nullopt};
}

}  // namespace ferry::transfer::internal
