#pragma once
// Which IP addresses are "public": the Internet at large, not this host, its LAN or its cloud's
// metadata service. `ferry serve` connects to a host named only by an upstream's answer (a
// redirect, a file link) solely at public addresses, so an upstream cannot aim it at a service
// that only the server can reach (SSRF: docs/semantics/serve.md, "Threat model").

#include <sys/socket.h>

#include <string>

namespace ferry::http {

// False for unspecified, loopback, private (RFC 1918, IPv6 ULA fc00::/7), shared (100.64/10),
// link-local (169.254/16 with the cloud metadata address, fe80::/10), benchmarking, documentation,
// multicast and reserved ranges, and for IPv4-mapped/compatible/NAT64 IPv6 forms of those;
// true otherwise. A family other than AF_INET/AF_INET6 is not public.
bool IsPublicAddress(const sockaddr* address);

// "10.0.0.1", "[fe80::1]": the address for a message.
std::string AddressText(const sockaddr* address);

}  // namespace ferry::http
