#pragma once
// Fixture loading and page generation shared by proxy/pypi's unit tests.

#include <fstream>
#include <sstream>
#include <string>

#include "proxy/pypi/project_page.h"

namespace ferry::proxy::pypi::testing {

// The page URL of the tests' numpy fixtures.
inline constexpr const char* kNumpyUrl = "https://pypi.org/simple/numpy/";

inline std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(FERRY_PYPI_TESTDATA) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string Hex64(char c) { return std::string(64, c); }

// A page shaped like a big project's: `versions` versions with `per_version` files each,
// sha256 on every file, core metadata on wheels, some yanked, all with requires-python.
inline ProjectPage GeneratePage(int versions, int per_version) {
  static constexpr char kHex[] = "0123456789abcdef";
  ProjectPage page;
  page.name = "bigproject";
  page.versions.emplace();
  uint64_t n = 0;
  auto digest = [&](uint64_t seed) {
    std::string h(64, '0');
    for (int i = 0; i < 64; ++i) h[i] = kHex[(seed * 2654435761u + i * 40503u) % 16];
    return h;
  };
  for (int v = 0; v < versions; ++v) {
    std::string version = std::to_string(v / 100) + "." + std::to_string(v % 100) + ".0";
    page.versions->push_back(version);
    for (int k = 0; k < per_version; ++k, ++n) {
      DistFile f;
      bool sdist = k == 0;
      f.filename = "bigproject-" + version +
                   (sdist ? ".tar.gz"
                          : "-cp3" + std::to_string(k) + "-cp3" + std::to_string(k) +
                                "-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
      f.url = "https://files.pythonhosted.org/packages/" + digest(n).substr(0, 2) + "/" +
              digest(n).substr(2, 2) + "/" + digest(n).substr(4, 60) + "/" + f.filename;
      f.hashes["sha256"] = digest(n);
      f.requires_python = ">=3." + std::to_string(k % 13) + ",<4";
      if (!sdist) f.core_metadata = CoreMetadata{true, {{"sha256", digest(n + 1000003)}}};
      if (n % 97 == 0) f.yanked = Yanked{true, "broken <build> & \"bad\" tags"};
      f.size = 1000000 + n;
      f.upload_time = "2024-02-05T23:58:36.364226Z";
      page.files.push_back(std::move(f));
    }
  }
  return page;
}

}  // namespace ferry::proxy::pypi::testing
