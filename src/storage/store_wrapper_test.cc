// StoreWrapper forwards every virtual of Store, optional operations included.
#include "storage/store_wrapper.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace ferry::storage {
namespace {

// Records which of its methods were called; every virtual of Store is overridden.
class RecordingStore final : public Store {
 public:
  std::set<std::string> calls;
  Store* copy_from_source = nullptr;

  std::string UrlFor(std::string_view key) const override { return "rec://" + std::string(key); }
  Capabilities capabilities() const override {
    const_cast<RecordingStore*>(this)->calls.insert("capabilities");
    return {.local_files = true};
  }
  Result<ObjectInfo> Stat(std::string_view) override { return Note("Stat", ObjectInfo{}); }
  Status Read(std::string_view, const ReadOptions&, const ByteSink&) override {
    return Note("Read", Status());
  }
  Result<size_t> ReadInto(std::string_view, const ReadOptions&, std::span<char>,
                          const ReadProgress&) override {
    return Note("ReadInto", Result<size_t>(size_t{0}));
  }
  Result<std::unique_ptr<Writer>> NewWriter(std::string_view, const WriteOptions&) override {
    calls.insert("NewWriter");
    return Unimplemented("recording");
  }
  Result<ListPage> List(const ListOptions&) override { return Note("List", ListPage{}); }
  Status Delete(std::string_view) override { return Note("Delete", Status()); }
  std::vector<Status> DeleteMany(std::span<const std::string> keys) override {
    calls.insert("DeleteMany");
    return std::vector<Status>(keys.size());
  }
  Status Copy(std::string_view, std::string_view) override { return Note("Copy", Status()); }
  Status CopyFrom(Store& src, std::string_view, std::string_view) override {
    copy_from_source = &src;
    return Note("CopyFrom", Status());
  }
  Result<std::unique_ptr<PartWriter>> NewPartWriter(std::string_view,
                                                    const PartWriteOptions&) override {
    calls.insert("NewPartWriter");
    return Unimplemented("recording");
  }
  Status AbortPartWrite(std::string_view, std::string_view) override {
    return Note("AbortPartWrite", Status());
  }
  Result<size_t> AbortPartWritesSince(std::string_view, SystemTime) override {
    return Note("AbortPartWritesSince", size_t{2});
  }
  uint64_t retry_count() const override { return 7; }
  StoreDescription Describe() override { return Note("Describe", StoreDescription{.kind = "rec"}); }
  bool IsDirectory(std::string_view) override { return Note("IsDirectory", true); }
  std::optional<std::string> LocalPathFor(std::string_view key) const override {
    return "/root/" + std::string(key);
  }
  Result<ObjectInfo> WriteAll(std::string_view, std::string_view, const WriteOptions&) override {
    return Note("WriteAll", ObjectInfo{});
  }
  Result<ObjectInfo> LinkLocalFile(std::string_view, const std::string&,
                                   const WriteOptions&) override {
    return Note("LinkLocalFile", ObjectInfo{});
  }
  std::vector<FlushFailure> Flush() override { return Note("Flush", std::vector<FlushFailure>{}); }

 private:
  template <typename T>
  T Note(const char* name, T value) {
    calls.insert(name);
    return value;
  }
};

TEST(StoreWrapperTest, ForwardsEveryVirtualToTheWrappedStore) {
  auto inner = std::make_shared<RecordingStore>();
  StoreWrapper w(inner);
  EXPECT_EQ(w.UrlFor("k"), "rec://k");
  EXPECT_TRUE(w.capabilities().local_files);
  EXPECT_TRUE(w.Stat("k").ok());
  EXPECT_TRUE(w.Read("k", {}, [](std::string_view) { return Status(); }).ok());
  char buf[4];
  EXPECT_TRUE(w.ReadInto("k", {}, buf, [](size_t) { return Status(); }).ok());
  EXPECT_FALSE(w.NewWriter("k", {}).ok());
  EXPECT_TRUE(w.List({}).ok());
  EXPECT_TRUE(w.Delete("k").ok());
  std::vector<std::string> keys = {"a", "b"};
  EXPECT_EQ(w.DeleteMany(keys).size(), 2u);
  EXPECT_TRUE(w.Copy("a", "b").ok());
  EXPECT_TRUE(w.CopyFrom(*inner, "a", "b").ok());
  EXPECT_FALSE(w.NewPartWriter("k", {}).ok());
  EXPECT_TRUE(w.AbortPartWrite("k", "t").ok());
  auto since = w.AbortPartWritesSince("k", SystemTime{});
  EXPECT_TRUE(since.ok() && *since == 2u);
  EXPECT_EQ(w.retry_count(), 7u);
  EXPECT_EQ(w.Describe().kind, "rec");
  EXPECT_TRUE(w.IsDirectory("d"));
  EXPECT_EQ(w.LocalPathFor("k"), "/root/k");
  EXPECT_TRUE(w.WriteAll("k", "data").ok());
  EXPECT_TRUE(w.LinkLocalFile("k", "/tmp/f", {}).ok());
  EXPECT_TRUE(w.Flush().empty());
  EXPECT_THAT(inner->calls, ::testing::UnorderedElementsAre(
                                "capabilities", "Stat", "Read", "ReadInto", "NewWriter", "List",
                                "Delete", "DeleteMany", "Copy", "CopyFrom", "NewPartWriter",
                                "AbortPartWrite", "AbortPartWritesSince", "Describe", "IsDirectory",
                                "WriteAll", "LinkLocalFile", "Flush"));
}

TEST(StoreWrapperTest, CopyFromItselfIsACopyInsideTheWrappedStore) {
  auto inner = std::make_shared<RecordingStore>();
  StoreWrapper w(inner);
  ASSERT_TRUE(w.CopyFrom(w, "a", "b").ok());
  EXPECT_EQ(inner->copy_from_source, inner.get());
  RecordingStore other;
  ASSERT_TRUE(w.CopyFrom(other, "a", "b").ok());
  EXPECT_EQ(inner->copy_from_source, &other);
}

}  // namespace
}  // namespace ferry::storage
