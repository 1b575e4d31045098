#pragma once
// The inode table of a mount: inode numbers for the files and directories the kernel has looked
// up, their attributes and how long those stay valid (the metadata cache), and negative entries
// for names known not to exist. No libfuse here.
//
// Keys: the root is the mount's prefix ("" or "data/"); a directory's key ends in '/', a file's
// does not. Directories are implicit (any key below a prefix makes it a directory); a name that
// is both an object and a prefix shows as the directory.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"

namespace ferry::mount {

using Ino = uint64_t;
inline constexpr Ino kRootIno = 1;
using Clock = std::chrono::steady_clock;
using SystemTime = std::chrono::system_clock::time_point;

struct Attr {
  Ino ino = 0;
  bool dir = false;
  uint64_t size = 0;
  SystemTime mtime{};
  std::string etag;    // files in the store; "" for directories and unfinished local files
  bool local = false;  // created in this mount and not (yet) in the store
};

struct Node {
  Attr attr;
  Ino parent = 0;
  std::string name;
  std::string key;  // store key (directories end in '/')
  uint64_t lookups = 0;
  Clock::time_point valid_until{};  // attributes may be used without asking the store until then
  uint64_t local_below = 0;         // local nodes below it (in its subtree, itself excluded)

  // Exists in this mount whatever the store says: local itself, or holding a local node (a
  // directory made here inside a directory that the store no longer has).
  bool kept_locally() const { return attr.local || local_below > 0; }
};

class InodeTable final {
 public:
  explicit InodeTable(std::string root_key);

  // Inserts or refreshes the child `name` of `parent`; returns its node (copy). A child whose
  // kind changed (file <-> directory) gets a new inode.
  Node Upsert(Ino parent, const std::string& name, Attr attr, Clock::time_point valid_until);
  std::optional<Node> Get(Ino ino) const;
  std::optional<Node> Child(Ino parent, const std::string& name) const;
  void AddLookup(Ino ino, uint64_t n = 1);
  // Returns true when the kernel holds no more references to `ino` (its lookup count is zero).
  bool Forget(Ino ino, uint64_t n);
  void Remove(Ino parent, const std::string& name);
  void SetAttr(Ino ino, const Attr& attr, Clock::time_point valid_until);
  // The attributes of `ino` are out of date if they still name version `etag`: the next use
  // asks the store.
  void Expire(Ino ino, const std::string& etag);

  // Negative entries: `name` under `parent` does not exist until `until`.
  void SetMissing(Ino parent, const std::string& name, Clock::time_point until);
  bool KnownMissing(Ino parent, const std::string& name) const;
  void ClearMissing(Ino parent, const std::string& name);

  // The child name after `name` under `parent` in name order (known children only).
  std::optional<std::string> NextChild(Ino parent, const std::string& name) const;
  // Names of the children that are kept locally (Node::kept_locally): they exist whether or
  // not the store has them.
  std::vector<std::string> LocalChildren(Ino parent) const;

  static std::string ChildKey(const std::string& parent_key, const std::string& name, bool dir);

 private:
  // Adds `delta` to local_below of the ancestors of `n` that it is attached to (by name, up to
  // the root). Called with mu_ held, while `n` is attached.
  void AddLocalBelow(const Node& n, int64_t delta) REQUIRES(mu_);
  static int64_t LocalWeight(const Node& n) {
    return (n.attr.local ? 1 : 0) + static_cast<int64_t>(n.local_below);
  }

  mutable Mutex mu_;
  std::unordered_map<Ino, Node> nodes_ GUARDED_BY(mu_);
  std::map<std::pair<Ino, std::string>, Ino> children_ GUARDED_BY(mu_);
  std::map<std::pair<Ino, std::string>, Clock::time_point> missing_ GUARDED_BY(mu_);
  Ino next_ GUARDED_BY(mu_) = kRootIno + 1;
};

}  // namespace ferry::mount
