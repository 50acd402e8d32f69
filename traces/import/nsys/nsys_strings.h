#pragma once
// The export's string table, StringIds(id, value): names of kernels, CUDA
// calls and NVTX ranges are ids into it. nsys declares `id INTEGER PRIMARY
// KEY`, so a name is one indexed lookup; the last kCacheEntries names are
// kept (kernel names repeat every iteration). A file whose `id` is not the
// table's key is read whole into memory once instead.
//
// An id that is not in the table is an InputError at the row that used it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "traces/import/nsys/nsys_database.h"

namespace ssgd::trace {

class NsysStrings {
 public:
  explicit NsysStrings(NsysDatabase& db);

  // The string of id `id`, read from `row` (its table, rowid) at `column`.
  std::string at(std::int64_t id, const NsysStatement& row, std::string_view column);
  // The same, nullopt when the id is not in the table.
  const std::string* find(std::int64_t id);

 private:
  static constexpr std::size_t kCacheEntries = std::size_t{1} << 16;
  std::optional<NsysStatement> lookup_;  // when id is the key
  bool whole_ = false;                   // the table read into cache_
  std::unordered_map<std::int64_t, std::string> cache_;
};

}  // namespace ssgd::trace
