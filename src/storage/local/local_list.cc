// Listing for the local store, in S3 order, with a safe rule for symbolic links.
//
// Order: S3 lists keys in byte order of the whole key. A directory walk gives that order if the
// entries of each directory are sorted by name, with a directory's name compared as "name/" (all
// its keys start with "name/"). A walk is a stack of sorted directories; a page stops where the
// next object would exceed max_keys, and the stack is kept (ListCursors) so the next page goes on
// from there. Without a kept stack, a walk starts again and skips every subtree whose keys all
// sort before the continuation key (its "name/" is below the key and not a prefix of it).
//
// Links (docs/semantics/copy.md): the tree is the directory holding the listing's prefix.
//  - A link to a file inside the tree is listed as that file (its content is copied).
//  - A link that resolves outside the tree is left out and reported (SkipKind::kLinkOutsideTree),
//    so nothing outside the tree is ever listed, read or uploaded through a listing.
//  - A link to a directory inside the tree is not descended (kLinkToDirectory): its target is
//    listed under its own name, so no data is listed twice and no loop can start.
//  - With ListOptions::follow_symlinks every link is followed, in or out of the tree.
//  - Whatever the rule, a directory whose device and inode equal one of its ancestors' is a loop
//    and is not descended (kLinkLoop); dangling links and special files are reported too.
// Memory: one sorted name list per directory on the current path, never the whole tree.

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/errno_status.h"
#include "base/strings.h"
#include "storage/local/local_internal.h"
#include "storage/local/local_store.h"

namespace ferry::storage::local_internal {

namespace {

enum class Kind : uint8_t { kFile, kDir, kSkip };

struct Entry {
  std::string sort_name;  // name, or name + "/" for directories (and links to them)
  Kind kind;
  SkipKind skip = SkipKind::kNotRegularFile;
  std::string detail;  // for kSkip: the link's target or the file type
};

struct Frame {
  std::string dir_key;  // "" or "a/b/"
  std::vector<Entry> entries;
  size_t next = 0;
  dev_t dev = 0;
  ino_t ino = 0;
};

std::string RealPath(const std::string& path, int* err) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    *err = errno;
    return "";
  }
  *err = 0;
  return buf;
}

bool Inside(const std::string& path, const std::string& tree) {
  if (tree == "/") return true;
  return path == tree || (StartsWith(path, tree) && path[tree.size()] == '/');
}

std::string_view FileType(mode_t mode) {
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

}  // namespace

struct WalkState {
  std::string root;       // the store's root, without a trailing '/'
  std::string tree_real;  // the listed tree's real path (links are judged against it)
  bool follow = false;
  std::vector<Frame> stack;
  std::vector<SkippedEntry> pending_skipped;  // seen after a full page; reported with the next
};

