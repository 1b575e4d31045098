#include "shard/index.h"
#include "base/json_text.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace ferry::shard {

uint64_t DatasetIndex::samples() const {
  uint64_t n = 0;
  for (const auto& s : shards) n += s.samples;
  return n;
}

uint64_t DatasetIndex::bytes() const {
  uint64_t n = 0;
  for (const auto& s : shards) n += s.size;
  return n;
}

std::string IndexToJson(const DatasetIndex& index) {
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& s : index.shards) {
    shards.push_back({{"name", s.name},
                      {"size", s.size},
                      {"samples", s.samples},
                      {"crc32c", s.crc32c},
                      {"offsets", s.offsets}});
    if (!s.sample_crcs.empty()) shards.back()["sample_crc32c"] = s.sample_crcs;
  }
  nlohmann::json j = {{"format", "ferry-shards"},
                      {"version", 1},
                      {"samples", index.samples()},
                      {"bytes", index.bytes()},
                      {"shards", shards}};
  if (!index.base.empty()) j["base"] = index.base;
  return JsonText(j) + "\n";
}

Result<DatasetIndex> IndexFromJson(std::string_view json, std::string_view name) {
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument,
                  "dataset index '" + std::string(name) + "': " + what);
  };
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not JSON");
  if (j.value("format", "") != "ferry-shards") return bad("not a ferry shard index (format)");
  if (j.value("version", 0) != 1) return bad("unsupported version");
  if (!j.contains("shards") || !j["shards"].is_array()) return bad("no shard list");
  DatasetIndex index;
  try {
    index.base = j.value("base", "");
    for (const auto& s : j["shards"]) {
      ShardInfo info{.name = s.at("name").get<std::string>(),
                     .size = s.at("size").get<uint64_t>(),
                     .samples = s.at("samples").get<uint64_t>(),
                     .crc32c = s.value("crc32c", ""),
                     .offsets = s.value("offsets", std::vector<uint64_t>{}),
                     .sample_crcs = s.value("sample_crc32c", std::vector<uint32_t>{})};
      if (!info.sample_crcs.empty() && info.sample_crcs.size() != info.samples) {
        return bad("shard '" + info.name + "' lists " + std::to_string(info.sample_crcs.size()) +
                   " sample checksums for " + std::to_string(info.samples) + " samples");
      }
      if (info.offsets.size() != info.samples) {
        return bad("shard '" + info.name + "' lists " + std::to_string(info.offsets.size()) +
                   " offsets for " + std::to_string(info.samples) + " samples");
      }
      if (info.name.empty() || info.name.find("..") != std::string::npos || info.name[0] == '/') {
        return bad("shard name '" + info.name + "' must be a relative path");
      }
      index.shards.push_back(std::move(info));
    }
  } catch (const nlohmann::json::exception& e) {
    return bad(std::string("malformed shard entry: ") + e.what());
  }
  return index;
}

std::string ShardNaming::ShardName(size_t i) const { return fmt::format("{}-{:06d}.tar", stem, i); }

ShardNaming NamingFor(std::string_view dst_prefix) {
  std::string p(dst_prefix);
  if (p.empty() || p.back() == '/') return {p, "shard"};
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return {"", p};
  return {p.substr(0, slash + 1), p.substr(slash + 1)};
}

}  // namespace ferry::shard
