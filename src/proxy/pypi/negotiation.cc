#include "proxy/pypi/negotiation.h"

#include <array>
#include <vector>

#include "base/strings.h"

namespace ferry::proxy::pypi {
namespace {

struct MediaRange {
  std::string type;     // lowercase, "*" allowed
  std::string subtype;  // lowercase, "*" allowed
  double q = 1.0;
};

// Parses "1", "0.5", "0.125" (at most three decimals, 0..1); nullopt otherwise.
std::optional<double> ParseQ(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  if (s[0] != '0' && s[0] != '1') return std::nullopt;
  double v = s[0] - '0';
  if (s.size() == 1) return v;
  if (s[1] != '.') return std::nullopt;
  double scale = 0.1;
  for (size_t i = 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v += (s[i] - '0') * scale;
    scale /= 10;
  }
  if (v > 1.0) return std::nullopt;
  return v;
}

std::vector<MediaRange> ParseAccept(std::string_view accept) {
  std::vector<MediaRange> ranges;
  for (std::string_view item : Split(accept, ',')) {
    std::vector<std::string_view> params = Split(item, ';');
    std::string_view type = Trim(params[0]);
    size_t slash = type.find('/');
    if (type.empty() || slash == std::string_view::npos || slash == 0 || slash + 1 == type.size()) {
      continue;
    }
    MediaRange r{ToLower(Trim(type.substr(0, slash))), ToLower(Trim(type.substr(slash + 1)))};
    if (r.type == "*" && r.subtype != "*") continue;
    bool ok = true;
    for (size_t i = 1; i < params.size(); ++i) {
      std::string_view p = Trim(params[i]);
      size_t eq = p.find('=');
      if (eq == std::string_view::npos) continue;
      if (EqualsIgnoreCase(Trim(p.substr(0, eq)), "q")) {
        auto q = ParseQ(Trim(p.substr(eq + 1)));
        if (!q)
          ok = false;
        else
          r.q = *q;
      }
    }
    if (ok) ranges.push_back(std::move(r));
  }
  return ranges;
}

struct Offer {
  std::string_view type;
  std::string_view subtype;
  std::string_view alias_subtype;  // the "latest" spelling, or ""
  SimpleFormat format;
  std::string_view content_type;
};

// In tie-break order for explicit matches.
constexpr std::array<Offer, 3> kOffers = {{
    {"application", "vnd.pypi.simple.v1+json", "vnd.pypi.simple.latest+json", SimpleFormat::kJson,
     kJsonContentType},
    {"application", "vnd.pypi.simple.v1+html", "vnd.pypi.simple.latest+html", SimpleFormat::kHtml,
     kHtmlV1ContentType},
    {"text", "html", "", SimpleFormat::kHtml, kTextHtmlContentType},
}};

}  // namespace

std::optional<Negotiated> NegotiateSimpleFormat(std::string_view accept) {
  if (Trim(accept).empty()) {
    return Negotiated{SimpleFormat::kHtml, std::string(kTextHtmlContentType)};
  }
  std::vector<MediaRange> ranges = ParseAccept(accept);
  int best = -1;
  double best_q = 0;
  int best_specificity = -1;
  for (int i = 0; i < static_cast<int>(kOffers.size()); ++i) {
    const Offer& o = kOffers[i];
    int specificity = -1;
    double q = 0;
    for (const MediaRange& r : ranges) {
      int s = -1;
      if (r.type == o.type && (r.subtype == o.subtype || r.subtype == o.alias_subtype)) {
        s = 2;
      } else if (r.type == o.type && r.subtype == "*") {
        s = 1;
      } else if (r.type == "*") {
        s = 0;
      }
      if (s > specificity) {
        specificity = s;
        q = r.q;
      } else if (s == specificity && s >= 0) {
        q = std::max(q, r.q);  // the same range listed twice: the kinder one
      }
    }
    if (specificity < 0 || q <= 0) continue;
    bool better = best < 0 || q > best_q || (q == best_q && specificity > best_specificity) ||
                  // among "*/*" matches, the legacy text/html
                  (q == best_q && specificity == 0 && best_specificity == 0 && i == 2);
    if (better) {
      best = i;
      best_q = q;
      best_specificity = specificity;
    }
  }
  if (best < 0) return std::nullopt;
  return Negotiated{kOffers[best].format, std::string(kOffers[best].content_type)};
}

std::string NotAcceptableBody() {
  return "406 Not Acceptable: this index serves application/vnd.pypi.simple.v1+json, "
         "application/vnd.pypi.simple.v1+html and text/html\n";
}

}  // namespace ferry::proxy::pypi
