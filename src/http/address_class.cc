#include "http/address_class.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>

namespace ferry::http {

namespace {

bool IsPublicV4(uint32_t a) {  // host byte order
  auto in = [a](uint32_t net, int bits) {
    uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
    return (a & mask) == (net & mask);
  };
  return !(in(0x00000000, 8) ||   // 0.0.0.0/8 "this network"
           in(0x0A000000, 8) ||   // 10/8
           in(0x64400000, 10) ||  // 100.64/10 shared (CGNAT)
           in(0x7F000000, 8) ||   // 127/8 loopback
           in(0xA9FE0000, 16) ||  // 169.254/16 link-local, cloud metadata
           in(0xAC100000, 12) ||  // 172.16/12
           in(0xC0000000, 24) ||  // 192.0.0/24 IETF
           in(0xC0000200, 24) ||  // 192.0.2/24 documentation
           in(0xC0A80000, 16) ||  // 192.168/16
           in(0xC6120000, 15) ||  // 198.18/15 benchmarking
           in(0xC6336400, 24) ||  // 198.51.100/24 documentation
           in(0xCB007100, 24) ||  // 203.0.113/24 documentation
           in(0xE0000000, 4) ||   // 224/4 multicast
           in(0xF0000000, 4));    // 240/4 reserved, broadcast
}

bool IsPublicV6(const uint8_t* b) {
  static const uint8_t kZero[16] = {};
  if (std::memcmp(b, kZero, 16) == 0) return false;  // ::
  static const uint8_t kLoop[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  if (std::memcmp(b, kLoop, 16) == 0) return false;  // ::1
  auto v4_at_end = [b] {
    return (uint32_t{b[12]} << 24) | (uint32_t{b[13]} << 16) | (uint32_t{b[14]} << 8) | b[15];
  };
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64): the IPv4 rule.
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b, kMapped, 12) == 0 || std::memcmp(b, kZero, 12) == 0 ||
      std::memcmp(b, kNat64, 12) == 0) {
    return IsPublicV4(v4_at_end());
  }
  if ((b[0] & 0xfe) == 0xfc) return false;                  // fc00::/7 unique local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return false;  // fe80::/10 link-local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return false;  // fec0::/10 site-local
  if (b[0] == 0xff) return false;                           // ff00::/8 multicast
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return false;  // 2001:db8::/32
  if (b[0] == 0x01 && b[1] == 0 && std::memcmp(b + 2, kZero, 6) == 0) return false;  // 100::/64
  return true;
}

}  // namespace

bool IsPublicAddress(const sockaddr* address) {
  if (address == nullptr) return false;
  if (address->sa_family == AF_INET) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof(in));
    return IsPublicV4(ntohl(in.sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof(in6));
    return IsPublicV6(in6.sin6_addr.s6_addr);
  }
  return false;
}

std::string AddressText(const sockaddr* address) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (address && address->sa_family == AF_INET) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof(in));
    inet_ntop(AF_INET, &in.sin_addr, buf, sizeof(buf));
    return buf;
  }
  if (address && address->sa_family == AF_INET6) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof(in6));
    inet_ntop(AF_INET6, &in6.sin6_addr, buf, sizeof(buf));
    return "[" + std::string(buf) + "]";
  }
  return "(unknown address family)";
}

}  // namespace ferry::http
