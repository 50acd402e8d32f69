#pragma once
// The last step of an import: the sorted events written as `output` under a
// capture header, each on the importer's rank and moved by the source's
// start time (event_shift.h), every broken rule an InputError naming the
// input. Shared by the importers, which never include each other.

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>

#include "traces/event_sorter.h"
#include "traces/proto/capture_metadata.pb.h"

namespace ssgd::trace {

// Where the base time came from, as the importer's messages name it.
struct ImportBase {
  std::int64_t ns = 0;
  std::string field;     // the InputError's field when a time overflows
  std::string overflow;  // its message then
  std::string added;     // "an imported event (<added>): <what broke>"
};

struct ImportedTrace {
  std::uint64_t events_written = 0;
  std::size_t sort_runs = 0;
};

// A rank an importer may take, and where it came from as the summary says
// it ("--rank", "ssgd/rank mark", "file name", a field of the file).
struct RankSource {
  std::optional<std::int32_t> rank;
  const char* source;
};
struct ChosenRank {
  std::int32_t rank = 0;
  std::string source;
};
// The first of `sources` (most trusted first: --rank, the file's own
// word, the ssgd/rank mark, the file's name) that holds a rank; none when
// none does, for the importer to refuse or assume.
std::optional<ChosenRank> first_rank(std::initializer_list<RankSource> sources);

// `file`: the input, as messages name it. Throws InputError for a header or
// an event the format refuses, and for a time that overflows with the base.
ImportedTrace write_imported_trace(EventSorter& sorter, const std::filesystem::path& output,
                                   const v1::CaptureMetadata& metadata, const std::string& file,
                                   std::int32_t rank, const ImportBase& base);

}  // namespace ssgd::trace
