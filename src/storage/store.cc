#include "storage/store.h"

#include <algorithm>
#include <cstring>

#include "base/strings.h"

namespace ferry::storage {

std::vector<Status> Store::DeleteMany(std::span<const std::string> keys) {
  std::vector<Status> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(Delete(k));
  return out;
}

Status Store::Copy(std::string_view src_key, std::string_view dst_key) {
  FERRY_ASSIGN_OR_RETURN(auto writer, NewWriter(dst_key, {}));
  Status s = Read(src_key, {}, [&](std::string_view chunk) { return writer->Append(chunk); });
  if (!s.ok()) {
    writer->Abort();
    return s;
  }
  return writer->Commit().status();
}

Status Store::CopyFrom(Store& src, std::string_view src_key, std::string_view dst_key) {
  if (&src == this) return Copy(src_key, dst_key);
  return Unimplemented("no server-side copy from '" + src.UrlFor(src_key) + "' to '" +
                       UrlFor(dst_key) + "'");
}

Result<std::unique_ptr<PartWriter>> Store::NewPartWriter(std::string_view key,
                                                         const PartWriteOptions&) {
  return Unimplemented("'" + UrlFor(key) + "': this store cannot write objects in parts");
}

Status Store::AbortPartWrite(std::string_view, std::string_view) { return Status(); }

Result<size_t> Store::AbortPartWritesSince(std::string_view, SystemTime) { return size_t{0}; }

StoreDescription Store::Describe() { return {.endpoint = UrlFor("")}; }

bool Store::IsDirectory(std::string_view) { return false; }

std::optional<std::string> Store::LocalPathFor(std::string_view) const { return std::nullopt; }

Result<ObjectInfo> Store::LinkLocalFile(std::string_view key, const std::string& path,
                                        const WriteOptions&) {
  return Unimplemented("Publish '" + path + "' as '" + UrlFor(key) + "': the store has no files");
}

std::vector<Store::FlushFailure> Store::Flush() { return {}; }

std::string_view SkipKindName(SkipKind kind) {
  switch (kind) {
    case SkipKind::kLinkOutsideTree:
      return "link-outside-tree";
    case SkipKind::kLinkToDirectory:
      return "link-to-directory";
    case SkipKind::kLinkLoop:
      return "link-loop";
    case SkipKind::kDanglingLink:
      return "dangling-link";
    case SkipKind::kNotRegularFile:
      return "not-regular-file";
  }
  return "?";
}

std::string DescribeSkipped(const Store& store, const SkippedEntry& e) {
  std::string what = "'" + store.UrlFor(e.key) + "': ";
  switch (e.kind) {
    case SkipKind::kLinkOutsideTree:
      return what + "symbolic link to '" + e.detail + "' outside the listed tree";
    case SkipKind::kLinkToDirectory:
      return what + "link to directory '" + e.detail + "' inside the tree (listed by its own name)";
    case SkipKind::kLinkLoop:
      return what + "directory loop back to '" + e.detail + "'";
    case SkipKind::kDanglingLink:
      return what + "dangling symbolic link to '" + e.detail + "'";
    case SkipKind::kNotRegularFile:
      return what + e.detail + ", not a regular file";
  }
  return what + "left out";
}

bool SkipIsWarning(SkipKind kind) {
  return kind != SkipKind::kLinkToDirectory && kind != SkipKind::kNotRegularFile;
}

Result<ObjectInfo> PartWriter::CommitWithMetadata(const std::map<std::string, std::string>&) {
  return Unimplemented("this store cannot add metadata when a part write is committed");
}

Status PartWriter::WritePartWithSha256(int number, std::string_view data, const Sha256Digest&) {
  return WritePart(number, data);
}

Result<uint32_t> PartWriter::StoredCrc32c(uint64_t, uint64_t) {
  return Unimplemented("this store cannot read back unfinished parts");
}

Result<size_t> Store::ReadInto(std::string_view key, const ReadOptions& options,
                               std::span<char> dst, const ReadProgress& progress) {
  size_t placed = 0;
  FERRY_RETURN_IF_ERROR(Read(key, options, [&](std::string_view chunk) -> Status {
    if (chunk.size() > dst.size() - placed) {
      return Status(StatusCode::kDataLoss, "'" + UrlFor(key) + "' gave more than the " +
                                               std::to_string(dst.size()) + " bytes expected");
    }
    std::memcpy(dst.data() + placed, chunk.data(), chunk.size());
    placed += chunk.size();
    return progress(chunk.size());
  }));
  return placed;
}

Result<std::string> Store::ReadAll(std::string_view key, const ReadOptions& options) {
  std::string out;
  if (options.range && options.range->length) out.reserve(*options.range->length);
  FERRY_RETURN_IF_ERROR(Read(key, options, [&](std::string_view c) {
    out.append(c);
    return Status();
  }));
  return out;
}

Result<ObjectInfo> Store::WriteAll(std::string_view key, std::string_view data,
                                   const WriteOptions& options) {
  FERRY_ASSIGN_OR_RETURN(auto writer, NewWriter(key, options));
  Status s = writer->Append(data);
  if (!s.ok()) {
    writer->Abort();
    return s;
  }
  return writer->Commit();
}

Status Store::ListAll(ListOptions options, const std::function<Status(const ListPage&)>& fn) {
  while (true) {
    FERRY_ASSIGN_OR_RETURN(ListPage page, List(options));
    FERRY_RETURN_IF_ERROR(fn(page));
    if (page.next.empty()) return Status();
    options.continuation = page.next;
  }
}

ListPage PageFromSortedKeys(const std::vector<std::string>& keys,
                            const std::function<ObjectInfo(size_t)>& info,
                            const ListOptions& options) {
  ListPage page;
  auto it = std::lower_bound(keys.begin(), keys.end(), options.prefix);
  const std::string& after =
      options.continuation.empty() ? options.start_after : options.continuation;
  if (!after.empty()) {
    it = std::max(it, std::upper_bound(keys.begin(), keys.end(), after));
  }
  int count = 0;
  std::string last;
  for (; it != keys.end() && StartsWith(*it, options.prefix); ++it) {
    const std::string& key = *it;
    std::string entry;
    bool is_prefix = false;
    if (!options.recursive) {
      size_t slash = key.find('/', options.prefix.size());
      if (slash != std::string::npos) {
        entry = key.substr(0, slash + 1);
        is_prefix = true;
        if (entry <= after || entry == last) continue;
      }
    }
    if (count == options.max_keys) {
      page.next = last;
      return page;
    }
    if (is_prefix) {
      page.prefixes.push_back(entry);
      last = entry;
      // Jump past every key under this prefix.
      std::string after = entry;
      after.back() = static_cast<char>('/' + 1);
      it = std::lower_bound(it, keys.end(), after) - 1;
    } else {
      page.objects.push_back(info(static_cast<size_t>(it - keys.begin())));
      last = key;
    }
    ++count;
  }
  return page;
}

}  // namespace ferry::storage
