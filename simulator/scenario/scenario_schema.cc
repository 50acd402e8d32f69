#include "simulator/scenario/scenario_schema.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"
#include "simulator/nccl/nccl_tuner.h"
#include "simulator/network/network_model.h"
#include "simulator/perturb/perturbation.h"
#include "simulator/platform/gpu_preset.h"
#include "simulator/platform/link_preset.h"
#include "simulator/platform/platform_preset.h"
#include "simulator/platform/tcp_stream_preset.h"
#include "simulator/policy/overlap_policy.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {
namespace {

// Upper bounds are far above any real cluster; they are there so a typo such
// as an extra zero or two fails at load time rather than as an allocation
// failure halfway through a simulation.
constexpr std::int64_t kMaxIterations = 1'000'000;
constexpr std::int64_t kMaxBatchPerGpu = 1'048'576;
constexpr std::int64_t kMaxPrefetchDepth = 1'024;

std::int64_t parse_int(std::string_view value, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const char* begin = value.data();
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  // The value is echoed bounded: a list's item is not the whole value that
  // the scenario bounds (with_bounded_echo).
  if (ec == std::errc::result_out_of_range) {
    throw std::invalid_argument(
        fmt::format("must be between {} and {}, got {}", lo, hi, bounded(value)));
  }
  if (ec != std::errc() || ptr != end || value.empty()) {
    throw std::invalid_argument(fmt::format("expected an integer, got '{}'", bounded(value)));
  }
  if (v < lo || v > hi) {
    throw std::invalid_argument(fmt::format("must be between {} and {}, got {}", lo, hi, v));
  }
  return v;
}

Duration parse_nonnegative_duration(std::string_view value) {
  const Duration d = parse_duration(value);  // rejects negative values itself
  if (d < Duration::zero()) throw std::invalid_argument("must not be negative");
  // A bound far above any real step keeps simulated time clear of int64 overflow.
  constexpr Duration kMax(1'000'000LL * 1'000'000'000LL);  // 1e6 s
  if (d > kMax) {
    throw std::invalid_argument(fmt::format("must be at most 1000000s, got '{}'", value));
  }
  return d;
}

double parse_positive_rate(std::string_view value) {
  const double r = parse_rate_bytes_per_s(value);
  if (!(r > 0) || !std::isfinite(r)) {
    throw std::invalid_argument(fmt::format("must be greater than zero, got '{}'", value));
  }
  return r;
}

std::string parse_preset(std::string_view value) {
  if (find_link_preset(value) == nullptr) {
    throw std::invalid_argument(unknown_link_preset(value));
  }
  return std::string(value);
}

OverlapPolicy parse_overlap(std::string_view value) {
  std::string names;
  for (const auto& p : overlap_policies()) {
    if (p.name == value) return p.policy;
    if (!names.empty()) names += ", ";
    names += p.name;
  }
  throw std::invalid_argument(
      fmt::format("unknown overlap policy '{}'; expected one of {}", value, names));
}

CollectiveAlgorithm parse_algorithm(std::string_view value) {
  const auto a = parse_collective_algorithm(value);
  if (!a) {
    throw std::invalid_argument(fmt::format("unknown collective algorithm '{}'; known: {}", value,
                                            collective_algorithm_names()));
  }
  return *a;
}

std::int64_t parse_positive_size(std::string_view value) {
  const std::int64_t b = parse_bytes(value);
  if (b <= 0) throw std::invalid_argument(fmt::format("must be greater than zero, got '{}'", value));
  return b;
}

std::int64_t parse_nonnegative_size(std::string_view value) {
  const std::int64_t b = parse_bytes(value);
  if (b < 0) throw std::invalid_argument(fmt::format("must not be negative, got '{}'", value));
  return b;
}

void set_iterations(Scenario& s, std::string_view v) {
  s.iterations = parse_int(v, 1, kMaxIterations);
}
void set_nodes(Scenario& s, std::string_view v) { s.nodes = parse_int(v, 1, kMaxClusterNodes); }
void set_gpus_per_node(Scenario& s, std::string_view v) {
  s.gpus_per_node = parse_int(v, 1, kMaxClusterGpusPerNode);
  s.gpus_per_node_given = true;
}
void set_intra_node(Scenario& s, std::string_view v) {
  s.intra_node.preset = parse_preset(v);
  s.intra_node_given = true;
}
void set_intra_node_bandwidth(Scenario& s, std::string_view v) {
  s.intra_node.bandwidth_bytes_per_s = parse_positive_rate(v);
  s.intra_node_given = true;
}
void set_intra_node_latency(Scenario& s, std::string_view v) {
  s.intra_node.latency = parse_nonnegative_duration(v);
  s.intra_node_given = true;
}
void set_inter_node(Scenario& s, std::string_view v) {
  s.inter_node.preset = parse_preset(v);
  s.inter_node_given = true;
}
void set_inter_node_bandwidth(Scenario& s, std::string_view v) {
  s.inter_node.bandwidth_bytes_per_s = parse_positive_rate(v);
  s.inter_node_given = true;
}
void set_inter_node_latency(Scenario& s, std::string_view v) {
  s.inter_node.latency = parse_nonnegative_duration(v);
  s.inter_node_given = true;
}

bool parse_bool(std::string_view v) {
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  throw std::invalid_argument(fmt::format("expected true or false, got '{}'", v));
}

double parse_ratio(std::string_view v, double lo, double hi) {
  double d = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || ptr != v.data() + v.size() || v.empty() || !std::isfinite(d)) {
    throw std::invalid_argument(fmt::format("expected a number, got '{}'", v));
  }
  if (d < lo || d > hi) throw std::invalid_argument(fmt::format("must be between {} and {}, got {}", lo, hi, v));
  return d;
}

// "0,3,2,1": a comma-separated list of integers in [lo, hi].
// One item of a comma-separated list, without the spaces around it.
std::string_view trim_item(std::string_view item) {
  while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
  while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
  return item;
}

std::vector<std::int64_t> parse_int_list(std::string_view v, std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> out;
  for (std::string_view raw : split_list(v)) {
    try {
      out.push_back(parse_int(trim_item(raw), lo, hi));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("item {} of the list: {}", out.size() + 1, e.what()));
    }
  }
  return out;
}

