// Random operation sequences through the mount core checked against a reference model: files
// (create with sequential writes and close, replace with O_TRUNC, unlink, lookup and read) and
// directories (mkdir, rmdir, readdir) nested up to three levels, plus the store's own contents.
//
// The model is what docs/semantics/fuse.md promises. A directory exists while the store has a
// file below it, or while it holds something made in this mount and not yet in the store (a
// directory from mkdir: it becomes an ordinary directory once a file is written below it).
// With a metadata TTL longer than the test, the mount also keeps answering for directories it
// has seen until they are removed through it, even once the store has nothing below them
// (listings still show only what the store or this mount holds).
#include <fcntl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mount/fs.h"
#include "mount/fs_test_util.h"
#include "storage/memory/memory_store.h"

namespace ferry::mount {
namespace {

using Path = std::vector<std::string>;

std::string Join(const Path& p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? "/" : "") + p[i];
  return out;
}

std::string ParentOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool IsBelow(const std::string& path, const std::string& dir) {
  return dir.empty() ? !path.empty() : path.starts_with(dir + "/");
}

class Model {
 public:
  explicit Model(bool caching) : caching_(caching) {}

  std::map<std::string, std::string> files;  // path -> content
  std::set<std::string> local_dirs;          // mkdir'ed, and no file written below since

  bool IsFile(const std::string& p) const { return files.contains(p); }
  bool IsDir(const std::string& p) const {
    return StoreOrLocal(p) || (caching_ && seen_dirs_.contains(p));
  }
  bool HasFilesBelow(const std::string& dir) const {
    return std::any_of(files.begin(), files.end(), [&](auto& f) { return IsBelow(f.first, dir); });
  }
  bool HasLocalBelow(const std::string& dir) const {
    return std::any_of(local_dirs.begin(), local_dirs.end(),
                       [&](auto& d) { return IsBelow(d, dir); });
  }

  // The errno of looking up the first n components of `p` one by one (0: found).
  int WalkError(const Path& p, size_t n) const {
    for (size_t i = 0; i < n; ++i) {
      std::string at = Join(p, i + 1);
      if (!IsFile(at) && !IsDir(at)) return ENOENT;
      if (i + 1 < n && IsFile(at)) return ENOTDIR;
    }
    return 0;
  }
  // The errno of reaching the directory that holds `p` (0: it is a directory).
  int ParentError(const Path& p) const {
    if (int err = WalkError(p, p.size() - 1)) return err;
    return p.size() > 1 && IsFile(Join(p, p.size() - 1)) ? ENOTDIR : 0;
  }

  // Names in a listing of `dir`: its files, and its subdirectories that the store or this mount
  // holds (sorted).
  std::vector<std::string> List(const std::string& dir) const {
    std::set<std::string> names;
    auto add_ancestors = [&](std::string p) {
      for (; !p.empty(); p = ParentOf(p)) {
        if (ParentOf(p) == dir && IsBelow(p, dir)) names.insert(p.substr(p.rfind('/') + 1));
      }
    };
    for (const auto& [p, data] : files) add_ancestors(p);
    for (const auto& d : local_dirs) add_ancestors(d);
    return {names.begin(), names.end()};
  }

  void Wrote(const std::string& path, std::string data) {
    files[path] = std::move(data);
    for (std::string p = ParentOf(path); !p.empty(); p = ParentOf(p)) local_dirs.erase(p);
  }
  void RemovedDir(const std::string& dir) {
    std::erase_if(local_dirs, [&](auto& d) { return d == dir || IsBelow(d, dir); });
    std::erase_if(seen_dirs_, [&](auto& d) { return d == dir || IsBelow(d, dir); });
  }
  // Caching mount: every directory that exists now stays known to it.
  void Observe() {
    if (!caching_) return;
    for (const auto& [p, data] : files) {
      for (std::string d = ParentOf(p); !d.empty(); d = ParentOf(d)) seen_dirs_.insert(d);
    }
    for (const auto& d : local_dirs) {
      for (std::string a = d; !a.empty(); a = ParentOf(a)) seen_dirs_.insert(a);
    }
  }

