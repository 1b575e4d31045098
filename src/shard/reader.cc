#include "shard/reader.h"

#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "base/crc32c.h"
#include "base/log.h"
#include "base/strings.h"
#include "shard/fetch.h"
#include "shard/tar.h"
#include "storage/url.h"

namespace ferry::shard {

std::string IndexUrlFor(const std::string& url) {
  // An http(s) URL's query (a token, a signature) stays at the end, after the path.
  std::string path = url, query;
  std::string lower = ToLower(url.substr(0, 8));
  if (StartsWith(lower, "http://") || StartsWith(lower, "https://")) {
    if (size_t q = url.find('?'); q != std::string::npos) {
      path = url.substr(0, q);
      query = url.substr(q);
    }
  }
  if (EndsWith(path, ".json")) return url;
  ShardNaming n = NamingFor(path);
  return n.dir + n.IndexName() + query;
}

std::string ShardDirKey(std::string_view index_key) {
  return std::string(index_key.substr(0, index_key.rfind('/') + 1));  // npos + 1 == 0: ""
}

Result<OpenedIndex> OpenIndex(storage::StoreRegistry& registry, const std::string& url_or_prefix) {
  OpenedIndex o{.url = IndexUrlFor(url_or_prefix)};
  FERRY_ASSIGN_OR_RETURN(o.at, registry.Open(o.url));
  FERRY_ASSIGN_OR_RETURN(std::string text, o.at.store->ReadAll(o.at.key));
  FERRY_ASSIGN_OR_RETURN(o.index, IndexFromJson(text, o.url));
  o.crc32c = Crc32cOf(text);
  o.dir_key = ShardDirKey(o.at.key);
  if (!o.index.base.empty()) {  // shards elsewhere (an index cached by resolve.h)
    FERRY_ASSIGN_OR_RETURN(o.at, registry.Open(o.index.base));
    o.dir_key = storage::DirectoryPrefix(o.at.key);
  }
  return o;
}

namespace {

class Reader final : public ShardReader {
 public:
  Reader(OpenedIndex opened, EpochPlan plan, ReaderOptions options)
      : at_(std::move(opened.at)),
        dir_key_(std::move(opened.dir_key)),
        index_(std::move(opened.index)),
        plan_(std::move(plan)),
        options_(std::move(options)),
        cache_(options_.cache_dir, options_.cache_size ? options_.cache_size : 10ull << 30) {
    pos_ = std::min<uint64_t>(options_.start, plan_.order.size());
    needed_.assign(plan_.inputs(), false);
    for (uint64_t p = pos_; p < plan_.order.size(); ++p) needed_[plan_.order[p]] = true;
    // Shards to read, each from its first sample still due.
    for (size_t k = 0; k < plan_.shards.size(); ++k) {
      for (uint64_t i = plan_.input_start[k]; i < plan_.input_start[k + 1]; ++i) {
        if (needed_[i]) {
          todo_.push_back({k, i - plan_.input_start[k]});
          break;
        }
      }
    }
  }

  Result<std::optional<Sample>> Next() override {
    while (pos_ < plan_.order.size()) {
      uint64_t target = plan_.order[pos_];
      if (auto it = pending_.find(target); it != pending_.end()) {
        Sample s = std::move(it->second);
        pending_.erase(it);
        ++pos_;
        return std::optional<Sample>(std::move(s));
      }
      if (lost_.contains(target)) {
        ++pos_;
        ++skipped_;
        continue;
      }
      FERRY_RETURN_IF_ERROR(Pump());
    }
    return std::optional<Sample>();
  }

  uint64_t position() const override { return pos_; }
  uint64_t size() const override { return plan_.order.size(); }
  uint64_t skipped() const override { return skipped_; }
  const DatasetIndex& index() const override { return index_; }

 private:
  struct Todo {
    size_t k;        // position in plan_.shards
    uint64_t first;  // first sample (within the shard) to read
  };

  const ShardInfo& Info(size_t k) const { return index_.shards[plan_.shards[k]]; }
  std::string UrlOf(size_t k) const { return at_.store->UrlFor(dir_key_ + Info(k).name); }

  void StartFetches() {
    while (fetches_.size() < static_cast<size_t>(std::max(1, options_.prefetch_shards)) &&
           next_todo_ < todo_.size()) {
      const Todo& t = todo_[next_todo_++];
      const ShardInfo& info = Info(t.k);
      FetchSpec spec{.store = at_.store,
                     .key = dir_key_ + info.name,
                     .url = UrlOf(t.k),
                     .start = t.first < info.offsets.size() ? info.offsets[t.first] : 0,
                     .size = info.size,
                     .crc32c = info.crc32c,
                     .cache = &cache_,
                     .read_ahead = options_.read_ahead};
      fetches_.push_back({t, std::make_unique<ShardFetch>(std::move(spec))});
    }
  }

