#include "presentation/report/report.h"
#include "presentation/report/gpu_report.h"
#include "presentation/report/interference_report.h"
#include "presentation/report/link_report.h"
#include "presentation/report/memory_report.h"
#include "presentation/report/summary_rows.h"

#include <fmt/format.h>

#include <map>
#include <ostream>

#include "common/units.h"
#include "simulator/scaling/scaling_table.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::report {
namespace {

nlohmann::json link_json(const sim::LinkChoice& l) {
  nlohmann::json j{{"preset", l.preset}};
  if (l.bandwidth_bytes_per_s) j["bandwidth_bytes_per_s"] = *l.bandwidth_bytes_per_s;
  if (l.latency) j["latency_ns"] = l.latency->ns();
  return j;
}

nlohmann::json perturb_json(const sim::Perturbation& p) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : p.layer_factors) layers.push_back({{"pattern", l.pattern}, {"factor", l.factor}});
  nlohmann::json classes = nlohmann::json::object();
  for (int k = 0; k < trace::kKernelClassCount; ++k) {
    classes[to_string(static_cast<trace::KernelClass>(k))] =
        p.class_factors[static_cast<std::size_t>(k)];
  }
  nlohmann::json bandwidth = nlohmann::json::object();
  nlohmann::json latency = nlohmann::json::object();
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const char* kind = to_string(static_cast<sim::LinkKind>(k));
    bandwidth[kind] = p.bandwidth_factors[static_cast<std::size_t>(k)];
    latency[kind] = p.latency_factors[static_cast<std::size_t>(k)];
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& st : p.stragglers) stragglers.push_back({{"rank", st.rank}, {"percent", st.percent}});
  return {{"active", p.active()},
          {"compute_time_factor", p.compute_time_factor},
          {"layer_factors", layers},
          {"class_factors", classes},
          {"mixed_precision", p.mixed_precision},
          {"mixed_precision_speedup", p.mixed_precision_speedup},
          {"bandwidth_factors", bandwidth},
          {"latency_factors", latency},
          {"stragglers", stragglers},
          {"imbalance", p.imbalance},
          {"jitter", {{"distribution", to_string(p.jitter.kind)}, {"spread", p.jitter.spread}}},
          {"seed", p.seed},
          {"repeats", p.repeats}};
}

nlohmann::json shared_fabric_json(const sim::SharedFabricResult& f) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& o : f.jobs) {
    jobs.push_back({{"name", o.name},
                    {"kind", to_string(o.kind)},
                    {"first_node", o.first_node},
                    {"nodes", o.nodes},
                    {"workers", o.workers},
                    {"measure", o.measure},
                    {"detail", o.detail},
                    {"alone_ns", o.alone.ns()},
                    {"shared_ns", o.shared.ns()},
                    {"slowdown", o.slowdown},
                    {"count", o.count}});
  }
  return {{"platform_nodes", f.platform_nodes}, {"events", f.events}, {"jobs", jobs}};
}

void print_shared_fabric(const sim::SharedFabricResult& f, std::ostream& out) {
  out << fmt::format("\n  shared fabric: {} jobs on {} nodes (alone: the job by itself on the same "
                     "nodes)\n",
                     f.jobs.size(), f.platform_nodes);
  out << fmt::format("  {:<12} {:<8} {:>9} {:>11} {:>12} {:>12} {:>9}  {}\n", "job", "kind", "nodes",
                     "per", "alone", "shared", "slowdown", "what");
  for (const auto& o : f.jobs) {
    out << fmt::format("  {:<12} {:<8} {:>9} {:>11} {:>12} {:>12} {:>8.3f}x  {}\n", o.name,
                       to_string(o.kind), fmt::format("{}-{}", o.first_node, o.first_node + o.nodes - 1),
                       o.measure, format_duration(o.alone),
                       o.count > 0 ? format_duration(o.shared) : std::string("none ran"),
                       o.slowdown, o.detail);
  }
}

