#pragma once
// Writes small PyTorch profiles of distributed training on CPU (DDP over
// gloo) for the importer's tests, by hand, in the shapes two writers give
// them (docs/kineto.md):
//   kLegacy     torch <= 1.13 without Kineto (torch.autograd.profiler's
//               export_chrome_trace): a bare JSON array of
//               {"name", "ph": "X", "ts", "dur", "tid", "pid": "CPU functions",
//               "args": {}}, integer microseconds from the profiler's start,
//               no categories, threads numbered 1, 2, 3;
//   kLegacyCpp  the same from the C++ RecordProfile: "pid": "CPU Functions",
//               times with decimals;
//   kKineto     torch 2.x on CPU (torch.profiler with Kineto): a JSON object
//               with distributedInfo (backend gloo) and baseTimeNanoseconds,
//               aten ops as cpu_op with their autograd sequence numbers,
//               record_function ranges (the optimizer's, DDP's forward, gloo's
//               work, marks) as user_annotation, OS thread ids, no GPU.
//
// The model, one rank of two: fc1 (aten::linear) -> act (aten::relu) ->
// fc2 (aten::linear) -> aten::cross_entropy_loss, in `iterations`
// iterations of P = 1200 us from S = 100 + 1200 i us. In each (us from S):
//   [0, 30)       Optimizer.zero_grad#SGD.zero_grad > aten::zero_
//   [40, 400)     DistributedDataParallel.forward > aten::empty (DDP's
//                 bookkeeping, no node), fc1 [50, 150) > aten::t, aten::addmm;
//                 act [160, 180) > aten::clamp_min; fc2 [190, 390) > aten::t,
//                 aten::addmm
//   [410, 440)    aten::cross_entropy_loss > aten::log_softmax >
//                 aten::_log_softmax; aten::nll_loss_nd > aten::nll_loss
//   [450, 455)    aten::ones_like
//   backward, on the same thread (the CPU autograd engine runs on the caller),
//   each node as autograd::engine::evaluate_function: <node> > <node> > aten op:
//     NllLossBackward0 [460, 470), LogSoftmaxBackward0 [472, 480),
//     AddmmBackward0 [482, 682) (fc2), AccumulateGrad [684, 690),
//     TBackward0 [692, 696), AccumulateGrad [698, 720) > c10d::allreduce_
//     [705, 708) -> gloo:all_reduce on thread 2 [710, 900),
//     ReluBackward0 [722, 742), AddmmBackward0 [744, 844) (fc1),
//     AccumulateGrad [846, 850), TBackward0 [852, 856),
//     AccumulateGrad [858, 880) > c10d::allreduce_ [860, 863) ->
//     gloo:all_reduce on thread 3 [901, 1000)
//   [1002, 1010)  torch.distributed.ddp.reducer::copy_bucket_to_grad
//   [1020, 1060)  Optimizer.step#SGD.step > aten::add_ x4
// In the first iteration, DDP's forward also broadcasts: c10d::broadcast_
// [42, 45) -> gloo:broadcast on thread 3 [46, 48).
// With `marks` (what tracer/python/ssgd_marks.py writes): iteration/<i>
// [0, 1100), forward/fc1 [48, 152), forward/act [158, 182), forward/fc2
// [188, 392), backward/fc2 [485, 721), backward/act [725, 743),
// backward/fc1 [746, 881) (module hooks: they start inside the node's
// evaluate_function, as the helper's do); with `metadata` also, in every
// iteration at S + 1, S + 2, ..., 1 us each: ssgd/rank, ssgd/world_size,
// ssgd/hostname=host-a, ssgd/grad_bytes/fc1, ssgd/grad_bytes/fc2 (act has
// no parameters), ssgd/collective_bytes=<fc2 bucket>,<fc1 bucket>, then
// ssgd/clock_realtime_ns (CLOCK_REALTIME at its start).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace ssgd::testing {

