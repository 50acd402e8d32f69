#!/usr/bin/env bash
# The GPU checklist (../shared/GPU_CHECKLIST.md) as one script, for a lent
# GPU machine with CUDA and PyTorch but no ssgd build dependencies.
#
#   tools/gpu/checklist.sh BIN_DIR OUT_DIR [BUDGET_S [GROUP...]]
#
# GROUPs (default: all, in this order): env tests overhead kineto standdown
# bundle signal models; "repeat" runs the untraced and traced fp32 pair again,
# "repeat_amp" the AMP pair twice more, "kineto_amp" torch.profiler with AMP,
# "models_traced" the traced runs of "models" alone, "api_amp" AMP ResNet-50
# untraced and traced with each SSGD_TRACER_API_CALLS mode, "fp32_knobs"
# fp32 ResNet-50 over 6 blocks with the tracer's flush and buffer settings,
# "window" a tracing window of 10 steps in 1,015 against the same run untraced
# (issue 38's target: at most 0.5% on the whole job), fp32 and AMP, "graphs"
# the mlp as CUDA graphs (torch.compile), untraced, traced and profiled;
# "window_a" and "window_b" the window's first and second round alone,
# "window_diag" a short window with each way of recording API calls,
# "window_detach" the window with SSGD_TRACER_WINDOW_DETACH=1 against
# untraced runs (two interleaved rounds).
#
# BIN_DIR holds ssgd, libssgd_tracer.so and the tracer's test programs of a
# build configured with -DSSGD_WITH_CUDA=ON (tools/gpu/carry.sh makes one
# that runs there); OUT_DIR gets a log per step, the training results and
# the captures, packed by the caller. Every step has its own time limit, and
# the steps after the required ones start only while BUDGET_S (default 420)
# seconds have not passed, so a partial run still leaves its evidence.
# The captures are read and replayed where ssgd's dependencies are
# (tools/gpu/analyse.sh), not here.
set -u
bin=$(cd "$1" && pwd)
out=$2
budget=${3:-420}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
train=$here/train_gpu.py
py=${PYTHON:-python3}
t0=$(date +%s)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

