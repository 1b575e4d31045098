#include "proxy/pypi_routes/pypi_index.h"

#include <gtest/gtest.h>

namespace ferry::proxy {
namespace {

TEST(ParsePypiIndexesTest, UnnamedFirstThenNamedAsGiven) {
  auto none = ParsePypiIndexes({});
  ASSERT_TRUE(none.ok());
  ASSERT_EQ(none->size(), 1u);
  EXPECT_EQ((*none)[0].upstream, kDefaultPypiUpstream);
  EXPECT_EQ((*none)[0].Root(), "/pypi/");
  auto two = ParsePypiIndexes({"torch-cu124=https://download.pytorch.org/whl/cu124",
                               "pypi=https://pypi.org/simple/", "http://mirror:8080/simple"});
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_EQ(two->size(), 3u);
  EXPECT_EQ((*two)[0].name, "");
  EXPECT_EQ((*two)[0].upstream, "http://mirror:8080/simple/");
  EXPECT_EQ((*two)[1].name, "torch-cu124");
  EXPECT_EQ((*two)[1].upstream, "https://download.pytorch.org/whl/cu124/");
  EXPECT_EQ((*two)[1].Root(), "/pypi/torch-cu124/");
  EXPECT_EQ((*two)[2].name, "pypi");
  // A '=' after the scheme belongs to the URL.
  auto query = ParsePypiIndexes({"https://host/simple/?a=b"});
  ASSERT_TRUE(query.ok());
  EXPECT_EQ((*query)[0].name, "");
}

TEST(ParsePypiIndexesTest, RefusesBadNamesUrlsAndRepeats) {
  for (auto values : std::vector<std::vector<std::string>>{{"Torch=https://x/"},
                                                           {"simple=https://x/"},
                                                           {"files=https://x/"},
                                                           {"-a=https://x/"},
                                                           {"a/b=https://x/"},
                                                           {"=https://x/"},
                                                           {"a=ftp://x/"},
                                                           {"pypi.org/simple"},
                                                           {"a=https://x/", "a=https://y/"},
                                                           {"https://x/", "https://y/"},
                                                           {"https://x/simple/\nB=https://y/"},
                                                           {"a=https://x/ y"}}) {
    auto r = ParsePypiIndexes(values);
    ASSERT_FALSE(r.ok()) << values[0];
    EXPECT_NE(r.status().message().find("--pypi-upstream '"), std::string::npos);
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);  // one line
  }
}

}  // namespace
}  // namespace ferry::proxy
