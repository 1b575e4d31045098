#include "base/utf8.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(Utf8Test, IsUtf8FollowsRfc3629) {
  EXPECT_TRUE(IsUtf8(""));
  EXPECT_TRUE(IsUtf8("plain ascii/path.pt"));
  EXPECT_TRUE(IsUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_TRUE(IsUtf8("\xf4\x8f\xbf\xbf"));                           // U+10FFFF
  EXPECT_FALSE(IsUtf8("ck\xff.pt"));                                 // Latin-1 byte
  EXPECT_FALSE(IsUtf8("caf\xe9"));                                   // Latin-1 é
  EXPECT_FALSE(IsUtf8("\xc3"));                                      // cut short
  EXPECT_FALSE(IsUtf8("\xe2\x82"));                                  // cut short
  EXPECT_FALSE(IsUtf8("\xc0\xaf"));                                  // overlong '/'
  EXPECT_FALSE(IsUtf8("\xe0\x80\xaf"));                              // overlong '/'
  EXPECT_FALSE(IsUtf8("\xed\xa0\x80"));                              // surrogate U+D800
  EXPECT_FALSE(IsUtf8("\xf4\x90\x80\x80"));                          // past U+10FFFF
  EXPECT_FALSE(IsUtf8("\x80"));                                      // lone continuation
}

}  // namespace
}  // namespace ferry