// "0-3:2,0-1": NVLink pairs, each a-b with an optional :links (default 1).
std::vector<NvlinkPair> parse_pairs(std::string_view v) {
  std::vector<NvlinkPair> out;
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (std::string_view raw : split_list(v)) {
    const std::string_view item = trim_item(raw);
    const auto dash = item.find('-');
    const auto colon = item.find(':');
    if (dash == std::string_view::npos) {
      throw std::invalid_argument(fmt::format(
          "item {} of the list: expected GPU pairs as a-b or a-b:links, got '{}'", out.size() + 1,
          bounded(item)));
    }
    NvlinkPair p;
    try {
      p.a = parse_int(item.substr(0, dash), 0, kMaxClusterGpusPerNode - 1);
      p.b = parse_int(
          item.substr(dash + 1, colon == std::string_view::npos ? item.npos : colon - dash - 1), 0,
          kMaxClusterGpusPerNode - 1);
      if (colon != std::string_view::npos) p.links = parse_int(item.substr(colon + 1), 1, 64);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(
          fmt::format("item {} of the list ('{}'): {}", out.size() + 1, bounded(item), e.what()));
    }
    // A pair given twice (in either order) is a slip, not more links: those
    // are a-b:links.
    if (!seen.insert({std::min(p.a, p.b), std::max(p.a, p.b)}).second) {
      throw std::invalid_argument(fmt::format(
          "item {} of the list ('{}'): GPUs {} and {} are paired twice; give the links of a "
          "pair once, as {}-{}:links",
          out.size() + 1, bounded(item), p.a, p.b, p.a, p.b));
    }
    out.push_back(p);
  }
  return out;
}

void set_platform_preset(Scenario& s, std::string_view v) {
  if (v != "generic" && find_platform_preset(v) == nullptr) {
    throw std::invalid_argument(unknown_platform_preset(v));
  }
  s.platform.preset = std::string(v);
}
void set_gpu_arch(Scenario& s, std::string_view v) {
  for (const GpuArch a : {GpuArch::kVolta, GpuArch::kAmpere, GpuArch::kHopper, GpuArch::kBlackwell}) {
    if (v == to_string(a)) {
      s.platform.gpu_arch = a;
      return;
    }
  }
  throw std::invalid_argument(
      fmt::format("unknown GPU generation '{}'; expected volta, ampere, hopper or blackwell", v));
}
void set_cpu_vendor(Scenario& s, std::string_view v) {
  for (const CpuVendor c : {CpuVendor::kIntel, CpuVendor::kAmd, CpuVendor::kArm}) {
    if (v == to_string(c)) {
      s.platform.cpu_vendor = c;
      return;
    }
  }
  throw std::invalid_argument(fmt::format("unknown CPU vendor '{}'; expected intel, amd or arm", v));
}
void set_nvls(Scenario& s, std::string_view v) { s.platform.nvls = parse_bool(v); }
void set_sharp(Scenario& s, std::string_view v) { s.platform.sharp = parse_bool(v); }
void set_pcie_link(Scenario& s, std::string_view v) { s.platform.pcie_link = parse_preset(v); }
void set_pcie_bandwidth(Scenario& s, std::string_view v) { s.platform.pcie_bandwidth = parse_positive_rate(v); }
void set_pcie_latency(Scenario& s, std::string_view v) { s.platform.pcie_latency = parse_nonnegative_duration(v); }
void set_pcie_switches(Scenario& s, std::string_view v) { s.platform.pcie_switches = parse_int(v, 0, 1024); }
void set_sockets(Scenario& s, std::string_view v) { s.platform.sockets = parse_int(v, 1, 64); }
void set_gpu_attach(Scenario& s, std::string_view v) { s.platform.gpu_attach = parse_int_list(v, -1, 1023); }
void set_nvlink(Scenario& s, std::string_view v) {
  if (v == "none") s.platform.nvlink = NvlinkTopology::kNone;
  else if (v == "mesh") s.platform.nvlink = NvlinkTopology::kMesh;
  else if (v == "switch") s.platform.nvlink = NvlinkTopology::kSwitch;
  else throw std::invalid_argument(fmt::format("unknown NVLink topology '{}'; expected none, mesh or switch", v));
}
void set_nvlink_bandwidth(Scenario& s, std::string_view v) { s.platform.nvlink_bandwidth = parse_positive_rate(v); }
void set_nvlink_latency(Scenario& s, std::string_view v) { s.platform.nvlink_latency = parse_nonnegative_duration(v); }
void set_nvlink_pairs(Scenario& s, std::string_view v) { s.platform.nvlink_pairs = parse_pairs(v); }
void set_ring_order(Scenario& s, std::string_view v) { s.platform.ring_order = parse_int_list(v, 0, 1023); }
void set_nic_link(Scenario& s, std::string_view v) { s.platform.nic_link = parse_preset(v); }
void set_nic_count(Scenario& s, std::string_view v) { s.platform.nic_count = parse_int(v, 1, 1024); }
void set_nic_bandwidth(Scenario& s, std::string_view v) { s.platform.nic_bandwidth = parse_positive_rate(v); }
void set_nic_latency(Scenario& s, std::string_view v) { s.platform.nic_latency = parse_nonnegative_duration(v); }
void set_transport(Scenario& s, std::string_view v) {
  if (v == "native") s.platform.transport = Transport::kNative;
  else if (v == "tcp") s.platform.transport = Transport::kTcp;
  else if (v == "rdma") s.platform.transport = Transport::kRdma;
  else throw std::invalid_argument(fmt::format("unknown transport '{}'; expected native, tcp or rdma", v));
}
void set_tcp_preset(Scenario& s, std::string_view v) {
  if (v == "none") {
    s.platform.tcp_preset.reset();
    return;
  }
  if (find_tcp_stream_preset(v) == nullptr) {
    throw std::invalid_argument(fmt::format("unknown TCP stream preset '{}'; expected {} or none", v,
                                            tcp_stream_preset_names()));
  }
  s.platform.tcp_preset = std::string(v);
}
void set_tcp_streams(Scenario& s, std::string_view v) { s.platform.tcp_streams = parse_int(v, 1, 64); }
void set_tcp_stream_rate(Scenario& s, std::string_view v) {
  s.platform.tcp_stream_rate = parse_positive_rate(v);
}
void set_fabric(Scenario& s, std::string_view v) {
  if (v == "switch") s.platform.fabric = FabricKind::kSwitch;
  else if (v == "fat_tree") s.platform.fabric = FabricKind::kFatTree;
  else throw std::invalid_argument(fmt::format("unknown fabric '{}'; expected switch or fat_tree", v));
}
void set_nodes_per_leaf(Scenario& s, std::string_view v) {
  s.platform.nodes_per_leaf = parse_int(v, 1, kMaxClusterNodes);
}
void set_oversubscription(Scenario& s, std::string_view v) { s.platform.oversubscription = parse_ratio(v, 1.0, 1e6); }
void set_rail_optimized(Scenario& s, std::string_view v) { s.platform.rail_optimized = parse_bool(v); }
void set_switch_latency(Scenario& s, std::string_view v) { s.platform.switch_latency = parse_nonnegative_duration(v); }
void set_network_model(Scenario& s, std::string_view v) {
  if (find_network_model(v) == nullptr) {
    throw std::invalid_argument(
        fmt::format("unknown network model '{}'; expected {}", v, network_model_names()));
  }
  s.network_model = std::string(v);
}
void set_algorithm(Scenario& s, std::string_view v) { s.algorithm = parse_algorithm(v); }
void set_library(Scenario& s, std::string_view v) {
  if (v == "nccl") s.library = CollectiveLibrary::kNccl;
  else if (v == "generic") s.library = CollectiveLibrary::kGeneric;
  else throw std::invalid_argument(fmt::format("unknown collective library '{}'; expected nccl or generic", v));
}
void set_nccl_algo(Scenario& s, std::string_view v) {
  nccl::Enabled check;
  nccl::restrict_algorithms(check, v);  // refuses what NCCL would
  s.nccl_algo = std::string(v);
}
void set_nccl_proto(Scenario& s, std::string_view v) {
  nccl::Enabled check;
  nccl::restrict_protocols(check, v);
  s.nccl_proto = std::string(v);
}
void set_channels(Scenario& s, std::string_view v) {
  if (v == "auto") {
    s.channels.reset();
    return;
  }
  s.channels = static_cast<int>(parse_int(v, 1, nccl::kMaxChannels));
}
void set_servers(Scenario& s, std::string_view v) { s.servers = parse_int(v, 1, kMaxClusterNodes); }
void set_servers_colocated(Scenario& s, std::string_view v) { s.servers_colocated = parse_bool(v); }
void set_cpu_servers(Scenario& s, std::string_view v) {
  s.cpu_servers = parse_int(v, 0, kMaxClusterNodes);
}
void set_calibration(Scenario& s, std::string_view v) {
  if (v.empty()) throw std::invalid_argument("expected the path of a network calibration file");
  s.calibration = std::filesystem::path(std::string(v));
}
void set_overlap(Scenario& s, std::string_view v) { s.overlap_policy = parse_overlap(v); }
void set_bucket_cap(Scenario& s, std::string_view v) {
  s.policy_params.bucket_cap_bytes = parse_positive_size(v);
}
void set_first_bucket(Scenario& s, std::string_view v) {
  s.policy_params.first_bucket_bytes = parse_positive_size(v);
}
void set_bucket_view(Scenario& s, std::string_view v) {
  s.policy_params.bucket_view = parse_bool(v);
}
void set_fusion_threshold(Scenario& s, std::string_view v) {
  s.policy_params.fusion_threshold_bytes = parse_positive_size(v);
}
void set_cycle_time(Scenario& s, std::string_view v) {
  s.policy_params.cycle_time = parse_nonnegative_duration(v);
}
void set_merge_startup(Scenario& s, std::string_view v) {
  s.policy_params.merge_startup = parse_nonnegative_duration(v);
}
void set_partition_size(Scenario& s, std::string_view v) {
  s.policy_params.partition_bytes = parse_positive_size(v);
}
void set_credit_size(Scenario& s, std::string_view v) {
  s.policy_params.credit_bytes = parse_nonnegative_size(v);
}
void set_partition_overhead(Scenario& s, std::string_view v) {
  s.policy_params.partition_overhead = parse_nonnegative_duration(v);
}
void set_schedule_overhead(Scenario& s, std::string_view v) {
  s.policy_params.schedule_overhead = parse_nonnegative_duration(v);
}
void set_update(Scenario& s, std::string_view v) {
  if (v == "global")
    s.policy_params.update = UpdateMode::kGlobal;
  else if (v == "per_layer")
    s.policy_params.update = UpdateMode::kPerLayer;
  else throw std::invalid_argument(fmt::format("unknown update mode '{}'; expected global or per_layer", v));
}
void set_prefetch_depth(Scenario& s, std::string_view v) {
  s.policy_params.prefetch_depth = parse_int(v, 0, kMaxPrefetchDepth);
}
void set_batch_per_gpu(Scenario& s, std::string_view v) {
  s.batch_per_gpu = parse_int(v, 1, kMaxBatchPerGpu);
}
void set_io_time(Scenario& s, std::string_view v) { s.io_time = parse_nonnegative_duration(v); }
void set_h2d_time(Scenario& s, std::string_view v) { s.h2d_time = parse_nonnegative_duration(v); }
void set_tracer_overhead(Scenario& s, std::string_view v) {
  if (v == "keep") {
    s.remove_tracer_overhead = false;
  } else if (v == "remove") {
    s.remove_tracer_overhead = true;
  } else {
    throw std::invalid_argument(fmt::format("expected keep or remove, got '{}'", bounded(v)));
  }
}
void set_update_time(Scenario& s, std::string_view v) {
  s.update_time = parse_nonnegative_duration(v);
  s.update_time_given = true;
}

