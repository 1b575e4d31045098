#pragma once
// Samples as WebDataset defines them: files whose names share a key, the key being the path up
// to the first '.' of the last path segment ("d/0001.jpg" and "d/0001.seg.png" are key "d/0001",
// extensions "jpg" and "seg.png"). A name with no '.' in its last segment, or one that starts
// with '.', has no key (WebDataset skips such files; `ferry shard pack` refuses them).

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::shard {

struct KeyExt {
  std::string key, ext;
};
std::optional<KeyExt> SplitKey(std::string_view name);

// One sample: its key and its files by extension (sorted by extension, as shards store them).
struct Sample {
  std::string key;
  std::map<std::string, std::string> files;  // ext -> bytes
};

}  // namespace ferry::shard
