// S3 multipart upload behind the PartWriter interface (parallel, resumable uploads).

#include "base/mutex.h"
#include "storage/s3/s3_internal.h"
#include "storage/s3/s3_multipart.h"

namespace ferry::storage::s3 {

namespace {

class S3PartWriter final : public PartWriter {
 public:
  S3PartWriter(std::shared_ptr<S3Client> client, std::string key, std::string upload_id,
               PartWriteOptions options)
      : client_(std::move(client)),
        key_(std::move(key)),
        upload_id_(std::move(upload_id)),
        options_(std::move(options)) {}

  Status WritePart(int number, std::string_view data) override {
    return Upload(number, data, nullptr);
  }

  bool wants_sha256() const override { return client_->SignsPartSha256(); }

  Status WritePartWithSha256(int number, std::string_view data,
                             const Sha256Digest& sha256) override {
    return Upload(number, data, &sha256);
  }

  Result<std::map<int, std::string>> StoredParts() override {
    FERRY_ASSIGN_OR_RETURN(auto parts, ListParts(*client_, key_, upload_id_));
    std::map<int, std::string> out;
    for (const auto& p : parts) out[p.number] = p.etag;
    return out;
  }

  Result<ObjectInfo> Commit() override {
    uint64_t count = (options_.size + options_.part_size - 1) / options_.part_size;
    std::map<int, aws::CompletedPart> all;
    {
      MutexLock lock(mu_);
      all = written_;
    }
    if (all.size() < count) {
      // Parts stored by an earlier, interrupted writer.
      FERRY_ASSIGN_OR_RETURN(auto stored, ListParts(*client_, key_, upload_id_));
      for (const auto& p : stored) all.emplace(p.number, p);
    }
    std::vector<aws::CompletedPart> parts;
    for (uint64_t n = 1; n <= count; ++n) {
      auto it = all.find(static_cast<int>(n));
      if (it == all.end()) {
        return Status(StatusCode::kFailedPrecondition,
                      "CompleteMultipartUpload '" + client_->UrlFor(key_) + "': part " +
                          std::to_string(n) + " of " + std::to_string(count) + " is missing");
      }
      parts.push_back(it->second);
    }
    FERRY_ASSIGN_OR_RETURN(std::string etag,
                           CompleteMultipartUpload(*client_, key_, upload_id_, parts));
    done_ = true;
    return ObjectInfo{
        .key = key_, .size = options_.size, .etag = etag, .metadata = options_.write.metadata};
  }

  // The upload completes first, so the object exists without `metadata` until the copy onto
  // itself that records it succeeded; a failure then names both.
  Result<ObjectInfo> CommitWithMetadata(
      const std::map<std::string, std::string>& metadata) override {
    if (options_.size > client_->options().max_single_copy) {
      return Unimplemented("'" + client_->UrlFor(key_) +
                           "' is too large for its metadata to be set after upload");
    }
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info, Commit());
    for (const auto& [k, v] : metadata) info.metadata[k] = v;
    auto etag =
        ReplaceMetadata(*client_, key_, info.etag, info.metadata, options_.write.content_type);
    if (!etag.ok()) {
      return etag.status().WithContext("'" + client_->UrlFor(key_) +
                                       "' was uploaded, but its checksum could not be recorded");
    }
    if (!etag->empty()) info.etag = *etag;
    return info;
  }

  void Abort() override {
    if (done_) return;
    done_ = true;
    AbortMultipartUpload(*client_, key_, upload_id_).IgnoreError();
  }

  std::string resume_token() const override { return upload_id_; }

 private:
  Status Upload(int number, std::string_view data, const Sha256Digest* sha256) {
    FERRY_ASSIGN_OR_RETURN(std::string etag,
                           UploadPart(*client_, key_, upload_id_, number, data, sha256));
    MutexLock lock(mu_);
    written_[number] = {.number = number, .etag = etag, .size = data.size()};
    return Status();
  }

  std::shared_ptr<S3Client> client_;
  std::string key_, upload_id_;
  PartWriteOptions options_;
  Mutex mu_;  // WritePart is called from many threads
  std::map<int, aws::CompletedPart> written_ GUARDED_BY(mu_);
  bool done_ = false;  // Commit and Abort: the writer's own thread
};

}  // namespace

Result<std::unique_ptr<PartWriter>> NewS3PartWriter(std::shared_ptr<S3Client> client,
                                                    std::string key, PartWriteOptions options) {
  if (options.part_size < (5ull << 20) || options.size == 0) {
    return InvalidArgument("multipart upload of '" + client->UrlFor(key) +
                           "' needs parts of at least 5 MiB");
  }
  if ((options.size + options.part_size - 1) / options.part_size > 10000) {
    return InvalidArgument("multipart upload of '" + client->UrlFor(key) +
                           "' would need more than 10,000 parts; use a larger part size");
  }
  std::string upload_id = options.resume_token;
  if (upload_id.empty()) {
    FERRY_ASSIGN_OR_RETURN(upload_id, CreateMultipartUpload(*client, key, options.write.metadata,
                                                            options.write.content_type));
  } else {
    // The upload must still exist (it may have been aborted or expired).
    FERRY_RETURN_IF_ERROR(ListParts(*client, key, upload_id).status());
  }
  return std::unique_ptr<PartWriter>(new S3PartWriter(std::move(client), std::move(key),
                                                      std::move(upload_id), std::move(options)));
}

}  // namespace ferry::storage::s3