nlohmann::json scenario_scaling_json(const sim::ScalingChoice& c) {
  const auto or_null = [](const auto& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"mode", to_string(c.mode)},
          {"global_batch", or_null(c.global_batch)},
          {"fixed_fraction", or_null(c.fixed_fraction)},
          {"second_profile", c.second_profile ? c.second_profile->string() : std::string()}};
}

// The run and its one-GPU baseline as rows of the scaling table.
std::vector<sim::ScalingRow> scaling_rows(const sim::ReplayResult& r, const sim::Scenario& s) {
  std::vector<sim::ScalingRow> rows;
  sim::ScalingRow run;
  run.label = "this run";
  run.gpus = r.workers;
  run.nodes = s.nodes;
  run.gpus_per_node = s.gpus_per_node;
  run.per_gpu_batch = r.batch_per_gpu;
  run.global_batch = r.global_batch;
  run.iteration_time = r.iteration_time;
  run.throughput_samples_per_s = r.throughput_samples_per_s;
  if (r.single_worker_iteration_time) {
    run.speedup = r.speedup;
    run.efficiency = r.scaling_efficiency;
  }
  rows.push_back(run);
  if (r.single_worker_iteration_time) {
    sim::ScalingRow one;
    one.label = "1 GPU";
    one.per_gpu_batch = one.global_batch = r.single_worker_batch;
    one.iteration_time = *r.single_worker_iteration_time;
    one.throughput_samples_per_s = r.single_worker_throughput_samples_per_s;
    one.speedup = 1.0;
    one.efficiency = 1.0;
    rows.push_back(one);
  }
  return rows;
}

nlohmann::json scaling_json(const sim::ReplayResult& r, const sim::Scenario& s) {
  const auto rows = scaling_rows(r, s);
  nlohmann::json j = sim::scaling_row_json(rows.front());
  j["mode"] = to_string(r.scaling_mode);
  j["reference_batch"] = r.reference_batch;
  j["compute_model"] = r.compute_model;
  j["single_gpu"] = rows.size() > 1 ? scaling_row_json(rows[1]) : nlohmann::json(nullptr);
  return j;
}

// The replay beside a trace input's own iterations: the difference in
// percent, and a note when the scenario replays the trace's own job (its
// world size, its GPU, nothing perturbed or added) and misses them by more
// than 10%: what the trace spent in waits the walker leaves idle (its
// peers, a synchronize, data) is not in the replay, or the replay adds what
// the trace did not do.
struct TracedSteps {
  double error_percent = 0;
  std::string note;
};
std::optional<TracedSteps> traced_steps(const sim::ReplayResult& r, const sim::Scenario& s) {
  if (!r.traced.step || r.traced.step->ns() <= 0) return std::nullopt;
  TracedSteps t;
  t.error_percent =
      100.0 *
      (static_cast<double>(r.iteration_time.ns()) / static_cast<double>(r.traced.step->ns()) - 1);
  const bool own_job = r.workers == std::max<std::int64_t>(r.traced.world, 1) &&
                       !r.gpu_change.applied && !s.perturb.active() && !r.interference.active &&
                       !r.tracer_overhead.removed;
  if (own_job && std::abs(t.error_percent) > 10) {
    t.note = t.error_percent < 0
                 ? fmt::format(
                       "the replay of the trace's own job is {:.1f}% shorter than its "
                       "steps: time the traced rank waited with its GPU idle (for its "
                       "peers, a synchronize, data) is not work the replay keeps",
                       -t.error_percent)
                 : fmt::format(
                       "the replay of the trace's own job is {:.1f}% longer than its "
                       "steps: work the replay adds (collectives modelled rather than "
                       "measured, an update, io) the trace did not spend",
                       t.error_percent);
  }
  return t;
}