 private:
  bool StoreOrLocal(const std::string& d) const {
    return d.empty() || local_dirs.contains(d) || HasFilesBelow(d) || HasLocalBelow(d);
  }
  bool caching_;
  std::set<std::string> seen_dirs_;
};

class ModelTest : public ::testing::TestWithParam<int> {
 protected:
  // A fresh store, mount and model.
  void Start(uint32_t seed) {
    rng_.seed(seed);
    fs_.reset();
    store_ = storage::MakeMemoryStore();
    model_ = Model(GetParam() > 0);
    model_.files = {{"c", "hello"}, {"dir/c", std::string(20000, 'c')}, {"dir/sub/c", "c"}};
    for (const auto& [path, data] : model_.files) {
      ASSERT_TRUE(store_->WriteAll("data/" + path, data).ok());
    }
    fs_ = std::make_unique<MountFs>(
        store_, "data/",
        MountOptions{
            .metadata_ttl = std::chrono::seconds(GetParam()),
            .prefetch = {.part_size = 4 << 10, .initial_window = 4 << 10, .max_window = 16 << 10}});
  }
  void Step(int step);
  void InDirectory(int op, Ino dir, const std::string& name, const std::string& p, int parent_err);
  void CheckTheStoreHoldsTheModelsFiles();

  // Looks up the first n components of `p` from the root.
  Fs<Attr> Walk(const Path& p, size_t n) {
    Attr at{.ino = kRootIno, .dir = true};
    for (size_t i = 0; i < n; ++i) {
      auto a = fs_->Lookup(at.ino, p[i]);
      if (!a) return a;
      at = *a;
    }
    return at;
  }

  // The names in a listing of `ino` but "." and "..", sorted.
  std::vector<std::string> List(Ino ino) {
    std::vector<std::string> names = testing::ListNames(*fs_, ino);
    std::erase_if(names, [](const std::string& n) { return n == "." || n == ".."; });
    std::sort(names.begin(), names.end());
    return names;
  }

  // Sequential writes of random chunks to an open handle, then the opener's close.
  std::string WriteAndClose(uint64_t fh) {
    std::string data;
    for (int i = 0, n = static_cast<int>(rng_() % 4); i < n; ++i) {
      std::string chunk(rng_() % 5000, static_cast<char>('a' + rng_() % 26));
      EXPECT_TRUE(fs_->Write(fh, data.size(), chunk).has_value());
      data += chunk;
    }
    EXPECT_TRUE(fs_->Flush(fh).has_value());
    fs_->Release(fh);
    return data;
  }

  Path RandomPath() {
    static const std::vector<std::string> kNames = {"dir", "sub", "c"};
    size_t depth = 1 + (rng_() % 20 >= 8) + (rng_() % 20 >= 14);
    Path p;
    for (size_t i = 0; i < depth; ++i) p.push_back(kNames[rng_() % kNames.size()]);
    return p;
  }

  std::mt19937 rng_;
  Model model_{false};
  int counts_[8] = {};  // operations that got as far as the mount
  std::shared_ptr<storage::Store> store_;
  std::unique_ptr<MountFs> fs_;
};

void ModelTest::Step(int step) {
  model_.Observe();
  const Path path = RandomPath();
  const std::string p = Join(path, path.size());
  const int op = static_cast<int>(rng_() % 8);
  SCOPED_TRACE("step " + std::to_string(step) + ", op " + std::to_string(op) + ": " + p);
  if (op <= 4) {  // an operation on a name in a directory: look the directory up first
    auto dir = Walk(path, path.size() - 1);
    if (int err = model_.WalkError(path, path.size() - 1)) {
      ASSERT_FALSE(dir.has_value());
      EXPECT_EQ(dir.error(), err);
      return;
    }
    ASSERT_TRUE(dir.has_value());
    InDirectory(op, dir->ino, path.back(), p, model_.ParentError(path));
  } else if (op == 5) {  // replace a whole file (open with O_TRUNC)
    auto a = Walk(path, path.size());
    if (int err = model_.WalkError(path, path.size())) {
      ASSERT_FALSE(a.has_value());
      EXPECT_EQ(a.error(), err);
      return;
    }
    ASSERT_TRUE(a.has_value());
    auto r = fs_->Open(a->ino, O_WRONLY | O_TRUNC);
    if (model_.IsDir(p)) {
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error(), EISDIR);
      return;
    }
    ASSERT_TRUE(r.has_value()) << r.error();
    model_.Wrote(p, WriteAndClose(r->fh));
  } else {  // the store itself agrees
    auto got = store_->ReadAll("data/" + p);
    EXPECT_EQ(got.ok(), model_.IsFile(p));
    if (got.ok()) {
      EXPECT_EQ(*got, model_.files[p]);
    }
  }
  ++counts_[op];
}

