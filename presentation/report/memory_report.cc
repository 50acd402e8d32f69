#include "presentation/report/memory_report.h"

#include <fmt/format.h>

#include "common/units.h"
#include "presentation/report/summary_rows.h"

namespace ssgd::report {

std::optional<bool> memory_fits(const sim::MemoryEstimate& memory, std::int64_t gpu_memory) {
  if (gpu_memory <= 0) return std::nullopt;
  return memory.total() <= gpu_memory;
}

nlohmann::json memory_json(const sim::MemoryEstimate& m, std::int64_t gpu_memory) {
  nlohmann::json j = {{"parameters_bytes", m.parameters},
                      {"gradients_bytes", m.gradients},
                      {"optimizer_state_bytes", m.optimizer_state},
                      {"optimizer_bytes_per_parameter", m.optimizer_bytes_per_param},
                      // Units gathered and gradients waiting, as before the two
                      // were told apart; each on its own below.
                      {"gathered_bytes", m.gathered + m.waiting_gradients},
                      {"gathered_units_bytes", m.gathered},
                      {"waiting_gradients_bytes", m.waiting_gradients},
                      {"waiting_gradients_from_schedule", m.waiting_from_schedule},
                      {"accumulation_bytes", m.accumulation},
                      {"comm_buffers_bytes", m.comm_buffers},
                      {"temporaries_bytes", m.gradient_temporary + m.gather_output},
                      {"gradient_temporary_bytes", m.gradient_temporary},
                      {"gather_output_bytes", m.gather_output},
                      {"total_bytes", m.total()},
                      {"left_out", sim::kMemoryLeftOut}};
  // Whose the comm buffers are, where there are some.
  if (m.comm_buffers > 0 && m.comm_buffers_kind != sim::CommBuffers::kNone) {
    j["comm_buffers"] = m.comm_buffers_kind == sim::CommBuffers::kDdpBuckets
                            ? "ddp_buckets"
                            : "horovod_fusion_buffer";
  }
  j["activations_bytes"] = m.activations ? nlohmann::json(*m.activations) : nlohmann::json(nullptr);
  j["activations_known"] = m.activations.has_value();
  j["gpu_memory_bytes"] = gpu_memory > 0 ? nlohmann::json(gpu_memory) : nlohmann::json(nullptr);
  const auto fits = memory_fits(m, gpu_memory);
  j["fits"] = fits ? nlohmann::json(*fits) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json sharding_json(const sim::ReplayResult& r, const sim::ShardSettings& s) {
  return {
      {"strategy", r.sharding},
      {"shard_ranks", r.shard_ranks},
      {"units", r.shard_units},
      {"forward_prefetch", s.forward_prefetch},
      {"backward_prefetch", sim::to_string(s.backward_prefetch)},
      {"reshard_after_forward", s.reshard_after_forward},
      {"max_gathers_in_flight", s.max_gathers_in_flight},
      {"separate_streams", s.separate_streams},
      {"gradient_reduction", r.sharding == "none" ? "all_reduce" : to_string(s.gradient_reduction)},
      {"accumulation", r.accumulation},
      {"no_sync", s.no_sync},
      {"activation_checkpointing", s.activation_checkpointing},
      {"optimizer", to_string(s.optimizer_or_assumed())},
      {"optimizer_assumed", !s.optimizer.has_value()},
      {"precision", r.precision},
      {"reduce_dtype", r.reduce_dtype},
      {"gather_dtype", r.gather_dtype}};
}

void print_sharding_and_memory(const sim::ReplayResult& r, const sim::ShardSettings& s,
                               std::ostream& out) {
  const sim::MemoryEstimate& m = r.memory;
  const auto row = [&out](std::string_view name, std::string_view value, std::string_view note) {
    summary_row(out, name, value, note);
  };
  const auto fits = memory_fits(m, r.gpu_memory);
  row("memory per GPU", format_bytes(m.total()),
      fmt::format("{}{}", r.gpu_memory > 0 ? fmt::format("of {} ({:.0f}%){}", format_bytes(r.gpu_memory),
                                                         100.0 * static_cast<double>(m.total()) /
                                                             static_cast<double>(r.gpu_memory),
                                                         *fits ? ", fits" : ", DOES NOT FIT")
                                           : std::string("GPU memory unknown: set platform.gpu.memory"),
                  m.activations ? "" : "; activations unknown, not counted"));
  row("  parameters", format_bytes(m.parameters),
      fmt::format("{}{}", r.precision, r.sharding == "zero3" || r.sharding == "hsdp"
                                           ? fmt::format(", 1/{} shard", m.shard_ranks)
                                           : std::string()));
  const bool grads_sharded = r.sharding == "zero2" || r.sharding == "zero3" || r.sharding == "hsdp";
  row("  gradients", format_bytes(m.gradients),
      fmt::format("{}{}", r.precision,
                  grads_sharded ? fmt::format(", 1/{} shard", m.shard_ranks) : std::string()));
  row("  optimizer state", format_bytes(m.optimizer_state),
      fmt::format("{}{}{}: {} B per parameter{}", to_string(s.optimizer_or_assumed()),
                  s.optimizer ? "" : " (assumed: set workload.optimizer)",
                  // K's fp32 master weights: mixed precision's, or ZeRO-1/2's
                  // copy of the shard the optimizer steps on (gpu_memory.h).
                  m.master_weights ? (r.precision != "fp32" ? " + fp32 master weights"
                                                  : " + the fp32 copy of the shard it steps on")
                         : "",
                  m.optimizer_bytes_per_param,
                  r.sharding != "none" ? fmt::format(", 1/{} shard", m.shard_ranks) : std::string()));
  if (m.gathered > 0) {
    row("  gathered", format_bytes(m.gathered), fmt::format("units gathered at once, {}", r.gather_dtype));
  }
  if (m.waiting_gradients > 0) {
    row("  waiting gradients", format_bytes(m.waiting_gradients),
        fmt::format("unsharded, before their reduction, {}: {}", r.reduce_dtype,
                    m.waiting_from_schedule ? "the most the simulated schedule holds at once"
                                            : "one unit or bucket (no schedule: the least there is)"));
  }
  if (m.accumulation > 0) {
    row("  accumulation", format_bytes(m.accumulation),
        m.waiting_in_accumulation
            ? "unsharded gradients kept by no_sync (those waiting for their reductions among them)"
            : "unsharded gradients kept by no_sync");
  }
  if (m.comm_buffers > 0) {
    row("  comm buffers", format_bytes(m.comm_buffers),
        m.comm_buffers_kind == sim::CommBuffers::kHorovodFusion
            ? std::string("Horovod's fusion buffer, policy.fusion_threshold, allocated whole "
                          "once two gradients are fused (assumed: the model has two or more)")
            : fmt::format("DDP's buckets: a copy of the gradients, {} (policy.bucket_view: false)",
                          r.precision));
  }
  if (m.gradient_temporary > 0) {
    row("  gradient temporary", format_bytes(m.gradient_temporary),
        fmt::format("the largest layer's gradients before they join the unit's buffer, {}",
                    r.precision));
  }
  if (m.gather_output > 0) {
    row("  gather output", format_bytes(m.gather_output),
        fmt::format("gloo's flat all-gather output beside the unit it fills, {}", r.gather_dtype));
  }
  row("  activations", m.activations ? format_bytes(*m.activations) : std::string("unknown"),
      m.activations ? (s.activation_checkpointing ? "checkpointed: units' inputs + one unit"
                                                  : "the input's activation_bytes, one micro-batch")
                    : "the input has no activation_bytes column");
  row("  left out", "", sim::kMemoryLeftOut);
}

}  // namespace ssgd::report