void print_scaling(const sim::ReplayResult& r, const sim::Scenario& s, std::ostream& out) {
  if (r.scaling_mode == sim::ScalingMode::kWeak) {
    out << fmt::format("\n  scaling: weak, {} {} per GPU on every GPU count\n", r.batch_per_gpu,
                       r.batch_given ? "samples" : "batch (no batch size given)");
  } else {
    out << fmt::format("\n  scaling: strong, global batch {} fixed; compute model: {}\n",
                       r.global_batch, r.compute_model);
  }
  sim::print_scaling_table(scaling_rows(r, s), "  ", out);
}

}  // namespace

nlohmann::json report_json(const sim::ReplayResult& r, const sim::Scenario& s,
                           const ReportContext& ctx) {
  nlohmann::json j;
  j["ssgd_report_version"] = 1;
  j["input"] = {{"path", ctx.input}, {"kind", ctx.input_kind}, {"model", ctx.model},
                {"provenance", ctx.provenance}};
  j["scenario"] = {
      {"file", ctx.scenario_file},
      {"sets", ctx.scenario_sets},
      {"iterations", s.iterations},
      {"cluster", {{"nodes", s.nodes}, {"gpus_per_node", s.gpus_per_node}}},
      {"network",
       {{"intra_node", link_json(s.intra_node)},
        {"inter_node", link_json(s.inter_node)},
        {"model", s.network_model},
        {"library", to_string(sim::scenario_library(s, s.algorithm))},
        {"algorithm", to_string(s.algorithm)},
        {"nccl_algo", s.nccl_algo},
        {"nccl_proto", s.nccl_proto},
        {"channels", s.channels ? nlohmann::json(*s.channels) : nlohmann::json("auto")},
        {"calibration", s.calibration ? s.calibration->string() : ""}}},
      {"platform", {{"preset", s.platform.preset}}},
      {"policy", {{"overlap", to_string(s.overlap_policy)}}},
      {"workload",
       {{"batch_per_gpu", r.batch_per_gpu},
        {"batch_given", r.batch_given},
        {"io_time_ns", s.io_time.ns()},
        {"h2d_time_ns", s.h2d_time.ns()},
        {"update_time_ns", r.update_time.ns()}}},
      {"perturb", perturb_json(s.perturb)},
      {"scaling", scenario_scaling_json(s.scaling)},
      {"sharding", sharding_json(r, s.sharding)}};
  j["workers"] = r.workers;
  j["iteration_time_ns"] = r.iteration_time.ns();
  nlohmann::json iters = nlohmann::json::array();
  for (auto d : r.iteration_times) iters.push_back(d.ns());
  j["iteration_times_ns"] = iters;
  j["throughput_samples_per_s"] = r.throughput_samples_per_s;
  if (r.repeats) {
    nlohmann::json runs = nlohmann::json::array();
    for (auto d : r.repeat_iteration_times) runs.push_back(d.ns());
    j["repeats"] = {{"count", r.repeats->count},
                    {"first_seed", s.perturb.seed},
                    {"iteration_times_ns", runs},
                    {"iteration_time_mean_ns", r.repeats->mean.ns()},
                    {"iteration_time_ci95_half_width_ns", r.repeats->ci95_half_width.ns()},
                    {"iteration_time_min_ns", r.repeats->min.ns()},
                    {"iteration_time_max_ns", r.repeats->max.ns()}};
  }
  if (r.single_worker_iteration_time) {
    j["single_worker_iteration_time_ns"] = r.single_worker_iteration_time->ns();
    j["speedup"] = r.speedup;
    j["scaling_efficiency"] = r.scaling_efficiency;
  } else {
    j["speedup"] = nullptr;
    j["scaling_efficiency"] = nullptr;
  }
  j["scaling"] = scaling_json(r, s);
  j["memory"] = memory_json(r.memory, r.gpu_memory);
  j["gpu"] = gpu_change_json(r.gpu_change, r.kernel_classes);
  j["interference"] = interference_json(r.interference, &r.interference_stats);
  if (const auto t = traced_steps(r, s)) {
    j["traced_steps"] = {{"mean_ns", r.traced.step->ns()},
                         {"count", r.traced.steps},
                         {"world_size", r.traced.world},
                         {"this_run_percent", t->error_percent},
                         {"note", t->note}};
  }
  if (const sim::TracerOverhead& t = r.tracer_overhead; t.window) {
    j["tracing_window"] = {{"traced_steps", t.steps.traced},
                           {"untraced_steps", t.steps.untraced},
                           {"traced_median_ns", t.steps.traced_median.ns()},
                           {"untraced_median_ns", t.steps.untraced_median.ns()},
                           {"removed", t.removed},
                           {"removed_per_iteration_ns", t.removed_per_iteration.ns()},
                           {"note", t.note}};
  }
  j["breakdown"] = {{"compute_ns", r.breakdown.compute.ns()},
                    {"io_ns", r.breakdown.io.ns()},
                    {"exposed_comm_ns", r.breakdown.exposed_comm.ns()},
                    {"idle_ns", r.breakdown.idle.ns()}};
  j["communication"] = {{"model", r.network},
                        {"replayed_from_input", r.comm_replayed},
                        {"collectives_per_iteration", r.collectives_per_iteration},
                        {"comm_per_iteration_ns", r.comm_per_iteration.ns()}};
  nlohmann::json coll = nlohmann::json::array();
  for (const auto& c : r.collectives) {
    coll.push_back({{"group", c.group}, {"bytes", c.bytes}, {"algorithm", c.algorithm},
                    {"protocol", c.protocol}, {"channels", c.channels},
                    {"time_ns", c.time.ns()}, {"algbw_bytes_per_s", c.algbw_bytes_per_s},
                    {"busbw_bytes_per_s", c.busbw_bytes_per_s}, {"replayed", c.replayed}});
    if (!c.op.empty()) {
      coll.back()["op"] = c.op;
      coll.back()["scope"] = c.scope;
    }
  }
  j["communication"]["network_model"] = r.network_model;
  if (r.unsized_collectives_replayed > 0) {
    j["communication"]["collectives_without_size_replayed"] = r.unsized_collectives_replayed;
  }
  if (r.other_kind_collectives_replayed > 0) {
    j["communication"]["collectives_of_other_kinds_replayed"] = r.other_kind_collectives_replayed;
  }
  j["communication"]["collectives_last_iteration"] = coll;
  j["links"] = links_json(r);
  nlohmann::json kinds;
  for (int k = 0; k < dag::kTaskKindCount; ++k) {
    kinds[dag::to_string(static_cast<dag::TaskKind>(k))] = r.critical_path.time_by_kind[k].ns();
  }
  j["critical_path"] = {{"length_ns", r.critical_path.length.ns()},
                        {"tasks", r.critical_path.task_count},
                        {"time_by_kind_ns", kinds},
                        {"gaps_ns", r.critical_path.gaps.ns()}};
  if (r.closed_form) j["closed_form_iteration_time_ns"] = r.closed_form->ns();
  if (ctx.shared_fabric) j["shared_fabric"] = shared_fabric_json(*ctx.shared_fabric);
  j["simulation"] = {{"tasks", r.tasks},
                     {"edges", r.edges},
                     {"events", r.events},
                     {"ranks_simulated", r.ranks_simulated},
                     {"ranks_differ", r.ranks_differ}};
  return j;
}

