#pragma once
// Writes small Kineto JSON files of sharded training (FSDP1, FSDP2) for the
// tests of the importer and of walk/trace_sharding.h, over
// tests/support/kineto_json_writer.h, in the shape PyTorch records them
// (docs/kineto.md, "Sharded runs"): FSDP's record_function ranges on the
// main thread, c10d's record_param_comms op around each NCCL launch, and
// the NCCL kernel with the metadata Kineto copies onto it.
//
// The model: three FSDP units in forward order, the root (its layers embed
// and head, before and after the others: FSDP2's root holds them), then
// layers.0 (layer l0) and layers.1 (layer l1); `steps` profiler steps at
// S = 1000 + 1'000'000 * step ns:
//   forward   root: pre_forward [S+1000, +2000), gather launched S+1500;
//             embed [S+3000, +10000); then each unit u = 0, 1 at
//             B = S + 20000 + 30000 u: pre_forward [B, +3000) holding the
//             gather (FSDP2: inside FSDP::all_gather), layer l<u>
//             [B+4000, +10000), post_forward [B+15000, +1000); head
//             [S+90000, +10000); root post_forward [S+110000, +1000)
//   backward  root pre_backward [S+200000, +1000); head [S+202000, +10000);
//             each unit u = 1, 0 at B = S + 220000 + 40000 (1 - u):
//             pre_backward [B, +3000) (holding a gather when resharding),
//             l<u> [B+4000, +10000), post_backward (FSDP2:
//             post_backward_reduce) [B+16000, +3000) holding the
//             reduce-scatter (HSDP: then an all-reduce); embed
//             [S+310000, +10000); the root's reduce-scatter [S+330000, +3000)
//   step      an optimizer kernel at S+500000
// Every layer's kernel takes 3000 ns forward, 6000 ns backward (head 0
// backward: a row without gradient work). Unit sizes in elements (the
// unsharded, padded buffer): root 1000, layers.0 4000, layers.1 8000.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/support/kineto_json_writer.h"

namespace ssgd::testing {

struct FsdpTraceOptions {
  bool fsdp1 = false;
  int world_size = 8;
  int rank = 0;
  int steps = 2;
  bool reshard_after_forward = true;  // false: zero2 (no gather before the backward)
  bool hsdp = false;                  // shard group 4, all-reduce over 2 after each reduce-scatter
                                      // (or, with reduce_per_owner, after the reduces)
  bool collectives = true;            // false: world size 1 (FSDP2 issues none)
  bool layer_marks = true;            // forward/<l>, backward/<l> annotations
  std::string grad_dtype = "BFloat16";
  std::string gather_dtype = "BFloat16";
  bool gather_sizes = true;  // false: the all-gathers carry no nelems
  // Gradients reduced to their owners, one reduce of elems / G per owner
  // (DeepSpeed ZeRO-1/2), instead of a reduce-scatter.
  bool reduce_per_owner = false;
};

class FsdpKinetoWriter {
 public:
  explicit FsdpKinetoWriter(FsdpTraceOptions o) : o_(o), w_(kineto_options(o)) {}

  void write(const std::filesystem::path& path) {
    for (int step = 0; step < o_.steps; ++step) this->step(step);
    w_.write(path);
  }

  static constexpr std::int64_t kRootElems = 1000;
  static constexpr std::int64_t kUnitElems[2] = {4000, 8000};

 private:
  static KinetoJsonOptions kineto_options(const FsdpTraceOptions& o) {
    KinetoJsonOptions k;
    k.rank = o.rank;
    k.world_size = o.collectives ? o.world_size : 1;
    return k;
  }
  [[nodiscard]] int shard_group() const { return o_.hsdp ? 4 : o_.world_size; }

