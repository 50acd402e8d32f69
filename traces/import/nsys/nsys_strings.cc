#include "traces/import/nsys/nsys_strings.h"

#include <fmt/format.h>

#include "traces/import/nsys/nsys_schema.h"

namespace ssgd::trace {

NsysStrings::NsysStrings(NsysDatabase& db) {
  const std::string table = nsys_quoted(kNsysStrings);
  if (db.is_rowid_column(kNsysStrings, "id")) {
    lookup_.emplace(
        db.prepare("SELECT rowid, \"value\" FROM " + table + " WHERE rowid = ?1", kNsysStrings));
    return;
  }
  whole_ = true;
  NsysStatement all = db.prepare("SELECT rowid, \"id\", \"value\" FROM " + table, kNsysStrings);
  while (all.step()) {
    const std::int64_t id = all.integer(1, "id");
    std::string value = all.optional_text(2, "value").value_or("");
    if (!cache_.emplace(id, std::move(value)).second) {
      all.fail("id", fmt::format("id {} appears twice", id));
    }
  }
}

const std::string* NsysStrings::find(std::int64_t id) {
  if (auto it = cache_.find(id); it != cache_.end()) return &it->second;
  if (whole_) return nullptr;
  lookup_->rebind(1, id);
  if (!lookup_->step()) return nullptr;
  std::string value = lookup_->optional_text(1, "value").value_or("");
  if (cache_.size() >= kCacheEntries) cache_.clear();
  return &cache_.emplace(id, std::move(value)).first->second;
}

std::string NsysStrings::at(std::int64_t id, const NsysStatement& row, std::string_view column) {
  const std::string* s = find(id);
  if (s == nullptr) {
    row.fail(column, fmt::format("string id {} is not in table {}", id, kNsysStrings));
  }
  return *s;
}

}  // namespace ssgd::trace
