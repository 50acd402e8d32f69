#pragma once
// Writes small Kineto (PyTorch profiler) Chrome-trace JSON files for the
// importer's tests, by hand, in the shape Kineto's ChromeTraceLogger writes
// them (docs/kineto.md): top-level keys, `ts`/`dur` in microseconds with
// three decimals, relative to baseTimeNanoseconds, the args Kineto puts on
// kernels, copies, runtime calls and c10d's record_param_comms op.
//
// two_step_training() is the model every test starts from: one rank of a
// two-rank job, two profiler steps (ProfilerStep#5 and #6, 100 us apart) of
// a two-layer model l1, l2 marked with user annotations forward/<l> and
// backward/<l>. In each step, at S = 1000 + 100000 * step_index ns:
//   [S, S+90000)        ProfilerStep#N
//   S+200   cudaMemcpyAsync -> Memcpy HtoD 4096 bytes  [S+300, S+800)
//   S+500   cudaMemsetAsync -> Memset 256 bytes         [S+900, S+950)
//   forward/l1  [S+1000, S+11000)   l1_fwd  3000 ns  (launched S+1100)
//   forward/l2  [S+11000, S+21000)  l2_fwd  4000 ns  (launched S+11100)
//   backward/l2 [S+21000, S+31000)  l2_bwd  6000 ns  (launched S+21100),
//       all-reduce of 1024 float32 (4096 bytes), 7000 ns, launched S+29100
//   backward/l1 [S+31000, S+41000)  l1_bwd  5000 ns  (launched S+31100),
//       all-reduce of 512 float32 (2048 bytes), 3000 ns, launched S+40100
//   S+50000 multi_tensor_apply_kernel (optimizer), outside every layer
// plus events the importer skips: aten:: cpu ops, ac2g flows, process
// metadata, the profiler's Trace span and instant events.
//
// plain_training() is what torch.profiler writes with its default settings
// (no annotations; nn.Module ranges only with module_ranges): two steps of
// x * 2 -> Linear -> ReLU -> Linear -> mse_loss, the forward aten ops with
// their autograd sequence numbers on the main thread (tid 4243), the
// backward nodes as `autograd::engine::evaluate_function: <Node>` ops with
// the same numbers on the autograd thread (tid 4250), DDP's all-reduces
// from the AccumulateGrad ops, then the optimizer step. At
// S = 1000 + 200000 * step_index ns, sequence numbers from s = 100 + 6 * step_index:
//   op (seq)                      kernel ns fwd   backward node (seq): kernel ns
//   aten::mul (s, makes no node)  mul_fwd 500     -
//   aten::linear (s; t s, addmm s+1)  3000        TBackward0 (s): -, AddmmBackward0 (s+1): 5000
//   aten::relu (s+2)              1000            ReluBackward0 (s+2): 1500
//   aten::linear (s+3; t s+3, addmm s+4)  4000    TBackward0, AddmmBackward0 (s+4): 6000
//   aten::mse_loss (s+5)          700             MseLossBackward0 (s+5): 800
// With module_ranges, nn.Module: Net_0 holds the leaf modules Linear_0
// (the first linear), ReLU_0 and Linear_1 and the aten::mul; mse_loss is
// outside every module. The all-reduces (1024 floats, 7000 ns, launched at
// S+41000 after Linear_1's backward; 512 floats, 3000 ns, at S+55000 after
// Linear_0's) run inside AccumulateGrad ops, which have no sequence number.
// With stray_backward, each step also has a CloneBackward0 with sequence
// number 7, which no forward op had.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace ssgd::testing {

struct KinetoJsonOptions {
  int rank = 1;
  int world_size = 2;
  std::int64_t base_ns = 1'700'000'000'000'000'000;
  // Where distributedInfo and baseTimeNanoseconds go: before traceEvents
  // (recent Kineto) or after it (on-demand traces, older Kineto).
  bool metadata_after_events = false;
  bool with_distributed_info = true;
  // NCCL metadata copied onto the NCCL kernels (Kineto 2.x); without it,
  // only c10d's record_param_comms ops carry it (older Kineto).
  bool nccl_meta_on_kernels = true;
  // Leave out optional fields: kernel grid/block/stream/device args,
  // correlation ids of memset, Seq, Process Group Name, deviceProperties.
  bool drop_optional = false;
  // nn.Module python_function ranges around each layer's forward.
  bool module_ranges = false;
  // Shuffle the events (fixed seed) instead of Kineto's usual order.
  bool shuffle = false;
  // plain_training(): a backward op whose sequence number no forward op had.
  bool stray_backward = false;
};