struct TorchCpuProfileOptions {
  enum class Writer { kLegacy, kLegacyCpp, kKineto };
  Writer writer = Writer::kLegacy;
  int iterations = 2;
  int rank = 1;
  int world_size = 2;
  bool marks = false;           // iteration/, forward/, backward/ ranges
  bool metadata = false;        // ssgd/<key>=<value> marks (with `marks`)
  bool profiler_steps = false;  // ProfilerStep#<i> around each iteration
  bool shuffle = false;         // events in a shuffled order (fixed seed)
  // kKineto: record_shapes=True: "Input Dims" and "Input type" args (gloo's
  // ranges list their tensors; c10d's ops a tensor list, nested deeper).
  bool record_shapes = false;
  // CLOCK_REALTIME at profile time 0, for ssgd/clock_realtime_ns.
  std::int64_t realtime_at_zero_ns = 1'700'000'000'000'000'000;
  std::int64_t fc1_grad_bytes = 1'050'624;  // 512 x 512 + 512 floats
  std::int64_t fc2_grad_bytes = 20'520;     // 10 x 512 + 10 floats
};

class TorchCpuProfileWriter {
 public:
  explicit TorchCpuProfileWriter(TorchCpuProfileOptions o = {}) : o_(o) {}

  void training() {
    for (int i = 0; i < o_.iterations; ++i) iteration(i);
  }

  // A range of the CPU timeline, in microseconds; `seq` its autograd
  // sequence number (-1: none), `backward` whether it is a node's record.
  void range(const std::string& name, int thread, std::int64_t start_us, std::int64_t dur_us,
             bool annotation = false, std::int64_t seq = -1, bool backward = false,
             std::int64_t elements = -1) {
    ranges_.push_back({name, thread, start_us, dur_us, annotation, seq, backward, elements});
  }

  [[nodiscard]] std::string json() const {
    std::vector<std::string> events;
    std::int64_t ext = 100;
    for (const auto& r : ranges_) events.push_back(event(r, ext));
    if (o_.shuffle) std::shuffle(events.begin(), events.end(), std::mt19937(4321));
    if (o_.writer != TorchCpuProfileOptions::Writer::kKineto) {
      // export_chrome_trace: "[" then the events, each followed by ", ",
      // the last ", " replaced by "]".
      std::string out = "[";
      for (std::size_t i = 0; i < events.size(); ++i)
        out += events[i] + (i + 1 < events.size() ? ", " : "");
      return out + "]";
    }
    std::string out =
        "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"gloo\", \"rank\": " +
        std::to_string(o_.rank) + ", \"world_size\": " + std::to_string(o_.world_size) +
        ", \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
        "\"backend_config\": \"cpu:gloo\", \"pg_size\": 2, \"ranks\": [0, 1]}]},\n"
        "  \"record_shapes\": 0,\n  \"with_stack\": 0,\n"
        "  \"baseTimeNanoseconds\": 1700000000000000000,\n"
        "  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [\n";
    events.push_back(
        R"j({"name": "process_name", "ph": "M", "ts": 0.000, "pid": 4242, "tid": 0, "args": {"name": "python3"}})j");
    events.push_back(
        R"j({"name": "thread_name", "ph": "M", "ts": 0.000, "pid": 4242, "tid": 4243, "args": {"name": "thread 4243 (python3)"}})j");
    events.push_back(
        R"j({"ph": "X", "cat": "Trace", "ts": 0.000, "dur": 9000.000, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}})j");
    for (std::size_t i = 0; i < events.size(); ++i) {
      out += "  " + events[i] + (i + 1 < events.size() ? ",\n" : "\n");
    }
    return out + "  ],\n  \"traceName\": \"/tmp/rank1.pt.trace.json\"\n}\n";
  }

  void write(const std::filesystem::path& path) const {
    const std::string j = json();
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(j.data(), static_cast<std::streamsize>(j.size()));
  }

 private:
  struct Range {
    std::string name;
    int thread;  // 1 main, 2 and 3 gloo's workers
    std::int64_t start_us, dur_us;
    bool annotation;
    std::int64_t seq;
    bool backward;
    std::int64_t elements;  // a collective's float elements; -1: not one
  };

