#include "shard/tar.h"

#include <gtest/gtest.h>

#include <vector>

namespace ferry::shard {
namespace {

struct Got {
  std::string name, data;
  uint64_t header_offset;
};

Result<std::vector<Got>> ParseAll(const std::string& archive, size_t chunk) {
  std::vector<Got> got;
  TarParser p({.on_entry =
                   [&](const TarEntry& e) {
                     got.push_back({e.name, "", e.header_offset});
                     return Status();
                   },
               .on_data =
                   [&](std::string_view d) {
                     got.back().data.append(d);
                     return Status();
                   },
               .on_end_of_entry = [] { return Status(); }});
  for (size_t i = 0; i < archive.size(); i += chunk) {
    FERRY_RETURN_IF_ERROR(p.Feed(std::string_view(archive).substr(i, chunk)));
  }
  FERRY_RETURN_IF_ERROR(p.Finish());
  return got;
}

std::string Archive(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string a;
  for (const auto& [name, data] : files)
    a += TarFileHeader(name, data.size()) + data + TarPadding(data.size());
  return a + TarEnd();
}

TEST(Tar, RoundTripsShortLongAndUnicodeNamesInAnyChunking) {
  std::string long_dir(150, 'd');
  std::vector<std::pair<std::string, std::string>> files = {
      {"a/0001.jpg", std::string(1000, 'x')},      {"a/0001.cls", "7"}, {"empty.txt", ""},
      {long_dir + "/sample.json", "{}"},            // ustar prefix + name
      {std::string(300, 'n') + ".bin", "long"},     // needs a pax path record
      {"caf\xc3\xa9/\xe6\x97\xa5.txt", "unicode"},  // non-ASCII: pax
  };
  std::string archive = Archive(files);
  EXPECT_EQ(archive.size() % kTarBlock, 0u);
  for (size_t chunk : {1ul, 7ul, 512ul, 100000ul}) {
    auto got = ParseAll(archive, chunk);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), files.size());
    uint64_t offset = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      EXPECT_EQ((*got)[i].name, files[i].first);
      EXPECT_EQ((*got)[i].data, files[i].second);
      EXPECT_EQ((*got)[i].header_offset, offset);
      offset += TarEntrySize(files[i].first, files[i].second.size());
    }
  }
}

TEST(Tar, HeadersAreDeterministic) {
  EXPECT_EQ(TarFileHeader("x/1.jpg", 5), TarFileHeader("x/1.jpg", 5));
  EXPECT_EQ(TarFileHeader("x/1.jpg", 5).size(), kTarBlock);
}

TEST(Tar, CorruptHeaderNamesTheOffset) {
  std::string a = Archive({{"a.txt", "hello"}, {"b.txt", "world"}});
  a[1024 + 10] ^= 0x55;  // inside the second header
  auto got = ParseAll(a, 4096);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("offset 1024"), std::string::npos)
      << got.status().message();
}

TEST(Tar, TruncationIsAnErrorButAMissingEndMarkerIsNot) {
  std::string a = Archive({{"a.txt", std::string(2000, 'a')}});
  auto cut = ParseAll(a.substr(0, 1500), 512);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos);
  auto no_end = ParseAll(a.substr(0, a.size() - 1024), 512);
  EXPECT_TRUE(no_end.ok()) << no_end.status().message();
}

TEST(Tar, RejectsSomethingThatIsNotTar) {
  auto got = ParseAll(std::string(4096, 'z'), 4096);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("offset 0"), std::string::npos);
}

}  // namespace
}  // namespace ferry::shard
