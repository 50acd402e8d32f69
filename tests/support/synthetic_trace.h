#pragma once
// A .ssgdt file of the given events, under synthetic capture metadata, in
// chunks of `events_per_chunk` (small, so that a test can cut a trace short
// between chunks).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "traces/proto/capture_metadata.pb.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_writer.h"

namespace ssgd::testing {

inline std::filesystem::path write_synthetic_trace(const std::filesystem::path& path,
                                                   const std::vector<trace::v1::Event>& events,
                                                   const std::string& tool,
                                                   std::size_t events_per_chunk) {
  trace::v1::CaptureMetadata meta;
  meta.set_tool(tool);
  meta.set_provenance("synthetic");
  trace::TraceWriter w(path, meta, {.events_per_chunk = events_per_chunk});
  for (const auto& e : events) w.append(e);
  w.close();
  return path;
}

}  // namespace ssgd::testing
