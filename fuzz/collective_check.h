#pragma once
// The oracle over the collectives of a trace a target accepted (issue 33):
// every collective's op is one of the format's, and no collective record is
// there twice. It keeps its own set, apart from the check the readers share
// (traces/collective_records.h), so a reader that forgets that check, or a
// writer that makes duplicates (an importer numbering two kernels alike), is
// a finding.

#include <string>
#include <string_view>

namespace ssgd::fuzz {

// A finding naming `what` when the trace at `path` holds a collective whose
// op is outside the enum, or two records of one (op, communicator,
// sequence number, rank).
void check_trace_collectives(std::string_view what, const std::string& path);

// The replay's reading of the trace at `path` (walk/trace_profile.h): it
// returns a profile or throws an InputError naming `path`; when it returns,
// the trace's collectives pass check_trace_collectives.
void check_trace_replay_input(std::string_view what, const std::string& path);

}  // namespace ssgd::fuzz
