#include "proxy/upstream/destinations.h"

#include <gtest/gtest.h>

namespace ferry::proxy {
namespace {

TEST(DestinationsTest, OperatorOriginsAnywhereCdnsPublicOnlyTheRestRefused) {
  DestinationPolicy p{.trusted = {"http://127.0.0.1:8001", "mirror.lab:8443", "[::1]", "files.lab"},
                      .public_hosts = DefaultPublicHostsFor("https://huggingface.co")};
  EXPECT_EQ(Classify("http://127.0.0.1:8001/simple/x/", p), Destination::kTrusted);
  EXPECT_EQ(Classify("http://127.0.0.1:8002/admin", p), Destination::kRefused);  // another port
  EXPECT_EQ(Classify("https://mirror.lab:8443/a", p), Destination::kTrusted);
  EXPECT_EQ(Classify("https://mirror.lab/a", p), Destination::kRefused);
  EXPECT_EQ(Classify("http://[::1]:9/x", p), Destination::kTrusted);
  EXPECT_EQ(Classify("http://FILES.lab:81/x", p), Destination::kTrusted);
  EXPECT_EQ(Classify("https://cdn-lfs-us-1.hf.co/repos/x?sig=1", p), Destination::kPublicOnly);
  EXPECT_EQ(Classify("https://cas-bridge.xethub.hf.co/x", p), Destination::kPublicOnly);
  EXPECT_EQ(Classify("https://huggingface.co/api/models/x", p), Destination::kPublicOnly);
  EXPECT_EQ(Classify("https://evilhf.co/x", p), Destination::kRefused);
  EXPECT_EQ(Classify("https://hf.co.evil.example/x", p), Destination::kRefused);
  EXPECT_EQ(Classify("http://169.254.169.254/latest/meta-data/", p), Destination::kRefused);
  EXPECT_EQ(Classify("http://user@127.0.0.1:8002/", p), Destination::kRefused);
  EXPECT_EQ(Classify("file:///etc/passwd", p), Destination::kRefused);
  bool public_only = false;
  Status s = CheckDestination("http://127.0.0.1:8002/admin?token=secret", p, &public_only);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("--upstream-allow 127.0.0.1:8002"), std::string::npos);
  EXPECT_EQ(s.message().find("secret"), std::string::npos);
  EXPECT_TRUE(CheckDestination("https://cdn-lfs.hf.co/x", p, &public_only).ok());
  EXPECT_TRUE(public_only);
}

TEST(DestinationsTest, DefaultsOnlyForThePublicServices) {
  EXPECT_EQ(DefaultPublicHostsFor("https://pypi.org/simple/"),
            std::vector<std::string>{"files.pythonhosted.org"});
  EXPECT_TRUE(DefaultPublicHostsFor("http://127.0.0.1:8000/simple/").empty());
}

}  // namespace
}  // namespace ferry::proxy
