#include "tracker/sqlite/sqlite_tracker_store.h"

#include <gmock/gmock.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "tracker/testing/tracker_store_conformance.h"

namespace ferry::tracker::testing {
namespace {

// This process's scratch directory, removed at exit (after the tests closed their stores).
struct ScratchDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("ferry-tracker-sqlite-" + std::to_string(::getpid()));
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// A fresh database file in the scratch directory.
std::string NewDbPath() {
  static ScratchDir dir;
  static std::atomic<int> n{0};
  return (dir.path / ("db" + std::to_string(n++) + ".sqlite")).string();
}

std::shared_ptr<TrackerStore> OpenFresh() {
  auto store = SqliteTrackerStore::Open(NewDbPath());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? *store : nullptr;
}

INSTANTIATE_TEST_SUITE_P(tracker_sqlite, TrackerStoreConformanceTest,
                         ::testing::Values(TrackerStoreUnderTest{"sqlite", OpenFresh}),
                         [](const auto& info) { return info.param.name; });

TEST(TrackerSqliteStoreTest, ReopenedStoreKeepsEverything) {
  std::string path = NewDbPath();
  std::string run_id, exp_id;
  {
    auto store = SqliteTrackerStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    exp_id = *(*store)->CreateExperiment("kept", "s3://b/kept", {{"k", "v"}});
    auto run = (*store)->CreateRun({.experiment_id = exp_id, .artifact_root = "s3://b/kept"});
    run_id = run->run_id;
    ASSERT_TRUE((*store)->LogBatch(run_id, {{"m", 2.5, 7, 3}}, {{"p", "1"}}, {}).ok());
  }
  auto store = SqliteTrackerStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->GetExperimentByName("kept")->id, exp_id);
  auto run = (*store)->GetRun(run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_THAT(run->latest_metrics, ::testing::ElementsAre(MetricPoint{"m", 2.5, 7, 3}));
  EXPECT_EQ(*(*store)->CreateExperiment("next", "", {}), std::to_string(std::stoll(exp_id) + 1));
}

// A database written by the ferry before documents (schema 1: no `docs` table) is migrated in
// place when opened: its experiments and runs stay, documents work, the version is 2.
TEST(TrackerSqliteStoreTest, ASchemaOneDatabaseIsMigratedKeepingEverything) {
  std::string path = NewDbPath();
  std::string run_id;
  {
    auto store = SqliteTrackerStore::Open(path);
    ASSERT_TRUE(store.ok());
    auto run = (*store)->CreateRun({.experiment_id = "0", .artifact_root = "s3://b"});
    run_id = run->run_id;
    ASSERT_TRUE((*store)->LogBatch(run_id, {{"m", 1.5, 7, 3}}, {{"p", "1"}}, {}).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE docs; UPDATE schema_version SET version = 1", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = SqliteTrackerStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_THAT((*store)->GetRun(run_id)->latest_metrics,
              ::testing::ElementsAre(MetricPoint{"m", 1.5, 7, 3}));
  ASSERT_TRUE(
      (*store)->Transact(TxnMode::kWrite, [](DocTxn& t) { return t.Put("k", "a", "1"); }).ok());
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT version FROM schema_version", -1, &q, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 2);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

TEST(TrackerSqliteStoreTest, RefusesANewerSchemaVersion) {
  std::string path = NewDbPath();
  ASSERT_TRUE(SqliteTrackerStore::Open(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = SqliteTrackerStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr("schema version 99 is newer"));
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr(path));
}

TEST(TrackerSqliteStoreTest, PowerLossDurabilitySyncsEveryCommit) {
  std::string path = NewDbPath();
  SqliteTrackerOptions options;
  options.durability = SqliteTrackerOptions::Durability::kPowerLoss;
  auto store = SqliteTrackerStore::Open(path, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto run = (*store)->CreateRun({.experiment_id = "0", .artifact_root = "/a"});
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE((*store)->LogBatch(run->run_id, {{"m", 1, 1, 1}}, {}, {}).ok());
  EXPECT_EQ((*store)->GetRun(run->run_id)->latest_metrics.size(), 1u);
}

TEST(TrackerSqliteStoreTest, NotADatabaseIsAClearError) {
  std::string path = NewDbPath();
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("this is not a database, just some text long enough to be a header......", f);
  std::fclose(f);
  auto store = SqliteTrackerStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr(path));
}

}  // namespace
}  // namespace ferry::tracker::testing
