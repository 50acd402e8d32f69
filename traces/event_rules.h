#pragma once
// The rules every event and every capture header of a trace obeys, checked
// in one place: where a trace is read (TraceReader), where one is written
// (TraceWriter), and where a text trace is packed. Every command therefore
// sees the same rules, and nothing a writer accepts is refused on reading.
//
//   - times: 0 <= start_ns <= end_ns <= kMaxTimeNs (a CudaEvent's timestamp
//     in the same range), so that a difference of two times, or a sum of a
//     time and a duration, never overflows int64;
//   - sizes and counts: 0 <= size_bytes <= kMaxSizeBytes, counts >= 0;
//   - ranks: 0 <= rank, and rank < world_size when the world size is known;
//     a collective's rank < nranks when nranks is known; world_size and
//     nranks within 0..kMaxRanks;
//   - devices: >= -1 (-1 is the CPU);
//   - a collective's op one of the enum's values (proto3 keeps any number
//     it is given; 0, UNKNOWN, is "not recorded" and allowed);
//   - strings: valid UTF-8.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "traces/proto/capture_metadata.pb.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// 2^62 ns, about 146 years: times since the Unix epoch fit with room to add
// a duration of the same size.
inline constexpr std::int64_t kMaxTimeNs = std::int64_t{1} << 62;
// 2^50 bytes (1 PiB) for one transfer or collective.
inline constexpr std::int64_t kMaxSizeBytes = std::int64_t{1} << 50;
// 2^24 ranks: far beyond any job, small enough to enumerate.
inline constexpr std::int32_t kMaxRanks = std::int32_t{1} << 24;

// A broken rule: the field, as a path inside the event or the metadata
// ("kernel.end_ns", "rank", "hosts[0].gpus[1].name"), and what is wrong.
struct ContentProblem {
  std::string field;
  std::string what;
};

// The first rule `event` breaks, or nullopt. `world_size` is the capture
// header's (0: unknown, ranks are then checked only for being >= 0).
// `check_times` false leaves out the range of times (not their order), for
// an importer whose times are still relative to a base added later.
std::optional<ContentProblem> check_event(const v1::Event& event, std::int32_t world_size,
                                          bool check_times = true);

// The first rule the capture header breaks: rank and world size, the hosts'
// GPUs, and every string valid UTF-8.
std::optional<ContentProblem> check_metadata(const v1::CaptureMetadata& metadata);

// Thrown by TraceWriter for an event or a header that breaks a rule; the
// caller that knows where the value came from turns it into an InputError.
class InvalidTraceContent : public std::invalid_argument {
 public:
  explicit InvalidTraceContent(ContentProblem problem);
  [[nodiscard]] const ContentProblem& problem() const { return problem_; }

 private:
  ContentProblem problem_;
};

}  // namespace ssgd::trace