// Operation `op` on `name` in directory `dir` (path `p`); `parent_err`: ENOTDIR when `dir` is a
// file.
void ModelTest::InDirectory(int op, Ino dir, const std::string& name, const std::string& p,
                            int parent_err) {
  const bool is_file = model_.IsFile(p), is_dir = model_.IsDir(p);
  switch (op) {
    case 0: {  // create, write, close
      auto c = fs_->Create(dir, name, O_WRONLY | O_CREAT);
      int want = parent_err ? parent_err : is_dir ? EISDIR : is_file ? EEXIST : 0;
      ASSERT_EQ(c ? 0 : c.error(), want);
      if (c) model_.Wrote(p, WriteAndClose(c->second));
      break;
    }
    case 1: {  // mkdir
      auto m = fs_->Mkdir(dir, name);
      ASSERT_EQ(m ? 0 : m.error(), parent_err ? parent_err : is_dir || is_file ? EEXIST : 0);
      if (m) {
        EXPECT_TRUE(m->dir);
        model_.local_dirs.insert(p);
      }
      break;
    }
    case 2: {  // unlink
      auto r = fs_->Unlink(dir, name);
      EXPECT_EQ(r ? 0 : r.error(), parent_err ? parent_err
                                   : is_dir   ? EISDIR
                                   : !is_file ? ENOENT
                                              : 0);
      if (r) model_.files.erase(p);
      break;
    }
    case 3: {  // rmdir
      auto r = fs_->Rmdir(dir, name);
      const bool empty = !model_.HasFilesBelow(p) && !model_.HasLocalBelow(p);
      int want = parent_err ? parent_err
                 : is_file  ? ENOTDIR
                 : !is_dir  ? ENOENT
                 : !empty   ? ENOTEMPTY
                            : 0;
      EXPECT_EQ(r ? 0 : r.error(), want);
      if (r) model_.RemovedDir(p);
      break;
    }
    case 4: {  // lookup, then read the file or list the directory
      auto a = fs_->Lookup(dir, name);
      ASSERT_EQ(a ? 0 : a.error(), parent_err ? parent_err : is_file || is_dir ? 0 : ENOENT);
      if (!a) break;
      ASSERT_EQ(a->dir, is_dir);
      if (a->dir) {
        EXPECT_EQ(List(a->ino), model_.List(p));
      } else {
        EXPECT_EQ(a->size, model_.files[p].size());
        EXPECT_EQ(testing::ReadFile(*fs_, a->ino, 3000), model_.files[p]);
      }
      break;
    }
  }
}

void ModelTest::CheckTheStoreHoldsTheModelsFiles() {
  std::map<std::string, std::string> stored;
  ASSERT_TRUE(store_
                  ->ListAll({.prefix = "data/"},
                            [&](const storage::ListPage& page) {
                              for (const auto& o : page.objects) {
                                stored[o.key.substr(5)] = *store_->ReadAll(o.key);
                              }
                              return Status();
                            })
                  .ok());
  EXPECT_EQ(stored, model_.files);
}

TEST_P(ModelTest, RandomOperationsMatchTheReferenceModel) {
  for (uint32_t seed = 1; seed <= 20 && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Start(seed);
    for (int step = 0; step < 1000 && !HasFailure(); ++step) Step(step);
    CheckTheStoreHoldsTheModelsFiles();
  }
  for (int op = 0; op < 8; ++op) EXPECT_GT(counts_[op], 200) << op;  // every kind ran often
}

// 0: every answer from the store; 3600: from the mount's caches (longer than the test).
INSTANTIATE_TEST_SUITE_P(MetadataTtl, ModelTest, ::testing::Values(0, 3600));

}  // namespace
}  // namespace ferry::mount
