#!/usr/bin/env bash
# Packs a CUDA build of ssgd for a GPU machine that lacks ssgd's build
# dependencies (Debian's protobuf, fmt, yaml-cpp, Open MPI...):
#
#   tools/gpu/carry.sh BUILD_DIR DEST
#
# DEST/bin gets ssgd, libssgd_tracer.so and the tracer's test programs;
# DEST/lib every shared library they need but the C library, libstdc++,
# libgcc and the CUDA driver, CUPTI and NCCL (those come from the GPU
# machine, whose own are newer); DEST/bin's RUNPATH is set to $ORIGIN/../lib
# (and CUDA's library folder for the tracer), so nothing depends on
# LD_LIBRARY_PATH, which would reach the traced program too.
set -euo pipefail
build=$1
dest=$2
programs=(ssgd libssgd_tracer.so tracer_inject_probe tracer_library_test cupti_record_decoder_test
          tracer_core_test tracer_nccl_test trace_cli_test)
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib"
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libutil\.so|libstdc\+\+|libgcc_s|libcuda\.so|libcupti|libnccl)'
for p in "${programs[@]}"; do
  cp "$build/bin/$p" "$dest/bin/"
  ldd "$build/bin/$p" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if ! [[ $name =~ $skip ]]; then cp -L -n "$path" "$dest/lib/$name"; fi
  done
done
strip --strip-unneeded "$dest"/bin/* "$dest"/lib/* 2>/dev/null || true
for p in "$dest"/bin/*; do
  if [ "$(basename "$p")" = libssgd_tracer.so ]; then
    patchelf --set-rpath '$ORIGIN/../lib:/usr/local/cuda/lib64:/usr/local/cuda/lib' "$p"
  else
    patchelf --set-rpath '$ORIGIN/../lib' "$p"
  fi
done
for l in "$dest"/lib/*; do patchelf --set-rpath '$ORIGIN' "$l"; done
du -sh "$dest"
