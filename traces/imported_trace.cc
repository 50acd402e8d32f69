#include "traces/imported_trace.h"

#include <optional>

#include "common/error.h"
#include "traces/event_rules.h"
#include "traces/event_shift.h"
#include "traces/trace_writer.h"

namespace ssgd::trace {

ImportedTrace write_imported_trace(EventSorter& sorter, const std::filesystem::path& output,
                                   const v1::CaptureMetadata& metadata, const std::string& file,
                                   std::int32_t rank, const ImportBase& base) {
  std::optional<TraceWriter> opened;
  try {
    opened.emplace(output, metadata);
  } catch (const InvalidTraceContent& broken) {
    throw InputError({file, std::nullopt, std::nullopt, broken.problem().field},
                     "the capture header made from the file: " + broken.problem().what);
  }
  TraceWriter& writer = *opened;
  try {
    sorter.write_to(writer, [&](v1::Event& e) {
      e.set_rank(rank);
      if (!shift_event_times(e, base.ns)) {
        throw InputError({file, std::nullopt, std::nullopt, base.field}, base.overflow);
      }
    });
  } catch (const InvalidTraceContent& broken) {
    // Times are checked only here, once the base is added.
    throw InputError({file, std::nullopt, std::nullopt, broken.problem().field},
                     "an imported event (" + base.added + "): " + broken.problem().what);
  }
  writer.close();
  return {writer.footer().event_count(), sorter.runs_spilled()};
}

std::optional<ChosenRank> first_rank(std::initializer_list<RankSource> sources) {
  for (const RankSource& s : sources) {
    if (s.rank) return ChosenRank{*s.rank, s.source};
  }
  return std::nullopt;
}

}  // namespace ssgd::trace
