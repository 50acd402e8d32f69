#pragma once
// The S-SGD task: one unit of work in the DAG model of Shi, Wang, Chu and Li
// (ICPADS 2018). Per worker r and iteration i with layers 0..L-1:
//   io(r,i) -> h2d(r,i) -> f(r,i,0) -> ... -> f(r,i,L-1) -> b(r,i,L-1) -> ... -> b(r,i,0) -> u(r,i)
// plus gradient communication tasks c(i,g) shared by all workers.

#include <cstdint>
#include <limits>

#include "common/time.h"

namespace ssgd::dag {

enum class TaskKind : std::uint8_t { kIo, kH2d, kForward, kBackward, kComm, kUpdate };
inline constexpr int kTaskKindCount = 6;
const char* to_string(TaskKind kind);

using TaskId = std::uint32_t;
using ResourceId = std::uint32_t;
inline constexpr TaskId kNoTask = std::numeric_limits<TaskId>::max();
inline constexpr std::int32_t kAllRanks = -1;  // rank of a collective task

struct Task {
  Duration duration;            // time the task holds its resource
  std::int64_t bytes = 0;       // payload of a comm task (gradient bytes), 0 otherwise
  std::int32_t rank = 0;        // worker, or kAllRanks for a collective
  std::int32_t iteration = 0;
  std::int32_t layer = -1;      // profile row index; for comm, the group's first layer; -1 if none
  std::int32_t group = -1;      // comm: index of the communication group in the plan
  ResourceId resource = 0;      // the serial resource that runs it
  TaskKind kind = TaskKind::kForward;
  bool duration_modelled = false;  // comm: duration comes from the network model, not the input
};

// A serial resource: runs one task at a time, in the order tasks become
// ready (ties by task id, so the order is deterministic).
enum class ResourceKind : std::uint8_t { kCompute, kIo, kCopy, kNetwork };
const char* to_string(ResourceKind kind);

struct Resource {
  ResourceKind kind = ResourceKind::kCompute;
  std::int32_t rank = 0;  // kAllRanks for shared resources
  // Priority order instead of ready order: the ready task of the earliest
  // iteration, then of the smallest layer, then the earliest ready, runs
  // first; with credit_bytes > 0 the resource starts ready tasks together
  // until their bytes reach the credit (the last one may overshoot it), and
  // they end together (see CommPlan::prioritized).
  bool prioritized = false;
  std::int64_t credit_bytes = 0;
  // A prioritized resource's scheduling round (ByteScheduler's, see
  // CommPlan): each start of ready tasks takes this before their work; the
  // resource is busy meanwhile.
  Duration dispatch_overhead{};
};

}  // namespace ssgd::dag
