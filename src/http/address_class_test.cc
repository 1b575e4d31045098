#include "http/address_class.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>

namespace ferry::http {
namespace {

bool Public(const char* text) {
  sockaddr_storage ss{};
  if (std::strchr(text, ':')) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_family = AF_INET6;
    EXPECT_EQ(inet_pton(AF_INET6, text, &in6->sin6_addr), 1) << text;
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_family = AF_INET;
    EXPECT_EQ(inet_pton(AF_INET, text, &in->sin_addr), 1) << text;
  }
  return IsPublicAddress(reinterpret_cast<const sockaddr*>(&ss));
}

TEST(IsPublicAddressTest, TheInternetIsPublicThisHostAndItsNetworksAreNot) {
  for (const char* yes : {"1.1.1.1", "8.8.8.8", "18.244.0.1", "100.63.255.255", "100.128.0.0",
                          "172.15.255.255", "172.32.0.0", "2606:4700::1111", "2a00:1450::1"}) {
    EXPECT_TRUE(Public(yes)) << yes;
  }
  for (const char* no : {"0.0.0.0",
                         "127.0.0.1",
                         "127.255.0.9",
                         "10.1.2.3",
                         "172.16.0.1",
                         "172.31.255.255",
                         "192.168.1.10",
                         "169.254.169.254",
                         "100.64.0.1",
                         "224.0.0.1",
                         "255.255.255.255",
                         "198.18.0.1",
                         "::",
                         "::1",
                         "fe80::1",
                         "fd00:ec2::254",
                         "fc00::1",
                         "ff02::1",
                         "::ffff:127.0.0.1",
                         "::ffff:169.254.169.254",
                         "::10.0.0.1",
                         "64:ff9b::a9fe:a9fe",
                         "2001:db8::1"}) {
    EXPECT_FALSE(Public(no)) << no;
  }
  EXPECT_FALSE(IsPublicAddress(nullptr));
}

}  // namespace
}  // namespace ferry::http
