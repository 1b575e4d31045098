// PostgresTrackerStore against a real PostgreSQL (the `postgres` ctest fixture,
// tests/tools/postgres.sh): the TrackerStore conformance suite, then what only a shared
// database has: two stores ("replicas") on one schema, concurrent schema creation, restarts and
// errors. Each test works in a schema of its own. Fails, never skips, without a server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "tracker/postgres/pg_db.h"
#include "tracker/postgres/postgres_tracker_store.h"
#include "tracker/testing/tracker_store_conformance.h"

namespace ferry::tracker::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// FERRY_PG_URL, or the FERRY_PG_URL line of the env file FERRY_PG_ENV names.
const std::string& PgUrl() {
  static const std::string url = [] {
    if (const char* u = std::getenv("FERRY_PG_URL"); u && *u) return std::string(u);
    if (const char* f = std::getenv("FERRY_PG_ENV"); f && *f) {
      std::ifstream in(f);
      for (std::string line; std::getline(in, line);) {
        if (line.starts_with("FERRY_PG_URL=")) return line.substr(13);
      }
    }
    std::fprintf(stderr,
                 "tracker_postgres_test: no PostgreSQL: set FERRY_PG_URL (or FERRY_PG_ENV), e.g. "
                 "tests/tools/postgres.sh start DIR && export FERRY_PG_ENV=DIR/env\n");
    std::abort();
  }();
  return url;
}

std::string NewSchema() {
  static std::atomic<int> n{0};
  return "t" + std::to_string(::getpid()) + "_" + std::to_string(n++);
}

std::shared_ptr<PostgresTrackerStore> OpenSchema(const std::string& schema, int connections = 16) {
  PostgresTrackerOptions options;
  options.schema = schema;
  options.max_connections = connections;
  auto store = PostgresTrackerStore::Open(PgUrl(), options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? *store : nullptr;
}

std::shared_ptr<TrackerStore> OpenFresh() { return OpenSchema(NewSchema()); }
// A pool of one connection: every operation must give its connection back.
std::shared_ptr<TrackerStore> OpenFreshOneConnection() { return OpenSchema(NewSchema(), 1); }

INSTANTIATE_TEST_SUITE_P(tracker_postgres, TrackerStoreConformanceTest,
                         ::testing::Values(TrackerStoreUnderTest{"postgres", OpenFresh},
                                           TrackerStoreUnderTest{"postgres_one_connection",
                                                                 OpenFreshOneConnection}),
                         [](const auto& info) { return info.param.name; });

TEST(TrackerPostgresStoreTest, ReopenedStoreKeepsEverything) {
  std::string schema = NewSchema();
  std::string run_id, exp_id;
  {
    auto store = OpenSchema(schema);
    ASSERT_NE(store, nullptr);
    exp_id = *store->CreateExperiment("kept", "s3://b/kept", {{"k", "v"}});
    auto run = store->CreateRun({.experiment_id = exp_id, .artifact_root = "s3://b/kept"});
    run_id = run->run_id;
    ASSERT_TRUE(store->LogBatch(run_id, {{"m", 2.5, 7, 3}}, {{"p", "1"}}, {}).ok());
  }
  auto store = OpenSchema(schema);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetExperimentByName("kept")->id, exp_id);
  auto run = store->GetRun(run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_THAT(run->latest_metrics, ::testing::ElementsAre(MetricPoint{"m", 2.5, 7, 3}));
  EXPECT_EQ(*store->CreateExperiment("next", "", {}), std::to_string(std::stoll(exp_id) + 1));
}

TEST(TrackerPostgresStoreTest, ReplicasStartingAtOnceCreateTheSchemaOnce) {
  std::string schema = NewSchema();
  std::vector<std::shared_ptr<PostgresTrackerStore>> stores(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < stores.size(); ++i) {
    threads.emplace_back([&, i] { stores[i] = OpenSchema(schema, 2); });
  }
  for (auto& t : threads) t.join();
  for (const auto& s : stores) ASSERT_NE(s, nullptr);
  auto e = stores[0]->GetExperiment("0");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->name, "Default");
}

// A schema written by the ferry before documents (version 1: no `docs` table) is migrated when
// opened, keeping its runs.
TEST(TrackerPostgresStoreTest, ASchemaOneDatabaseIsMigratedKeepingEverything) {
  std::string schema = NewSchema();
  std::string run_id;
  {
    auto store = OpenSchema(schema);
    ASSERT_NE(store, nullptr);
    auto run = store->CreateRun({.experiment_id = "0", .artifact_root = "s3://b"});
    run_id = run->run_id;
    ASSERT_TRUE(store->LogBatch(run_id, {{"m", 1.5, 7, 3}}, {{"p", "1"}}, {}).ok());
  }
  {
    auto c = postgres::Connection::Open(PgUrl(), "test", schema);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_TRUE((*c)->Exec("downgrade", "DROP TABLE docs").ok());
    ASSERT_TRUE((*c)->Exec("downgrade", "UPDATE schema_version SET version = 1").ok());
  }
  auto store = OpenSchema(schema);
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->GetRun(run_id)->latest_metrics,
              ::testing::ElementsAre(MetricPoint{"m", 1.5, 7, 3}));
  EXPECT_TRUE(
      store->Transact(TxnMode::kWrite, [](DocTxn& t) { return t.Put("k", "a", "1"); }).ok());
  auto c = postgres::Connection::Open(PgUrl(), "test", schema);
  ASSERT_TRUE(c.ok());
  auto v = (*c)->Exec("version", "SELECT version FROM schema_version");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Int(0, 0), 2);
}

