#include "storage/s3/s3_store.h"

#include "aws/s3_xml.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "storage/remote/ranged_get.h"
#include "storage/s3/s3_client.h"
#include "storage/s3/s3_internal.h"
#include "storage/s3/s3_multipart.h"

namespace ferry::storage {

namespace s3 {

ObjectInfo InfoFromHeaders(std::string key, const http::Response& r) {
  ObjectInfo info = remote::InfoFromHeaders(std::move(key), r);
  AddMetadata(r, info);
  return info;
}

void AddMetadata(const http::Response& r, ObjectInfo& info) {
  for (const auto& h : r.headers) {
    if (StartsWith(h.name, "x-amz-meta-")) info.metadata[h.name.substr(11)] = h.value;
  }
}

}  // namespace s3

namespace {

using s3::S3Call;
using s3::S3Client;

class S3Store final : public Store {
 public:
  explicit S3Store(S3StoreOptions options)
      : client_(std::make_shared<S3Client>(std::move(options))) {}

  std::string UrlFor(std::string_view key) const override { return client_->UrlFor(key); }
  Capabilities capabilities() const override {
    return {.server_side_copy = true,
            .conditional_write = false,
            .batch_delete = true,
            .part_writes = true,
            .commit_metadata_limit = client_->options().max_single_copy,
            .checksums = ChecksumSource::kStoredMetadata};
  }

  StoreDescription Describe() override;

  Result<ObjectInfo> Stat(std::string_view key) override {
    if (key.empty()) return InvalidArgument("HeadObject '" + UrlFor(key) + "': empty key");
    FERRY_ASSIGN_OR_RETURN(
        auto resp, client_->Call({.op = "HeadObject", .method = "HEAD", .key = std::string(key)}));
    return s3::InfoFromHeaders(std::string(key), resp);
  }

  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override;

  // The name of an object to be written: not empty, and UTF-8 as S3 keys must be (a local file
  // named in Latin-1 is refused here, with the reason, not by the server: RGW answers 400
  // InvalidObjectName).
  Status CheckNewKey(std::string_view op, std::string_view key) const {
    std::string what = std::string(op) + " '" + UrlFor(key) + "': ";
    if (key.empty()) return InvalidArgument(what + "empty key");
    if (!IsUtf8(key)) return InvalidArgument(what + "the name is not UTF-8, as S3 keys must be");
    return Status();
  }

  // One PUT straight from the caller's buffer (no copy) up to 64 MiB; larger data streams
  // through a Writer (multipart).
  Result<ObjectInfo> WriteAll(std::string_view key, std::string_view data,
                              const WriteOptions& options) override {
    if (data.size() > (64ull << 20)) return Store::WriteAll(key, data, options);
    FERRY_RETURN_IF_ERROR(CheckNewKey("PutObject", key));
    return s3::PutObject(*client_, std::string(key), data, options);
  }

  Result<std::unique_ptr<Writer>> NewWriter(std::string_view key,
                                            const WriteOptions& options) override {
    FERRY_RETURN_IF_ERROR(CheckNewKey("PutObject", key));
    return s3::NewS3Writer(client_, std::string(key), options);
  }

  Result<ListPage> List(const ListOptions& options) override;

  Status Delete(std::string_view key) override {
    if (key.empty()) return InvalidArgument("DeleteObject '" + UrlFor(key) + "': empty key");
    return client_->Call({.op = "DeleteObject", .method = "DELETE", .key = std::string(key)})
        .status();
  }

  std::vector<Status> DeleteMany(std::span<const std::string> keys) override;

  Result<std::unique_ptr<PartWriter>> NewPartWriter(std::string_view key,
                                                    const PartWriteOptions& options) override {
    FERRY_RETURN_IF_ERROR(CheckNewKey("multipart upload", key));
    return s3::NewS3PartWriter(client_, std::string(key), options);
  }

  Status AbortPartWrite(std::string_view key, std::string_view upload_id) override {
    if (upload_id.empty()) return Status();
    return s3::AbortMultipartUpload(*client_, std::string(key), std::string(upload_id));
  }

  Result<size_t> AbortPartWritesSince(std::string_view key, SystemTime since) override {
    if (key.empty()) return size_t{0};
    FERRY_ASSIGN_OR_RETURN(auto uploads, s3::ListMultipartUploads(*client_, std::string(key)));
    size_t aborted = 0;
    for (const auto& u : uploads) {
      // The prefix also lists longer keys; an upload without a time is not known to be recent.
      if (u.key != key || !u.initiated || *u.initiated < since) continue;
      FERRY_RETURN_IF_ERROR(s3::AbortMultipartUpload(*client_, u.key, u.upload_id));
      ++aborted;
    }
    return aborted;
  }

