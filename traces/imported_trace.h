#pragma once
// The last step of an import: the sorted events written as `output` under a
// capture header, each on the importer's rank and moved by the source's
// start time (event_shift.h), every broken rule an InputError naming the
// input. Shared by the importers, which never include each other.

#include <cstdint>
#include <filesystem>
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

// `file`: the input, as messages name it. Throws InputError for a header or
// an event the format refuses, and for a time that overflows with the base.
ImportedTrace write_imported_trace(EventSorter& sorter, const std::filesystem::path& output,
                                   const v1::CaptureMetadata& metadata, const std::string& file,
                                   std::int32_t rank, const ImportBase& base);

}  // namespace ssgd::trace
