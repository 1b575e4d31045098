// The S3 streaming writer.
//
// Data is buffered up to part_size. An object that ends within the first buffer is sent with
// one PUT. Otherwise a multipart upload is created when the first buffer fills, and full parts
// are uploaded in the background, at most upload_concurrency at once, each with Content-MD5.
// Commit() uploads the last part and completes the upload only after every part succeeded; any
// failure (or Abort(), or destroying the writer) aborts the upload so no object appears and no
// parts are left behind.

#include <deque>
#include <future>

#include "base/hash.h"
#include "base/log.h"
#include "storage/s3/s3_internal.h"
#include "storage/s3/s3_multipart.h"

namespace ferry::storage::s3 {

namespace {

class S3Writer final : public Writer {
 public:
  S3Writer(std::shared_ptr<S3Client> client, std::string key, WriteOptions options)
      : client_(std::move(client)), key_(std::move(key)), options_(std::move(options)) {
    part_size_ = std::max<uint64_t>(client_->options().part_size, 5ull << 20);
    buffer_.reserve(static_cast<size_t>(std::min<uint64_t>(part_size_, 1 << 20)));
  }
  ~S3Writer() override { Abort(); }

  Status Append(std::string_view data) override {
    if (done_) return Status(StatusCode::kFailedPrecondition, "writer already finished");
    while (!data.empty()) {
      size_t room = static_cast<size_t>(part_size_ - buffer_.size());
      size_t n = std::min(room, data.size());
      buffer_.append(data.substr(0, n));
      data.remove_prefix(n);
      if (buffer_.size() == part_size_) {
        Status s = FlushPart();
        if (!s.ok()) {
          Abort();
          return s;
        }
      }
    }
    return Status();
  }

  Result<ObjectInfo> Commit() override {
    if (done_) return Status(StatusCode::kFailedPrecondition, "writer already finished");
    Result<ObjectInfo> r = upload_id_.empty() ? PutSingle() : FinishMultipart();
    if (!r.ok()) {
      Abort();
      return r;
    }
    done_ = true;
    return r;
  }

  void Abort() override {
    if (done_) return;
    done_ = true;
    for (auto& f : pending_) f.wait();
    pending_.clear();
    if (!upload_id_.empty()) {
      Status s = AbortMultipartUpload(*client_, key_, upload_id_);
      if (!s.ok()) Log(LogLevel::kWarn, "could not abort multipart upload: {}", s.message());
    }
  }

 private:
  Result<ObjectInfo> PutSingle() { return PutObject(*client_, key_, buffer_, options_); }

  Status FlushPart() {
    if (upload_id_.empty()) {
      FERRY_ASSIGN_OR_RETURN(upload_id_, CreateMultipartUpload(*client_, key_, options_.metadata,
                                                               options_.content_type));
    }
    // Bound memory: wait for the oldest part when the window is full.
    while (static_cast<int>(pending_.size()) >= client_->options().upload_concurrency) {
      FERRY_RETURN_IF_ERROR(CollectOldest());
    }
    int number = ++parts_started_;
    auto data = std::make_shared<std::string>(std::move(buffer_));
    buffer_ = std::string();
    buffer_.reserve(static_cast<size_t>(std::min<uint64_t>(part_size_, 1 << 20)));
    total_ += data->size();
    auto client = client_;
    std::string key = key_, id = upload_id_;
    pending_.push_back(std::async(std::launch::async, [client, key, id, number, data]() {
      auto etag = UploadPart(*client, key, id, number, *data);
      if (!etag.ok()) return Result<aws::CompletedPart>(etag.status());
      return Result<aws::CompletedPart>(
          aws::CompletedPart{.number = number, .etag = *etag, .size = data->size()});
    }));
    return Status();
  }

  Status CollectOldest() {
    auto r = pending_.front().get();
    pending_.pop_front();
    if (!r.ok()) return r.status();
    parts_.push_back(*r);
    return Status();
  }

  Result<ObjectInfo> FinishMultipart() {
    if (!buffer_.empty()) FERRY_RETURN_IF_ERROR(FlushPart());
    while (!pending_.empty()) FERRY_RETURN_IF_ERROR(CollectOldest());
    FERRY_ASSIGN_OR_RETURN(std::string etag,
                           CompleteMultipartUpload(*client_, key_, upload_id_, parts_));
    upload_id_.clear();
    return ObjectInfo{.key = key_, .size = total_, .etag = etag, .metadata = options_.metadata};
  }

  std::shared_ptr<S3Client> client_;
  std::string key_;
  WriteOptions options_;
  uint64_t part_size_;
  std::string buffer_;
  std::string upload_id_;
  int parts_started_ = 0;
  uint64_t total_ = 0;
  std::deque<std::future<Result<aws::CompletedPart>>> pending_;
  std::vector<aws::CompletedPart> parts_;
  bool done_ = false;
};

}  // namespace

Result<ObjectInfo> PutObject(S3Client& client, const std::string& key, std::string_view data,
                             const WriteOptions& options) {
  S3Call call{.op = "PutObject",
              .method = "PUT",
              .key = key,
              .body = data,
              .send_body = true,
              .verify_body = true,
              .data_transfer = true};
  for (const auto& [k, v] : options.metadata) call.headers.push_back({"x-amz-meta-" + k, v});
  if (!options.content_type.empty()) call.headers.push_back({"Content-Type", options.content_type});
  if (options.if_none_match) call.headers.push_back({"If-None-Match", "*"});
  FERRY_ASSIGN_OR_RETURN(auto resp, client.Call(call));
  ObjectInfo info = InfoFromHeaders(key, resp);
  info.size = data.size();
  info.metadata = options.metadata;
  return info;
}

Result<std::unique_ptr<Writer>> NewS3Writer(std::shared_ptr<S3Client> client, std::string key,
                                            WriteOptions options) {
  return std::unique_ptr<Writer>(
      new S3Writer(std::move(client), std::move(key), std::move(options)));
}

}  // namespace ferry::storage::s3