TEST(TrackerPostgresStoreTest, RefusesANewerSchemaVersion) {
  std::string schema = NewSchema();
  ASSERT_NE(OpenSchema(schema), nullptr);
  auto c = postgres::Connection::Open(PgUrl(), "test", schema);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE((*c)->Exec("bump", "UPDATE schema_version SET version = 99").ok());
  PostgresTrackerOptions options;
  options.schema = schema;
  auto store = PostgresTrackerStore::Open(PgUrl(), options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 99 is newer"));
}

TEST(TrackerPostgresStoreTest, UnreachableDatabaseIsUnavailableWithoutThePassword) {
  // A port nobody listens on (bound, never listening), a password that must not leak.
  auto store = PostgresTrackerStore::Open(
      "postgresql://ann:hunter2-secret@127.0.0.1:1/tracker?connect_timeout=2");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(store.status().message(), Not(HasSubstr("hunter2-secret")));
  EXPECT_THAT(store.status().message(), HasSubstr("[REDACTED]@127.0.0.1:1/tracker"));
  EXPECT_THAT(store.status().message(), Not(HasSubstr("\n")));
}

// Two stores on one schema stand for two `ferry serve` replicas: batches for one run arrive at
// both at once, some twice; every point is stored exactly once and both answer alike.
TEST(TrackerPostgresStoreTest, TwoReplicasIngestingOneRunLoseAndDuplicateNothing) {
  std::string schema = NewSchema();
  auto a = OpenSchema(schema, 4);
  auto b = OpenSchema(schema, 4);
  ASSERT_TRUE(a && b);
  auto run = a->CreateRun({.experiment_id = "0", .start_time = 1, .artifact_root = "/x"});
  ASSERT_TRUE(run.ok());
  constexpr int kThreads = 6, kBatches = 15, kPerBatch = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kBatches; ++i) {
        std::vector<MetricPoint> batch;
        for (int j = 0; j < kPerBatch; ++j) {
          int64_t step = (static_cast<int64_t>(i) * kPerBatch + j) * kThreads + t;
          batch.push_back({j % 3 ? "loss" : "acc", static_cast<double>(step % 97), step, step});
        }
        // Each batch goes to one replica, and every third again to the other (a retry that
        // landed elsewhere).
        auto& first = (t + i) % 2 ? a : b;
        auto& second = (t + i) % 2 ? b : a;
        if (!first->LogBatch(run->run_id, batch, {{"lr", "0.1"}}, {}).ok()) ++failures;
        if (i % 3 == 0 && !second->LogBatch(run->run_id, batch, {}, {}).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  size_t total = 0;
  for (const char* key : {"loss", "acc"}) {
    std::vector<MetricPoint> all;
    std::string token;
    do {
      auto page = b->GetMetricHistory(run->run_id, key, 1000, token);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      all.insert(all.end(), page->items.begin(), page->items.end());
      token = page->next_page_token;
    } while (!token.empty());
    for (size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1].step, all[i].step);
    total += all.size();
    auto sa = a->GetMetricHistoryBulkInterval({run->run_id}, key, {}, {}, 100);
    auto sb = b->GetMetricHistoryBulkInterval({run->run_id}, key, {}, {}, 100);
    ASSERT_TRUE(sa.ok() && sb.ok());
    ASSERT_EQ(sa->size(), sb->size());
    for (size_t i = 0; i < sa->size(); ++i) {
      EXPECT_EQ((*sa)[i].step, (*sb)[i].step);
      EXPECT_EQ((*sa)[i].value, (*sb)[i].value);
    }
  }
  EXPECT_EQ(total, static_cast<size_t>(kThreads * kBatches * kPerBatch));
  auto latest = a->GetRun(run->run_id)->latest_metrics;
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(std::max(latest[0].step, latest[1].step), kThreads * kBatches * kPerBatch - 1);
}

TEST(TrackerPostgresStoreTest, ReplicasCreatingExperimentsGetDistinctIds) {
  std::string schema = NewSchema();
  auto a = OpenSchema(schema, 4);
  auto b = OpenSchema(schema, 4);
  ASSERT_TRUE(a && b);
  std::vector<std::thread> threads;
  std::atomic<int> created{0}, clashes{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto& store = t % 2 ? a : b;
      for (int i = 0; i < 10; ++i) {
        // Threads t and t^1 try the same names: one wins each, the other is told it exists.
        auto id =
            store->CreateExperiment("e" + std::to_string(t / 2) + "_" + std::to_string(i), "", {});
        if (id.ok()) {
          ++created;
        } else if (id.status().code() == StatusCode::kAlreadyExists) {
          ++clashes;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(created.load(), 40);
  EXPECT_EQ(clashes.load(), 40);
  auto page = a->SearchExperiments({.max_results = 1000});
  ASSERT_TRUE(page.ok());
  std::set<std::string> ids;
  for (const auto& e : page->items) ids.insert(e.id);
  EXPECT_EQ(ids.size(), 41u);  // with Default
}

}  // namespace
}  // namespace ferry::tracker::testing

namespace ferry::tracker::testing {
namespace {

// A replica stuck inside a transaction must not block the others for ever.
TEST(TrackerPostgresStoreTest, SessionsBoundLockWaitsAndIdleTransactions) {
  auto c = postgres::Connection::Open(PgUrl(), "test", "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto lock = (*c)->Exec("show", "SHOW lock_timeout");
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  EXPECT_EQ(lock->Text(0, 0), "30s");
  auto idle = (*c)->Exec("show", "SHOW idle_in_transaction_session_timeout");
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(idle->Text(0, 0), "1min");
}

}  // namespace
}  // namespace ferry::tracker::testing
