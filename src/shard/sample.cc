#include "shard/sample.h"

namespace ferry::shard {

std::optional<KeyExt> SplitKey(std::string_view name) {
  size_t seg = name.rfind('/');
  seg = seg == std::string_view::npos ? 0 : seg + 1;
  size_t dot = name.find('.', seg);
  if (dot == std::string_view::npos || dot == seg || dot + 1 == name.size()) return std::nullopt;
  return KeyExt{std::string(name.substr(0, dot)), std::string(name.substr(dot + 1))};
}

}  // namespace ferry::shard
