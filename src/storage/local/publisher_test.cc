// Files published in batches (publisher.h, WriteOptions::publish_later): a name appears only
// after its batch's sync; one syncfs per batch where the filesystem allows it, fsync per file
// elsewhere or after a slow syncfs; errors keep the whole batch unnamed and come out of Flush();
// a store dropped before Flush() leaves nothing; through the local store as callers use it.

#include "storage/local/publisher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "storage/local/local_store.h"

namespace ferry::storage::local_internal {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class PublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("ferry-publish-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // An unnamed file in dir_ holding `data`, ready for the publisher.
  PendingFile Unnamed(const std::string& name, const std::string& data) {
    int fd = ::open(dir_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    uint64_t opened = OpenSequence();
    EXPECT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    PendingFile f{.fd = fd, .opened = opened, .path = dir_ + "/" + name, .dir = dir_, .key = name};
    ::fstat(fd, &f.st);
    return f;
  }

  static std::string Contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  std::string dir_;
};

// Counts the calls and can fail or slow down syncfs.
struct Calls {
  Mutex mu;
  std::vector<int> fsyncs GUARDED_BY(mu);
  std::vector<int> syncfs GUARDED_BY(mu);
  int syncfs_errno = 0;
  std::chrono::milliseconds syncfs_delay{0};
  bool groupable = true;

  Publisher::Ops Ops() {
    return {[this](int fd) {
              MutexLock lock(mu);
              fsyncs.push_back(fd);
              return ::fsync(fd);
            },
            [this](int fd) {
              {
                MutexLock lock(mu);
                syncfs.push_back(fd);
              }
              std::this_thread::sleep_for(syncfs_delay);
              if (syncfs_errno != 0) {
                errno = syncfs_errno;
                return -1;
              }
              return ::syncfs(fd);
            },
            [this](int) { return groupable; }};
  }
  size_t Fsyncs() {
    MutexLock lock(mu);
    return fsyncs.size();
  }
  std::vector<int> Syncfs() {
    MutexLock lock(mu);
    return syncfs;
  }
};

TEST_F(PublisherTest, NamesAppearOnlyWhenTheirBatchIsPublished) {
  Calls calls;
  Publisher p(calls.Ops());
  p.Add(Unnamed("a", "alpha"));
  p.Add(Unnamed("b", "beta"));
  EXPECT_FALSE(fs::exists(dir_ + "/a"));
  EXPECT_EQ(p.waiting(), 2u);
  ASSERT_TRUE(p.Flush().empty());
  EXPECT_EQ(Contents(dir_ + "/a"), "alpha");
  EXPECT_EQ(Contents(dir_ + "/b"), "beta");
  EXPECT_EQ(calls.Syncfs().size(), 1u);  // one sync for both
  EXPECT_EQ(calls.Fsyncs(), 0u);
  EXPECT_TRUE(p.Flush().empty());  // nothing waiting: nothing to do
}

TEST_F(PublisherTest, AFullBatchIsPublishedWithoutWaitingForFlush) {
  Calls calls;
  Publisher p(calls.Ops());
  for (size_t i = 0; i < Publisher::kBatch; ++i) p.Add(Unnamed("f" + std::to_string(i), "x"));
  EXPECT_EQ(p.waiting(), 0u);
  for (size_t i = 0; i < Publisher::kBatch; ++i)
    EXPECT_TRUE(fs::exists(dir_ + "/f" + std::to_string(i)));
  EXPECT_EQ(calls.Syncfs().size(), 1u);
  EXPECT_TRUE(p.Flush().empty());
}

TEST_F(PublisherTest, SyncfsIsCalledOnTheFileOpenedFirst) {
  Calls calls;
  Publisher p(calls.Ops());
  PendingFile first = Unnamed("first", "1");
  PendingFile second = Unnamed("second", "2");
  int first_fd = first.fd;
  p.Add(std::move(second));  // handed over in the other order
  p.Add(std::move(first));
  ASSERT_TRUE(p.Flush().empty());
  EXPECT_EQ(calls.Syncfs(), std::vector<int>{first_fd});
}

TEST_F(PublisherTest, WhereSyncfsDoesNotCoverEveryFileEachIsFsynced) {
  Calls calls;
  calls.groupable = false;
  Publisher p(calls.Ops());
  for (int i = 0; i < 3; ++i) p.Add(Unnamed("f" + std::to_string(i), "x"));
  ASSERT_TRUE(p.Flush().empty());
  EXPECT_EQ(calls.Fsyncs(), 3u);
  EXPECT_TRUE(calls.Syncfs().empty());
  EXPECT_TRUE(fs::exists(dir_ + "/f2"));
}

TEST_F(PublisherTest, AFailedSyncKeepsTheWholeBatchUnnamedAndFlushSaysSo) {
  Calls calls;
  calls.syncfs_errno = EIO;
  Publisher p(calls.Ops());
  for (int i = 0; i < 3; ++i) p.Add(Unnamed("f" + std::to_string(i), "x"));
  auto failed = p.Flush();
  ASSERT_EQ(failed.size(), 3u);
  EXPECT_EQ(failed[1].key, "f1");
  EXPECT_EQ(failed[1].size, 1u);
  EXPECT_NE(failed[1].status.message().find("f1' (syncfs)"), std::string::npos)
      << failed[1].status.ToString();
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(fs::exists(dir_ + "/f" + std::to_string(i)));
  EXPECT_TRUE(fs::is_empty(dir_));  // nothing half-written left behind either
  // The error was reported once; the next batch is judged on its own.
  calls.syncfs_errno = 0;
  p.Add(Unnamed("g0", "y"));
  p.Add(Unnamed("g1", "y"));
  EXPECT_TRUE(p.Flush().empty());
  EXPECT_TRUE(fs::exists(dir_ + "/g1"));
}

TEST_F(PublisherTest, ASlowSyncfsSendsThePublisherBackToFsyncPerFile) {
  Calls calls;
  calls.syncfs_delay = 20ms;
  Publisher p(calls.Ops(), 5ms);
  p.Add(Unnamed("a", "1"));
  p.Add(Unnamed("b", "2"));
  ASSERT_TRUE(p.Flush().empty());
  p.Add(Unnamed("c", "3"));
  p.Add(Unnamed("d", "4"));
  ASSERT_TRUE(p.Flush().empty());
  EXPECT_EQ(calls.Syncfs().size(), 1u);
  EXPECT_EQ(calls.Fsyncs(), 2u);
  EXPECT_EQ(Contents(dir_ + "/d"), "4");
}

TEST_F(PublisherTest, AnExistingNameIsReplacedAndACreateOnlyWriteFails) {
  {
    std::ofstream(dir_ + "/old") << "before";
    std::ofstream(dir_ + "/kept") << "mine";
  }
  Publisher p;
  p.Add(Unnamed("old", "after"));
  PendingFile create_only = Unnamed("kept", "theirs");
  create_only.options.if_none_match = true;
  p.Add(std::move(create_only));
  auto failed = p.Flush();
  EXPECT_EQ(Contents(dir_ + "/old"), "after");
  EXPECT_EQ(Contents(dir_ + "/kept"), "mine");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].key, "kept");
  EXPECT_EQ(failed[0].status.code(), StatusCode::kAlreadyExists) << failed[0].status.ToString();
}

TEST_F(PublisherTest, ThroughTheLocalStoreNothingIsNamedBeforeFlushAndNothingLeftIfNeverFlushed) {
  {
    auto store = MakeLocalStore(dir_);
    WriteOptions later{.publish_later = true};
    auto info = store->WriteAll("sub/a.bin", "payload", later);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->size, 7u);
    EXPECT_FALSE(fs::exists(dir_ + "/sub/a.bin"));
    ASSERT_TRUE(store->Flush().empty());
    EXPECT_EQ(Contents(dir_ + "/sub/a.bin"), "payload");
    ASSERT_TRUE(store->WriteAll("sub/b.bin", "never named", later).ok());
  }  // the store goes away without Flush()
  EXPECT_FALSE(fs::exists(dir_ + "/sub/b.bin"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ + "/sub"), fs::directory_iterator{}), 1);
}

}  // namespace
}  // namespace ferry::storage::local_internal
