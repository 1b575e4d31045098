#include "proxy/doc_cache.h"

#include <gtest/gtest.h>

#include "storage/memory/memory_store.h"

namespace ferry::proxy {
namespace {

TEST(DocCacheTest, PutThenGetAcrossInstancesSharingAStore) {
  auto store = storage::MakeMemoryStore();
  DocCache a(store, "cache/");
  Doc doc{
      .body = std::string("binary\0body\n", 12), .fields = {{"commit", "abc"}}, .fetched_ms = 42};
  ASSERT_TRUE(a.Put("hf-ref", "models/org/x@main", doc).ok());
  EXPECT_TRUE(a.Get("hf-ref", "models/org/x@main").has_value());  // at once, before the store
  ASSERT_TRUE(a.Flush().ok());
  DocCache b(store, "cache/");  // a restart: nothing in memory
  auto got = b.Get("hf-ref", "models/org/x@main");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->body, doc.body);
  EXPECT_EQ(got->fields.at("commit"), "abc");
  EXPECT_EQ(got->fetched_ms, 42);
  EXPECT_FALSE(b.Get("hf-ref", "models/org/x@dev").has_value());
  EXPECT_EQ(a.KeyFor("ns", "k").rfind("cache/docs/ns/", 0), 0u);
}

TEST(DocCacheTest, DecodeRefusesAnotherKeyOrGarbage) {
  Doc doc{.body = "b", .fields = {}, .fetched_ms = 1};
  std::string data = EncodeDoc("k1", doc);
  EXPECT_TRUE(DecodeDoc("k1", data).has_value());
  EXPECT_FALSE(DecodeDoc("k2", data).has_value());
  EXPECT_FALSE(DecodeDoc("k1", "no newline").has_value());
  EXPECT_FALSE(DecodeDoc("k1", "[1]\nbody").has_value());
}

TEST(DocCacheTest, MemoryStaysBounded) {
  auto store = storage::MakeMemoryStore();
  DocCache cache(store, "", 1000);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(cache.Put("n", std::to_string(i), Doc{.body = std::string(200, 'x')}).ok());
  }
  // Evicted from memory, still in the store.
  ASSERT_TRUE(cache.Flush().ok());
  EXPECT_TRUE(cache.Get("n", "0").has_value());
}

}  // namespace
}  // namespace ferry::proxy