namespace {

std::string PathOf(const WalkState& w, std::string_view key) {
  std::string p = w.root + "/" + std::string(key);
  if (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// Classifies a symbolic link at `path` (named `name`) by the rule at the top of this file.
Entry ClassifyLink(const WalkState& w, const std::string& path, std::string_view name) {
  Entry e{.sort_name = std::string(name), .kind = Kind::kSkip};
  int err = 0;
  std::string target = RealPath(path, &err);
  struct stat st;
  if (target.empty() || ::stat(path.c_str(), &st) != 0) {
    if (err == 0) err = errno;
    e.skip = err == ELOOP ? SkipKind::kLinkLoop : SkipKind::kDanglingLink;
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
    e.detail = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    return e;
  }
  bool dir = S_ISDIR(st.st_mode);
  if (dir) e.sort_name += "/";
  e.detail = target;
  if (!w.follow && !Inside(target, w.tree_real)) {
    e.skip = SkipKind::kLinkOutsideTree;
  } else if (dir) {
    if (w.follow) e.kind = Kind::kDir;
    e.skip = SkipKind::kLinkToDirectory;
  } else if (S_ISREG(st.st_mode)) {
    e.kind = Kind::kFile;
  } else {
    e.skip = SkipKind::kNotRegularFile;
    e.detail = std::string(FileType(st.st_mode));
  }
  return e;
}

// Reads one directory; entries filtered by a name prefix, sorted for S3 order.
Result<std::vector<Entry>> ReadDir(const WalkState& w, const std::string& dir,
                                   std::string_view name_prefix) {
  std::vector<Entry> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return out;  // a prefix with no objects
    return ErrnoToStatus(errno, "List '" + dir + "'");
  }
  while (dirent* de = ::readdir(d)) {
    std::string_view name = de->d_name;
    if (name == "." || name == ".." || IsLocalTempName(name)) continue;
    if (!StartsWith(name, name_prefix)) continue;
    std::string full = dir + (dir.back() == '/' ? "" : "/") + std::string(name);
    unsigned char type = de->d_type;
    mode_t mode = 0;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::lstat(full.c_str(), &st) != 0) continue;  // vanished
      mode = st.st_mode;
      type = S_ISLNK(mode) ? DT_LNK : S_ISDIR(mode) ? DT_DIR : S_ISREG(mode) ? DT_REG : DT_UNKNOWN;
    }
    if (type == DT_REG) {
      out.push_back({.sort_name = std::string(name), .kind = Kind::kFile});
    } else if (type == DT_DIR) {
      out.push_back({.sort_name = std::string(name) + "/", .kind = Kind::kDir});
    } else if (type == DT_LNK) {
      out.push_back(ClassifyLink(w, full, name));
    } else {
      if (mode == 0) {
        struct stat st;
        if (::lstat(full.c_str(), &st) != 0) continue;
        mode = st.st_mode;
      }
      out.push_back({.sort_name = std::string(name),
                     .kind = Kind::kSkip,
                     .skip = SkipKind::kNotRegularFile,
                     .detail = std::string(FileType(mode))});
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return a.sort_name < b.sort_name; });
  return out;
}

// Pushes the directory `dir_key` unless it is one of its own ancestors (a loop); returns the
// ancestor's key in that case.
Result<std::optional<std::string>> Descend(WalkState& w, const std::string& dir_key,
                                           std::string_view name_prefix) {
  std::string path = PathOf(w, dir_key);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return ErrnoToStatus(errno, "List '" + path + "'");
  }
  for (const Frame& f : w.stack) {
    if (f.dev == st.st_dev && f.ino == st.st_ino) return std::optional<std::string>(f.dir_key);
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadDir(w, path, name_prefix));
  w.stack.push_back(
      Frame{.dir_key = dir_key, .entries = std::move(entries), .dev = st.st_dev, .ino = st.st_ino});
  return std::optional<std::string>();
}

Result<std::unique_ptr<WalkState>> StartWalk(const std::string& root, const ListOptions& opt) {
  auto w = std::make_unique<WalkState>();
  w->root = root;
  while (!w->root.empty() && w->root.back() == '/') w->root.pop_back();
  w->follow = opt.follow_symlinks;
  size_t slash = opt.prefix.rfind('/');
  std::string dir_key = slash == std::string::npos ? "" : opt.prefix.substr(0, slash + 1);
  std::string name_prefix = opt.prefix.substr(dir_key.size());
  int err = 0;
  std::string tree = PathOf(*w, dir_key);
  if (tree.empty()) tree = "/";
  w->tree_real = RealPath(tree, &err);
  if (w->tree_real.empty()) {
    if (err == ENOENT || err == ENOTDIR) return w;  // nothing there: an empty listing
    return ErrnoToStatus(err, "List '" + tree + "'");
  }
  FERRY_RETURN_IF_ERROR(Descend(*w, dir_key, name_prefix).status());
  return w;
}

