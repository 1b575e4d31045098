#include "proxy/prewarm/requirements.h"

#include <gtest/gtest.h>

namespace ferry::proxy::prewarm {
namespace {

TEST(ParseRequirementsTest, ReadsPinsExtrasMarkersHashesAndContinuations) {
  std::vector<std::string> skipped;
  auto reqs = ParseRequirements(
      "# a comment\n"
      "Torch==2.3.1 \\\n"
      "    --hash=sha256:abc \\\n"
      "    --hash=sha256:def\n"
      "\n"
      "requests[socks]==2.32.3 ; python_version >= \"3.8\"  # why\n"
      "typing_extensions\n"
      "numpy>=1.26\n"
      "-r other.txt\n"
      "--index-url http://x/simple/\n"
      "https://example.com/pkg.whl\n",
      &skipped);
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].project, "torch");
  EXPECT_EQ(reqs[0].version, "2.3.1");
  EXPECT_EQ(reqs[0].line, 2);
  EXPECT_EQ(reqs[1].project, "requests");
  EXPECT_EQ(reqs[1].version, "2.32.3");
  EXPECT_EQ(reqs[1].line, 6);
  EXPECT_EQ(reqs[2].project, "typing-extensions");
  EXPECT_EQ(reqs[2].version, "");
  EXPECT_EQ(reqs[3].project, "numpy");
  EXPECT_EQ(reqs[3].version, "");
  ASSERT_EQ(skipped.size(), 4u);  // numpy's range, -r, --index-url, the URL
  EXPECT_NE(skipped[0].find("not an exact pin"), std::string::npos);
}

TEST(VersionOfFilenameTest, WheelsAndSdists) {
  EXPECT_EQ(*VersionOfFilename("torch-2.3.1-cp311-cp311-manylinux1_x86_64.whl"), "2.3.1");
  EXPECT_EQ(*VersionOfFilename("pkg-1.0-1-py3-none-any.whl"), "1.0");
  EXPECT_EQ(*VersionOfFilename("ferrydemo-alpha-2.0.tar.gz"), "2.0");
  EXPECT_EQ(*VersionOfFilename("x-0.1.zip"), "0.1");
  EXPECT_FALSE(VersionOfFilename("README.md"));
}

}  // namespace
}  // namespace ferry::proxy::prewarm