  // Reads more of the current shard (starting the next one when needed).
  Status Pump() {
    StartFetches();
    if (fetches_.empty()) {
      return Status(StatusCode::kInternal, "shard reader: sample " +
                                               std::to_string(plan_.order[pos_]) +
                                               " of the plan was never read");
    }
    auto& [todo, fetch] = fetches_.front();
    if (!parser_) BeginShard(todo, fetch->spec().start);
    std::string block;
    Status status;
    Status s;
    if (fetch->queue().Pop(&block, &status)) {
      s = parser_->Feed(block);
    } else if (!status.ok()) {
      s = status;  // the fetch's errors already name the shard
    } else {
      s = parser_->Finish();
      if (s.ok()) s = EndShard(todo);
      if (s.ok()) {
        parser_.reset();
        fetches_.pop_front();
        return Status();
      }
    }
    if (s.ok()) return s;
    // The parser's and EndShard's errors say what is wrong, not where.
    if (status.ok()) s = s.WithContext("shard '" + UrlOf(todo.k) + "'");
    if (!options_.skip_corrupt) return s;
    Log(LogLevel::kWarn, "{}; skipping its remaining samples (--skip-corrupt)", s.message());
    for (uint64_t i = plan_.input_start[todo.k] + sample_in_shard_;
         i < plan_.input_start[todo.k + 1]; ++i) {
      if (needed_[i]) lost_.insert(i);
    }
    parser_.reset();
    fetches_.pop_front();
    return Status();
  }

  void BeginShard(const Todo& todo, uint64_t base) {
    sample_in_shard_ = todo.first;
    current_ = Sample{};
    current_crc_.Reset();
    current_ext_.clear();
    TarParser::Callbacks cb;
    cb.on_entry = [this, todo](const TarEntry& e) -> Status {
      auto ke = SplitKey(e.name);
      if (!ke) {
        current_ext_.clear();  // not part of any sample (WebDataset skips it too)
        skip_entry_ = true;
        return Status();
      }
      skip_entry_ = false;
      if (!current_.key.empty() && ke->key != current_.key) {
        FERRY_RETURN_IF_ERROR(FinishSample(todo));
      }
      current_.key = ke->key;
      current_ext_ = ke->ext;
      current_.files[current_ext_].reserve(e.size);
      return Status();
    };
    cb.on_data = [this](std::string_view d) {
      if (!skip_entry_) {
        current_.files[current_ext_].append(d);
        current_crc_.Update(d);
      }
      return Status();
    };
    parser_ = std::make_unique<TarParser>(std::move(cb), base);
  }

  // A sample is handed on only after its content matched the index's checksum.
  Status FinishSample(const Todo& todo) {
    const ShardInfo& info = Info(todo.k);
    if (sample_in_shard_ < info.sample_crcs.size() &&
        current_crc_.value() != info.sample_crcs[sample_in_shard_]) {
      return Status(StatusCode::kDataLoss, "sample '" + current_.key + "' at offset " +
                                               std::to_string(info.offsets[sample_in_shard_]) +
                                               ": CRC32C of its data does not match the index");
    }
    current_crc_.Reset();
    uint64_t input = plan_.input_start[todo.k] + sample_in_shard_;
    if (input < plan_.input_start[todo.k + 1] && needed_[input]) {
      pending_.emplace(input, std::move(current_));
    }
    current_ = Sample{};
    ++sample_in_shard_;
    return Status();
  }

  Status EndShard(const Todo& todo) {
    if (!current_.key.empty()) FERRY_RETURN_IF_ERROR(FinishSample(todo));
    if (sample_in_shard_ != Info(todo.k).samples) {
      return Status(StatusCode::kDataLoss, "holds " + std::to_string(sample_in_shard_) +
                                               " samples, the index says " +
                                               std::to_string(Info(todo.k).samples));
    }
    return Status();
  }

  storage::OpenedUrl at_;
  std::string dir_key_;
  DatasetIndex index_;
  EpochPlan plan_;
  ReaderOptions options_;
  ShardCache cache_;
  uint64_t pos_ = 0, skipped_ = 0;
  std::vector<bool> needed_;
  std::vector<Todo> todo_;
  size_t next_todo_ = 0;
  std::deque<std::pair<Todo, std::unique_ptr<ShardFetch>>> fetches_;
  std::unique_ptr<TarParser> parser_;
  uint64_t sample_in_shard_ = 0;
  Sample current_;
  SampleCrc current_crc_;
  std::string current_ext_;
  bool skip_entry_ = false;
  std::unordered_map<uint64_t, Sample> pending_;
  std::unordered_set<uint64_t> lost_;
};

}  // namespace

Result<std::unique_ptr<ShardReader>> ShardReader::Open(storage::StoreRegistry& registry,
                                                       const std::string& url,
                                                       const ReaderOptions& options) {
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenIndex(registry, url));
  FERRY_ASSIGN_OR_RETURN(auto plan, MakePlan(opened.index, options.plan));
  return std::unique_ptr<ShardReader>(new Reader(std::move(opened), std::move(plan), options));
}

}  // namespace ferry::shard