class KinetoJsonWriter {
 public:
  explicit KinetoJsonWriter(KinetoJsonOptions o = {}) : o_(o) {}

  // Microseconds with three decimals, as Kineto prints ns / 1000 . ns % 1000.
  static std::string us(std::int64_t ns) {
    std::string frac = std::to_string(ns % 1000);
    return std::to_string(ns / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
  }

  void complete(const std::string& cat, const std::string& name, std::int64_t ts, std::int64_t dur,
                const std::string& pid, const std::string& tid, const std::string& args) {
    std::string e = "{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
                    "\", \"pid\": " + pid + ", \"tid\": " + tid + ", \"ts\": " + us(ts) +
                    ", \"dur\": " + us(dur);
    if (!args.empty()) e += ", \"args\": {" + args + "}";
    events_.push_back(e + "}");
  }
  void raw(const std::string& event_json) { events_.push_back(event_json); }

  void two_step_training() {
    std::int64_t corr = 100;
    std::int64_t ext = 5000;
    const std::string cpu_pid = "4242";
    const std::string cpu_tid = "4243";
    raw(R"({"name": "process_name", "ph": "M", "ts": 0.000, "pid": 0, "tid": 0, "args": {"name": "python 4242"}})");
    for (int step = 0; step < 2; ++step) {
      const std::int64_t S = 1000 + 100000 * step;
      complete("user_annotation", "ProfilerStep#" + std::to_string(5 + step), S, 90000, cpu_pid,
               cpu_tid, "\"External id\": " + std::to_string(ext++));
      launch("cudaMemcpyAsync", S + 200, corr);
      complete("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", S + 300, 500, "0", "7",
               "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": " +
                   std::to_string(corr++) + ", \"bytes\": 4096, \"memory bandwidth (GB/s)\": 8.192");
      launch("cudaMemsetAsync", S + 500, corr);
      complete("gpu_memset", "Memset (Device)", S + 900, 50, "0", "7",
               o_.drop_optional ? std::string("\"bytes\": 256")
                                : "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": " +
                                      std::to_string(corr) + ", \"bytes\": 256");
      ++corr;
      layer_forward("l1", "Linear_0", S + 1000, 3000, corr, ext);
      layer_forward("l2", "Linear_1", S + 11000, 4000, corr, ext);
      layer_backward("l2", S + 21000, 6000, 1024, 7000, step, corr, ext);
      layer_backward("l1", S + 31000, 5000, 512, 3000, step, corr, ext);
      launch("cudaLaunchKernel", S + 50000, corr);
      kernel("multi_tensor_apply_kernel", S + 50500, 1000, 7, corr++, "");
    }
    raw(R"j({"ph": "X", "cat": "Trace", "ts": 0.000, "dur": 300000.000, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}})j");
    raw(R"({"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 0.000})");
  }

