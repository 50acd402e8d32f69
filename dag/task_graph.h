#pragma once
// The task graph: tasks, the serial resources they run on, and dependency
// edges. Storage is a Boost compressed-sparse-row graph built once by
// finalize(); the rest of ssgd sees only this facade.

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dag/task.h"

namespace ssgd::dag {

// A graph that cannot be run: a cycle or an edge to a task that does not
// exist. The message names the tasks involved.
class DagError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "backward(rank 3, iteration 2, layer 17 'conv3')", the layer named from
// `layer_names` when it has one.
std::string describe_task(const Task& task, std::span<const std::string> layer_names);

class TaskGraph {
 public:
  ResourceId add_resource(Resource resource);
  TaskId add_task(const Task& task);
  // Edges may be added before their ends exist; finalize() rejects dangling ones.
  void add_edge(TaskId from, TaskId to) { edges_.emplace_back(from, to); }
  void reserve(std::size_t tasks, std::size_t edges);

  // Freezes the graph: builds successor and predecessor lists and checks it
  // (dangling edges, self-loops, cycles). Throws DagError.
  void finalize();
  [[nodiscard]] bool finalized() const { return finalized_; }

  [[nodiscard]] std::size_t task_count() const { return tasks_.size(); }
  [[nodiscard]] std::size_t edge_count() const { return edges_.size(); }
  [[nodiscard]] const Task& task(TaskId id) const { return tasks_[id]; }
  [[nodiscard]] Task& mutable_task(TaskId id) { return tasks_[id]; }
  [[nodiscard]] std::span<const Task> tasks() const { return tasks_; }
  // Times may change after finalize(); the structure may not.
  [[nodiscard]] std::span<Task> mutable_tasks() { return tasks_; }
  [[nodiscard]] std::span<const Resource> resources() const { return resources_; }

  [[nodiscard]] std::span<const TaskId> successors(TaskId id) const;
  [[nodiscard]] std::span<const TaskId> predecessors(TaskId id) const;
  [[nodiscard]] std::uint32_t in_degree(TaskId id) const {
    return pred_offsets_[id + 1] - pred_offsets_[id];
  }
  // A topological order (Kahn's algorithm, FIFO: deterministic).
  [[nodiscard]] const std::vector<TaskId>& topological_order() const { return topo_; }

  // Names for layers, indexed by Task::layer, for messages and timelines.
  void set_layer_names(std::vector<std::string> names) { layer_names_ = std::move(names); }
  [[nodiscard]] const std::vector<std::string>& layer_names() const { return layer_names_; }

  // "backward(rank 3, iteration 2, layer 17 'conv3')".
  [[nodiscard]] std::string describe(TaskId id) const;

 private:
  using Csr = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                 boost::no_property, boost::no_property,
                                                 std::uint32_t, std::uint32_t>;
  void check_edges() const;
  void compute_order();
  [[noreturn]] void report_cycle(const std::vector<std::uint32_t>& remaining_in) const;

  std::vector<Task> tasks_;
  std::vector<Resource> resources_;
  std::vector<std::pair<TaskId, TaskId>> edges_;
  Csr successors_;
  std::vector<std::uint32_t> pred_offsets_;
  std::vector<TaskId> preds_;
  std::vector<TaskId> topo_;
  std::vector<std::string> layer_names_;
  bool finalized_ = false;
};

}  // namespace ssgd::dag
