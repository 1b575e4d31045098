#include "proxy/pypi/project_page.h"

namespace ferry::proxy::pypi {

const std::string& DistFile::Sha256() const {
  static const std::string kNone;
  auto it = hashes.find("sha256");
  if (it == hashes.end() || it->second.size() != 64) return kNone;
  for (char c : it->second) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return kNone;
  }
  return it->second;
}

std::string ApiVersionFor(const ProjectPage& page) {
  if (!page.versions) return "1.0";
  for (const DistFile& f : page.files) {
    if (!f.size) return "1.0";
  }
  return "1.1";
}

}  // namespace ferry::proxy::pypi