// sharding.* and the step's workload.* keys (simulator/sharding/shard_settings.h)
template <typename T>
T parse_named(std::optional<T> parsed, std::string_view v, const char* what, const char* known) {
  if (!parsed) throw std::invalid_argument(fmt::format("unknown {} '{}'; known: {}", what, bounded(v), known));
  return *parsed;
}
void set_shard_strategy(Scenario& s, std::string_view v) {
  s.sharding.strategy = parse_named(parse_shard_strategy(v), v, "sharding strategy",
                                    "none (ddp, no_shard), zero1, zero2, zero3 (full_shard), "
                                    "hsdp (hybrid_shard)");
}
void set_shard_group(Scenario& s, std::string_view v) {
  s.sharding.group = parse_int(v, 1, kMaxClusterNodes * kMaxClusterGpusPerNode);
}
void set_shard_units(Scenario& s, std::string_view v) {
  if (v == "auto") {
    s.sharding.units = UnitsChoice{};
  } else if (v == "layer") {
    s.sharding.units = UnitsChoice{UnitsChoice::Kind::kLayer, 0};
  } else {
    s.sharding.units = UnitsChoice{UnitsChoice::Kind::kMinParams,
                                   parse_int(v, 1, std::int64_t{1} << 50)};
  }
}
void set_forward_prefetch(Scenario& s, std::string_view v) {
  s.sharding.forward_prefetch = parse_int(v, 0, 64);
}
void set_backward_prefetch(Scenario& s, std::string_view v) {
  s.sharding.backward_prefetch =
      parse_named(parse_backward_prefetch(v), v, "backward prefetch", "pre, post, none");
}
void set_reshard(Scenario& s, std::string_view v) { s.sharding.reshard_after_forward = parse_bool(v); }
void set_max_gathers(Scenario& s, std::string_view v) {
  s.sharding.max_gathers_in_flight = parse_int(v, 0, 64);
}
void set_separate_streams(Scenario& s, std::string_view v) { s.sharding.separate_streams = parse_bool(v); }
void set_gradient_reduction(Scenario& s, std::string_view v) {
  s.sharding.gradient_reduction = parse_named(parse_gradient_reduction(v), v, "gradient reduction",
                                              "reduce_scatter, reduce, all_reduce");
}
void set_precision(Scenario& s, std::string_view v) {
  s.sharding.precision = parse_named(parse_dtype(v), v, "dtype", "fp32, bf16, fp16");
}
void set_reduce_dtype(Scenario& s, std::string_view v) {
  s.sharding.reduce_dtype = parse_named(parse_dtype(v), v, "dtype", "fp32, bf16, fp16");
}
void set_gather_dtype(Scenario& s, std::string_view v) {
  s.sharding.gather_dtype = parse_named(parse_dtype(v), v, "dtype", "fp32, bf16, fp16");
}
void set_optimizer(Scenario& s, std::string_view v) {
  s.sharding.optimizer = parse_named(parse_optimizer(v), v, "optimizer", "sgd, momentum, adam (adamw)");
}
void set_accumulation(Scenario& s, std::string_view v) {
  s.sharding.accumulation = parse_int(v, 1, trace::kMaxMicroBatches);
}
void set_no_sync(Scenario& s, std::string_view v) { s.sharding.no_sync = parse_bool(v); }
void set_checkpointing(Scenario& s, std::string_view v) {
  s.sharding.activation_checkpointing = parse_bool(v);
}
void set_gpu_model(Scenario& s, std::string_view v) {
  if (v != "capture" && !find_gpu_preset(v)) {
    throw std::invalid_argument(fmt::format("unknown GPU '{}' (expected capture or one of: {})",
                                            bounded(v), gpu_preset_names()));
  }
  s.platform.gpu_model = std::string(v);
  s.platform.gpu_model_from_key = true;
}
void set_fp32_matmul(Scenario& s, std::string_view v) {
  if (v == "capture") {
    s.fp32_matmul = Fp32Matmul::kCapture;
  } else if (v == "fp32") {
    s.fp32_matmul = Fp32Matmul::kFp32;
  } else if (v == "tf32") {
    s.fp32_matmul = Fp32Matmul::kTf32;
  } else {
    throw std::invalid_argument(
        fmt::format("expected capture, fp32 or tf32, got '{}'", bounded(v)));
  }
}
void set_gpu_memory(Scenario& s, std::string_view v) { s.platform.gpu_memory = parse_positive_size(v); }