log() { echo "== +$(( $(date +%s) - t0 ))s $*" | tee -a "$out/steps.log"; }
# step NAME LIMIT_S CMD...: runs CMD with its output in NAME.log
step() {
  local name=$1 limit=$2
  shift 2
  log "$name: $*"
  local s0 s1
  s0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  s1=$(date +%s%N)
  log "$name: rc=$rc wall_ms=$(( (s1 - s0) / 1000000 ))"
  return 0
}
left() { [ $(( $(date +%s) - t0 )) -lt "$budget" ]; }
shift $(( $# < 3 ? $# : 3 ))
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(env tests overhead kineto standdown bundle signal models)
common=(--model resnet50 --batch 64 --ddp --warmup 15 --iterations 20 --reps 3)

# 0. The machine.
group_env() {
step env 60 bash -c "nvidia-smi; uname -a; $py -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__, torch.version.cuda, torch.cuda.nccl.version(), torch.cuda.get_device_name(0))'; ls /usr/local/cuda/lib64 | grep -E 'cupti|nccl'; $py -c 'import nvidia, os; print(nvidia.__path__)'; find / -name 'libcupti.so*' -not -path '/proc/*' 2>/dev/null; find / -name 'libnccl.so*' -not -path '/proc/*' 2>/dev/null; ldd $bin/libssgd_tracer.so; ldd $bin/ssgd | grep 'not found'"
}

# 1. Build self-test: the tracer's tests against the real CUPTI.
group_tests() {
for t in cupti_record_decoder_test tracer_library_test tracer_nccl_test tracer_core_test; do
  step "test_$t" 120 "$bin/$t" --gtest_color=no
done
step test_trace_cli 120 "$bin/trace_cli_test" --gtest_color=no --gtest_filter='TraceCliTracer*'
}

# 2. Overhead, AMP off and on: untraced; traced with kernels and collectives;
# everything on (NVTX ranges from ssgd_marks on the 60 timed iterations).
# One process each, three blocks of 20 timed iterations after 15 warm-up
# ones.
group_overhead() {
for amp in fp32 amp; do
  flag=()
  [ "$amp" = amp ] && flag=(--amp)
  step "plain_$amp" 120 "$py" "$train" "${common[@]}" "${flag[@]}" --out "$out/plain_$amp.json"
  step "traced_$amp" 120 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace -o "$out/traced_$amp" -- \
    "$py" "$train" "${common[@]}" "${flag[@]}" --out "$out/traced_$amp.json"
  step "full_$amp" 120 env SSGD_TRACER_LOG=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV \
    "$bin/ssgd" trace --nvtx --iterations 15:75 -o "$out/full_$amp" -- \
    "$py" "$train" "${common[@]}" "${flag[@]}" --marks --out "$out/full_$amp.json"
done
}

group_repeat() {
  step plain_fp32_2 120 "$py" "$train" "${common[@]}" --out "$out/plain_fp32_2.json"
  step traced_fp32_2 120 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace -o "$out/traced_fp32_2" -- \
    "$py" "$train" "${common[@]}" --out "$out/traced_fp32_2.json"
}

# 5. Kineto: the same training under torch.profiler (5 marked iterations
# recorded), for ssgd import kineto.
group_kineto() {
step kineto_fp32 150 env SSGD_TRACER_ITERATIONS=15:75 "$py" "$train" "${common[@]}" --marks --profile "$out/kineto_fp32.json" \
  --out "$out/kineto_fp32_result.json"
gzip -f "$out/kineto_fp32.json" 2>/dev/null
}

# 1 (cont.). Another CUPTI subscriber: torch.profiler inside a traced process.
group_standdown() {
step standdown 150 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace -o "$out/standdown" -- \
  "$py" "$train" "${common[@]}" --iterations 5 --reps 1 --profile "$out/standdown_kineto.json" \
  --out "$out/standdown.json"
gzip -f "$out/standdown_kineto.json" 2>/dev/null
}

# 6. A small capture to bundle: 5 marked iterations after 10 warm-up ones.
group_bundle() {
step bundle 120 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace --nvtx --iterations 10:15 -o "$out/bundle" -- \
  "$py" "$train" --model resnet50 --batch 64 --ddp --marks --warmup 10 --iterations 5 --reps 1 \
  --out "$out/bundle.json"
}

# 7. A fatal signal with the real CUPTI: SIGSEGV to the training process
# while it runs; the flushed prefix must read back.
group_signal() {
if left; then
  log "signal: SIGSEGV after 25 s"
  (
    SSGD_TRACER_LOG=1 "$bin/ssgd" trace -o "$out/signal" -- \
      "$py" "$train" --model resnet50 --batch 64 --ddp --warmup 5 --iterations 10000 --reps 1 \
      --out "$out/signal.json" >"$out/signal.log" 2>&1 &
    launcher=$!
    sleep 25
    victim=$(pgrep -P "$launcher" | head -1)
    echo "victim pid: ${victim:-none}" >>"$out/signal.log"
    [ -n "$victim" ] && kill -SEGV "$victim"
    timeout 30 tail --pid="$launcher" -f /dev/null
    wait "$launcher"
    echo "ssgd trace exit status: $?" >>"$out/signal.log"
    kill -9 "$launcher" 2>/dev/null
    ls -la "$out/signal" >>"$out/signal.log" 2>&1
  )
  log "signal: done"
fi
}

# torch.profiler over ResNet-50 with AMP (5 marked iterations), beside an
# untraced AMP run.
group_kineto_amp() {
  step plain_amp_k 120 "$py" "$train" "${common[@]}" --amp --out "$out/plain_amp_k.json"
  step kineto_amp 150 env SSGD_TRACER_ITERATIONS=15:75 "$py" "$train" "${common[@]}" --amp --marks \
    --profile "$out/kineto_amp.json" --out "$out/kineto_amp_result.json"
  gzip -f "$out/kineto_amp.json" 2>/dev/null
}

# The untraced and traced AMP pair twice more, alternating.
group_repeat_amp() {
  for n in 2 3; do
    step "plain_amp_$n" 120 "$py" "$train" "${common[@]}" --amp --out "$out/plain_amp_$n.json"
    step "traced_amp_$n" 120 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace -o "$out/traced_amp_$n" -- \
      "$py" "$train" "${common[@]}" --amp --out "$out/traced_amp_$n.json"
  done
}

# What the tracer costs AMP ResNet-50 by which API calls it records
# (SSGD_TRACER_API_CALLS): untraced, launches, runtime, none; three rounds,
# alternating.
group_api_amp() {
  for n in 1 2 3; do
    step "plain_amp_api$n" 120 "$py" "$train" "${common[@]}" --amp --out "$out/plain_amp_api$n.json"
    for mode in launches runtime none; do
      step "traced_amp_${mode}$n" 120 env SSGD_TRACER_LOG=1 SSGD_TRACER_API_CALLS=$mode \
        "$bin/ssgd" trace -o "$out/traced_amp_${mode}$n" -- \
        "$py" "$train" "${common[@]}" --amp --out "$out/traced_amp_${mode}$n.json"
    done
  done
}

# fp32 ResNet-50 with more timed blocks (6 of 20), untraced and traced with
# the default settings, with flushes only at exit (SSGD_TRACER_FLUSH_MS=0)
# and with 32 MiB CUPTI buffers: does the overhead grow as the capture does?
group_fp32_knobs() {
  local long=(--model resnet50 --batch 64 --ddp --warmup 15 --iterations 20 --reps 6)
  step plain_fp32_long 150 "$py" "$train" "${long[@]}" --out "$out/plain_fp32_long.json"
  step traced_fp32_long 150 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace -o "$out/traced_fp32_long" -- \
    "$py" "$train" "${long[@]}" --out "$out/traced_fp32_long.json"
  step traced_fp32_flush0 150 env SSGD_TRACER_LOG=1 SSGD_TRACER_FLUSH_MS=0 "$bin/ssgd" trace \
    -o "$out/traced_fp32_flush0" -- "$py" "$train" "${long[@]}" --out "$out/traced_fp32_flush0.json"
  step traced_fp32_buf32m 150 env SSGD_TRACER_LOG=1 SSGD_TRACER_BUFFER_KB=32768 "$bin/ssgd" trace \
    -o "$out/traced_fp32_buf32m" -- "$py" "$train" "${long[@]}" --out "$out/traced_fp32_buf32m.json"
  step plain_fp32_long2 150 "$py" "$train" "${long[@]}" --out "$out/plain_fp32_long2.json"
}

# Issue 6: VGG-16 and a BERT-base encoder, traced with marks and profiled.
# The batch of a model, and its run under ssgd trace with marks.
batch_of() { [ "$1" = bert ] && echo 32 || echo 64; }
full_model() {
  step "full_$1" 120 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace --nvtx --iterations 10:15 -o "$out/full_$1" -- \
    "$py" "$train" --model "$1" --batch "$(batch_of "$1")" --ddp --marks --warmup 10 --iterations 20 \
    --reps 1 --out "$out/full_$1.json"
}
group_models() {
  for m in vgg16 bert; do
    left || break
    step "plain_$m" 120 "$py" "$train" --model "$m" --batch "$(batch_of "$m")" --ddp --warmup 10 \
      --iterations 20 --reps 1 --out "$out/plain_$m.json"
    left || break
    full_model "$m"
    left || break
    step "kineto_$m" 120 "$py" "$train" --model "$m" --batch "$(batch_of "$m")" --ddp --marks --warmup 10 \
      --iterations 20 --reps 1 --profile "$out/kineto_$m.json" --out "$out/kineto_${m}_result.json"
    gzip -f "$out/kineto_$m.json" 2>/dev/null
  done
}

# The traced runs of group_models alone.
group_models_traced() {
  for m in vgg16 bert; do
    left || break
    full_model "$m"
  done
}

# Checklist item 1: the same training on every GPU kind, for the GPU
# what-if (predict one GPU from a capture on another). Untraced timings of
# ResNet-50 fp32 and AMP and BERT-base in two interleaved rounds (their
# spread is the noise floor), then one capture of each with marks (5
# iterations after 10 warm-up ones).
whatif_cfgs=("resnet50 64 fp32" "resnet50 64 amp" "bert 32 fp32")
whatif_flags() { [ "$1" = amp ] && echo --amp; }
group_whatif() {
  local n cfg m b p
  for n in 1 2; do
    for cfg in "${whatif_cfgs[@]}"; do
      read -r m b p <<<"$cfg"
      left || return 0
      step "whatif_plain_${m}_${p}_$n" 120 "$py" "$train" --model "$m" --batch "$b" $(whatif_flags "$p") \
        --ddp --warmup 15 --iterations 20 --reps 3 --out "$out/whatif_plain_${m}_${p}_$n.json"
    done
  done
  for cfg in "${whatif_cfgs[@]}"; do
    read -r m b p <<<"$cfg"
    left || return 0
    step "whatif_cap_${m}_$p" 120 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace --nvtx --iterations 10:15 \
      -o "$out/whatif_cap_${m}_$p" -- "$py" "$train" --model "$m" --batch "$b" $(whatif_flags "$p") \
      --ddp --marks --warmup 10 --iterations 20 --reps 1 --out "$out/whatif_cap_${m}_$p.json"
  done
}

# Checklist item 2: FSDP2 on one GPU, BERT-base's 12 layers each a
# fully_shard unit: untraced, under ssgd trace with marks, and under
# torch.profiler.
group_fsdp() {
  left || return 0
  step fsdp_plain 120 "$py" "$train" --model bert --batch 32 --fsdp --warmup 10 --iterations 20 \
    --reps 1 --out "$out/fsdp_plain.json"
  left || return 0
  step fsdp_cap 120 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace --nvtx --iterations 10:15 -o "$out/fsdp_cap" -- \
    "$py" "$train" --model bert --batch 32 --fsdp --marks --warmup 10 --iterations 20 --reps 1 \
    --out "$out/fsdp_cap.json"
  left || return 0
  step fsdp_kineto 120 "$py" "$train" --model bert --batch 32 --fsdp --marks --warmup 10 --iterations 20 \
    --reps 1 --profile "$out/fsdp_kineto.json" --out "$out/fsdp_kineto_result.json"
  gzip -f "$out/fsdp_kineto.json" 2>/dev/null
}

# Issue 38: a tracing window of steps 500-509 in 1,015 (15 warm-up, 10
# blocks of 100 timed), fp32 and AMP, against the same run with the same
# marks and no tracer, in interleaved rounds (A B B A: fp32 and AMP each
# twice untraced and twice traced, so a partial run still leaves pairs).
# Both mark only steps 500-509 (SSGD_TRACER_ITERATIONS), as a user of a
# window would; every step is reported to the tracer. Whole-job cost: the
# sum of the timed iterations and the process's wall time (steps.log); the
# window's own cost: the trace's traced steps against its untraced ones
# (ssgd simulate prints both) and against the untraced runs' same steps.
window_run() {
  local kind=$1 amp=$2 n=$3 flag=()
  [ "$amp" = amp ] && flag=(--amp)
  local long=(--model resnet50 --batch 64 --ddp --warmup 15 --iterations 100 --reps 10 --marks)
  if [ "$kind" = marks ]; then
    step "marks_${amp}_$n" 240 env SSGD_TRACER_ITERATIONS=500:510 "$py" "$train" "${long[@]}" "${flag[@]}" \
      --out "$out/marks_${amp}_$n.json"
  else
    # window: CUPTI paused outside the window; detach: attached at its
    # opening and detached at its close (SSGD_TRACER_WINDOW_DETACH=1).
    local detach=0
    [ "$kind" = detach ] && detach=1
    step "${kind}_${amp}_$n" 240 env SSGD_TRACER_LOG=1 SSGD_TRACER_WINDOW_DETACH=$detach "$bin/ssgd" trace \
      --nvtx --iterations 500:510 --window steps:500:510 -o "$out/${kind}_${amp}_$n" -- "$py" "$train" \
      "${long[@]}" "${flag[@]}" --out "$out/${kind}_${amp}_$n.json"
  fi
}
window_rounds() {
  local r
  for r in "$@"; do
    left || return 0
    window_run $r
  done
}
group_window_a() { window_rounds "marks fp32 1" "window fp32 1" "window amp 1" "marks amp 1"; }
group_window_b() { window_rounds "window fp32 2" "marks fp32 2" "marks amp 2" "window amp 2"; }
group_window() { group_window_a; group_window_b; }
# The window with CUPTI detached after it (and attached only when it opens),
# against untraced runs, interleaved: the way to the 0.5% target, if any.
group_window_detach() {
  window_rounds "marks fp32 4" "detach fp32 4" "detach amp 4" "marks amp 4" \
                "detach fp32 5" "marks fp32 5" "marks amp 5" "detach amp 5"
}

# Why the window's traces lack API calls (2026-11-28: api 0 in every
# window trace, docs/runs/2026-11-28-h200-window-graphs): a short window
# (steps 100-109 of 315) with the per-call API switches (the default) and
# with SSGD_TRACER_API_CALLS=all (CUPTI's RUNTIME and DRIVER kinds switched
# as wholes); each log's summary line gives the API records.
group_window_diag() {
  local short=(--model resnet50 --batch 64 --ddp --warmup 15 --iterations 100 --reps 3 --marks)
  local mode
  for mode in launches all; do
    left || return 0
    step "window_diag_$mode" 120 env SSGD_TRACER_LOG=1 SSGD_TRACER_API_CALLS=$mode "$bin/ssgd" trace --nvtx \
      --iterations 100:110 --window steps:100:110 -o "$out/window_diag_$mode" -- "$py" "$train" "${short[@]}" \
      --out "$out/window_diag_$mode.json"
  done
}

# Checklist item 5: CUDA graphs. The mlp's blocks under
# torch.compile(mode="reduce-overhead") (train_gpu.py --graphs): untraced,
# under ssgd trace with marks (5 marked iterations after 10 warm-up ones),
# and under torch.profiler (Kineto's graph records), for the replay.
group_graphs() {
  local g=(--model mlp --batch 256 --graphs --warmup 10)
  left || return 0
  step graphs_plain 200 "$py" "$train" "${g[@]}" --iterations 20 --reps 3 --out "$out/graphs_plain.json"
  left || return 0
  step graphs_cap 200 env SSGD_TRACER_LOG=1 "$bin/ssgd" trace --nvtx --iterations 10:15 -o "$out/graphs_cap" -- \
    "$py" "$train" "${g[@]}" --marks --iterations 20 --reps 1 --out "$out/graphs_cap.json"
  left || return 0
  step graphs_kineto 200 "$py" "$train" "${g[@]}" --marks --iterations 20 --reps 1 \
    --profile "$out/graphs_kineto.json" --out "$out/graphs_kineto_result.json"
  gzip -f "$out/graphs_kineto.json" 2>/dev/null
}

# Checklist item 3: is Nsight Systems there?
group_nsys() {
  step nsys 30 bash -c 'which nsys; nsys --version; ls -d /usr/local/cuda*/nsight* /opt/nvidia/nsight-systems* /usr/local/cuda*/bin/nsys 2>&1'
}

for g in "${groups[@]}"; do
  if ! declare -F "group_$g" >/dev/null; then
    log "unknown group '$g'"
    continue
  fi
  # The first groups always run; later ones only within the budget.
  if [ "$g" = env ] || [ "$g" = tests ] || left; then
    "group_$g"
  else
    log "$g: skipped, past the budget of $budget s"
  fi
done
log "done"
