#include "mount/inodes.h"

namespace ferry::mount {

InodeTable::InodeTable(std::string root_key) {
  Node root;
  root.attr = {.ino = kRootIno, .dir = true, .mtime = std::chrono::system_clock::now()};
  root.parent = kRootIno;
  root.key = std::move(root_key);
  root.lookups = 1;
  root.valid_until = Clock::time_point::max();
  nodes_[kRootIno] = root;
}

std::string InodeTable::ChildKey(const std::string& parent_key, const std::string& name, bool dir) {
  return parent_key + name + (dir ? "/" : "");
}

Node InodeTable::Upsert(Ino parent, const std::string& name, Attr attr,
                        Clock::time_point valid_until) {
  MutexLock lock(mu_);
  missing_.erase({parent, name});
  const std::string& parent_key = nodes_.at(parent).key;
  auto it = children_.find({parent, name});
  if (it != children_.end()) {
    Node& n = nodes_.at(it->second);
    if (n.attr.dir == attr.dir) {
      attr.ino = n.attr.ino;
      if (attr.mtime == SystemTime{}) attr.mtime = n.attr.mtime;
      AddLocalBelow(n, int64_t{attr.local} - int64_t{n.attr.local});
      n.attr = attr;
      n.valid_until = valid_until;
      return n;
    }
    AddLocalBelow(n, -LocalWeight(n));
    children_.erase(it);  // kind changed: the old inode stays until forgotten, detached
  }
  Node n;
  attr.ino = next_++;
  n.attr = attr;
  n.parent = parent;
  n.name = name;
  n.key = ChildKey(parent_key, name, attr.dir);
  n.valid_until = valid_until;
  nodes_[attr.ino] = n;
  children_[{parent, name}] = attr.ino;
  AddLocalBelow(n, LocalWeight(n));
  return n;
}

void InodeTable::AddLocalBelow(const Node& n, int64_t delta) {
  if (delta == 0) return;
  for (const Node* cur = &n; cur->attr.ino != kRootIno;) {
    auto link = children_.find({cur->parent, cur->name});
    if (link == children_.end() || link->second != cur->attr.ino) return;  // detached
    auto parent = nodes_.find(cur->parent);
    if (parent == nodes_.end()) return;
    parent->second.local_below =
        static_cast<uint64_t>(static_cast<int64_t>(parent->second.local_below) + delta);
    cur = &parent->second;
  }
}

std::optional<Node> InodeTable::Get(Ino ino) const {
  MutexLock lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

std::optional<Node> InodeTable::Child(Ino parent, const std::string& name) const {
  MutexLock lock(mu_);
  auto it = children_.find({parent, name});
  if (it == children_.end()) return std::nullopt;
  return nodes_.at(it->second);
}

void InodeTable::AddLookup(Ino ino, uint64_t n) {
  MutexLock lock(mu_);
  if (auto it = nodes_.find(ino); it != nodes_.end()) it->second.lookups += n;
}

bool InodeTable::Forget(Ino ino, uint64_t n) {
  MutexLock lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || ino == kRootIno) return false;
  it->second.lookups -= std::min(it->second.lookups, n);
  if (it->second.lookups > 0) return false;
  // Still reachable by name (a cached entry): keep it; detached ones go.
  auto child = children_.find({it->second.parent, it->second.name});
  if (child == children_.end() || child->second != ino) nodes_.erase(it);
  return true;
}

void InodeTable::Remove(Ino parent, const std::string& name) {
  MutexLock lock(mu_);
  auto it = children_.find({parent, name});
  if (it == children_.end()) return;
  Ino ino = it->second;
  if (auto n = nodes_.find(ino); n != nodes_.end())
    AddLocalBelow(n->second, -LocalWeight(n->second));
  children_.erase(it);
  if (auto n = nodes_.find(ino); n != nodes_.end() && n->second.lookups == 0) nodes_.erase(n);
}

void InodeTable::SetAttr(Ino ino, const Attr& attr, Clock::time_point valid_until) {
  MutexLock lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return;
  AddLocalBelow(it->second, int64_t{attr.local} - int64_t{it->second.attr.local});
  it->second.attr = attr;
  it->second.attr.ino = ino;
  it->second.valid_until = valid_until;
}

void InodeTable::Expire(Ino ino, const std::string& etag) {
  MutexLock lock(mu_);
  auto it = nodes_.find(ino);
  if (it != nodes_.end() && it->second.attr.etag == etag) it->second.valid_until = Clock::now();
}

std::optional<std::string> InodeTable::NextChild(Ino parent, const std::string& name) const {
  MutexLock lock(mu_);
  auto it = children_.upper_bound({parent, name});
  if (it == children_.end() || it->first.first != parent) return std::nullopt;
  return it->first.second;
}

std::vector<std::string> InodeTable::LocalChildren(Ino parent) const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (auto it = children_.lower_bound({parent, ""});
       it != children_.end() && it->first.first == parent; ++it) {
    if (nodes_.at(it->second).kept_locally()) out.push_back(it->first.second);
  }
  return out;
}

void InodeTable::SetMissing(Ino parent, const std::string& name, Clock::time_point until) {
  MutexLock lock(mu_);
  missing_[{parent, name}] = until;
}

bool InodeTable::KnownMissing(Ino parent, const std::string& name) const {
  MutexLock lock(mu_);
  auto it = missing_.find({parent, name});
  return it != missing_.end() && it->second > Clock::now();
}

void InodeTable::ClearMissing(Ino parent, const std::string& name) {
  MutexLock lock(mu_);
  missing_.erase({parent, name});
}

}  // namespace ferry::mount
