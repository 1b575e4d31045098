#include "proxy/blob_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/errno_status.h"
#include "base/log.h"

namespace ferry::proxy {

VerifyingWriter::VerifyingWriter(Digest digest, uint64_t size, std::string url,
                                 std::unique_ptr<storage::Writer> writer)
    : digest_(std::move(digest)),
      size_(size),
      url_(std::move(url)),
      writer_(std::move(writer)),
      hasher_(digest_.algorithm, size) {}

VerifyingWriter::VerifyingWriter(Digest digest, uint64_t size, std::string url,
                                 std::function<Status()> publish)
    : digest_(std::move(digest)),
      size_(size),
      url_(std::move(url)),
      publish_(std::move(publish)),
      hasher_(digest_.algorithm, size) {}

VerifyingWriter::~VerifyingWriter() { Abort(); }

void VerifyingWriter::Abort() {
  if (writer_ != nullptr) writer_->Abort();
  writer_.reset();
  publish_ = nullptr;
  done_ = true;
}

Status VerifyingWriter::Append(std::string_view data) {
  if (done_) return Internal("Write blob '" + url_ + "': writer already finished");
  if (hasher_.bytes() + data.size() > size_) {
    Abort();
    return Status(StatusCode::kDataLoss, "Write blob '" + url_ + "': more than the expected " +
                                             std::to_string(size_) + " bytes");
  }
  hasher_.Update(data);
  if (writer_ == nullptr) return Status::Ok();  // linking: the bytes are in the file
  Status st = writer_->Append(data);
  if (!st.ok()) {
    Abort();
    return st.WithContext("Write blob '" + url_ + "'");
  }
  return Status::Ok();
}

Status VerifyingWriter::Finish() {
  if (done_) return Internal("Write blob '" + url_ + "': writer already finished");
  if (hasher_.bytes() != size_) {
    Abort();
    return Status(StatusCode::kDataLoss, "Write blob '" + url_ + "': got " +
                                             std::to_string(hasher_.bytes()) + " of " +
                                             std::to_string(size_) + " bytes");
  }
  Digest got = hasher_.Finish();
  if (got != digest_) {
    Abort();
    return Status(StatusCode::kDataLoss, "Write blob '" + url_ + "': content has digest " +
                                             got.ToString() + ", not the expected one");
  }
  done_ = true;
  if (publish_ != nullptr) {
    Status st = std::exchange(publish_, nullptr)();
    if (!st.ok()) return st.WithContext("Publish blob '" + url_ + "'");
    return Status::Ok();
  }
  auto committed = writer_->Commit();
  writer_.reset();
  if (!committed.ok()) return committed.status().WithContext("Publish blob '" + url_ + "'");
  return Status::Ok();
}

BlobStore::BlobStore(std::shared_ptr<storage::Store> store, std::string prefix)
    : store_(std::move(store)), prefix_(std::move(prefix)) {}

std::string BlobStore::KeyFor(const Digest& digest) const {
  return prefix_ + "blobs/" + std::string(DigestAlgorithmName(digest.algorithm)) + "/" +
         digest.hex.substr(0, 2) + "/" + digest.hex;
}

Result<uint64_t> BlobStore::Stat(const Digest& digest) {
  FERRY_ASSIGN_OR_RETURN(storage::ObjectInfo info, store_->Stat(KeyFor(digest)));
  return info.size;
}

Status BlobStore::Read(const Digest& digest, const storage::ByteRange& range,
                       const storage::ByteSink& sink) {
  storage::ReadOptions options;
  options.range = range;
  return store_->Read(KeyFor(digest), options, sink);
}

storage::WriteOptions BlobStore::WriteOptionsFor(const Digest& digest) const {
  storage::WriteOptions options;
  options.metadata["ferry-digest"] = digest.ToString();
  options.content_type = "application/octet-stream";
  return options;
}

Result<std::unique_ptr<VerifyingWriter>> BlobStore::NewWriter(const Digest& digest, uint64_t size,
                                                              const std::string& spool_file) {
  if (!spool_file.empty() && !link_refused_.load() && store_->LocalPathFor(KeyFor(digest))) {
    return std::make_unique<VerifyingWriter>(
        digest, size, UrlFor(digest),
        [this, digest, spool_file] { return LinkOrCopy(digest, spool_file); });
  }
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<storage::Writer> writer,
                         store_->NewWriter(KeyFor(digest), WriteOptionsFor(digest)));
  return std::make_unique<VerifyingWriter>(digest, size, UrlFor(digest), std::move(writer));
}

Status BlobStore::LinkOrCopy(const Digest& digest, const std::string& file) {
  auto linked = store_->LinkLocalFile(KeyFor(digest), file, WriteOptionsFor(digest));
  if (linked.ok() || linked.status().code() != StatusCode::kUnimplemented) {
    return linked.status();
  }
  if (!link_refused_.exchange(true)) {
    Log(LogLevel::kInfo, "cache: {}; blobs are copied from the spool directory from now on",
        linked.status().message());
  }
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "open spool file '" + file + "'");
  auto writer = store_->NewWriter(KeyFor(digest), WriteOptionsFor(digest));
  Status st = writer.status();
  std::string block(1u << 20, '\0');
  while (st.ok()) {
    ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = ErrnoToStatus(errno, "read spool file '" + file + "'");
    if (n <= 0) break;
    st = (*writer)->Append(std::string_view(block.data(), static_cast<size_t>(n)));
  }
  ::close(fd);
  if (st.ok()) st = (*writer)->Commit().status();
  if (!st.ok() && writer.ok()) (*writer)->Abort();
  return st;
}

Status BlobStore::Delete(const Digest& digest) { return store_->Delete(KeyFor(digest)); }

Result<BlobStore::ScanResult> BlobStore::Scan() {
  ScanResult out;
  storage::ListOptions options;
  options.prefix = prefix_ + "blobs/";
  Status st = store_->ListAll(options, [&](const storage::ListPage& page) {
    for (const storage::ObjectInfo& o : page.objects) {
      // blobs/<algo>/<hh>/<hex>
      std::string_view rest = std::string_view(o.key).substr(options.prefix.size());
      size_t a = rest.find('/');
      size_t b = a == std::string_view::npos ? a : rest.find('/', a + 1);
      Result<Digest> d = InvalidArgument("");
      if (b != std::string_view::npos) {
        d = Digest::FromString(std::string(rest.substr(0, a)) + ":" +
                               std::string(rest.substr(b + 1)));
      }
      if (!d.ok() || KeyFor(*d) != o.key) {
        out.foreign.push_back(o.key);
        continue;
      }
      out.blobs.push_back(StoredBlob{*d, o.size, o.modified});
    }
    return Status::Ok();
  });
  if (!st.ok()) return st.WithContext("Scan cache '" + store_->UrlFor(options.prefix) + "'");
  return out;
}

}  // namespace ferry::proxy
