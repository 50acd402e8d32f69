#include "simulator/platform/tcp_stream_preset.h"

#include <array>

namespace ssgd::sim {
namespace {

constexpr std::array kPresets{
    // NCCL's socket transport on hosts other than AWS and GCP: one socket
    // and no helper thread per channel connection (NCCL_NSOCKS_PERTHREAD and
    // NCCL_SOCKET_NTHREADS both default to 1 there, src/transport/
    // net_socket.cc and NCCL's environment documentation). Under the NCCL
    // library each channel's crossing between nodes is a connection of its
    // own, so this is one stream a connection (a textbook ring, one
    // connection a hop, stands for NCCL's two channels with 2 streams). One
    // socket moved 1.0 to 1.5 GB/s in NVIDIA/nccl issue 450 (4 to 6 GB/s of
    // bus bandwidth with NCCL_MIN_NCHANNELS=4 and a socket each, 100 Gb/s
    // TCP, 4 x 8 V100).
    TcpStreamPreset{"nccl_socket", 1, 1.25e9,
                    "NCCL's socket transport, defaults: 1 socket a channel, 1.25 GB/s each",
                    "NCCL src/transport/net_socket.cc defaults; NVIDIA/nccl issue 450"},
    // BytePS (ps-lite over TCP): one connection per worker and server pair;
    // its best-practice document says one TCP connection usually cannot
    // reach 25 Gb/s and runs 2 or 3 server instances per machine above it.
    // The same per-connection rate as NCCL's socket.
    TcpStreamPreset{"byteps", 1, 1.25e9,
                    "BytePS over ps-lite TCP: 1 connection per worker and server, 1.25 GB/s",
                    "bytedance/byteps docs/best-practice.md; NVIDIA/nccl issue 450 for the rate"},
};

}  // namespace

std::span<const TcpStreamPreset> tcp_stream_presets() { return kPresets; }

const TcpStreamPreset* find_tcp_stream_preset(std::string_view name) {
  for (const auto& p : kPresets) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string tcp_stream_preset_names() {
  std::string out;
  for (const auto& p : kPresets) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

}  // namespace ssgd::sim
