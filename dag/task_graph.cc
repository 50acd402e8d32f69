#include "dag/task_graph.h"

#include <algorithm>
#include <sstream>

namespace ssgd::dag {

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::kIo: return "io";
    case TaskKind::kH2d: return "h2d";
    case TaskKind::kForward: return "forward";
    case TaskKind::kBackward: return "backward";
    case TaskKind::kComm: return "comm";
    case TaskKind::kUpdate: return "update";
  }
  return "?";
}

const char* to_string(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kCompute: return "compute";
    case ResourceKind::kIo: return "io";
    case ResourceKind::kCopy: return "h2d";
    case ResourceKind::kNetwork: return "network";
  }
  return "?";
}

ResourceId TaskGraph::add_resource(Resource resource) {
  resources_.push_back(resource);
  return static_cast<ResourceId>(resources_.size() - 1);
}

TaskId TaskGraph::add_task(const Task& task) {
  if (finalized_) throw DagError("cannot add a task to a finalized graph");
  if (tasks_.size() >= kNoTask) throw DagError("too many tasks for 32-bit task ids");
  tasks_.push_back(task);
  return static_cast<TaskId>(tasks_.size() - 1);
}

void TaskGraph::reserve(std::size_t tasks, std::size_t edges) {
  tasks_.reserve(tasks);
  edges_.reserve(edges);
}

std::span<const TaskId> TaskGraph::successors(TaskId id) const {
  const auto& fwd = successors_.m_forward;
  return {fwd.m_column.data() + fwd.m_rowstart[id], fwd.m_rowstart[id + 1] - fwd.m_rowstart[id]};
}

std::span<const TaskId> TaskGraph::predecessors(TaskId id) const {
  return {preds_.data() + pred_offsets_[id], pred_offsets_[id + 1] - pred_offsets_[id]};
}

void TaskGraph::check_edges() const {
  const auto n = tasks_.size();
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    const auto [from, to] = edges_[e];
    if (from >= n || to >= n) {
      std::ostringstream msg;
      msg << "dangling edge #" << e << " " << from << " -> " << to << ": task "
          << (from >= n ? from : to) << " does not exist (the graph has " << n << " tasks)";
      throw DagError(msg.str());
    }
    if (from == to) throw DagError("self-loop on " + describe(from));
  }
  for (const auto& t : tasks_) {
    if (t.resource >= resources_.size()) {
      throw DagError("a task names resource " + std::to_string(t.resource) + " of " +
                     std::to_string(resources_.size()));
    }
    if (t.duration < Duration::zero()) throw DagError("a task has a negative duration");
  }
}

void TaskGraph::finalize() {
  if (finalized_) return;
  check_edges();
  const auto n = static_cast<std::uint32_t>(tasks_.size());
  successors_ = Csr(boost::edges_are_unsorted_multi_pass, edges_.begin(), edges_.end(), n);
  // Predecessor lists: a counting sort of the edges by target.
  pred_offsets_.assign(n + 1, 0);
  for (const auto& [from, to] : edges_) ++pred_offsets_[to + 1];
  for (std::uint32_t v = 0; v < n; ++v) pred_offsets_[v + 1] += pred_offsets_[v];
  preds_.resize(edges_.size());
  std::vector<std::uint32_t> fill(pred_offsets_.begin(), pred_offsets_.end() - 1);
  for (const auto& [from, to] : edges_) preds_[fill[to]++] = from;
  compute_order();
  finalized_ = true;
}

void TaskGraph::compute_order() {
  const auto n = static_cast<std::uint32_t>(tasks_.size());
  std::vector<std::uint32_t> remaining(n);
  // topo_ doubles as the FIFO queue of Kahn's algorithm: deterministic and linear.
  topo_.clear();
  topo_.reserve(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    remaining[v] = in_degree(v);
    if (remaining[v] == 0) topo_.push_back(v);
  }
  for (std::size_t head = 0; head < topo_.size(); ++head) {
    for (TaskId s : successors(topo_[head])) {
      if (--remaining[s] == 0) topo_.push_back(s);
    }
  }
  if (topo_.size() != n) report_cycle(remaining);
}

void TaskGraph::report_cycle(const std::vector<std::uint32_t>& remaining_in) const {
  // Every task left with unmet predecessors lies on or after a cycle. Walk
  // backwards through such predecessors until a task repeats: that is a cycle.
  TaskId start = kNoTask;
  for (TaskId v = 0; v < remaining_in.size(); ++v) {
    if (remaining_in[v] > 0) {
      start = v;
      break;
    }
  }
  std::vector<std::int64_t> seen_at(tasks_.size(), -1);
  std::vector<TaskId> walk;
  TaskId v = start;
  while (seen_at[v] < 0) {
    seen_at[v] = static_cast<std::int64_t>(walk.size());
    walk.push_back(v);
    for (TaskId p : predecessors(v)) {
      if (remaining_in[p] > 0) {
        v = p;
        break;
      }
    }
  }
  std::vector<TaskId> cycle(walk.begin() + seen_at[v], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::ostringstream msg;
  msg << "the task graph has a cycle of " << cycle.size() << " tasks: ";
  for (std::size_t i = 0; i < cycle.size() && i < 8; ++i) msg << describe(cycle[i]) << " -> ";
  if (cycle.size() > 8) msg << "... -> ";
  msg << describe(cycle.front());
  throw DagError(msg.str());
}

std::string describe_task(const Task& t, std::span<const std::string> layer_names) {
  std::ostringstream s;
  s << to_string(t.kind) << "(";
  if (t.rank == kAllRanks) {
    s << "all ranks";
  } else {
    s << "rank " << t.rank;
  }
  s << ", iteration " << t.iteration;
  if (t.kind == TaskKind::kComm) s << ", group " << t.group;
  if (t.layer >= 0) {
    s << ", layer " << t.layer;
    if (static_cast<std::size_t>(t.layer) < layer_names.size()) {
      s << " '" << layer_names[t.layer] << "'";
    }
  }
  s << ")";
  return s.str();
}

std::string TaskGraph::describe(TaskId id) const {
  if (id >= tasks_.size()) return "task #" + std::to_string(id) + " (no such task)";
  return describe_task(tasks_[id], layer_names_);
}

}  // namespace ssgd::dag
