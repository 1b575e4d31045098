// Listing for the local store, in S3 order.
//
// S3 lists keys in byte order of the whole key. A directory walk gives that order if the entries
// of each directory are sorted by name, with a directory's name compared as "name/" (all its keys
// start with "name/"). Pages resume after the continuation key: a subtree whose keys all sort
// before it is skipped without being read (its "name/" is below the key and not a prefix of it).

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "base/errno_status.h"
#include "base/strings.h"
#include "storage/local/local_internal.h"
#include "storage/local/local_store.h"

namespace ferry::storage::local_internal {

namespace {

struct Entry {
  std::string sort_name;  // name, or name + "/" for directories
  std::string name;
  bool is_dir;
  struct stat st;
};

// Reads one directory; entries filtered by a name prefix, sorted for S3 order.
Result<std::vector<Entry>> ReadDir(const std::string& dir, std::string_view name_prefix) {
  std::vector<Entry> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return out;  // a prefix with no objects
    return ErrnoToStatus(errno, "List '" + dir + "'");
  }
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == ".." || StartsWith(name, kLocalTempPrefix)) continue;
    if (!StartsWith(name, name_prefix)) continue;
    Entry entry{.name = std::string(name)};
    std::string full = dir + "/" + entry.name;
    if (::stat(full.c_str(), &entry.st) != 0) continue;  // vanished or dangling symlink
    entry.is_dir = S_ISDIR(entry.st.st_mode);
    if (!entry.is_dir && !S_ISREG(entry.st.st_mode)) continue;  // sockets, fifos, devices
    // Symlinked directories are not descended into (avoids loops); they list as prefixes.
    entry.sort_name = entry.is_dir ? entry.name + "/" : entry.name;
    out.push_back(std::move(entry));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return a.sort_name < b.sort_name; });
  return out;
}

class Walker {
 public:
  Walker(const std::string& root, const ListOptions& options) : root_(root), opt_(options) {
    if (!root_.empty() && root_.back() == '/') root_.pop_back();
  }

  Result<ListPage> Run() {
    size_t slash = opt_.prefix.rfind('/');
    std::string dir_key = slash == std::string::npos ? "" : opt_.prefix.substr(0, slash + 1);
    std::string name_prefix = opt_.prefix.substr(dir_key.size());
    FERRY_RETURN_IF_ERROR(Visit(dir_key, name_prefix));
    return std::move(page_);
  }

 private:
  // Returns kCancelled-free OK when finished or the page is full (done_ set).
  Status Visit(const std::string& dir_key, std::string_view name_prefix) {
    std::string dir = root_ + "/" + dir_key;
    if (!dir_key.empty()) dir.pop_back();
    FERRY_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadDir(dir, name_prefix));
    for (const Entry& e : entries) {
      if (done_) return Status();
      std::string key = dir_key + e.sort_name;
      // start_after is the same position as a continuation (the last key already listed).
      const std::string& after = opt_.continuation.empty() ? opt_.start_after : opt_.continuation;
      if (e.is_dir) {
        if (!after.empty() && key <= after && !StartsWith(after, key)) continue;
        if (!opt_.recursive) {
          if (key <= after) continue;
          Emit(key, nullptr);
          continue;
        }
        FERRY_RETURN_IF_ERROR(Visit(key, ""));
      } else {
        if (!after.empty() && key <= after) continue;
        Emit(key, &e.st);
      }
    }
    return Status();
  }

  void Emit(const std::string& key, const struct stat* st) {
    if (count_ == opt_.max_keys) {
      page_.next = last_;
      done_ = true;
      return;
    }
    if (st == nullptr) {
      page_.prefixes.push_back(key);
    } else {
      page_.objects.push_back(InfoFromStat(key, *st));
    }
    last_ = key;
    ++count_;
  }

  std::string root_;
  const ListOptions& opt_;
  ListPage page_;
  std::string last_;
  int count_ = 0;
  bool done_ = false;
};

}  // namespace

Result<ListPage> ListLocal(const std::string& root, const ListOptions& options) {
  for (auto seg : Split(options.prefix, '/')) {
    if (seg == "." || seg == "..") {
      return InvalidArgument("List '" + options.prefix + "': '.' and '..' are not allowed");
    }
  }
  return Walker(root, options).Run();
}

}  // namespace ferry::storage::local_internal
