// Group commit of the local store's syncs (group_sync.h): a writer alone fsyncs its file; writers
// that arrive while a sync runs share one syncfs, called on the file opened first; an error
// reaches every writer of the batch; a slow syncfs sends the group back to fsync per file; the
// real thing works on this machine's filesystem.

#include "storage/local/group_sync.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace ferry::storage::local_internal {
namespace {

using namespace std::chrono_literals;

// Sync calls as seen by a GroupSync: which fds, and a gate that holds the first fsync until
// the test opens it, so other writers queue behind it.
struct Recorder {
  Mutex mu;
  std::vector<int> fsyncs GUARDED_BY(mu);
  std::vector<int> syncfs GUARDED_BY(mu);
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::atomic<bool> first{true};
  int syncfs_errno = 0;
  std::chrono::milliseconds syncfs_delay{0};

  GroupSync::Ops Ops() {
    return {[this](int fd) {
              {
                MutexLock lock(mu);
                fsyncs.push_back(fd);
              }
              if (first.exchange(false)) opened.wait();
              return 0;
            },
            [this](int fd) {
              {
                MutexLock lock(mu);
                syncfs.push_back(fd);
              }
              std::this_thread::sleep_for(syncfs_delay);
              if (syncfs_errno == 0) return 0;
              errno = syncfs_errno;
              return -1;
            }};
  }
  std::vector<int> Fsyncs() {
    MutexLock lock(mu);
    return fsyncs;
  }
  std::vector<int> Syncfs() {
    MutexLock lock(mu);
    return syncfs;
  }
};

// Starts writer 100 (held in its fsync by the gate), then writers 101..100+n, which queue
// behind it; opens the gate once they all wait, and returns every writer's status.
std::vector<Status> HeldThenQueued(GroupSync& group, Recorder& rec, int n,
                                   const std::vector<uint64_t>& opened) {
  std::vector<std::future<Status>> done;
  done.push_back(std::async(std::launch::async, [&] { return group.Sync(100, 0, "w100"); }));
  while (rec.Fsyncs().empty()) std::this_thread::sleep_for(1ms);
  for (int i = 0; i < n; ++i) {
    done.push_back(std::async(std::launch::async, [&, i] {
      return group.Sync(101 + i, opened[static_cast<size_t>(i)], "w" + std::to_string(101 + i));
    }));
  }
  while (group.waiting() < static_cast<size_t>(n)) std::this_thread::sleep_for(1ms);
  rec.gate.set_value();
  std::vector<Status> out;
  for (auto& f : done) out.push_back(f.get());
  return out;
}

TEST(GroupSyncTest, AWriterAloneFsyncsItsOwnFile) {
  Recorder rec;
  rec.first = false;
  GroupSync group(rec.Ops());
  EXPECT_TRUE(group.Sync(7, 0, "w").ok());
  EXPECT_TRUE(group.Sync(8, 1, "w").ok());
  EXPECT_EQ(rec.Fsyncs(), (std::vector<int>{7, 8}));
  EXPECT_TRUE(rec.Syncfs().empty());
  EXPECT_EQ(group.syncfs_calls(), 0u);
}

TEST(GroupSyncTest, WritersThatWaitShareOneSyncfsOnTheFileOpenedFirst) {
  Recorder rec;
  GroupSync group(rec.Ops());
  // Writers 101..104, opened in the order 102 (seq 3) first.
  auto statuses = HeldThenQueued(group, rec, 4, {9, 3, 7, 5});
  for (const auto& s : statuses) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(rec.Fsyncs(), (std::vector<int>{100}));
  EXPECT_EQ(rec.Syncfs(), (std::vector<int>{102}));
  EXPECT_EQ(group.syncfs_calls(), 1u);
  EXPECT_EQ(group.grouped_files(), 4u);
}

TEST(GroupSyncTest, AFailedSyncfsFailsEveryWriterOfTheBatchWithItsOwnName) {
  Recorder rec;
  rec.syncfs_errno = EIO;
  GroupSync group(rec.Ops());
  auto statuses = HeldThenQueued(group, rec, 3, {1, 2, 3});
  EXPECT_TRUE(statuses[0].ok());  // its own fsync succeeded
  for (int i = 1; i <= 3; ++i) {
    ASSERT_FALSE(statuses[static_cast<size_t>(i)].ok());
    EXPECT_NE(statuses[static_cast<size_t>(i)].message().find("w" + std::to_string(100 + i)),
              std::string::npos)
        << statuses[static_cast<size_t>(i)].ToString();
    EXPECT_NE(statuses[static_cast<size_t>(i)].ToString().find("nput/output"), std::string::npos)
        << statuses[static_cast<size_t>(i)].ToString();
  }
  // The next writer is not failed by an earlier batch's error.
  EXPECT_TRUE(group.Sync(200, 10, "w200").ok());
}

TEST(GroupSyncTest, ASlowSyncfsSendsTheGroupBackToFsyncPerFile) {
  Recorder rec;
  rec.syncfs_delay = 30ms;
  GroupSync group(rec.Ops(), 10ms);
  auto statuses = HeldThenQueued(group, rec, 2, {1, 2});
  for (const auto& s : statuses) EXPECT_TRUE(s.ok());
  EXPECT_TRUE(group.per_file());
  std::vector<std::future<Status>> more;
  for (int i = 0; i < 4; ++i) {
    more.push_back(std::async(std::launch::async, [&, i] { return group.Sync(300 + i, 20, "w"); }));
  }
  for (auto& f : more) EXPECT_TRUE(f.get().ok());
  EXPECT_EQ(rec.Syncfs().size(), 1u);
  EXPECT_EQ(rec.Fsyncs().size(), 5u);  // writer 100, then each of the four on its own
}

TEST(GroupSyncTest, ManyWritersOnThisMachinesFilesystemAllBecomeDurable) {
  auto dir =
      std::filesystem::temp_directory_path() / ("ferry-group-sync-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct stat dst;
  ASSERT_EQ(::stat(dir.c_str(), &dst), 0);
  // Grouped exactly where ext4 says it keeps no journal.
  struct statfs fs;
  ASSERT_EQ(::statfs(dir.c_str(), &fs), 0);
  std::error_code ec;  // no such link (overlayfs, tmpfs): not grouped
  std::string device =
      std::filesystem::read_symlink("/sys/dev/block/" + std::to_string(major(dst.st_dev)) + ":" +
                                        std::to_string(minor(dst.st_dev)),
                                    ec)
          .filename()
          .string();
  std::ifstream task("/sys/fs/ext4/" + device + "/journal_task");
  std::string journal;
  bool grouped =
      fs.f_type == EXT4_SUPER_MAGIC && std::getline(task, journal) && journal == "<none>";
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  std::atomic<unsigned long> dev{0};
  for (int i = 0; i < 16; ++i) {
    writers.emplace_back([&, i] {
      for (int j = 0; j < 20; ++j) {
        auto path = dir / ("f" + std::to_string(i) + "-" + std::to_string(j));
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        uint64_t opened = OpenSequence();
        struct stat st;
        if (fd < 0 || ::write(fd, "data", 4) != 4 || ::fstat(fd, &st) != 0) {
          ++failures;
          continue;
        }
        dev = st.st_dev;
        if (!DurableSync(fd, opened, st.st_dev, "Write '" + path.string() + "'").ok()) ++failures;
        ::close(fd);
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  GroupSync* group = GroupSyncFor(-1, dev.load());  // known by now: the fd is not looked at
  EXPECT_EQ(group != nullptr, grouped)
      << "filesystem type " << std::hex << fs.f_type << ", device " << device;
  std::filesystem::remove_all(dir);
}

TEST(GroupSyncTest, TmpfsIsNotGrouped) {
  struct statfs fs;
  if (::statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) GTEST_SKIP() << "no tmpfs";
  int fd = ::open("/dev/shm", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(GroupSyncFor(fd, st.st_dev), nullptr);
  EXPECT_TRUE(DurableSync(fd, OpenSequence(), st.st_dev, "w").ok());
  ::close(fd);
}

}  // namespace
}  // namespace ferry::storage::local_internal