void print_summary(const sim::ReplayResult& r, const sim::Scenario& s, const ReportContext& ctx,
                   std::ostream& out) {
  const std::string model = ctx.model.empty() ? ctx.input : ctx.model + " (" + ctx.input + ")";
  out << fmt::format("ssgd simulate: {}\n", model);
  if (!ctx.provenance.empty()) out << fmt::format("  input: {}\n", ctx.provenance);
  out << fmt::format("  cluster: {} node(s) x {} GPU(s) = {} workers, policy {}, {} iterations\n",
                     s.nodes, s.gpus_per_node, r.workers, to_string(s.overlap_policy),
                     s.iterations);
  out << fmt::format("  network: {}{}\n", r.network,
                     r.comm_replayed ? " (measured comm_ns replayed instead)" : "");
  if (r.unsized_collectives_replayed > 0) {
    out << fmt::format("  note: {} collectives had no size; replayed at their measured durations\n",
                       r.unsized_collectives_replayed);
  }
  if (r.other_kind_collectives_replayed > 0) {
    out << fmt::format(
        "  note: {} collectives of kinds the replay does not model (send, receive, all-to-all, "
        "unknown); replayed at their measured durations\n",
        r.other_kind_collectives_replayed);
  }
  print_gpu_change(r.gpu_change, r.kernel_classes, out);
  print_interference(r.interference, &r.interference_stats, out);
  if (const sim::TracerOverhead& t = r.tracer_overhead; t.window) {
    const double traced = static_cast<double>(t.steps.traced_median.ns()) / 1e6;
    const double untraced = static_cast<double>(t.steps.untraced_median.ns()) / 1e6;
    out << fmt::format(
        "  tracing window: {} step(s) traced ({:.3f} ms median), {} untraced ({:.3f} ms): {}\n",
        t.steps.traced, traced, t.steps.untraced, untraced,
        t.removed ? fmt::format("{:.3f} ms of host time an iteration removed "
                                "(workload.tracer_overhead: remove)",
                                static_cast<double>(t.removed_per_iteration.ns()) / 1e6)
                  : std::string("replayed as traced (workload.tracer_overhead: keep)"));
    if (!t.note.empty()) out << fmt::format("    note: {}\n", t.note);
  }
  if (s.perturb.active()) out << fmt::format("  perturb: {}\n", sim::describe(s.perturb));
  if (r.sharding != "none" || r.accumulation > 1) {
    const sim::ShardSettings& sh = s.sharding;
    std::string how = fmt::format("  sharding: {}", r.sharding);
    if (r.sharding != "none") how += fmt::format(" over {} ranks", r.shard_ranks);
    if (r.sharding != "none" && sh.gradient_reduction != sim::GradientReduction::kReduceScatter) {
      how += sh.gradient_reduction == sim::GradientReduction::kReduce
                 ? ", gradients reduced to their owners (a reduce per owner)"
                 : ", gradients all-reduced";
    }
    if (r.shard_units > 0) {
      how += fmt::format(
          ", {} units, forward prefetch {}, backward prefetch {}, {}reshard after forward",
          r.shard_units, sh.forward_prefetch, sim::to_string(sh.backward_prefetch),
          sh.reshard_after_forward ? "" : "no ");
    }
    if (r.accumulation > 1) {
      how += fmt::format(", {} micro-batches{}", r.accumulation, sh.no_sync ? " (no_sync)" : "");
    }
    how += fmt::format("; {} step, gradients in {}, parameters gathered in {}", r.precision,
                       r.reduce_dtype, r.gather_dtype);
    out << how << "\n";
  }
  out << "\n";
  const Duration it = r.iteration_time;
  auto row = [&out](std::string_view name, std::string_view value, std::string_view note) {
    summary_row(out, name, value, note);
  };
  row("iteration time", format_duration(it),
      fmt::format("{}{}",
                  s.iterations > 1 ? "steady state: mean over iterations after the first"
                                   : "the only iteration simulated",
                  ctx.shared_fabric ? "; this job alone on the fabric" : ""));
  if (const auto t = traced_steps(r, s)) {
    row("the trace's own steps", format_duration(*r.traced.step),
        fmt::format("mean of the {} rank-iteration(s) the replay averages, as traced; "
                    "this run {:+.1f}%",
                    r.traced.steps, t->error_percent));
    if (!t->note.empty()) out << fmt::format("    note: {}\n", t->note);
  }
  if (ctx.shared_fabric && !ctx.shared_fabric->jobs.empty() && ctx.shared_fabric->jobs.front().count > 0) {
    // The scenario's own job is the table's first: its time with the others,
    // from the same run as the table below.
    const auto& main = ctx.shared_fabric->jobs.front();
    row("with the other jobs", format_duration(main.shared),
        fmt::format("{:.3f}x, sharing the fabric with {} other job(s) (shared fabric, below)",
                    main.slowdown, ctx.shared_fabric->jobs.size() - 1));
  }
  if (r.repeats) {
    row(fmt::format("mean of {} runs", r.repeats->count), format_duration(r.repeats->mean),
        fmt::format("95% CI +/- {} (Student t); seeds {}..{}; range {} to {}",
                    format_duration(r.repeats->ci95_half_width), s.perturb.seed,
                    s.perturb.seed + static_cast<std::uint64_t>(r.repeats->count - 1),
                    format_duration(r.repeats->min), format_duration(r.repeats->max)));
  }
  std::string per_iteration;
  if (!r.batch_given) {
    per_iteration = "batches/s (no batch size given: set workload.batch_per_gpu)";
  } else if (r.scaling_mode == sim::ScalingMode::kWeak) {
    per_iteration = fmt::format("samples/s ({} per GPU per iteration)", r.batch_per_gpu);
  } else {
    per_iteration =
        fmt::format("samples/s (global batch {}: {} per GPU per iteration)", r.global_batch,
                    sim::per_gpu_batch_text(r.batch_per_gpu, r.global_batch, r.workers));
  }
  row("throughput", fmt::format("{:.1f}", r.throughput_samples_per_s), per_iteration);
  if (r.single_worker_iteration_time) {
    row("speedup vs 1 GPU", fmt::format("{:.2f}x", r.speedup),
        fmt::format("1 GPU: {} at batch {}", format_duration(*r.single_worker_iteration_time),
                    r.single_worker_batch));
    row("scaling efficiency", fmt::format("{:.1f}%", 100 * r.scaling_efficiency),
        fmt::format("{} scaling: speedup / {} GPUs{}", to_string(r.scaling_mode), r.workers,
                    r.scaling_efficiency > 1 && r.shard_ranks > 1
                        ? fmt::format("; above 100%: each GPU's optimizer steps on 1/{} of the "
                                      "parameters ({}), the one GPU's on all of them",
                                      r.shard_ranks, r.sharding)
                        : std::string()));
  }
  row("  compute", format_duration(r.breakdown.compute), fmt::format("{:5.1f}%", percent_of(r.breakdown.compute, it)));
  row("  exposed comm", format_duration(r.breakdown.exposed_comm),
      fmt::format("{:5.1f}%   ({} total {} in {} collectives)",
                  percent_of(r.breakdown.exposed_comm, it),
                  r.sharding == "none" ? "all-reduce" : "collectives'",
                  format_duration(r.comm_per_iteration), r.collectives_per_iteration));
  row("  io + h2d", format_duration(r.breakdown.io), fmt::format("{:5.1f}%", percent_of(r.breakdown.io, it)));
  row("  idle", format_duration(r.breakdown.idle), fmt::format("{:5.1f}%", percent_of(r.breakdown.idle, it)));
  if (r.ranks_differ) {
    row("closed form", "-", "not applicable: perturbed ranks differ (docs/design.md)");
  }
  if (r.closed_form) {
    const auto diff = it - *r.closed_form;
    row("closed form", format_duration(*r.closed_form),
        diff == Duration::zero() ? std::string("matches the simulation (docs/design.md)")
                                 : fmt::format("differs by {} ns (docs/design.md)", diff.ns()));
  }
  print_sharding_and_memory(r, s.sharding, out);
  print_scaling(r, s, out);
  if (!r.collectives.empty()) {
    // Per size and way of running: how long, and how fast as nccl-tests
    // would put it.
    struct How {
      std::string op;
      std::int64_t bytes;
      std::string algorithm;
      std::string protocol;
      int channels;
      auto operator<=>(const How&) const = default;
    };
    std::map<How, std::pair<std::int64_t, Duration>> by_size;
    std::map<How, double> bus_factor;  // busbw / algbw of the kind
    bool nccl = false;
    for (const auto& c : r.collectives) {
      const How how{c.op.empty() ? std::string() : c.op + (c.scope == "job" ? "" : "/" + c.scope),
                    c.bytes, c.algorithm, c.protocol, c.channels};
      auto& e = by_size[how];
      ++e.first;
      e.second += c.time;
      if (c.algbw_bytes_per_s > 0) bus_factor[how] = c.busbw_bytes_per_s / c.algbw_bytes_per_s;
      nccl = nccl || c.channels > 0;
    }
    out << fmt::format("\n  collectives of the last iteration ({}), as nccl-tests reports them:\n",
                       r.collectives.size());
    if (nccl) {
      out << fmt::format("  {:>12} {:>6} {:<18} {:<8} {:>8} {:>12} {:>12} {:>12}\n", "bytes", "count",
                         "algorithm", "protocol", "channels", "mean time", "algbw", "busbw");
    } else {
      out << fmt::format("  {:>12} {:>6} {:<20} {:>12} {:>12} {:>12}\n", "bytes", "count", "algorithm",
                         "mean time", "algbw", "busbw");
    }
    std::size_t shown = 0;
    for (const auto& [key, e] : by_size) {
      if (++shown > 12) {
        out << fmt::format("  ... {} more sizes in the JSON report\n", by_size.size() - 12);
        break;
      }
      const Duration mean(e.second.ns() / e.first);
      const double algbw = mean.ns() > 0 ? static_cast<double>(key.bytes) / (static_cast<double>(mean.ns()) * 1e-9) : 0;
      const auto factor = bus_factor.find(key);
      const std::string busbw = format_rate(
          algbw * (factor != bus_factor.end()
                       ? factor->second
                       : sim::bus_bandwidth_factor(CollectiveOp::kAllReduce, r.workers)));
      if (nccl) {
        out << fmt::format("  {:>12} {:>6} {:<18} {:<8} {:>8} {:>12} {:>12} {:>12}\n",
                           format_bytes(key.bytes), e.first,
                           key.op.empty() ? key.algorithm : key.op + " " + key.algorithm,
                           key.protocol.empty() ? "-" : key.protocol,
                           key.channels > 0 ? std::to_string(key.channels) : "-",
                           format_duration(mean), format_rate(algbw), busbw);
      } else {
        out << fmt::format("  {:>12} {:>6} {:<20} {:>12} {:>12} {:>12}\n", format_bytes(key.bytes), e.first,
                           key.op.empty() ? key.algorithm : key.op + " " + key.algorithm,
                           format_duration(mean), format_rate(algbw), busbw);
      }
    }
  }
  print_link_utilisation(r, out);
  if (ctx.shared_fabric) print_shared_fabric(*ctx.shared_fabric, out);
  out << "\n";
  std::string path;
  for (int k = 0; k < dag::kTaskKindCount; ++k) {
    const auto d = r.critical_path.time_by_kind[k];
    if (d == Duration::zero()) continue;
    if (!path.empty()) path += ", ";
    path += fmt::format("{} {:.0f}%", dag::to_string(static_cast<dag::TaskKind>(k)),
                        percent_of(d, r.critical_path.length));
  }
  row("critical path", format_duration(r.critical_path.length),
      fmt::format("whole run of {} iterations: {}", s.iterations, path));
  out << fmt::format("\n  simulated {} tasks, {} events in {:.3f} s{}\n", r.tasks, r.events,
                     r.build_seconds + r.simulate_seconds,
                     r.ranks_simulated == 1 && r.workers > 1
                         ? fmt::format(" (one rank stands for {} identical ones)", r.workers)
                     : r.ranks_simulated < r.workers
                         ? fmt::format(" ({} ranks stand for {}, one a class of identical ones)",
                                       r.ranks_simulated, r.workers)
                         : std::string());
}

}  // namespace ssgd::report