  void plain_training() {
    std::int64_t corr = 100;
    const std::string main = "4243";
    const std::string bwd = "4250";
    raw(R"({"name": "process_name", "ph": "M", "ts": 0.000, "pid": 0, "tid": 0, "args": {"name": "python 4242"}})");
    for (int step = 0; step < 2; ++step) {
      const std::int64_t S = 1000 + 200000 * step;
      const std::int64_t s = 100 + 6 * step;
      complete("user_annotation", "ProfilerStep#" + std::to_string(5 + step), S, 150000, "4242",
               main, ext_arg());
      if (o_.module_ranges) module("Net_0", S + 900, S + 22000);
      forward_op("aten::mul", s, S + 1000, 1000, corr, "mul_fwd", 500);
      if (o_.module_ranges) module("Linear_0", S + 3000, S + 9000);
      forward_linear(s, S + 3100, corr, "gemm_fwd_0", 3000);
      if (o_.module_ranges) module("ReLU_0", S + 10000, S + 14000);
      forward_op("aten::relu", s + 2, S + 10100, 2900, corr, "relu_fwd", 1000);
      if (o_.module_ranges) module("Linear_1", S + 15000, S + 21000);
      forward_linear(s + 3, S + 15100, corr, "gemm_fwd_1", 4000);
      forward_op("aten::mse_loss", s + 5, S + 23000, 2000, corr, "mse_fwd", 700);
      backward_op("MseLossBackward0", s + 5, S + 31000, 2000, corr, "mse_bwd", 800);
      backward_op("AddmmBackward0", s + 4, S + 34000, 4000, corr, "gemm_bwd_1", 6000);
      backward_op("TBackward0", s + 3, S + 38500, 1000, corr, "", 0);
      accumulate_grad(S + 40000, 1024, 7000, 1 + 2 * step, corr);
      backward_op("ReluBackward0", s + 2, S + 45000, 2000, corr, "relu_bwd", 1500);
      backward_op("AddmmBackward0", s + 1, S + 48000, 4000, corr, "gemm_bwd_0", 5000);
      backward_op("TBackward0", s, S + 52500, 1000, corr, "", 0);
      accumulate_grad(S + 54000, 512, 3000, 2 + 2 * step, corr);
      if (o_.stray_backward) backward_op("CloneBackward0", 7, S + 59000, 500, corr, "", 0);
      complete("user_annotation", "Optimizer.step#SGD.step", S + 60000, 10000, "4242", main, ext_arg());
      complete("cpu_op", "aten::_foreach_add_", S + 60100, 900, "4242", main, ext_arg());
      launch("cudaLaunchKernel", S + 60200, corr);
      kernel("multi_tensor_apply_kernel", S + 60500, 1000, 7, corr++, "");
    }
  }

  // The whole file.
  [[nodiscard]] std::string json() const {
    std::vector<std::string> events = events_;
    if (o_.shuffle) std::shuffle(events.begin(), events.end(), std::mt19937(12345));
    std::string head = "{\n  \"schemaVersion\": 1,\n";
    if (!o_.drop_optional) {
      head +=
          "  \"deviceProperties\": [\n    {\"id\": 0, \"name\": \"NVIDIA A100-SXM4-40GB\", "
          "\"totalGlobalMem\": 42298834944, \"computeMajor\": 8, \"computeMinor\": 0, "
          "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": "
          "65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": 108, "
          "\"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 166912, "
          "\"sharedMemPerMultiprocessor\": 167936}\n  ],\n";
    }
    std::string meta;
    if (o_.with_distributed_info) {
      meta += "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(o_.rank) +
              ", \"world_size\": " + std::to_string(o_.world_size) +
              ", \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
              "\"backend_config\": \"cuda:nccl\", \"pg_size\": 2, \"ranks\": [0, 1]}], "
              "\"nccl_version\": \"2.21.5\"},\n";
    }
    meta += "  \"baseTimeNanoseconds\": " + std::to_string(o_.base_ns) + ",\n";
    std::string body = "  \"traceEvents\": [\n";
    for (std::size_t i = 0; i < events.size(); ++i) {
      body += "  " + events[i] + (i + 1 < events.size() ? ",\n" : "\n");
    }
    body += "  ]";
    const std::string tail = ",\n  \"traceName\": \"/tmp/rank1.pt.trace.json\"\n}\n";
    if (o_.metadata_after_events) {
      return head + "  \"displayTimeUnit\": \"ms\",\n" + body + ",\n" +
             meta.substr(0, meta.size() - 2) + tail;
    }
    return head + meta + "  \"displayTimeUnit\": \"ms\",\n" + body + tail;
  }

  void write(const std::filesystem::path& path) const {
    const std::string j = json();
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(j.data(), static_cast<std::streamsize>(j.size()));
  }

 private:
  void launch(const std::string& name, std::int64_t ts, std::int64_t corr) {
    complete("cuda_runtime", name, ts, 100, "4242", "4243",
             "\"cbid\": 211, \"correlation\": " + std::to_string(corr));
  }

