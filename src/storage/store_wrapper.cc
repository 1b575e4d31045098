#include "storage/store_wrapper.h"

namespace ferry::storage {

std::string StoreWrapper::UrlFor(std::string_view key) const { return inner_->UrlFor(key); }

Capabilities StoreWrapper::capabilities() const { return inner_->capabilities(); }

Result<ObjectInfo> StoreWrapper::Stat(std::string_view key) { return inner_->Stat(key); }

Status StoreWrapper::Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) {
  return inner_->Read(key, options, sink);
}

Result<size_t> StoreWrapper::ReadInto(std::string_view key, const ReadOptions& options,
                                      std::span<char> dst, const ReadProgress& progress) {
  return inner_->ReadInto(key, options, dst, progress);
}

Result<std::unique_ptr<Writer>> StoreWrapper::NewWriter(std::string_view key,
                                                        const WriteOptions& options) {
  return inner_->NewWriter(key, options);
}

Result<ListPage> StoreWrapper::List(const ListOptions& options) { return inner_->List(options); }

Status StoreWrapper::Delete(std::string_view key) { return inner_->Delete(key); }

std::vector<Status> StoreWrapper::DeleteMany(std::span<const std::string> keys) {
  return inner_->DeleteMany(keys);
}

Status StoreWrapper::Copy(std::string_view src_key, std::string_view dst_key) {
  return inner_->Copy(src_key, dst_key);
}

Status StoreWrapper::CopyFrom(Store& src, std::string_view src_key, std::string_view dst_key) {
  return inner_->CopyFrom(&src == this ? *inner_ : src, src_key, dst_key);
}

Result<std::unique_ptr<PartWriter>> StoreWrapper::NewPartWriter(std::string_view key,
                                                                const PartWriteOptions& options) {
  return inner_->NewPartWriter(key, options);
}

Status StoreWrapper::AbortPartWrite(std::string_view key, std::string_view resume_token) {
  return inner_->AbortPartWrite(key, resume_token);
}

Result<size_t> StoreWrapper::AbortPartWritesSince(std::string_view key, SystemTime since) {
  return inner_->AbortPartWritesSince(key, since);
}

uint64_t StoreWrapper::retry_count() const { return inner_->retry_count(); }

StoreDescription StoreWrapper::Describe() { return inner_->Describe(); }

bool StoreWrapper::IsDirectory(std::string_view key) { return inner_->IsDirectory(key); }

std::optional<std::string> StoreWrapper::LocalPathFor(std::string_view key) const {
  return inner_->LocalPathFor(key);
}

Result<ObjectInfo> StoreWrapper::LinkLocalFile(std::string_view key, const std::string& path,
                                               const WriteOptions& options) {
  return inner_->LinkLocalFile(key, path, options);
}

std::vector<Store::FlushFailure> StoreWrapper::Flush() { return inner_->Flush(); }

Result<ObjectInfo> StoreWrapper::WriteAll(std::string_view key, std::string_view data,
                                          const WriteOptions& options) {
  return inner_->WriteAll(key, data, options);
}

}  // namespace ferry::storage