  std::string name(const std::string& fsdp2, const std::string& fsdp1,
                   const std::string& unit) const {
    if (o_.fsdp1) return "FullyShardedDataParallel." + fsdp1;
    return unit.empty() ? "FSDP::" + fsdp2 : "FSDP::" + fsdp2 + " (" + unit + ")";
  }
  void range(const std::string& n, std::int64_t start, std::int64_t dur) {
    w_.complete("user_annotation", n, start, dur, "4242", "4243",
                "\"External id\": " + std::to_string(ext_++));
  }
  void launch(std::int64_t ts) {
    w_.complete("cuda_runtime", "cudaLaunchKernel", ts, 100, "4242", "4243",
                "\"cbid\": 211, \"correlation\": " + std::to_string(corr_));
  }
  void kernel(const std::string& n, std::int64_t ts, std::int64_t dur, int stream,
              const std::string& extra) {
    std::string args = "\"device\": 0, \"stream\": " + std::to_string(stream) +
                       ", \"correlation\": " + std::to_string(corr_++);
    if (!extra.empty()) args += ", " + extra;
    w_.complete("kernel", n, ts, dur, "0", std::to_string(stream), args);
  }
  void layer(const std::string& kind, const std::string& l, std::int64_t start,
             std::int64_t kernel_ns) {
    if (o_.layer_marks) range(kind + "/" + l, start, 10000);
    launch(start + 100);
    kernel(l + "_" + kind, start + 1000, kernel_ns, 7, "");
  }
  // A collective launched at `at`: c10d's op, then the NCCL kernel.
  void collective(const std::string& c10d, const std::string& nccl, std::int64_t in,
                  std::int64_t out, const std::string& dtype, int group, std::int64_t at,
                  bool sized = true) {
    const std::string pg = group == o_.world_size ? "0" : group == shard_group() ? "1" : "2";
    std::string meta = "\"Collective name\": \"" + c10d + "\", \"dtype\": \"" + dtype + "\"";
    if (sized) {
      meta += ", \"In msg nelems\": " + std::to_string(in) +
              ", \"Out msg nelems\": " + std::to_string(out);
    }
    meta += ", \"Group size\": " + std::to_string(group) + ", \"Process Group Name\": \"" + pg +
            "\", \"Process Group Ranks\": \"[...]\", \"Seq\": " + std::to_string(seq_[pg]++);
    const std::int64_t e = ext_++;
    w_.complete("cpu_op", "record_param_comms", at - 100, 400, "4242", "4243",
                "\"External id\": " + std::to_string(e) + ", " + meta);
    launch(at);
    kernel(nccl, at + 500, 2000, 20, "\"External id\": " + std::to_string(e) + ", " + meta);
  }
  // A unit's gather of `elems` (the whole buffer) at `at`.
  void gather(std::int64_t elems, std::int64_t at, const std::string& unit) {
    if (!o_.collectives) {  // world size 1: FSDP2 copies the shard in, no collective
      launch(at);
      kernel("Memcpy-like copy_in", at + 500, 500, 7, "");
      return;
    }
    if (!o_.fsdp1) range(name("all_gather", "", unit), at - 300, 1000);
    const int g = shard_group();
    collective("allgather_into_tensor_coalesced",
               "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", elems / g, elems,
               o_.gather_dtype, g, at, o_.gather_sizes);
  }
  void reduce(std::int64_t elems, std::int64_t at) {
    if (!o_.collectives) return;
    const int g = shard_group();
    const std::string type = o_.grad_dtype == "Float" ? "f32" : "bf16";
    if (o_.reduce_per_owner) {
      for (int owner = 0; owner < g; ++owner) {
        collective("reduce", "ncclDevKernel_Reduce_Sum_" + type + "_RING_LL", elems / g, elems / g,
                   o_.grad_dtype, g, at + 100 * owner);
      }
    } else {
      collective(
          "reduce_scatter_tensor_coalesced",
          "ncclDevKernel_ReduceScatter_Sum_" + type + "_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
          elems, elems / g, o_.grad_dtype, g, at);
    }
    if (o_.hsdp) {
      const int replicas = o_.world_size / g;
      collective("allreduce", "ncclDevKernel_AllReduce_Sum_" + type + "_RING_LL", elems / g,
                 elems / g, o_.grad_dtype, replicas, at + 1000);
    }
  }

  void step(int step) {
    const std::int64_t S = 1000 + 1'000'000 * static_cast<std::int64_t>(step);
    range("ProfilerStep#" + std::to_string(step), S, 900000);
    const std::vector<std::string> units = {"layers.0", "layers.1"};
    // Forward.
    range(name("pre_forward", "_pre_forward", ""), S + 1000, 2000);
    gather(kRootElems, S + 1500, "");
    layer("forward", "embed", S + 3000, 3000);
    for (int u = 0; u < 2; ++u) {
      const std::int64_t B = S + 20000 + 30000 * u;
      range(name("pre_forward", "_pre_forward", units[u]), B, 3000);
      gather(kUnitElems[u], B + 1500, units[u]);
      layer("forward", "l" + std::to_string(u), B + 4000, 3000);
      range(name("post_forward", "_post_forward", units[u]), B + 15000, 1000);
    }
    layer("forward", "head", S + 90000, 3000);
    range(name("post_forward", "_post_forward", ""), S + 110000, 1000);
    // Backward.
    range(name("pre_backward", "_pre_backward_hook", ""), S + 200000, 1000);
    layer("backward", "head", S + 202000, 0);
    for (int u = 1; u >= 0; --u) {
      const std::int64_t B = S + 220000 + 40000 * (1 - u);
      range(name("pre_backward", "_pre_backward_hook", units[u]), B, 3000);
      if (o_.reshard_after_forward) gather(kUnitElems[u], B + 1500, units[u]);
      layer("backward", "l" + std::to_string(u), B + 4000, 6000);
      range(name("post_backward_reduce", "_post_backward_hook", units[u]), B + 16000, 3000);
      reduce(kUnitElems[u], B + 17000);
    }
    layer("backward", "embed", S + 310000, 6000);
    range(name("post_backward_reduce", "_post_backward_hook", ""), S + 330000, 3000);
    reduce(kRootElems, S + 331000);
    launch(S + 500000);
    kernel("multi_tensor_apply_kernel", S + 500500, 1000, 7, "");
  }

  FsdpTraceOptions o_;
  KinetoJsonWriter w_;
  std::int64_t ext_ = 100;
  std::int64_t corr_ = 1;
  std::map<std::string, std::int64_t> seq_;
};

}  // namespace ssgd::testing
