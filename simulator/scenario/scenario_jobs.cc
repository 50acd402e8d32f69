#include "simulator/scenario/scenario_jobs.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "simulator/network/network_model.h"
#include "simulator/scenario/scenario_schema.h"

namespace ssgd::sim {
namespace {

InputLocation at(const JobSpec& job, std::size_t index, std::string_view key) {
  return InputLocation{job.file, job.line, std::nullopt, fmt::format("jobs[{}].{}", index, key)};
}

bool is_training_key(std::string_view k) {
  return k == "profile" || k == "policy" || k == "iterations";
}

// Names of the keys given for the other kind, in key order.
std::string_view misplaced_key(const JobSpec& j) {
  if (*j.kind == JobKind::kTraffic) {
    if (j.profile) return "profile";
    if (j.overlap) return "policy";
    if (j.iterations) return "iterations";
  } else {
    if (j.op) return "op";
    if (j.bytes) return "bytes";
    if (j.period) return "period";
    if (j.start) return "start";
    if (j.algorithm) return "algorithm";
  }
  return {};
}

}  // namespace

const char* to_string(JobKind kind) {
  switch (kind) {
    case JobKind::kTraining: return "training";
    case JobKind::kTraffic: return "traffic";
  }
  return "?";
}

void finish_jobs(Scenario& scenario) {
  if (scenario.jobs.empty()) return;
  // The scenario's own job first, then each training job in order.
  struct Span {
    std::string name;
    std::int64_t first, end;
  };
  std::vector<Span> training = {{"main", 0, scenario.nodes}};
  std::int64_t next_free = scenario.nodes;
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    JobSpec& j = scenario.jobs[i];
    if (j.name.empty()) j.name = fmt::format("job{}", i + 1);
    if (!j.kind) {
      throw InputError(at(j, i, "kind"), "every job needs 'kind: training' or 'kind: traffic'");
    }
    if (j.nodes < 1) throw InputError(at(j, i, "nodes"), "every job needs 'nodes' (at least 1)");
    if (const std::string_view k = misplaced_key(j); !k.empty()) {
      throw InputError(at(j, i, k),
                       fmt::format("'{}' is a {} job key; job '{}' is a {} job", k,
                                   is_training_key(k) ? "training" : "traffic", j.name,
                                   to_string(*j.kind)));
    }
    for (std::size_t o = 0; o < i; ++o) {
      if (scenario.jobs[o].name == j.name) {
        throw InputError(at(j, i, "name"),
                         fmt::format("job name '{}' is used twice (jobs[{}] and jobs[{}])", j.name,
                                     o, i));
      }
    }
    if (*j.kind == JobKind::kTraining) {
      if (!j.profile) {
        throw InputError(at(j, i, "profile"),
                         fmt::format("training job '{}' needs 'profile': the trace, layer-profile "
                                     "CSV or B-Caffe log it replays",
                                     j.name));
      }
      const std::int64_t first = j.first_node.value_or(next_free);
      j.first_node = first;
      for (const Span& other : training) {
        if (first < other.end && other.first < first + j.nodes) {
          throw InputError(at(j, i, "first_node"),
                           fmt::format("training job '{}' on nodes {}..{} overlaps training job "
                                       "'{}' on nodes {}..{}; training jobs need nodes of their own",
                                       j.name, first, first + j.nodes - 1, other.name, other.first,
                                       other.end - 1));
        }
      }
      training.push_back({j.name, first, first + j.nodes});
      next_free = std::max(next_free, first + j.nodes);
    } else {
      if (!j.bytes) {
        throw InputError(at(j, i, "bytes"),
                         fmt::format("traffic job '{}' needs 'bytes': the size of each collective",
                                     j.name));
      }
      if (!j.first_node) j.first_node = 0;
      if (j.nodes * scenario.gpus_per_node < 2) {
        throw InputError(at(j, i, "nodes"),
                         fmt::format("traffic job '{}' has {} GPU: a collective needs at least 2",
                                     j.name, j.nodes * scenario.gpus_per_node));
      }
    }
  }
  const auto model = find_network_model(scenario.network_model);
  if (model == nullptr || !model->shares_links()) {
    const JobSpec& j = scenario.jobs.front();
    throw InputError(InputLocation{j.file, j.line, std::nullopt, "jobs"},
                     fmt::format("jobs share links only in a network model where collectives "
                                 "share them, but network.model is {}: set network.model: flow",
                                 scenario.network_model));
  }
}

std::int64_t job_platform_nodes(const Scenario& scenario) {
  std::int64_t nodes = scenario.nodes;
  for (const JobSpec& j : scenario.jobs) nodes = std::max(nodes, j.first_node.value_or(0) + j.nodes);
  return nodes;
}

}  // namespace ssgd::sim
