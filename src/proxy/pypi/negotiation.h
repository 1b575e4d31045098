#pragma once
// PEP 691 content negotiation for /pypi/simple/ pages: which representation an Accept header
// asks for, or none (406). Every answer of a negotiated URL, 406 included, carries
// "Vary: Accept" (kVaryHeaderValue) so caches in between keep the representations apart.

#include <optional>
#include <string>
#include <string_view>

namespace ferry::proxy::pypi {

enum class SimpleFormat {
  kJson,  // application/vnd.pypi.simple.v1+json
  kHtml,  // PEP 503 HTML, as application/vnd.pypi.simple.v1+html or text/html
};

struct Negotiated {
  SimpleFormat format = SimpleFormat::kHtml;
  std::string content_type;  // the Content-Type to answer with
};

inline constexpr std::string_view kJsonContentType = "application/vnd.pypi.simple.v1+json";
inline constexpr std::string_view kHtmlV1ContentType = "application/vnd.pypi.simple.v1+html";
inline constexpr std::string_view kTextHtmlContentType = "text/html; charset=utf-8";
inline constexpr std::string_view kVaryHeaderValue = "Accept";

// Chooses the representation for `accept` (the request's Accept header, "" when absent):
//  - absent or blank: text/html (PEP 691: the legacy default, what old clients expect);
//  - otherwise each offered type (v1+json, v1+html, text/html; the "latest" aliases
//    application/vnd.pypi.simple.latest+json/+html count as v1) gets the q of the most specific
//    media range matching it (exact > type/* > */*), q=0 excluding it; the highest q wins; ties
//    go to the more specific match, then v1+json > v1+html > text/html, except that among
//    matches by "*/*" alone text/html wins (a browser or curl gets HTML);
//  - nullopt when nothing offered has q > 0: answer 406 (NotAcceptableBody()).
// Malformed ranges and q values are ignored (as if not listed). Types and parameter names are
// case-insensitive.
std::optional<Negotiated> NegotiateSimpleFormat(std::string_view accept);

// A short text/plain body for 406 listing the types offered.
std::string NotAcceptableBody();

}  // namespace ferry::proxy::pypi