  void iteration(int i) {
    const std::int64_t S = 100 + 1200 * i;
    const std::int64_t s = 100 + 7 * i;  // sequence numbers of this iteration
    if (o_.profiler_steps) range("ProfilerStep#" + std::to_string(i), 1, S - 2, 1104, true);
    if (o_.marks) {
      range("iteration/" + std::to_string(i), 1, S, 1100, true);
      if (o_.metadata) metadata(S);
    }
    range("Optimizer.zero_grad#SGD.zero_grad", 1, S, 30, true);
    range("aten::zero_", 1, S + 5, 5);
    range("DistributedDataParallel.forward", 1, S + 40, 360, true);
    range("aten::empty", 1, S + 41, 1);
    if (i == 0) {
      range("c10d::broadcast_", 1, S + 42, 3, false, -1, false, 1000);
      range("gloo:broadcast", 3, S + 46, 2, true, -1, false, 1000);
    }
    if (o_.marks) range("forward/fc1", 1, S + 48, 104, true);
    linear(S + 50, 100, s);
    if (o_.marks) range("forward/act", 1, S + 158, 24, true);
    range("aten::relu", 1, S + 160, 20, false, s + 2);
    range("aten::clamp_min", 1, S + 162, 16, false, s + 2);
    if (o_.marks) range("forward/fc2", 1, S + 188, 204, true);
    linear(S + 190, 200, s + 3);
    range("aten::cross_entropy_loss", 1, S + 410, 30, false, s + 5);
    range("aten::log_softmax", 1, S + 412, 8, false, s + 5);
    range("aten::_log_softmax", 1, S + 413, 6, false, s + 5);
    range("aten::nll_loss_nd", 1, S + 422, 16, false, s + 6);
    range("aten::nll_loss", 1, S + 423, 14, false, s + 6);
    range("aten::ones_like", 1, S + 450, 5);
    node("NllLossBackward0", s + 6, S + 460, 10, "aten::nll_loss_backward");
    node("LogSoftmaxBackward0", s + 5, S + 472, 8, "aten::_log_softmax_backward_data");
    if (o_.marks) range("backward/fc2", 1, S + 485, 236, true);
    node("AddmmBackward0", s + 4, S + 482, 200, "aten::mm");
    accumulate_grad(S + 684, 6);
    node("TBackward0", s + 3, S + 692, 4, "aten::t");
    accumulate_grad(S + 698, 22);
    range("c10d::allreduce_", 1, S + 705, 3, false, -1, false, o_.fc2_grad_bytes / 4);
    range("gloo:all_reduce", 2, S + 710, 190, true, -1, false, o_.fc2_grad_bytes / 4);
    if (o_.marks) range("backward/act", 1, S + 725, 18, true);
    node("ReluBackward0", s + 2, S + 722, 20, "aten::threshold_backward");
    if (o_.marks) range("backward/fc1", 1, S + 746, 135, true);
    node("AddmmBackward0", s + 1, S + 744, 100, "aten::mm");
    accumulate_grad(S + 846, 4);
    node("TBackward0", s, S + 852, 4, "aten::t");
    accumulate_grad(S + 858, 22);
    range("c10d::allreduce_", 1, S + 860, 3, false, -1, false, o_.fc1_grad_bytes / 4);
    range("gloo:all_reduce", 3, S + 901, 99, true, -1, false, o_.fc1_grad_bytes / 4);
    range("torch.distributed.ddp.reducer::copy_bucket_to_grad", 1, S + 1002, 8);
    range("Optimizer.step#SGD.step", 1, S + 1020, 40, true);
    for (int k = 0; k < 4; ++k) range("aten::add_", 1, S + 1022 + 9 * k, 8);
  }

  void metadata(std::int64_t S) {
    std::int64_t t = S + 1;
    auto mark = [&](const std::string& name) { range("ssgd/" + name, 1, t++, 1, true); };
    mark("rank=" + std::to_string(o_.rank));
    mark("world_size=" + std::to_string(o_.world_size));
    mark("hostname=host-a");
    mark("grad_bytes/fc1=" + std::to_string(o_.fc1_grad_bytes));
    mark("grad_bytes/fc2=" + std::to_string(o_.fc2_grad_bytes));
    mark("collective_bytes=" + std::to_string(o_.fc2_grad_bytes) + "," +
         std::to_string(o_.fc1_grad_bytes));
    mark("clock_realtime_ns=" + std::to_string(o_.realtime_at_zero_ns + t * 1000));
  }