  void kernel(const std::string& name, std::int64_t ts, std::int64_t dur, int stream,
              std::int64_t corr, const std::string& extra) {
    std::string args;
    if (!o_.drop_optional) {
      args = "\"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": " + std::to_string(stream) +
             ", \"correlation\": " + std::to_string(corr) +
             ", \"registers per thread\": 32, \"shared memory\": 0, \"blocks per SM\": 0.5, "
             "\"warps per SM\": 2, \"grid\": [54, 1, 1], \"block\": [128, 1, 1], "
             "\"est. achieved occupancy %\": 3";
    } else {
      args = "\"correlation\": " + std::to_string(corr);
    }
    if (!extra.empty()) args += ", " + extra;
    complete("kernel", name, ts, dur, "0", std::to_string(stream), args);
  }

  void layer_forward(const std::string& layer, const std::string& module, std::int64_t start,
                     std::int64_t kernel_ns, std::int64_t& corr, std::int64_t& ext) {
    complete("user_annotation", "forward/" + layer, start, 10000, "4242", "4243",
             "\"External id\": " + std::to_string(ext++));
    if (o_.module_ranges) {
      complete("python_function", "nn.Module: " + module, start + 10, 9980, "4242", "4243",
               "\"Python parent id\": 1, \"Python id\": 2");
    }
    complete("cpu_op", "aten::addmm", start + 50, 200, "4242", "4243",
             "\"External id\": " + std::to_string(ext++) + ", \"Sequence number\": 7, \"Fwd thread id\": 0");
    launch("cudaLaunchKernel", start + 100, corr);
    kernel(layer + "_fwd", start + 1000, kernel_ns, 7, corr++, "");
    raw("{\"ph\": \"s\", \"id\": " + std::to_string(corr) +
        ", \"pid\": 4242, \"tid\": 4243, \"ts\": " + us(start + 100) +
        ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}");
  }