void set_compute_time_factor(Scenario& s, std::string_view v) {
  s.perturb.compute_time_factor = parse_factor(v, 0, 1000, true);
}
void set_layer_factors(Scenario& s, std::string_view v) { s.perturb.layer_factors = parse_layer_factors(v); }
void set_class_factors(Scenario& s, std::string_view v) { s.perturb.class_factors = parse_class_factors(v); }
void set_mixed_precision(Scenario& s, std::string_view v) { s.perturb.mixed_precision = parse_bool(v); }
void set_mixed_precision_speedup(Scenario& s, std::string_view v) {
  s.perturb.mixed_precision_speedup = parse_factor(v, 0, 1000, true);
}
void set_bandwidth_factors(Scenario& s, std::string_view v) {
  s.perturb.bandwidth_factors = parse_link_factors(v, false);
}
void set_latency_factors(Scenario& s, std::string_view v) {
  s.perturb.latency_factors = parse_link_factors(v, true);
}
void set_stragglers(Scenario& s, std::string_view v) { s.perturb.stragglers = parse_stragglers(v); }
void set_imbalance(Scenario& s, std::string_view v) {
  const double x = parse_factor(v, 0, 1, false);
  if (x >= 1) throw std::invalid_argument(fmt::format("must be at least 0 and below 1, got {}", v));
  s.perturb.imbalance = x;
}
void set_jitter(Scenario& s, std::string_view v) { s.perturb.jitter = parse_jitter(v); }
void set_jitter_draw(Scenario& s, std::string_view v) {
  if (v == "task") s.perturb.jitter_per_class = false;
  else if (v == "class") s.perturb.jitter_per_class = true;
  else throw std::invalid_argument(fmt::format("unknown jitter draw '{}'; expected task or class", v));
}
void set_seed(Scenario& s, std::string_view v) {
  s.perturb.seed = static_cast<std::uint64_t>(parse_int(v, 0, std::numeric_limits<std::int64_t>::max()));
}
void set_repeats(Scenario& s, std::string_view v) { s.perturb.repeats = parse_int(v, 1, 10'000); }

void set_interference_model(Scenario& s, std::string_view v) {
  const auto m = parse_interference_model(v);
  if (!m) {
    throw std::invalid_argument(fmt::format(
        "unknown interference model '{}' (expected none, contention or demand)", bounded(v)));
  }
  s.interference.model = *m;
}
void set_interference_resource(Scenario& s, std::string_view v) {
  const auto r = parse_interference_resource(v);
  if (!r) {
    throw std::invalid_argument(
        fmt::format("unknown resource '{}' (expected auto, gpu or host)", bounded(v)));
  }
  s.interference.resource = *r;
}
double interference_factor(std::string_view v) {
  return parse_factor(v, 0, kMaxInterferenceFactor, false);
}
void set_gpu_compute(Scenario& s, std::string_view v) {
  s.interference.gpu_compute = interference_factor(v);
}
void set_gpu_memory_factor(Scenario& s, std::string_view v) {
  s.interference.gpu_memory = interference_factor(v);
}
void set_gpu_comm(Scenario& s, std::string_view v) { s.interference.gpu_comm = interference_factor(v); }
void set_host_compute(Scenario& s, std::string_view v) {
  s.interference.host_compute = interference_factor(v);
}
void set_host_comm(Scenario& s, std::string_view v) {
  s.interference.host_comm = interference_factor(v);
}
void set_host_concurrent(Scenario& s, std::string_view v) {
  s.interference.host_concurrent = interference_factor(v);
}
void set_host_cpu_per_byte(Scenario& s, std::string_view v) {
  s.interference.host_cpu_per_byte = parse_factor(v, 0, kMaxCpuPerByteNs, false);
}

// --- scaling.*: GPU-count scaling and the per-GPU batch (docs/scaling.md) ---
// The checks that need the whole scenario (a global batch in weak mode, one
// below the GPU count, ...) are in simulator/scaling/batch_plan.cc.

// A global batch far above any real one; it keeps batch x time products
// clear of overflow.
constexpr std::int64_t kMaxGlobalBatch = 1LL << 30;

void set_scaling_mode(Scenario& s, std::string_view v) {
  if (v == "weak") s.scaling.mode = ScalingMode::kWeak;
  else if (v == "strong") s.scaling.mode = ScalingMode::kStrong;
  else throw std::invalid_argument(fmt::format("unknown scaling mode '{}'; expected weak or strong",
                                               v));
}
void set_global_batch(Scenario& s, std::string_view v) {
  s.scaling.global_batch = parse_int(v, 1, kMaxGlobalBatch);
}
void set_fixed_fraction(Scenario& s, std::string_view v) {
  const double f = parse_ratio(v, 0, 1);
  if (f >= 1) throw std::invalid_argument(fmt::format("must be at least 0 and below 1, got {}", v));
  s.scaling.fixed_fraction = f;
}
void set_second_profile(Scenario& s, std::string_view v) {
  if (v.empty()) {
    throw std::invalid_argument(
        "expected the path of a layer profile of the same model at another batch");
  }
  s.scaling.second_profile = std::filesystem::path(std::string(v));
}

// The defaults shown here must match the initialisers in scenario.h;
// scenario_test checks that they do.
constexpr std::array kKeys = {
    ScenarioKey{"iterations", "int", "10", "iterations to simulate (1..1000000)", set_iterations},
    ScenarioKey{"cluster.nodes", "int", "1", "number of nodes (1..1048576)", set_nodes},
    ScenarioKey{"cluster.gpus_per_node", "int", "1",
                "GPUs in each node, one worker each (1..1024); default: the platform preset's",
                set_gpus_per_node},
    ScenarioKey{
        "platform.preset", "platform preset", "generic",
        "the machine (see `ssgd presets`); generic: built from network.intra_node/inter_node",
        set_platform_preset},
    ScenarioKey{"platform.gpu.arch", "volta|ampere|hopper|blackwell", "(preset)",
                "GPU generation: the rows of NCCL's tuning tables; generic: from the NVLink preset",
                set_gpu_arch},
    ScenarioKey{
        "platform.gpu.model", "GPU preset|capture", "(preset)",
        "the GPU each worker computes on (see `ssgd presets`): a capture on another GPU has "
        "its kernels scaled by class; capture: replay kernel times as measured; generic: "
        "the capture's",
        set_gpu_model},
    ScenarioKey{
        "platform.gpu.memory", "size", "(preset)",
        "memory of one GPU (> 0), for the fit of the per-GPU memory estimate; generic: unknown",
        set_gpu_memory},
    ScenarioKey{"platform.cpu.vendor", "intel|amd|arm", "(preset)",
                "host CPU vendor, as NCCL's tuning reads it", set_cpu_vendor},
    ScenarioKey{"platform.pcie.link", "link preset", "(preset)",
                "PCIe link of every GPU, NIC and switch", set_pcie_link},
    ScenarioKey{"platform.pcie.bandwidth", "rate", "(preset)", "overrides the PCIe bandwidth (> 0)",
                set_pcie_bandwidth},
    ScenarioKey{"platform.pcie.latency", "duration", "(preset)",
                "overrides the PCIe latency (>= 0)", set_pcie_latency},
    ScenarioKey{"platform.pcie.switches", "int", "(preset)",
                "PCIe switches per node (0: devices on the CPUs' root ports)", set_pcie_switches},
    ScenarioKey{"platform.pcie.sockets", "int", "(preset)", "CPU sockets per node (1..64)",
                set_sockets},
    ScenarioKey{"platform.pcie.gpu_attach", "int list", "(even)",
                "switch (or socket) of each GPU, e.g. 0,0,1,1; -1: on no PCIe path",
                set_gpu_attach},
    ScenarioKey{"platform.nvlink.topology", "none|mesh|switch", "(preset)",
                "NVLink between the GPUs of a node", set_nvlink},
    ScenarioKey{"platform.nvlink.bandwidth", "rate", "(preset)",
                "one NVLink (mesh) or one GPU's NVSwitch port (switch), per direction",
                set_nvlink_bandwidth},
    ScenarioKey{"platform.nvlink.latency", "duration", "(preset)", "NVLink latency (>= 0)",
                set_nvlink_latency},
    ScenarioKey{"platform.nvlink.pairs", "pair list", "(preset)",
                "mesh links as a-b:links, e.g. 0-1:2,0-2", set_nvlink_pairs},
    ScenarioKey{"platform.nvlink.ring_order", "int list", "(0,1,...)",
                "the order a ring visits a node's GPUs", set_ring_order},
    ScenarioKey{"platform.nvlink.nvls", "bool", "(preset)",
                "the NVSwitch reduces and multicasts (NVLink SHARP): NCCL's NVLS algorithms",
                set_nvls},
    ScenarioKey{"platform.nic.link", "link preset", "(preset)",
                "each NIC's line (see `ssgd presets`)", set_nic_link},
    ScenarioKey{"platform.nic.count", "int", "(preset)",
                "NICs per node (1..1024); as many as GPUs is rail-optimised", set_nic_count},
    ScenarioKey{"platform.nic.bandwidth", "rate", "(preset)", "overrides the NIC bandwidth (> 0)",
                set_nic_bandwidth},
    ScenarioKey{"platform.nic.latency", "duration", "(preset)", "overrides the NIC latency (>= 0)",
                set_nic_latency},
    ScenarioKey{"platform.nic.transport", "native|tcp|rdma", "native",
                "native: as the NIC preset (TCP on Ethernet, RDMA on InfiniBand)", set_transport},
    ScenarioKey{"platform.nic.tcp_preset", "name", "none",
                "TCP: streams and rate of a library (nccl_socket, byteps); the two keys below win",
                set_tcp_preset},
    ScenarioKey{"platform.nic.tcp_stream_rate", "rate", "(none)",
                "TCP: the most one connection moves (> 0); unset, the NIC's bandwidth alone",
                set_tcp_stream_rate},
    ScenarioKey{"platform.nic.tcp_streams", "int", "1",
                "TCP: connections a transfer is striped over, 64 KiB chunks at least (1..64)",
                set_tcp_streams},
    ScenarioKey{"platform.fabric.kind", "switch|fat_tree", "(preset)",
                "between nodes: one switch, or a two-level fat tree", set_fabric},
    ScenarioKey{"platform.fabric.nodes_per_leaf", "int", "(preset)",
                "fat tree: nodes under one leaf", set_nodes_per_leaf},
    ScenarioKey{"platform.fabric.oversubscription", "number", "1",
                "fat tree: leaf downlink over uplink capacity (>= 1)", set_oversubscription},
    ScenarioKey{"platform.fabric.rail_optimized", "bool", "(preset)",
                "fat tree: NIC i of each node on leaf i of its group", set_rail_optimized},
    ScenarioKey{"platform.fabric.switch_latency", "duration", "(preset)",
                "per switch crossed (>= 0)", set_switch_latency},
    ScenarioKey{"platform.fabric.sharp", "bool", "false",
                "the switches reduce in the network (SHARP) and NCCL uses it: CollNet algorithms",
                set_sharp},
    ScenarioKey{"network.intra_node", "link preset", "pcie3_x16",
                "link between GPUs of one node (see `ssgd presets`)", set_intra_node},
    ScenarioKey{"network.intra_node_bandwidth", "rate", "(preset)",
                "overrides the intra-node preset's bandwidth (> 0)", set_intra_node_bandwidth},
    ScenarioKey{"network.intra_node_latency", "duration", "(preset)",
                "overrides the intra-node preset's latency (>= 0)", set_intra_node_latency},
    ScenarioKey{"network.inter_node", "link preset", "10gbe",
                "link between nodes (see `ssgd presets`)", set_inter_node},
    ScenarioKey{"network.inter_node_bandwidth", "rate", "(preset)",
                "overrides the inter-node preset's bandwidth (> 0)", set_inter_node_bandwidth},
    ScenarioKey{"network.inter_node_latency", "duration", "(preset)",
                "overrides the inter-node preset's latency (>= 0)", set_inter_node_latency},
    ScenarioKey{"network.model", "analytical|flow", "analytical",
                "analytical: each collective alone on the platform; flow: max-min shared links",
                set_network_model},
    ScenarioKey{"network.library", "nccl|generic", "(see text)",
                "who runs the collectives: NCCL's communicator, or the textbook algorithms "
                "(MPI, gloo, Horovod, BytePS); default nccl, generic for their own algorithms",
                set_library},
    ScenarioKey{"network.algorithm", "algorithm", "auto",
                "collective algorithm: auto; ring, double_binary_tree (tree); nccl: nvls, "
                "nvls_tree, collnet_direct, collnet_chain, pat; generic: halving_doubling, "
                "hierarchical, torus2d, parameter_server, byteps",
                set_algorithm},
    ScenarioKey{"network.nccl_algo", "list", "(NCCL's)",
                "nccl: the algorithms NCCL may choose, in NCCL_ALGO's syntax, e.g. "
                "ring,tree;allgather:pat",
                set_nccl_algo},
    ScenarioKey{"network.nccl_proto", "list", "(NCCL's)",
                "nccl: the protocols NCCL may choose, in NCCL_PROTO's syntax, e.g. ^LL128",
                set_nccl_proto},
    ScenarioKey{"network.channels", "int|auto", "auto",
                "nccl: the communicator's channels (NCCL_MIN/MAX_NCHANNELS, 1..64)", set_channels},
    ScenarioKey{"network.servers", "int", "1", "parameter servers (parameter_server)", set_servers},
    ScenarioKey{"network.servers_colocated", "bool", "true",
                "parameter servers on the workers' nodes, else on nodes of their own",
                set_servers_colocated},
    ScenarioKey{"network.cpu_servers", "int", "0",
                "byteps: CPU machines running a summation server, beside the one on each GPU "
                "machine",
                set_cpu_servers},
    ScenarioKey{"network.calibration", "path", "(none)",
                "network file from `ssgd calibrate`; its bands replace the fitted level's costs",
                set_calibration},
    ScenarioKey{
        "policy.overlap", "policy", "wfbp",
        "bsp, wfbp, mgwfbp, ddp, horovod, single or priority (`ssgd presets` describes each)",
        set_overlap},
    ScenarioKey{"policy.bucket_cap", "size", "25MiB", "ddp: bucket size cap (> 0)", set_bucket_cap},
    ScenarioKey{"policy.first_bucket", "size", "1MiB", "ddp: cap of the first bucket (> 0)",
                set_first_bucket},
    ScenarioKey{"policy.bucket_view", "bool", "false",
                "ddp: gradients are views into the buckets (gradient_as_bucket_view), which then "
                "hold no copy of them in memory",
                set_bucket_view},
    ScenarioKey{"policy.fusion_threshold", "size", "128MiB", "horovod: fusion buffer size (> 0)",
                set_fusion_threshold},
    ScenarioKey{"policy.cycle_time", "duration", "1ms", "horovod: cycle time (>= 0)",
                set_cycle_time},
    ScenarioKey{"policy.merge_startup", "duration", "(model)",
                "mgwfbp: start-up cost a that a merge saves; default from the network model",
                set_merge_startup},
    ScenarioKey{"policy.partition_size", "size", "4MB",
                "priority: gradients are cut into partitions of at most this (> 0)",
                set_partition_size},
    ScenarioKey{"policy.credit_size", "size", "16MB",
                "priority: bytes the network may start together (>= 0; 0: one partition at a time)",
                set_credit_size},
    ScenarioKey{"policy.partition_overhead", "duration", "85us",
                "priority: host time per partition, in the backward that releases it (>= 0)",
                set_partition_overhead},
    ScenarioKey{"policy.schedule_overhead", "duration", "0ns",
                "priority: network time per scheduling round (>= 0)", set_schedule_overhead},
    ScenarioKey{"policy.update", "update", "(policy)",
                "global or per_layer optimizer step; default per_layer under priority, else global",
                set_update},
    ScenarioKey{"policy.prefetch_depth", "int", "0",
                "batches the data loader reads ahead (0..1024); 0: I/O waits for the previous step",
                set_prefetch_depth},
    ScenarioKey{"workload.batch_per_gpu", "int", "(input)",
                "samples per GPU per iteration (1..1048576); default: as captured",
                set_batch_per_gpu},
    ScenarioKey{"workload.io_time", "duration", "0ns", "time to read one batch (>= 0)",
                set_io_time},
    ScenarioKey{"workload.h2d_time", "duration", "0ns", "time to copy one batch to the GPU (>= 0)",
                set_h2d_time},
    ScenarioKey{"workload.update_time", "duration", "(input)",
                "time of one optimizer step (>= 0); default: the input's measured update, else 0",
                set_update_time},
    ScenarioKey{"workload.tracer_overhead", "keep|remove", "keep",
                "a capture with a tracing window: remove takes the window's own cost (traced "
                "against untraced steps) out of the host's time",
                set_tracer_overhead},
    ScenarioKey{"workload.fp32_matmul", "capture|fp32|tf32", "capture",
                "the unit FP32 matrix and convolution kernels run on: capture: as each ran; "
                "tf32: TF32 tensor cores (PyTorch's allow_tf32); fp32: FP32 cores (TF32 off); "
                "scaled by the peak rates, on the scenario's GPU (platform.gpu.model, or the "
                "preset's) or else the capture's",
                set_fp32_matmul},
    ScenarioKey{"workload.precision", "fp32|bf16|fp16", "(input)",
                "dtype of the parameters and gradients the step computes with; default: the "
                "input's grad_dtype, else fp32; not fp32: fp32 master weights in the optimizer",
                set_precision},
    ScenarioKey{"workload.reduce_dtype", "fp32|bf16|fp16", "(precision)",
                "dtype gradients are communicated in (every strategy, none included)",
                set_reduce_dtype},
    ScenarioKey{"workload.gather_dtype", "fp32|bf16|fp16", "(precision)",
                "dtype parameters are all-gathered in (zero1..hsdp)", set_gather_dtype},
    ScenarioKey{"workload.optimizer", "sgd|momentum|adam", "(adam, assumed)",
                "the optimizer's state per parameter, for the memory estimate; unset, Adam is "
                "assumed and the output says so",
                set_optimizer},
    ScenarioKey{"workload.accumulation", "int", "1",
                "micro-batches per step (1..1024), each of workload.batch_per_gpu samples",
                set_accumulation},
    ScenarioKey{"workload.no_sync", "bool", "true",
                "with accumulation: gradients communicated on the last micro-batch only",
                set_no_sync},
    ScenarioKey{"workload.activation_checkpointing", "bool", "false",
                "recompute each layer's forward in its backward; keeps only units' inputs",
                set_checkpointing},
    ScenarioKey{"sharding.strategy", "strategy", "none",
                "none, zero1, zero2, zero3 (full_shard), hsdp (hybrid_shard); default: the input's",
                set_shard_strategy},
    ScenarioKey{"sharding.group", "int", "(see text)",
                "hsdp: ranks a shard spans, whole nodes; default: the input's, else gpus_per_node",
                set_shard_group},
    ScenarioKey{"sharding.units", "auto|layer|int", "auto",
                "zero3, hsdp: units gathered together; int: grouped until at least that many "
                "parameters; auto: the input's unit column, else layer",
                set_shard_units},
    ScenarioKey{"sharding.forward_prefetch", "int", "1",
                "units ahead whose all-gather may start during a forward (0..64)",
                set_forward_prefetch},
    ScenarioKey{"sharding.backward_prefetch", "pre|post|none", "pre",
                "when the next unit's all-gather is issued in backward", set_backward_prefetch},
    ScenarioKey{"sharding.reshard_after_forward", "bool", "true",
                "free gathered parameters after each forward (false: FSDP SHARD_GRAD_OP)",
                set_reshard},
    ScenarioKey{"sharding.max_gathers_in_flight", "int", "2",
                "units gathered at once in forward (0: no limit; FSDP's limit_all_gathers)",
                set_max_gathers},
    ScenarioKey{"sharding.separate_streams", "bool", "false",
                "all-gathers and gradient collectives on streams of their own, overlapping",
                set_separate_streams},
    ScenarioKey{
        "sharding.gradient_reduction", "reduce_scatter|reduce|all_reduce", "reduce_scatter",
        "how each gradient group reaches its shards' owners: one reduce-scatter; one reduce "
        "per owner (DeepSpeed ZeRO-1/2); one all-reduce",
        set_gradient_reduction},
    ScenarioKey{"perturb.compute_time_factor", "number", "1",
                "multiplies every forward and backward time; 2: twice as slow (0 < x <= 1000)",
                set_compute_time_factor},
    ScenarioKey{"perturb.layer_factors", "factor list", "none",
                "pattern:factor,... per layer; pattern: name glob (* ?) or layer number",
                set_layer_factors},
    ScenarioKey{
        "perturb.class_factors", "factor list", "none",
        "class:factor,...; classes gemm, conv, elementwise, norm, reduce, copy, nccl, other",
        set_class_factors},
    ScenarioKey{"perturb.mixed_precision", "bool", "false",
                "compute times / mixed_precision_speedup, gradient bytes halved",
                set_mixed_precision},
    ScenarioKey{"perturb.mixed_precision_speedup", "number", "2",
                "compute speedup of mixed precision (an assumption; 0 < x <= 1000)",
                set_mixed_precision_speedup},
    ScenarioKey{
        "perturb.bandwidth_factors", "factor list", "none",
        "kind:factor,... multiplies link bandwidth; kinds pcie, socket, nvlink, nic, fabric",
        set_bandwidth_factors},
    ScenarioKey{"perturb.latency_factors", "factor list", "none",
                "kind:factor,... multiplies link latency (0 <= x <= 1000)", set_latency_factors},
    ScenarioKey{"perturb.stragglers", "straggler list", "none",
                "rank:percent,...; 3:20 = rank 3's compute 20% slower (0..10000%)", set_stragglers},
    ScenarioKey{"perturb.imbalance", "number", "0",
                "rank r's compute x (1 + x (2r/(P-1) - 1)), from 1-x to 1+x (0 <= x < 1)",
                set_imbalance},
    ScenarioKey{"perturb.jitter", "distribution", "none",
                "per-task factor: none, normal:<cv>, uniform:<half-width>, lognormal:<sigma>",
                set_jitter},
    ScenarioKey{
        "perturb.jitter_draw", "task|class", "task",
        "task: a draw per task of every rank; class: shared by ranks of equal compute factor",
        set_jitter_draw},
    ScenarioKey{"perturb.seed", "int", "1", "jitter seed; repeat k uses seed + k (>= 0)", set_seed},
    ScenarioKey{"perturb.repeats", "int", "1",
                "runs with seeds seed, seed+1, ...: mean and 95% CI (1..10000)", set_repeats},
    // interference.* (simulator/perturb/interference.h)
    ScenarioKey{"interference.model", "none|contention|demand", "none",
                "contention: compute slowed while a collective runs beside it, and the collective "
                "while compute runs; demand: a host library's collectives take CPU by their bytes "
                "from the rank's one CPU budget",
                set_interference_model},
    ScenarioKey{
        "interference.resource", "auto|gpu|host", "auto",
        "which factors apply: gpu (NCCL's kernels), host (gloo's threads); auto: from the input",
        set_interference_resource},
    ScenarioKey{"interference.gpu.compute", "number", "0",
                "SM-bound kernels this much slower while a collective runs (0..10; 0.2 = 20%)",
                set_gpu_compute},
    ScenarioKey{"interference.gpu.memory", "number", "(gpu.compute)",
                "memory-bound kernels this much slower while a collective runs (0..10)",
                set_gpu_memory_factor},
    ScenarioKey{"interference.gpu.comm", "number", "0",
                "a collective this much slower while its ranks compute (0..10)", set_gpu_comm},
    ScenarioKey{"interference.host.compute", "number", "0",
                "the rank's operators this much slower while a host collective runs (0..10)",
                set_host_compute},
    ScenarioKey{"interference.host.comm", "number", "0",
                "a host collective this much slower while its ranks compute (0..10)",
                set_host_comm},
    ScenarioKey{
        "interference.host.concurrent", "number", "0",
        "a host collective this much slower when it waited behind another of its group (0..10)",
        set_host_concurrent},
    ScenarioKey{"interference.host.cpu_per_byte", "ns", "(none)",
                "model demand: the rank's CPU time a byte a host collective moves through it "
                "(sent or received) takes, ns (0..100)",
                set_host_cpu_per_byte},
    // scaling.*
    ScenarioKey{"scaling.mode", "weak|strong", "weak",
                "weak: each GPU keeps the input's batch; strong: one global batch over the GPUs",
                set_scaling_mode},
    ScenarioKey{"scaling.global_batch", "int", "(see text)",
                "strong: samples per iteration, all GPUs (1..1073741824); default: batch x GPUs",
                set_global_batch},
    ScenarioKey{"scaling.fixed_fraction", "number", "0",
                "strong: part of each layer's time that does not grow with the batch (0 <= f < 1)",
                set_fixed_fraction},
    ScenarioKey{"scaling.second_profile", "path", "(none)",
                "strong: the same model at another batch; fits t(b) = t0 + k b per layer",
                set_second_profile},
};

constexpr std::array<std::string_view, 17> kSections = {
    "cluster", "platform", "platform.gpu", "platform.cpu", "platform.pcie", "platform.nvlink",
    "platform.nic", "platform.fabric", "network", "policy", "workload", "sharding", "perturb",
    "interference", "interference.gpu", "interference.host", "scaling"};

// Job keys: the kind checks (a traffic key on a training job) come later,
// once the whole entry is read.
void set_job_name(JobSpec& j, std::string_view v) {
  if (v.empty()) throw std::invalid_argument("expected a name");
  if (v == "main") {
    throw std::invalid_argument("'main' is the scenario's own training job; choose another name");
  }
  j.name = std::string(v);
}
void set_job_kind(JobSpec& j, std::string_view v) {
  if (v == "training") {
    j.kind = JobKind::kTraining;
  } else if (v == "traffic") {
    j.kind = JobKind::kTraffic;
  } else {
    throw std::invalid_argument(fmt::format("unknown job kind '{}'; expected training or traffic", v));
  }
}
void set_job_nodes(JobSpec& j, std::string_view v) { j.nodes = parse_int(v, 1, kMaxClusterNodes); }
void set_job_first_node(JobSpec& j, std::string_view v) {
  j.first_node = parse_int(v, 0, kMaxClusterNodes - 1);
}
void set_job_profile(JobSpec& j, std::string_view v) {
  if (v.empty()) throw std::invalid_argument("expected the path of a trace, layer-profile CSV or B-Caffe log");
  j.profile = std::filesystem::path(std::string(v));
}
void set_job_policy(JobSpec& j, std::string_view v) { j.overlap = parse_overlap(v); }
void set_job_iterations(JobSpec& j, std::string_view v) {
  j.iterations = parse_int(v, 1, kMaxIterations);
}
void set_job_op(JobSpec& j, std::string_view v) {
  const auto op = parse_collective_op(v);
  if (!op) {
    throw std::invalid_argument(
        fmt::format("unknown collective '{}'; known: {}", v, collective_op_names()));
  }
  j.op = *op;
}
void set_job_bytes(JobSpec& j, std::string_view v) { j.bytes = parse_positive_size(v); }
void set_job_period(JobSpec& j, std::string_view v) { j.period = parse_nonnegative_duration(v); }
void set_job_start(JobSpec& j, std::string_view v) { j.start = parse_nonnegative_duration(v); }
void set_job_algorithm(JobSpec& j, std::string_view v) { j.algorithm = parse_algorithm(v); }

const std::array kJobKeys = {
    JobKey{"name", "string", "job<n>", "shown in the report; unique, not 'main'", set_job_name},
    JobKey{"kind", "training|traffic", "(required)",
           "training: another S-SGD job; traffic: a collective repeated in the background",
           set_job_kind},
    JobKey{"nodes", "int", "(required)", "nodes the job runs on, all their GPUs (>= 1)",
           set_job_nodes},
    JobKey{"first_node", "int", "(see text)",
           "its first node; training default: after the previous training job; traffic: 0",
           set_job_first_node},
    JobKey{"profile", "path", "(required)",
           "training: its trace, layer-profile CSV or B-Caffe log, relative to the scenario file",
           set_job_profile},
    JobKey{"policy", "policy", "(policy.overlap)", "training: its overlap policy (as policy.overlap)",
           set_job_policy},
    JobKey{"iterations", "int", "(iterations)", "training: its iterations (1..1000000)",
           set_job_iterations},
    JobKey{"op", "collective", "all_reduce",
           "traffic: all_reduce, reduce_scatter, all_gather, broadcast or all_to_all", set_job_op},
    JobKey{"bytes", "size", "(required)", "traffic: message size of each collective (> 0)",
           set_job_bytes},
    JobKey{"period", "duration", "0ns",
           "traffic: start-to-start interval; 0 or shorter than a collective: back to back",
           set_job_period},
    JobKey{"start", "duration", "0ns", "traffic: when the first collective starts",
           set_job_start},
    JobKey{"algorithm", "algorithm", "auto", "traffic: collective algorithm, as network.algorithm",
           set_job_algorithm},
};

}  // namespace

std::span<const JobKey> job_keys() { return kJobKeys; }

const JobKey* find_job_key(std::string_view name) {
  for (const auto& k : kJobKeys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::span<const ScenarioKey> scenario_keys() { return kKeys; }

const ScenarioKey* find_scenario_key(std::string_view path) {
  for (const auto& k : kKeys) {
    if (k.path == path) return &k;
  }
  return nullptr;
}

std::span<const std::string_view> scenario_sections() { return kSections; }

bool is_scenario_section(std::string_view path) {
  for (std::string_view s : kSections) {
    if (s == path) return true;
  }
  return false;
}

}  // namespace ssgd::sim