// Lists the next page from `w`'s position; keys <= `after` are passed over.
Result<ListPage> Step(WalkState& w, const ListOptions& opt, const std::string& after) {
  ListPage page;
  page.skipped = std::move(w.pending_skipped);
  w.pending_skipped.clear();
  int count = 0;
  std::string last;
  auto skip = [&](std::string key, SkipKind kind, std::string detail) {
    if (!after.empty() && key <= after) return;
    SkippedEntry s{.key = std::move(key), .kind = kind, .detail = std::move(detail)};
    (count == opt.max_keys ? w.pending_skipped : page.skipped).push_back(std::move(s));
  };
  while (!w.stack.empty()) {
    Frame& f = w.stack.back();
    if (f.next == f.entries.size()) {
      w.stack.pop_back();
      continue;
    }
    const Entry& e = f.entries[f.next];
    std::string key = f.dir_key + e.sort_name;
    bool emits = e.kind == Kind::kFile || (e.kind == Kind::kDir && !opt.recursive);
    if (emits && !(key <= after) && count == opt.max_keys) {
      page.next = last;  // more to come: stop in front of it
      return page;
    }
    ++f.next;
    if (e.kind == Kind::kSkip) {
      skip(std::move(key), e.skip, e.detail);
      continue;
    }
    if (e.kind == Kind::kDir) {
      if (!opt.recursive) {
        if (key <= after) continue;
        page.prefixes.push_back(key);
        last = std::move(key);
        ++count;
        continue;
      }
      if (!after.empty() && key <= after && !StartsWith(after, key)) continue;
      FERRY_ASSIGN_OR_RETURN(std::optional<std::string> loop, Descend(w, key, ""));
      if (loop) skip(std::move(key), SkipKind::kLinkLoop, PathOf(w, *loop));
      continue;  // `f` may be invalid now
    }
    if (key <= after) continue;
    struct stat st;
    std::string path = PathOf(w, key);
    if (::stat(path.c_str(), &st) != 0) continue;  // vanished since the directory was read
    if (!S_ISREG(st.st_mode)) {
      skip(std::move(key), SkipKind::kNotRegularFile, std::string(FileType(st.st_mode)));
      continue;
    }
    page.objects.push_back(InfoFromStat(key, st));
    last = std::move(key);
    ++count;
  }
  // The walk is over: what was seen after a full page belongs to this last one.
  for (auto& e : w.pending_skipped) page.skipped.push_back(std::move(e));
  w.pending_skipped.clear();
  return page;
}

std::string CursorId(const ListOptions& o, const std::string& next) {
  std::string id = o.prefix;
  id.push_back('\0');
  id.push_back(o.recursive ? 'r' : '-');
  id.push_back(o.follow_symlinks ? 'L' : '-');
  id += std::to_string(o.max_keys);
  id.push_back('\0');
  return id + next;
}

}  // namespace

ListCursors::ListCursors() = default;
ListCursors::~ListCursors() = default;

std::unique_ptr<WalkState> ListCursors::Take(const std::string& id) {
  MutexLock lock(mu_);
  for (auto it = walks_.begin(); it != walks_.end(); ++it) {
    if (it->first == id) {
      auto w = std::move(it->second);
      walks_.erase(it);
      return w;
    }
  }
  return nullptr;
}

void ListCursors::Put(std::string id, std::unique_ptr<WalkState> state) {
  MutexLock lock(mu_);
  walks_.emplace_front(std::move(id), std::move(state));
  if (walks_.size() > kMax) walks_.pop_back();
}

Result<ListPage> ListLocal(const std::string& root, const ListOptions& options,
                           ListCursors& cursors) {
  for (auto seg : Split(options.prefix, '/')) {
    if (seg == "." || seg == "..") {
      return InvalidArgument("List '" + options.prefix + "': '.' and '..' are not allowed");
    }
  }
  if (options.max_keys < 1) return InvalidArgument("List: max_keys must be at least 1");
  std::unique_ptr<WalkState> walk;
  std::string after = options.continuation.empty() ? options.start_after : options.continuation;
  if (!options.continuation.empty()) walk = cursors.Take(CursorId(options, options.continuation));
  if (!walk) {
    FERRY_ASSIGN_OR_RETURN(walk, StartWalk(root, options));
  }
  FERRY_ASSIGN_OR_RETURN(ListPage page, Step(*walk, options, after));
  if (!page.next.empty()) cursors.Put(CursorId(options, page.next), std::move(walk));
  return page;
}

}  // namespace ferry::storage::local_internal
