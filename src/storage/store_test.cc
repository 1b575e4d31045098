#include "storage/store.h"

#include <gtest/gtest.h>

namespace ferry::storage {
namespace {

TEST(PageFromSortedKeysTest, ContinuationAfterCommonPrefixSkipsItsKeys) {
  std::vector<std::string> keys = {"p/a/1", "p/a/2", "p/b", "p/c/3"};
  auto info = [&](size_t i) { return ObjectInfo{.key = keys[i]}; };
  auto page = PageFromSortedKeys(keys, info, {.prefix = "p/", .recursive = false, .max_keys = 1});
  EXPECT_EQ(page.prefixes, std::vector<std::string>{"p/a/"});
  EXPECT_EQ(page.next, "p/a/");
  page = PageFromSortedKeys(
      keys, info, {.prefix = "p/", .recursive = false, .continuation = page.next, .max_keys = 1});
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].key, "p/b");
}

}  // namespace
}  // namespace ferry::storage
