#pragma once
// Where `ferry serve`'s proxies may send a request (the SSRF rule of docs/semantics/serve.md,
// "Threat model"). An upstream's answers name URLs (a redirect's Location, a PyPI page's file
// links, a Link header): followed blindly they would let whoever controls an upstream, or a
// package page, make the server fetch from services only it can reach (a loopback admin port,
// the cloud metadata address 169.254.169.254) and hand the answer to a client. So every URL is
// checked before it is requested:
//  - an origin the operator named (--hf-upstream, --pypi-upstream, --upstream-allow HOST[:PORT])
//    may be at any address: that is the operator's choice;
//  - a host of `public_hosts` ("*.hf.co", "files.pythonhosted.org": where the public Hub and
//    PyPI send their files) is connected to only at public addresses (http/address_class.h),
//    checked for the address actually connected to, so a name that resolves to 127.0.0.1 is
//    refused too;
//  - anything else is refused: kPermissionDenied, naming the URL (query dropped) and the flag.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::proxy {

struct DestinationPolicy {
  // "scheme://host:port" (OriginOf) or "host[:port]" (any scheme; no port: any port), any address.
  std::vector<std::string> trusted;
  // Host names, exact or "*.suffix", connected to at public addresses only.
  std::vector<std::string> public_hosts;
};

// How `url` may be requested under `policy`.
enum class Destination { kTrusted, kPublicOnly, kRefused };
Destination Classify(std::string_view url, const DestinationPolicy& policy);

// OK for kTrusted and kPublicOnly (then *public_only is set), else the refusal.
Status CheckDestination(std::string_view url, const DestinationPolicy& policy, bool* public_only);

// The hosts the public Hub and PyPI send files to, as public_hosts entries.
std::vector<std::string> DefaultPublicHostsFor(std::string_view upstream_url);

}  // namespace ferry::proxy