  // aten::linear (seq) > aten::t (seq) > aten::transpose, aten::addmm (seq + 1).
  void linear(std::int64_t start, std::int64_t dur, std::int64_t seq) {
    range("aten::linear", 1, start, dur, false, seq);
    range("aten::t", 1, start + 2, 4, false, seq);
    range("aten::transpose", 1, start + 3, 2, false, seq);
    range("aten::addmm", 1, start + 10, dur - 12, false, seq + 1);
  }

  // The engine's range, the node's own record, one aten op inside.
  void node(const std::string& name, std::int64_t seq, std::int64_t start, std::int64_t dur,
            const std::string& op) {
    range("autograd::engine::evaluate_function: " + name, 1, start, dur, false, seq, true);
    range(name, 1, start + 1, dur - 2, false, seq, true);
    range(op, 1, start + 1 + (dur > 4 ? 1 : 0), std::max<std::int64_t>(dur - 4, 1));
  }

  void accumulate_grad(std::int64_t start, std::int64_t dur) {
    range("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 1, start, dur);
    range("torch::autograd::AccumulateGrad", 1, start + 1, 2);
  }

  [[nodiscard]] std::string event(const Range& r, std::int64_t& ext) const {
    using W = TorchCpuProfileOptions::Writer;
    if (o_.writer == W::kLegacy) {
      return "{\"name\": \"" + r.name + "\", \"ph\": \"X\", \"ts\": " + std::to_string(r.start_us) +
             ", \"dur\": " + std::to_string(r.dur_us) + ", \"tid\": " + std::to_string(r.thread) +
             ", \"pid\": \"CPU functions\", \"args\": {}}";
    }
    if (o_.writer == W::kLegacyCpp) {
      return "{\n  \"name\": \"" + r.name +
             "\",\n  \"ph\": \"X\",\n  \"ts\": " + std::to_string(r.start_us) +
             ".25,\n  \"dur\": " + std::to_string(r.dur_us) +
             ".5,\n  \"tid\": " + std::to_string(r.thread) +
             ",\n  \"pid\": \"CPU Functions\",\n  \"args\": {}\n}";
    }
    const std::string tid = r.thread == 1 ? "4243" : r.thread == 2 ? "4300" : "4301";
    std::string args = "\"External id\": " + std::to_string(++ext) + ", \"Record function id\": 0";
    if (r.seq >= 0) {
      args += ", \"Sequence number\": " + std::to_string(r.seq) +
              ", \"Fwd thread id\": " + (r.backward ? "1" : "0");
    }
    if (o_.record_shapes && r.elements >= 0) {
      const std::string n = std::to_string(r.elements);
      if (r.annotation) {  // gloo's work: its tensors
        args += ", \"Concrete Inputs\": [\"\"], \"Input type\": [\"float\"], \"Input Dims\": [[" +
                n + "]]";
      } else {  // c10d's op: a TensorList, a process group, options
        args +=
            ", \"Input type\": [\"GenericList\", \"ScriptObject\", \"ScriptObject\", \"\", \"Int\"]"
            ", \"Input Dims\": [[[" +
            n + "]], [], [], [], []]";
      }
    }
    return "{\"ph\": \"X\", \"cat\": \"" +
           std::string(r.annotation ? "user_annotation" : "cpu_op") + "\", \"name\": \"" + r.name +
           "\", \"pid\": 4242, \"tid\": " + tid + ", \"ts\": " + std::to_string(r.start_us) +
           ".000, \"dur\": " + std::to_string(r.dur_us) + ".000, \"args\": {" + args + "}}";
  }

  TorchCpuProfileOptions o_;
  std::vector<Range> ranges_;
};

inline void write_torch_cpu_profile(const std::filesystem::path& path,
                                    TorchCpuProfileOptions o = {}) {
  TorchCpuProfileWriter w(o);
  w.training();
  w.write(path);
}

}  // namespace ssgd::testing
