#include "proxy/pypi/negotiation.h"

#include <gtest/gtest.h>

namespace ferry::proxy::pypi {
namespace {

struct Case {
  const char* accept;
  const char* content_type;  // nullptr: 406
};

TEST(NegotiateSimpleFormatTest, Table) {
  const Case cases[] = {
      // No header: the legacy HTML.
      {"", "text/html; charset=utf-8"},
      {"  ", "text/html; charset=utf-8"},
      // pip >= 22.2 (PEP 691's own example).
      {"application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, "
       "text/html; q=0.01",
       "application/vnd.pypi.simple.v1+json"},
      // uv.
      {"application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
       "text/html;q=0.01",
       "application/vnd.pypi.simple.v1+json"},
      // Old pip / easy_install / a browser / curl.
      {"text/html", "text/html; charset=utf-8"},
      {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
       "text/html; charset=utf-8"},
      {"*/*", "text/html; charset=utf-8"},
      // One format asked for.
      {"application/vnd.pypi.simple.v1+html", "application/vnd.pypi.simple.v1+html"},
      {"application/vnd.pypi.simple.latest+json", "application/vnd.pypi.simple.v1+json"},
      {"application/vnd.pypi.simple.latest+html", "application/vnd.pypi.simple.v1+html"},
      {"APPLICATION/VND.PYPI.SIMPLE.V1+JSON", "application/vnd.pypi.simple.v1+json"},
      // q-values decide; exact beats wildcard; q=0 excludes.
      {"text/html;q=0.9, application/vnd.pypi.simple.v1+json;q=0.5", "text/html; charset=utf-8"},
      {"*/*;q=0.1, application/vnd.pypi.simple.v1+html", "application/vnd.pypi.simple.v1+html"},
      {"*/*, text/html;q=0", "application/vnd.pypi.simple.v1+json"},
      {"application/*", "application/vnd.pypi.simple.v1+json"},
      {"text/*;q=0.5, application/vnd.pypi.simple.v1+json;q=0.4", "text/html; charset=utf-8"},
      {"application/vnd.pypi.simple.v1+json;Q=0.3, text/html;q=0.2",
       "application/vnd.pypi.simple.v1+json"},
      // Nothing we offer: 406.
      {"application/json", nullptr},
      {"application/vnd.pypi.simple.v2+json", nullptr},
      {"text/plain, image/png", nullptr},
      {"application/vnd.pypi.simple.v1+json;q=0", nullptr},
      {"*/*;q=0", nullptr},
      // Malformed ranges are ignored.
      {"garbage", nullptr},
      {"text/html;q=2", nullptr},
      {"text/html;q=abc, application/vnd.pypi.simple.v1+html",
       "application/vnd.pypi.simple.v1+html"},
      {",,;,", nullptr},
  };
  for (const Case& c : cases) {
    auto n = NegotiateSimpleFormat(c.accept);
    if (c.content_type == nullptr) {
      EXPECT_FALSE(n.has_value()) << c.accept;
    } else {
      ASSERT_TRUE(n.has_value()) << c.accept;
      EXPECT_EQ(n->content_type, c.content_type) << c.accept;
      EXPECT_EQ(n->format, std::string_view(c.content_type).find("json") != std::string_view::npos
                               ? SimpleFormat::kJson
                               : SimpleFormat::kHtml)
          << c.accept;
    }
  }
}

TEST(NegotiateSimpleFormatTest, NotAcceptableBodyNamesTheOffers) {
  EXPECT_NE(NotAcceptableBody().find("application/vnd.pypi.simple.v1+json"), std::string::npos);
  EXPECT_EQ(kVaryHeaderValue, "Accept");
}

}  // namespace
}  // namespace ferry::proxy::pypi
