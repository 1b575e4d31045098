#include "storage/testing/store_conformance.h"

#include <gmock/gmock.h>

#include <atomic>
#include <random>
#include <thread>

namespace ferry::storage::testing {

using ::testing::ElementsAre;

namespace {

std::string Pattern(uint64_t size, uint32_t seed) {
  std::string s(size, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

struct Listing {
  std::vector<std::string> keys;
  std::vector<std::string> prefixes;
  int pages = 0;
};

Listing ListEverything(Store& store, ListOptions options) {
  Listing out;
  Status s = store.ListAll(options, [&](const ListPage& page) {
    ++out.pages;
    for (const auto& o : page.objects) out.keys.push_back(o.key);
    out.prefixes.insert(out.prefixes.end(), page.prefixes.begin(), page.prefixes.end());
    return Status();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

}  // namespace

void StoreConformanceTest::SetUp() {
  store_ = GetParam().make();
  static std::atomic<int> counter{0};
  std::random_device rd;
  prefix_ = "conformance-" + std::to_string(rd() % 1000000) + "-" + std::to_string(counter++) + "/";
}

void StoreConformanceTest::Put(const std::string& key, std::string_view data,
                               const WriteOptions& options) {
  auto info = store_->WriteAll(key, data, options);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
}

TEST_P(StoreConformanceTest, WrittenObjectReadsBackWithStat) {
  Put(K("hello.txt"), "hello world");
  auto info = store_->Stat(K("hello.txt"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, 11u);
  EXPECT_EQ(info->key, K("hello.txt"));
  EXPECT_FALSE(info->etag.empty());
  EXPECT_TRUE(info->modified.has_value());
  EXPECT_EQ(*store_->ReadAll(K("hello.txt")), "hello world");
}

TEST_P(StoreConformanceTest, EmptyObject) {
  Put(K("empty"), "");
  EXPECT_EQ(store_->Stat(K("empty"))->size, 0u);
  EXPECT_EQ(*store_->ReadAll(K("empty")), "");
}

TEST_P(StoreConformanceTest, RangedReads) {
  Put(K("r"), "0123456789");
  auto read = [&](uint64_t off, std::optional<uint64_t> len) {
    return store_->ReadAll(K("r"), {.range = ByteRange{off, len}});
  };
  EXPECT_EQ(*read(2, 3), "234");
  EXPECT_EQ(*read(7, std::nullopt), "789");
  EXPECT_EQ(*read(8, 100), "89");  // cut at the end
  EXPECT_EQ(*read(10, std::nullopt), "");
  EXPECT_EQ(*read(4, 0), "");
  EXPECT_EQ(read(11, std::nullopt).status().code(), StatusCode::kOutOfRange);
}

// ReadInto: the same bytes as Read, placed in the caller's memory, progress told of all of them.
TEST_P(StoreConformanceTest, ReadIntoPlacesTheRangeInTheCallersMemory) {
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) >> 7);
  Put(K("into"), data);
  std::string dst(1 << 20, 'x');
  size_t told = 0;
  auto count = [&](size_t n) {
    told += n;
    return Status();
  };
  ReadOptions ro{.range = ByteRange{12345, 1 << 20}};
  auto got = store_->ReadInto(K("into"), ro, std::span<char>(dst), count);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, dst.size());
  EXPECT_EQ(told, dst.size());
  EXPECT_TRUE(dst == data.substr(12345, 1 << 20));
  // The range ends at the end of the object: fewer bytes placed, the rest of dst untouched.
  std::string tail(100, 'y');
  got = store_->ReadInto(K("into"), {.range = ByteRange{data.size() - 10, 100}},
                         std::span<char>(tail), count);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, 10u);
  EXPECT_EQ(tail, data.substr(data.size() - 10) + std::string(90, 'y'));
  // More bytes than the caller's memory holds: an error, never a write past it.
  std::string small(10, 'z');
  EXPECT_EQ(store_->ReadInto(K("into"), {}, std::span<char>(small), count).status().code(),
            StatusCode::kDataLoss);
  // A progress callback that fails stops the read with its status.
  auto stop = [](size_t) { return Status(StatusCode::kCancelled, "stop"); };
  EXPECT_EQ(store_->ReadInto(K("into"), ro, std::span<char>(dst), stop).status().code(),
            StatusCode::kCancelled);
  EXPECT_EQ(store_->ReadInto(K("missing"), {}, std::span<char>(dst), count).status().code(),
            StatusCode::kNotFound);
}

TEST_P(StoreConformanceTest, MissingObjectIsNotFound) {
  EXPECT_EQ(store_->Stat(K("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadAll(K("missing")).status().code(), StatusCode::kNotFound);
  auto msg = store_->Stat(K("missing")).status().message();
  EXPECT_NE(msg.find("missing"), std::string::npos) << "error should name the key: " << msg;
}

TEST_P(StoreConformanceTest, OverwriteReplacesWholeObject) {
  Put(K("o"), "a long first version");
  Put(K("o"), "short");
  EXPECT_EQ(*store_->ReadAll(K("o")), "short");
}

TEST_P(StoreConformanceTest, UncommittedAndAbortedWritesStayInvisible) {
  if (!store_->capabilities().writable) GTEST_SKIP();
  {
    auto w = store_->NewWriter(K("pending"), {});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append("partial data").ok());
    EXPECT_EQ(store_->Stat(K("pending")).status().code(), StatusCode::kNotFound);
    (*w)->Abort();
  }
  {
    auto w = store_->NewWriter(K("dropped"), {});
    ASSERT_TRUE((*w)->Append("partial").ok());
  }  // destroyed without Commit
  EXPECT_EQ(store_->Stat(K("pending")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat(K("dropped")).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(ListEverything(*store_, {.prefix = prefix_}).keys.empty());
}

TEST_P(StoreConformanceTest, LargeObjectStreamsThroughWriterAndRanges) {
  uint64_t size = GetParam().large_object_size;
  std::string data = Pattern(size, 7);
  auto w = store_->NewWriter(K("large.bin"), {});
  ASSERT_TRUE(w.ok());
  for (uint64_t off = 0; off < size; off += 1000003) {
    ASSERT_TRUE((*w)->Append(std::string_view(data).substr(off, 1000003)).ok());
  }
  EXPECT_EQ(store_->Stat(K("large.bin")).status().code(), StatusCode::kNotFound);
  auto info = (*w)->Commit();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, size);
  EXPECT_EQ(store_->Stat(K("large.bin"))->size, size);
  auto back = store_->ReadAll(K("large.bin"));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == data) << "content differs";
  uint64_t off = size / 2 - 17;
  EXPECT_EQ(*store_->ReadAll(K("large.bin"), {.range = ByteRange{off, 1u << 20}}),
            data.substr(off, 1u << 20));
}

TEST_P(StoreConformanceTest, RecursiveListingIsSortedAndPaged) {
  for (const char* k : {"b", "a/2", "a/1", "a-c", "a/b/3", "a/b/4", "c/d/e/f"}) Put(K(k), k);
  std::vector<std::string> want = {K("a-c"),   K("a/1"), K("a/2"),    K("a/b/3"),
                                   K("a/b/4"), K("b"),   K("c/d/e/f")};
  auto all = ListEverything(*store_, {.prefix = prefix_});
  EXPECT_EQ(all.keys, want);
  auto paged = ListEverything(*store_, {.prefix = prefix_, .max_keys = 2});
  EXPECT_EQ(paged.keys, want);
  EXPECT_EQ(paged.pages, 4);
  auto sub = ListEverything(*store_, {.prefix = K("a/")});
  EXPECT_THAT(sub.keys, ElementsAre(K("a/1"), K("a/2"), K("a/b/3"), K("a/b/4")));
  auto partial = ListEverything(*store_, {.prefix = K("a")});
  EXPECT_EQ(partial.keys.size(), 5u);
}

TEST_P(StoreConformanceTest, DelimitedListingFoldsDirectories) {
  for (const char* k : {"b", "a/2", "a/1", "a-c", "a/b/3", "c/d/e/f"}) Put(K(k), k);
  auto top = ListEverything(*store_, {.prefix = prefix_, .recursive = false});
  EXPECT_THAT(top.keys, ElementsAre(K("a-c"), K("b")));
  EXPECT_THAT(top.prefixes, ElementsAre(K("a/"), K("c/")));
  auto paged = ListEverything(*store_, {.prefix = prefix_, .recursive = false, .max_keys = 1});
  EXPECT_EQ(paged.keys, top.keys);
  EXPECT_EQ(paged.prefixes, top.prefixes);
  auto inner = ListEverything(*store_, {.prefix = K("a/"), .recursive = false});
  EXPECT_THAT(inner.keys, ElementsAre(K("a/1"), K("a/2")));
  EXPECT_THAT(inner.prefixes, ElementsAre(K("a/b/")));
}

TEST_P(StoreConformanceTest, ListingAnEmptyPrefixFindsNothing) {
  auto none = ListEverything(*store_, {.prefix = K("nothing-here/")});
  EXPECT_TRUE(none.keys.empty());
  EXPECT_TRUE(none.prefixes.empty());
}

TEST_P(StoreConformanceTest, StartAfterListsTheFollowingKeysAndPrefixes) {
  for (const char* k : {"s/a", "s/b", "s/bb/x", "s/c", "s/d"}) Put(K(k), "x");
  auto page = store_->List({.prefix = K("s/"), .recursive = false, .start_after = K("s/a")});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  std::vector<std::string> keys;
  for (const auto& o : page->objects) keys.push_back(o.key);
  EXPECT_EQ(keys, (std::vector<std::string>{K("s/b"), K("s/c"), K("s/d")}));
  EXPECT_EQ(page->prefixes, std::vector<std::string>{K("s/bb/")});
  auto after_b = store_->List({.prefix = K("s/"), .recursive = false, .start_after = K("s/bb/")});
  ASSERT_TRUE(after_b.ok());
  ASSERT_FALSE(after_b->objects.empty());
  EXPECT_EQ(after_b->objects.front().key, K("s/c"));
}

TEST_P(StoreConformanceTest, DeleteIsIdempotentAndBatchDeleteWorks) {
  Put(K("d1"), "1");
  Put(K("d2"), "2");
  Put(K("d3"), "3");
  EXPECT_TRUE(store_->Delete(K("d1")).ok());
  EXPECT_TRUE(store_->Delete(K("d1")).ok());
  EXPECT_EQ(store_->Stat(K("d1")).status().code(), StatusCode::kNotFound);
  std::vector<std::string> keys = {K("d2"), K("d3"), K("never")};
  auto results = store_->DeleteMany(keys);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ListEverything(*store_, {.prefix = prefix_}).keys.empty());
}

TEST_P(StoreConformanceTest, CopyDuplicatesObject) {
  Put(K("src"), "copy me");
  ASSERT_TRUE(store_->Copy(K("src"), K("dst/copy")).ok());
  EXPECT_EQ(*store_->ReadAll(K("dst/copy")), "copy me");
  EXPECT_EQ(*store_->ReadAll(K("src")), "copy me");
  EXPECT_EQ(store_->Copy(K("nope"), K("x")).code(), StatusCode::kNotFound);
}

TEST_P(StoreConformanceTest, UserMetadataRoundTrips) {
  if (!store_->capabilities().user_metadata) GTEST_SKIP() << "backend keeps no user metadata";
  Put(K("m"), "x", {.metadata = {{"ferry-crc32c", "e3069283"}}});
  auto info = store_->Stat(K("m"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->metadata["ferry-crc32c"], "e3069283");
}

TEST_P(StoreConformanceTest, ConditionalCreateRefusesExisting) {
  if (!store_->capabilities().conditional_write) GTEST_SKIP() << "no conditional writes";
  Put(K("once"), "first", {.if_none_match = true});
  auto again = store_->WriteAll(K("once"), "second", {.if_none_match = true});
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*store_->ReadAll(K("once")), "first");
}

TEST_P(StoreConformanceTest, ReadIfMatchDetectsReplacement) {
  Put(K("v"), "version one");
  std::string etag = store_->Stat(K("v"))->etag;
  EXPECT_EQ(*store_->ReadAll(K("v"), {.if_match = etag}), "version one");
  Put(K("v"), "version two!");
  EXPECT_EQ(store_->ReadAll(K("v"), {.if_match = etag}).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_P(StoreConformanceTest, UnusualKeysRoundTripExactly) {
  std::vector<std::string> names = {"with space.txt",
                                    "unicod\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac.bin",
                                    "plus+sign",
                                    "percent%25%literal",
                                    "tilde~and=equals&amp",
                                    "quote'\"",
                                    "semi;colon,comma"};
  if (store_->capabilities().arbitrary_keys) {
    names.insert(names.end(), {"double//slash", "trailing/", "dot/./seg", "a/../b"});
  }
  for (const auto& n : names) Put(K(n), "data:" + n);
  for (const auto& n : names) {
    auto got = store_->ReadAll(K(n));
    ASSERT_TRUE(got.ok()) << n << ": " << got.status().ToString();
    EXPECT_EQ(*got, "data:" + n);
    EXPECT_TRUE(store_->Stat(K(n)).ok()) << n;
  }
  auto listed = ListEverything(*store_, {.prefix = prefix_});
  std::vector<std::string> want;
  for (const auto& n : names) want.push_back(K(n));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(listed.keys, want);
}

TEST_P(StoreConformanceTest, ConcurrentReadersSeeWholeObject) {
  std::string data = Pattern(3 << 20, 3);
  Put(K("shared"), data);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto r = store_->ReadAll(K("shared"));
      if (r.ok() && *r == data) ++good;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 4);
}

}  // namespace ferry::storage::testing

namespace ferry::storage::testing {

TEST_P(StoreConformanceTest, PartWritesInAnyOrderPublishOnCommit) {
  if (!store_->capabilities().part_writes) GTEST_SKIP() << "no part writes";
  const uint64_t part = 5ull << 20;
  std::string data = Pattern(2 * part + 12345, 11);
  PartWriteOptions opts{.write = {.metadata = {{"ferry-crc32c", "00000001"}}},
                        .size = data.size(),
                        .part_size = part};
  auto w = store_->NewPartWriter(K("parts.bin"), opts);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int n : {3, 1, 2}) {
    threads.emplace_back([&, n] {
      std::string_view piece = std::string_view(data).substr((n - 1) * part, part);
      if ((*w)->WritePart(n, piece).ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(ok.load(), 3);
  EXPECT_EQ(store_->Stat(K("parts.bin")).status().code(), StatusCode::kNotFound);
  auto info = (*w)->Commit();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, data.size());
  EXPECT_TRUE(*store_->ReadAll(K("parts.bin")) == data);
  EXPECT_TRUE(ListEverything(*store_, {.prefix = prefix_}).keys.size() == 1);
}

TEST_P(StoreConformanceTest, PartWritesResumeWithToken) {
  if (!store_->capabilities().part_writes) GTEST_SKIP() << "no part writes";
  const uint64_t part = 5ull << 20;
  std::string data = Pattern(part + 777, 12);
  PartWriteOptions opts{.size = data.size(), .part_size = part};
  std::string token;
  {
    auto w = store_->NewPartWriter(K("resumed.bin"), opts);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->WritePart(1, std::string_view(data).substr(0, part)).ok());
    token = (*w)->resume_token();
  }  // destroyed: interrupted
  EXPECT_EQ(store_->Stat(K("resumed.bin")).status().code(), StatusCode::kNotFound);
  opts.resume_token = token;
  auto w = store_->NewPartWriter(K("resumed.bin"), opts);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->WritePart(2, std::string_view(data).substr(part)).ok());
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_TRUE(*store_->ReadAll(K("resumed.bin")) == data);
}

TEST_P(StoreConformanceTest, AbortedPartWriteLeavesNothing) {
  if (!store_->capabilities().part_writes) GTEST_SKIP() << "no part writes";
  const uint64_t part = 5ull << 20;
  std::string data = Pattern(part + 1, 13);
  auto w = store_->NewPartWriter(K("aborted.bin"), {.size = data.size(), .part_size = part});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WritePart(1, std::string_view(data).substr(0, part)).ok());
  std::string token = (*w)->resume_token();
  (*w)->Abort();
  EXPECT_EQ(store_->Stat(K("aborted.bin")).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(ListEverything(*store_, {.prefix = prefix_}).keys.empty());
  auto again = store_->NewPartWriter(
      K("aborted.bin"), {.size = data.size(), .part_size = part, .resume_token = token});
  EXPECT_FALSE(again.ok());
}

TEST_P(StoreConformanceTest, DescribesItself) {
  StoreDescription d = store_->Describe();
  EXPECT_FALSE(d.kind.empty());
  EXPECT_FALSE(d.endpoint.empty());
  if (d.signs_requests) {
    // Exactly one of: the credentials used, or why none could be resolved.
    EXPECT_NE(d.credentials.has_value(), !d.credentials_error.ok());
    if (d.credentials) {
      EXPECT_FALSE(d.credentials->summary.empty());
    }
  } else {
    EXPECT_FALSE(d.credentials.has_value());
  }
}

}  // namespace ferry::storage::testing