  uint64_t retry_count() const override { return client_->retries(); }
  Status Copy(std::string_view src, std::string_view dst) override;
  Status CopyFrom(Store& src, std::string_view src_key, std::string_view dst_key) override;
  const S3Client& client() const { return *client_; }

  // Same endpoint, region and access key: CopyObject can read the other bucket.
  bool SameServiceAs(const S3Store& other) const {
    auto base = [](const S3StoreOptions& o) {
      std::string a = o.endpoint.authority;
      if (!o.endpoint.path_style) a = a.substr(o.bucket.size() + 1);  // drop "bucket."
      return o.endpoint.scheme + "://" + a + "/" + o.endpoint.region;
    };
    if (base(client_->options()) != base(other.client_->options())) return false;
    auto mine = client_->options().credentials->GetCredentials();
    auto theirs = other.client_->options().credentials->GetCredentials();
    return mine.ok() && theirs.ok() && mine->access_key_id == theirs->access_key_id &&
           mine->anonymous == theirs->anonymous;
  }

 private:
  std::shared_ptr<S3Client> client_;
};

StoreDescription S3Store::Describe() {
  const S3StoreOptions& o = client_->options();
  StoreDescription d{.kind = "s3",
                     .endpoint = o.endpoint.scheme + "://" + o.endpoint.authority,
                     .region = o.endpoint.region,
                     .addressing = o.endpoint.path_style ? "path" : "virtual-hosted",
                     .signs_requests = true};
  auto creds = o.credentials->GetCredentials();
  if (!creds.ok()) {
    d.credentials_error = creds.status();
    return d;
  }
  d.credentials = StoreDescription::Credentials{
      .source = creds->source,
      .access_key = creds->anonymous ? "" : aws::MaskAccessKey(creds->access_key_id),
      .identity = creds->identity,
      .anonymous = creds->anonymous,
      .temporary = !creds->session_token.empty(),
      .expires = creds->expiration,
      .summary = aws::DescribeCredentials(*creds)};
  return d;
}

// GET with resume (storage/remote/ranged_get.h): a transfer that breaks is retried from the first
// byte not yet delivered, pinned with If-Match to the first answer's ETag.
Status S3Store::Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) {
  if (key.empty()) return InvalidArgument("GetObject '" + UrlFor(key) + "': empty key");
  const std::string k(key);
  remote::RangedGet get{
      .op = "GetObject",
      .url = UrlFor(key),
      .key = k,
      .attempt =
          [&](const http::Headers& headers, const http::BodySink& body,
              const http::ResponseStart& on_start) {
            return client_->Once(
                {.op = "GetObject", .key = k, .headers = headers, .data_transfer = true}, body,
                on_start);
          },
      .more_info = s3::AddMetadata,
      .current_size = [&]() -> Result<uint64_t> {
        FERRY_ASSIGN_OR_RETURN(ObjectInfo info, Stat(k));
        return info.size;
      },
      .retry = client_->options().retry,
      .on_retry =
          [&](const Status& why, std::chrono::milliseconds d, const std::string& resume) {
            client_->CountRetry({.op = "GetObject"}, why, d, resume);
          }};
  return remote::ReadRanged(get, options, sink);
}

Result<ListPage> S3Store::List(const ListOptions& options) {
  S3Call call{.op = "ListObjectsV2", .bucket_level = true};
  call.query = {{"list-type", "2"},
                {"prefix", options.prefix},
                {"max-keys", std::to_string(options.max_keys)},
                {"encoding-type", "url"}};
  if (!options.recursive) call.query.emplace_back("delimiter", "/");
  if (!options.continuation.empty()) {
    call.query.emplace_back("continuation-token", options.continuation);
  } else if (!options.start_after.empty()) {
    call.query.emplace_back("start-after", options.start_after);
  }
  FERRY_ASSIGN_OR_RETURN(auto resp, client_->Call(call));
  auto parsed = aws::ParseListObjectsV2(resp.body);
  if (!parsed.ok())
    return parsed.status().WithContext("ListObjectsV2 '" + UrlFor(options.prefix) + "'");
  ListPage page;
  for (auto& o : parsed->objects) {
    page.objects.push_back(
        {.key = std::move(o.key), .size = o.size, .modified = o.last_modified, .etag = o.etag});
  }
  page.prefixes = std::move(parsed->common_prefixes);
  if (parsed->is_truncated) {
    page.next = parsed->next_continuation_token;
    if (page.next.empty()) {
      return Internal("ListObjectsV2 '" + UrlFor(options.prefix) +
                      "': truncated answer without a continuation token");
    }
  }
  // Prefixes and objects come as two sorted lists; the Store contract wants each sorted, which
  // they are.
  return page;
}

std::vector<Status> S3Store::DeleteMany(std::span<const std::string> keys) {
  std::vector<Status> out(keys.size());
  constexpr size_t kBatch = 1000;  // S3's DeleteObjects limit
  for (size_t begin = 0; begin < keys.size(); begin += kBatch) {
    size_t end = std::min(keys.size(), begin + kBatch);
    std::vector<std::string> batch(keys.begin() + begin, keys.begin() + end);
    std::string body = aws::BuildDeleteObjects(batch, /*quiet=*/true);
    S3Call call{
        .op = "DeleteObjects",
        .method = "POST",
        .bucket_level = true,
        .query = {{"delete", ""}},
        .headers = {{"Content-MD5", Base64Encode(Md5(body))}, {"Content-Type", "application/xml"}},
        .body = body,
        .send_body = true,
        .sign_body = true};
    auto resp = client_->Call(call);
    if (!resp.ok()) {
      for (size_t i = begin; i < end; ++i) out[i] = resp.status();
      continue;
    }
    auto failures = aws::ParseDeleteObjectsResult(resp->body);
    if (!failures.ok()) {
      for (size_t i = begin; i < end; ++i) out[i] = failures.status();
      continue;
    }
    for (const auto& f : *failures) {
      for (size_t i = begin; i < end; ++i) {
        if (keys[i] == f.key) {
          out[i] = Status(
              f.code == "AccessDenied" ? StatusCode::kPermissionDenied : StatusCode::kInternal,
              "DeleteObjects '" + UrlFor(f.key) + "' failed: " + f.code + ": " + f.message,
              ErrorDetail{.http_status = 200, .remote_code = f.code});
        }
      }
    }
  }
  return out;
}

Status S3Store::Copy(std::string_view src, std::string_view dst) {
  Status s = CopyFrom(*this, src, dst);
  if (s.code() == StatusCode::kUnimplemented) return Store::Copy(src, dst);  // > 5 GiB: stream
  return s;
}

// CopyObject between buckets of one endpoint (same credentials); larger than 5 GiB or across
// endpoints the caller streams instead.
Status S3Store::CopyFrom(Store& src_store, std::string_view src, std::string_view dst) {
  auto* from = dynamic_cast<S3Store*>(&src_store);
  if (from == nullptr || !SameServiceAs(*from)) {
    return Unimplemented("no server-side copy from '" + src_store.UrlFor(src) + "' to '" +
                         UrlFor(dst) + "'");
  }
  FERRY_ASSIGN_OR_RETURN(ObjectInfo info, from->Stat(src));
  if (info.size > client_->options().max_single_copy) {
    return Unimplemented("CopyObject '" + from->UrlFor(src) + "': larger than 5 GiB");
  }
  S3Call call{.op = "CopyObject", .method = "PUT", .key = std::string(dst)};
  call.headers.push_back({"x-amz-copy-source",
                          "/" + from->client().options().bucket + "/" + PercentEncode(src, true)});
  call.headers.push_back({"x-amz-metadata-directive", "COPY"});
  call.send_body = true;  // empty PUT body
  FERRY_ASSIGN_OR_RETURN(auto resp, client_->Call(call));
  return aws::ParseCopyObjectResult(resp.body).status().WithContext(
      "CopyObject '" + from->UrlFor(src) + "' to '" + UrlFor(dst) + "'");
}

}  // namespace

std::shared_ptr<Store> MakeS3Store(S3StoreOptions options) {
  return std::make_shared<S3Store>(std::move(options));
}

Status CreateS3Bucket(const S3StoreOptions& options) {
  S3Client client(options);
  std::string body;
  if (options.endpoint.region != "us-east-1" && !options.endpoint.custom) {
    body = "<CreateBucketConfiguration><LocationConstraint>" + options.endpoint.region +
           "</LocationConstraint></CreateBucketConfiguration>";
  }
  auto resp = client.Call({.op = "CreateBucket",
                           .method = "PUT",
                           .bucket_level = true,
                           .body = body,
                           .send_body = true,
                           .sign_body = true});
  if (!resp.ok() && resp.status().detail().remote_code == "BucketAlreadyOwnedByYou")
    return Status();
  return resp.status();
}

}  // namespace ferry::storage
