// Documents (tracker/doc_txn.h): what every backend's Transact keeps.
#include <gmock/gmock.h>

#include <thread>

#include "tracker/testing/tracker_store_conformance.h"

namespace ferry::tracker::testing {
namespace {

using Docs = std::vector<std::pair<std::string, std::string>>;

Result<std::optional<std::string>> GetDoc(TrackerStore& s, std::string kind, std::string key) {
  std::optional<std::string> out;
  Status st = s.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(out, t.Get(kind, key));
    return Status();
  });
  if (!st.ok()) return st;
  return out;
}

Docs ScanDocs(TrackerStore& s, std::string kind, std::string prefix) {
  Docs out;
  Status st = s.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(out, t.Scan(kind, prefix));
    return Status();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

}  // namespace

TEST_P(TrackerStoreConformanceTest, DocumentsArePutReplacedDeletedAndScannedByKeyInByteOrder) {
  ASSERT_TRUE(store_
                  ->Transact(TxnMode::kWrite,
                             [](DocTxn& t) -> Status {
                               for (const char* k : {"b/2", "a", "b/1", "b", "b/10", "c\xc3\xa9"}) {
                                 FERRY_RETURN_IF_ERROR(t.Put("model", k, std::string("{") + k));
                               }
                               FERRY_RETURN_IF_ERROR(t.Put("other", "b/1", "x"));
                               return t.Put("model", "b/2", "{\"replaced\":true}");
                             })
                  .ok());
  EXPECT_THAT(
      ScanDocs(*store_, "model", "b/"),
      ::testing::ElementsAre(std::pair<std::string, std::string>("b/1", "{b/1"),
                             std::pair<std::string, std::string>("b/10", "{b/10"),
                             std::pair<std::string, std::string>("b/2", "{\"replaced\":true}")));
  Docs all = ScanDocs(*store_, "model", "");
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all.front().first, "a");
  EXPECT_EQ(all.back().first, "c\xc3\xa9");  // bytes, not a locale's collation
  ASSERT_TRUE(
      store_->Transact(TxnMode::kWrite, [](DocTxn& t) { return t.Delete("model", "b"); }).ok());
  ASSERT_TRUE(
      store_->Transact(TxnMode::kWrite, [](DocTxn& t) { return t.Delete("model", "absent"); })
          .ok());
  EXPECT_EQ(*GetDoc(*store_, "model", "b"), std::nullopt);
  EXPECT_EQ(*GetDoc(*store_, "other", "b/1"), std::optional<std::string>("x"));
  EXPECT_EQ(ScanDocs(*store_, "model", "").size(), 5u);
}

TEST_P(TrackerStoreConformanceTest, AFailedDocumentTransactionLeavesNothingAndReadsCannotWrite) {
  ASSERT_TRUE(
      store_->Transact(TxnMode::kWrite, [](DocTxn& t) { return t.Put("k", "kept", "1"); }).ok());
  Status failed = store_->Transact(TxnMode::kWrite, [](DocTxn& t) -> Status {
    FERRY_RETURN_IF_ERROR(t.Put("k", "new", "2"));
    FERRY_RETURN_IF_ERROR(t.Delete("k", "kept"));
    FERRY_ASSIGN_OR_RETURN(auto seen, t.Get("k", "new"));  // the body sees its own writes
    if (seen != std::optional<std::string>("2")) return Internal("own write not seen");
    FERRY_ASSIGN_OR_RETURN(auto gone, t.Get("k", "kept"));
    if (gone) return Internal("own delete not seen");
    return InvalidArgument("the body changed its mind");
  });
  EXPECT_EQ(failed.code(), StatusCode::kInvalidArgument) << failed.ToString();
  EXPECT_EQ(*GetDoc(*store_, "k", "new"), std::nullopt);
  EXPECT_EQ(*GetDoc(*store_, "k", "kept"), std::optional<std::string>("1"));
  Status read_put =
      store_->Transact(TxnMode::kRead, [](DocTxn& t) { return t.Put("k", "sneaky", "3"); });
  EXPECT_FALSE(read_put.ok());
  EXPECT_EQ(*GetDoc(*store_, "k", "sneaky"), std::nullopt);
}

// Writers serialise: 4 threads x 25 increments of one counter document lose none.
TEST_P(TrackerStoreConformanceTest, DocumentWritersSerialiseSoNoUpdateIsLost) {
  auto increment = [&] {
    for (int i = 0; i < 25; ++i) {
      Status s;
      do {
        s = store_->Transact(TxnMode::kWrite, [](DocTxn& t) -> Status {
          FERRY_ASSIGN_OR_RETURN(auto v, t.Get("counter", "n"));
          int n = v ? std::stoi(*v) : 0;
          return t.Put("counter", "n", std::to_string(n + 1));
        });
      } while (s.code() == StatusCode::kUnavailable);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(increment);
  for (auto& t : threads) t.join();
  EXPECT_EQ(*GetDoc(*store_, "counter", "n"), std::optional<std::string>("100"));
}

}  // namespace ferry::tracker::testing