  void layer_backward(const std::string& layer, std::int64_t start, std::int64_t kernel_ns,
                      std::int64_t nelems, std::int64_t comm_ns, int step, std::int64_t& corr,
                      std::int64_t& ext) {
    complete("user_annotation", "backward/" + layer, start, 10000, "4242", "4243",
             "\"External id\": " + std::to_string(ext++));
    complete("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", start + 50, 300,
             "4242", "4243", "\"External id\": " + std::to_string(ext++) + ", \"Sequence number\": 7, \"Fwd thread id\": 1");
    launch("cudaLaunchKernel", start + 100, corr);
    kernel(layer + "_bwd", start + 1000, kernel_ns, 7, corr++, "");
    // c10d: record_param_comms around the NCCL launch, then the kernel.
    const int seq = 1 + 2 * step + (layer == "l1" ? 1 : 0);
    std::string meta = "\"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": " +
                       std::to_string(nelems) + ", \"Out msg nelems\": " + std::to_string(nelems) +
                       ", \"Group size\": 2";
    if (!o_.drop_optional) {
      meta += ", \"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
              "\"Process Group Ranks\": \"[0, 1]\", \"Seq\": " + std::to_string(seq);
    }
    const std::int64_t comms_ext = ext++;
    const std::int64_t launch_at = layer == "l1" ? start + 9100 : start + 8100;
    complete("cpu_op", "record_param_comms", launch_at - 100, 400, "4242", "4243",
             "\"External id\": " + std::to_string(comms_ext) + ", " + meta +
                 ", \"Rank\": " + std::to_string(o_.rank));
    launch("cudaLaunchKernel", launch_at, corr);
    kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           launch_at + 900, comm_ns, 20, corr++,
           "\"External id\": " + std::to_string(comms_ext) +
               (o_.nccl_meta_on_kernels ? ", " + meta : std::string()));
  }

  std::string ext_arg() { return "\"External id\": " + std::to_string(ext_++); }

  void module(const std::string& name, std::int64_t start, std::int64_t end) {
    complete("python_function", "nn.Module: " + name, start, end - start, "4242", "4243",
             "\"Python parent id\": 1, \"Python id\": 2, \"Python module id\": 0");
  }

  // A forward aten op with its sequence number, launching one kernel.
  void forward_op(const std::string& name, std::int64_t seq, std::int64_t start, std::int64_t dur,
                  std::int64_t& corr, const std::string& kernel_name, std::int64_t kernel_ns) {
    complete("cpu_op", name, start, dur, "4242", "4243",
             ext_arg() + ", \"Sequence number\": " + std::to_string(seq) + ", \"Fwd thread id\": 0");
    launch_on("4243", start + 100, corr);
    kernel(kernel_name, start + 500, kernel_ns, 7, corr++, "");
  }

  // aten::linear (seq) holding aten::t (seq, makes TBackward0) and
  // aten::addmm (seq + 1, makes AddmmBackward0), which launches the gemm.
  void forward_linear(std::int64_t seq, std::int64_t start, std::int64_t& corr,
                      const std::string& kernel_name, std::int64_t kernel_ns) {
    complete("cpu_op", "aten::linear", start, 4900, "4242", "4243",
             ext_arg() + ", \"Sequence number\": " + std::to_string(seq) + ", \"Fwd thread id\": 0");
    complete("cpu_op", "aten::t", start + 100, 100, "4242", "4243",
             ext_arg() + ", \"Sequence number\": " + std::to_string(seq) + ", \"Fwd thread id\": 0");
    forward_op("aten::addmm", seq + 1, start + 300, 4500, corr, kernel_name, kernel_ns);
  }

  // The autograd engine's range around a node, the node's own record (same
  // number, scope BACKWARD_FUNCTION, forward thread id 1) and an aten op
  // without a number (grad mode is off in backward), launching one kernel.
  void backward_op(const std::string& node, std::int64_t seq, std::int64_t start, std::int64_t dur,
                   std::int64_t& corr, const std::string& kernel_name, std::int64_t kernel_ns) {
    const std::string seq_args =
        ", \"Sequence number\": " + std::to_string(seq) + ", \"Fwd thread id\": 1";
    complete("cpu_op", "autograd::engine::evaluate_function: " + node, start, dur, "4242", "4250",
             ext_arg() + seq_args);
    complete("cpu_op", node, start + 20, dur - 40, "4242", "4250", ext_arg() + seq_args);
    if (kernel_name.empty()) return;
    complete("cpu_op", "aten::mm", start + 50, dur - 100, "4242", "4250", ext_arg());
    launch_on("4250", start + 100, corr);
    kernel(kernel_name, start + 500, kernel_ns, 7, corr++, "");
  }

  // DDP's hook in AccumulateGrad (no sequence number) launching an
  // all-reduce through c10d's record_param_comms.
  void accumulate_grad(std::int64_t start, std::int64_t nelems, std::int64_t comm_ns, int seq,
                       std::int64_t& corr) {
    complete("cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
             start, 4000, "4242", "4250", ext_arg());
    const std::string meta =
        "\"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": " +
        std::to_string(nelems) + ", \"Out msg nelems\": " + std::to_string(nelems) +
        ", \"Group size\": 2, \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\", "
        "\"Seq\": " + std::to_string(seq);
    const std::int64_t comms_ext = ext_++;
    complete("cpu_op", "record_param_comms", start + 500, 1000, "4242", "4250",
             "\"External id\": " + std::to_string(comms_ext) + ", " + meta +
                 ", \"Rank\": " + std::to_string(o_.rank));
    launch_on("4250", start + 1000, corr);
    kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", start + 2000,
           comm_ns, 20, corr++, "\"External id\": " + std::to_string(comms_ext) + ", " + meta);
  }

  void launch_on(const std::string& tid, std::int64_t ts, std::int64_t corr) {
    complete("cuda_runtime", "cudaLaunchKernel", ts, 100, "4242", tid,
             "\"cbid\": 211, \"correlation\": " + std::to_string(corr));
  }

  KinetoJsonOptions o_;
  std::vector<std::string> events_;
  std::int64_t ext_ = 9000;
};

// plain_training() written to `path` with options `o`.
inline void write_plain_training(const std::filesystem::path& path, KinetoJsonOptions o = {}) {
  KinetoJsonWriter w(o);
  w.plain_training();
  w.write(path);
}

// two_step_training() written to `path` with options `o`.
inline void write_two_step_training(const std::filesystem::path& path, KinetoJsonOptions o = {}) {
  KinetoJsonWriter w(o);
  w.two_step_training();
  w.write(path);
}

}  // namespace ssgd::testing
