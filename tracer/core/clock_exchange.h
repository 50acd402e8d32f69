#pragma once
// The ping-pong clock exchange between a traced process and a reference
// host, over UDP, at the start and at the end of a capture. `ssgd trace`
// runs a ClockServer (the reference clock); every traced process measures
// its host's offset to it with measure_clock_offset and stores the result
// as a ClockCalibration (header: start; footer: start and end), which
// `ssgd merge` applies (traces/clock_calibration.h).
//
// The traced process sends first: request i carries its clock at sending,
// t0; the server answers with t0, its clock when the request arrived (t1)
// and when it answered (t2); the client reads t3 on arrival. The estimate
// (estimate_offset_of_sender: minimum round trip, uncertainty half of it)
// is what to add to the traced host's clock to get the reference host's.
// Asymmetric paths err by at most the uncertainty.
//
// Wire format, big-endian, version 1:
//   request, 128 bytes: u32 magic 'SCKQ', u16 version, u16 0, u64 sequence,
//     i64 t0, zero padding. The padding makes a request as long as the
//     longest reply, so the server never sends more than it receives.
//   reply, 40 + n bytes (n <= 88): u32 magic 'SCKR', u16 version, u16 n,
//     u64 sequence, i64 t0 (echoed), i64 t1, i64 t2, then the n bytes of
//     the server's host name (the reference_hostname to store).
//
// Nothing here throws or writes to stdout; failures are returned as text.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "traces/clock_calibration.h"

namespace ssgd::tracer {

// Reads a clock, ns. Tests shift it by a known offset.
using ClockReader = std::function<std::int64_t()>;

// CLOCK_MONOTONIC_RAW, the tracer's event clock (host_clock.h).
std::int64_t read_event_clock_ns() noexcept;

inline constexpr std::size_t kClockRequestBytes = 128;
inline constexpr std::size_t kClockReplyHeaderBytes = 40;
inline constexpr std::size_t kClockReplyMaxHostnameBytes = kClockRequestBytes - kClockReplyHeaderBytes;

struct ClockRequest {
  std::uint64_t sequence = 0;
  std::int64_t t0 = 0;
};

struct ClockReply {
  std::uint64_t sequence = 0;
  std::int64_t t0 = 0;
  std::int64_t t1 = 0;
  std::int64_t t2 = 0;
  std::string hostname;
};

// The bytes of a request (kClockRequestBytes) and of a reply (the host name
// is cut to kClockReplyMaxHostnameBytes).
std::vector<std::uint8_t> encode_clock_request(const ClockRequest& request);
std::vector<std::uint8_t> encode_clock_reply(const ClockReply& reply);
// Decodes a packet; nothing, with `why` set, when it is too short, has
// another magic or version, or a host name longer than the packet.
std::optional<ClockRequest> decode_clock_request(std::span<const std::uint8_t> bytes,
                                                 std::string& why);
std::optional<ClockReply> decode_clock_reply(std::span<const std::uint8_t> bytes,
                                             std::string& why);

// "HOST:PORT" or "[IPV6]:PORT", port 1..65535.
struct ClockServerAddress {
  std::string host;
  std::uint16_t port = 0;
  [[nodiscard]] std::string to_string() const;
};
// Nothing, with `why` set ("expected HOST:PORT ..."), for a malformed value.
std::optional<ClockServerAddress> parse_clock_server_address(std::string_view text,
                                                             std::string& why);

struct ClockServerOptions {
  // UDP port to listen on (every interface, IPv6 and IPv4); 0: one the OS picks.
  std::uint16_t port = 0;
  // The reference clock; read_event_clock_ns when empty.
  ClockReader clock;
  // The host name sent in replies; gethostname() when empty.
  std::string hostname;
};

struct ClockServerCounters {
  std::uint64_t answered = 0;
  std::uint64_t ignored = 0;      // short, wrong magic or version
  std::uint64_t send_errors = 0;  // replies sendto() could not send
};

// Answers clock requests on a thread of its own until stop() or
// destruction. Sockets are close-on-exec, so a traced child does not keep
// the port open.
class ClockServer {
 public:
  // Binds the socket and starts the thread; null with `error` set when the
  // port cannot be bound.
  static std::unique_ptr<ClockServer> start(ClockServerOptions options, std::string* error) noexcept;
  ~ClockServer();
  ClockServer(const ClockServer&) = delete;
  ClockServer& operator=(const ClockServer&) = delete;

  // The port bound (the OS's pick when options.port was 0).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] const std::string& hostname() const noexcept { return options_.hostname; }
  [[nodiscard]] ClockServerCounters counters() const noexcept;
  // Stops and joins the thread; safe to call more than once.
  void stop() noexcept;

 private:
  ClockServer() = default;
  void serve() noexcept;

  ClockServerOptions options_;
  std::uint16_t port_ = 0;
  int socket_ = -1;
  int wake_read_ = -1;  // a pipe: stop() writes to wake the thread
  int wake_write_ = -1;
  std::thread thread_;
  std::atomic<std::uint64_t> answered_{0};
  std::atomic<std::uint64_t> ignored_{0};
  std::atomic<std::uint64_t> send_errors_{0};
};

struct ClockExchangeOptions {
  // Exchanges to make; the one with the smallest round trip is kept.
  int exchanges = 16;
  // Everything (name resolution aside) ends within this time.
  std::chrono::milliseconds budget{500};
  // How long to wait for each reply before sending the next request.
  std::chrono::milliseconds reply_timeout{100};
  // This host's event clock; read_event_clock_ns when empty.
  ClockReader clock;
};

struct ClockExchangeResult {
  // The minimum-round-trip estimate: add offset_ns to this host's clock to
  // get the server's; nothing when no valid reply came.
  std::optional<trace::OffsetEstimate> estimate;
  // The server's host name, from its replies.
  std::string reference_hostname;
  int sent = 0;
  int replies = 0;  // valid replies to the current request
  int ignored = 0;  // malformed, stale (an earlier request's) or impossible replies
  // Why there is no estimate, e.g. "no reply from node0:4791 within 500 ms".
  std::string failure;
};

// Measures this host's offset to the server at `address`. Never throws.
ClockExchangeResult measure_clock_offset(const ClockServerAddress& address,
                                         const ClockExchangeOptions& options) noexcept;

}  // namespace ssgd::tracer
