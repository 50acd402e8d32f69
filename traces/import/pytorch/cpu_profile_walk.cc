#include "traces/import/pytorch/cpu_profile_walk.h"

#include <optional>
#include <utility>
#include <vector>

#include "traces/marker_names.h"
#include "traces/torch_op_names.h"

namespace ssgd::trace {
namespace {

// The iteration a mark opens: iteration/<N> or ProfilerStep#N.
bool is_iteration_mark(const CpuRange& r) {
  if (r.kind != CpuRange::Kind::kAnnotation) return false;
  return profiler_step_number(r.name).has_value() ||
         r.name.compare(0, kIterationMarkPrefix.size(), kIterationMarkPrefix) == 0;
}

}  // namespace

CpuProfileWalk::CpuProfileWalk(std::filesystem::path spill_dir, std::size_t run_bytes)
    : sorter_(std::move(spill_dir), run_bytes) {}

void CpuProfileWalk::add(const CpuRange& range) { sorter_.add_entry(encode_cpu_range(range)); }

CpuWalkStats CpuProfileWalk::walk(const CpuWalkOptions& o, const Emit& emit) {
  CpuWalkStats s;
  CpuComputeExtractor compute(emit);
  HostCollectiveMatcher collectives;
  LegacyLayerAligner aligner(emit, o.domain);
  std::vector<IterationSpan> spans;

  // The current iteration, and (legacy layers) its ranges.
  struct Current {
    std::int64_t start_ns;
    std::int64_t end_ns;  // steps: known once its step is seen
    std::uint64_t thread_id;
    bool ended;  // steps: its Optimizer.step was seen
  };
  std::optional<Current> current;
  std::vector<CpuRange> held;
  std::optional<std::uint64_t> first_thread;  // without any iteration: the forward thread
  auto close = [&](bool is_iteration) {
    if (o.legacy_layers && is_iteration && current) aligner.iteration(held, current->thread_id);
    held.clear();
  };
  v1::Event event;
  auto write_step_iteration = [&](const Current& c) {
    event.Clear();
    auto* m = event.mutable_marker();
    m->set_name(iteration_mark(static_cast<std::int64_t>(s.step_iterations)));
    m->set_domain(o.domain);
    m->set_thread_id(c.thread_id);
    m->set_start_ns(c.start_ns);
    m->set_end_ns(c.end_ns);
    emit(event);
    s.step_spans.push_back({c.start_ns, c.end_ns, m->name()});
    ++s.step_iterations;
    s.step_threads.push_back(c.thread_id);
  };

  CpuRange r;
  sorter_.for_each([&](const EventSorter::Entry& e) {
    decode_cpu_range(e, r);
    ++s.ranges;
    if (o.compute) compute.add(r);
    collectives.add(r);
    if (!first_thread && r.kind == CpuRange::Kind::kOperator) first_thread = r.thread_id;
    if (o.iterations_from_steps) {
      if (current && current->ended && r.start_ns >= current->end_ns) {
        spans.push_back({current->start_ns, current->end_ns,
                         iteration_mark(static_cast<std::int64_t>(s.step_iterations))});
        write_step_iteration(*current);
        close(true);
        current = Current{current->end_ns, 0, current->thread_id, false};
      }
      if (!current) current = Current{r.start_ns, 0, r.thread_id, false};
      if (is_optimizer_step(r.name) && !current->ended) {
        ++s.optimizer_steps;
        current->end_ns = r.end_ns;
        current->thread_id = r.thread_id;
        current->ended = true;
      }
      if (o.legacy_layers) held.push_back(r);
    } else {
      // A mark inside the current iteration's (iteration/N inside
      // ProfilerStep#N) is the same iteration.
      if (is_iteration_mark(r) && !(current && r.start_ns < current->end_ns)) {
        close(current.has_value());
        current = Current{r.start_ns, r.end_ns, r.thread_id, true};
        spans.push_back({r.start_ns, r.end_ns, r.name});
      } else if (current && r.start_ns >= current->end_ns) {
        close(true);
        current.reset();
      }
      if (o.legacy_layers && (current || spans.empty())) held.push_back(r);
    }
  });
  if (o.iterations_from_steps && current && current->ended) {
    spans.push_back({current->start_ns, current->end_ns,
                     iteration_mark(static_cast<std::int64_t>(s.step_iterations))});
    write_step_iteration(*current);
    close(true);
  } else if (o.iterations_from_steps && s.step_iterations == 0 && first_thread) {
    // No step at all: the whole file is one iteration for the layers.
    current = Current{0, 0, *first_thread, false};
    close(true);
  } else if (!o.iterations_from_steps && current) {
    close(true);
  } else if (!o.iterations_from_steps && spans.empty() && first_thread) {
    current = Current{0, 0, *first_thread, false};
    close(true);
  }
  s.iterations = spans.size();

  HostCollectiveOptions co = o.collectives;
  co.iterations = std::move(spans);
  s.collectives = collectives.finish(co, emit);
  if (o.compute) compute.finish();
  s.compute = compute.stats();
  s.layers = aligner.stats();
  s.sort_runs = sorter_.runs_spilled();
  return s;
}

}  // namespace ssgd::trace
