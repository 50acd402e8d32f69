#include "tracer/core/clock_exchange.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tracer/core/host_clock.h"

namespace ssgd::tracer {
namespace {

constexpr std::uint32_t kRequestMagic = 0x53434B51;  // 'SCKQ'
constexpr std::uint32_t kReplyMagic = 0x53434B52;    // 'SCKR'
constexpr std::uint16_t kVersion = 1;
constexpr std::size_t kRequestFieldBytes = 24;
constexpr std::size_t kReplyT2Offset = 32;  // patched just before sending
constexpr std::size_t kMaxResolvedAddresses = 4;

void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<std::uint8_t>(v & 0xff);
    v >>= 8;
  }
}
void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) {
    p[i] = static_cast<std::uint8_t>(v & 0xff);
    v >>= 8;
  }
}
void put_u16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v & 0xff);
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}
std::uint32_t get_u32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}
std::uint16_t get_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

// The magic and version every packet starts with; false with `why` set.
bool check_preamble(std::span<const std::uint8_t> bytes, std::size_t min_size,
                    std::uint32_t magic, const char* what, std::string& why) {
  if (bytes.size() < min_size) {
    why = std::string(what) + " of " + std::to_string(bytes.size()) + " bytes, expected at least " +
          std::to_string(min_size);
    return false;
  }
  if (get_u32(bytes.data()) != magic) {
    why = std::string(what) + " with another magic number";
    return false;
  }
  if (get_u16(bytes.data() + 4) != kVersion) {
    why = std::string(what) + " of version " + std::to_string(get_u16(bytes.data() + 4)) +
          ", expected " + std::to_string(kVersion);
    return false;
  }
  return true;
}

std::string hostname_or_empty() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) return {};
  return host.data();
}

using SteadyClock = std::chrono::steady_clock;

timespec to_timespec(SteadyClock::duration d) {
  const auto ns = std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

// One socket's worth of exchanges: what they gave and why they stopped.
struct ExchangeRun {
  std::vector<trace::ClockExchange> exchanges;
  std::string reference_hostname;
  std::string stopped;  // a socket error that ended the run early; empty if none
};

void exchange_on(int fd, const ClockExchangeOptions& options, const ClockReader& clock,
                 SteadyClock::time_point deadline, ClockExchangeResult& result, ExchangeRun& run) {
  // Sequence numbers differ between processes and runs, so that a late
  // reply to someone else's request is never taken for ours.
  const std::uint64_t base = (static_cast<std::uint64_t>(getpid()) << 40) ^
                             static_cast<std::uint64_t>(clock());
  std::array<std::uint8_t, 2048> buffer{};
  for (int i = 0; i < options.exchanges && SteadyClock::now() < deadline; ++i) {
    ClockRequest request;
    request.sequence = base + static_cast<std::uint64_t>(i);
    request.t0 = clock();
    const std::vector<std::uint8_t> bytes = encode_clock_request(request);
    if (::send(fd, bytes.data(), bytes.size(), 0) < 0) {
      run.stopped = std::string("send: ") + std::strerror(errno);
      return;
    }
    ++result.sent;
    const auto reply_deadline = std::min(deadline, SteadyClock::now() + options.reply_timeout);
    for (;;) {
      const auto left = reply_deadline - SteadyClock::now();
      if (left <= SteadyClock::duration::zero()) break;  // no reply: the next request
      pollfd p{fd, POLLIN, 0};
      const timespec wait = to_timespec(left);
      const int ready = ::ppoll(&p, 1, &wait, nullptr);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
      const std::int64_t t3 = clock();
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        // ECONNREFUSED: an ICMP "port unreachable" came back; nobody listens.
        run.stopped = std::string("recv: ") + std::strerror(errno);
        return;
      }
      std::string why;
      const auto reply =
          decode_clock_reply(std::span(buffer.data(), static_cast<std::size_t>(n)), why);
      if (!reply || reply->sequence != request.sequence || reply->t0 != request.t0 ||
          reply->t2 < reply->t1 || t3 < request.t0) {
        ++result.ignored;  // malformed, an earlier request's, or impossible
        continue;
      }
      if (!run.reference_hostname.empty() && reply->hostname != run.reference_hostname) {
        ++result.ignored;  // another server answers at the same address
        continue;
      }
      run.reference_hostname = reply->hostname;
      run.exchanges.push_back({request.t0, reply->t1, reply->t2, t3});
      ++result.replies;
      break;
    }
  }
}

}  // namespace

std::int64_t read_event_clock_ns() noexcept {
  return read_clock_ns(trace::v1::ClockDomain::MONOTONIC_RAW);
}

std::vector<std::uint8_t> encode_clock_request(const ClockRequest& request) {
  std::vector<std::uint8_t> b(kClockRequestBytes, 0);
  put_u32(b.data(), kRequestMagic);
  put_u16(b.data() + 4, kVersion);
  put_u64(b.data() + 8, request.sequence);
  put_u64(b.data() + 16, static_cast<std::uint64_t>(request.t0));
  return b;
}

std::vector<std::uint8_t> encode_clock_reply(const ClockReply& reply) {
  const std::size_t n = std::min(reply.hostname.size(), kClockReplyMaxHostnameBytes);
  std::vector<std::uint8_t> b(kClockReplyHeaderBytes + n, 0);
  put_u32(b.data(), kReplyMagic);
  put_u16(b.data() + 4, kVersion);
  put_u16(b.data() + 6, static_cast<std::uint16_t>(n));
  put_u64(b.data() + 8, reply.sequence);
  put_u64(b.data() + 16, static_cast<std::uint64_t>(reply.t0));
  put_u64(b.data() + 24, static_cast<std::uint64_t>(reply.t1));
  put_u64(b.data() + kReplyT2Offset, static_cast<std::uint64_t>(reply.t2));
  std::memcpy(b.data() + kClockReplyHeaderBytes, reply.hostname.data(), n);
  return b;
}

std::optional<ClockRequest> decode_clock_request(std::span<const std::uint8_t> bytes,
                                                 std::string& why) {
  // A request shorter than the longest reply is refused (no amplification).
  if (!check_preamble(bytes, kClockRequestBytes, kRequestMagic, "request", why)) return {};
  ClockRequest r;
  r.sequence = get_u64(bytes.data() + 8);
  r.t0 = static_cast<std::int64_t>(get_u64(bytes.data() + 16));
  static_assert(kRequestFieldBytes <= kClockRequestBytes);
  return r;
}

std::optional<ClockReply> decode_clock_reply(std::span<const std::uint8_t> bytes,
                                             std::string& why) {
  if (!check_preamble(bytes, kClockReplyHeaderBytes, kReplyMagic, "reply", why)) return {};
  const std::size_t n = get_u16(bytes.data() + 6);
  if (n > kClockReplyMaxHostnameBytes || kClockReplyHeaderBytes + n > bytes.size()) {
    why = "reply with a host name of " + std::to_string(n) + " bytes in a packet of " +
          std::to_string(bytes.size());
    return {};
  }
  ClockReply r;
  r.sequence = get_u64(bytes.data() + 8);
  r.t0 = static_cast<std::int64_t>(get_u64(bytes.data() + 16));
  r.t1 = static_cast<std::int64_t>(get_u64(bytes.data() + 24));
  r.t2 = static_cast<std::int64_t>(get_u64(bytes.data() + kReplyT2Offset));
  r.hostname.assign(reinterpret_cast<const char*>(bytes.data() + kClockReplyHeaderBytes), n);
  return r;
}

std::string ClockServerAddress::to_string() const {
  const std::string h = host.find(':') == std::string::npos ? host : "[" + host + "]";
  return h + ":" + std::to_string(port);
}

std::optional<ClockServerAddress> parse_clock_server_address(std::string_view text,
                                                             std::string& why) {
  const std::string shown = std::string("'").append(text).append("'");
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    why = shown + ": expected HOST:PORT, e.g. node0:4791";
    return {};
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') {
      why = shown + ": an IPv6 address in brackets must be closed, e.g. [fe80::1]:4791";
      return {};
    }
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    why = shown + ": put an IPv6 address in brackets, e.g. [fe80::1]:4791";
    return {};
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string_view::npos) {
    why = shown + ": the port '" + std::string(port) + "' is not a decimal number";
    return {};
  }
  const int p = std::stoi(std::string(port));
  if (p < 1 || p > 65535) {
    why = shown + ": the port " + std::to_string(p) + " is not in 1..65535";
    return {};
  }
  return ClockServerAddress{std::string(host), static_cast<std::uint16_t>(p)};
}

std::unique_ptr<ClockServer> ClockServer::start(ClockServerOptions options,
                                                std::string* error) noexcept {
  const auto fail = [&](const std::string& what) -> std::unique_ptr<ClockServer> {
    if (error != nullptr) *error = what;
    return nullptr;
  };
  try {
    std::unique_ptr<ClockServer> s(new ClockServer());
    if (!options.clock) options.clock = read_event_clock_ns;
    if (options.hostname.empty()) options.hostname = hostname_or_empty();
    s->options_ = std::move(options);
    const std::uint16_t port = s->options_.port;
    // Both IPv6 and IPv4 on one socket where the host has IPv6, else IPv4.
    int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    bool bound = false;
    if (fd >= 0) {
      const int off = 0;
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(port);
      bound = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      if (!bound && errno == EADDRINUSE) {
        ::close(fd);
        return fail("cannot listen on UDP port " + std::to_string(port) + ": " +
                    std::strerror(EADDRINUSE));
      }
      if (!bound) ::close(fd);
    }
    if (!bound) {
      fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return fail(std::string("cannot open a UDP socket: ") + std::strerror(errno));
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(port);
      if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        const int e = errno;
        ::close(fd);
        return fail("cannot listen on UDP port " + std::to_string(port) + ": " + std::strerror(e));
      }
    }
    s->socket_ = fd;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    s->port_ = ntohs(local.ss_family == AF_INET6
                         ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                         : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
    int wake[2];
    if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
      return fail(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    s->wake_read_ = wake[0];
    s->wake_write_ = wake[1];
    s->thread_ = std::thread([p = s.get()] { p->serve(); });
    return s;
  } catch (const std::exception& e) {
    return fail(std::string("cannot start the clock server: ") + e.what());
  }
}

ClockServer::~ClockServer() { stop(); }

void ClockServer::stop() noexcept {
  if (thread_.joinable()) {
    const char byte = 0;
    [[maybe_unused]] const ssize_t n = ::write(wake_write_, &byte, 1);
    thread_.join();
  }
  for (int* fd : {&socket_, &wake_read_, &wake_write_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

ClockServerCounters ClockServer::counters() const noexcept {
  return {answered_.load(), ignored_.load(), send_errors_.load()};
}

void ClockServer::serve() noexcept {
  std::array<std::uint8_t, 2048> buffer{};
  for (;;) {
    std::array<pollfd, 2> p{pollfd{socket_, POLLIN, 0}, pollfd{wake_read_, POLLIN, 0}};
    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[1].revents != 0) return;
    if (p[0].revents == 0) continue;
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const ssize_t n = ::recvfrom(socket_, buffer.data(), buffer.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
    const std::int64_t t1 = options_.clock();
    if (n < 0) continue;
    try {
      std::string why;
      const auto request =
          decode_clock_request(std::span(buffer.data(), static_cast<std::size_t>(n)), why);
      if (!request) {
        ignored_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      std::vector<std::uint8_t> reply =
          encode_clock_reply({request->sequence, request->t0, t1, 0, options_.hostname});
      put_u64(reply.data() + kReplyT2Offset, static_cast<std::uint64_t>(options_.clock()));
      if (::sendto(socket_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from),
                   from_len) < 0) {
        send_errors_.fetch_add(1, std::memory_order_relaxed);
      } else {
        answered_.fetch_add(1, std::memory_order_relaxed);
      }
    } catch (...) {
      send_errors_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

ClockExchangeResult measure_clock_offset(const ClockServerAddress& address,
                                         const ClockExchangeOptions& options) noexcept {
  ClockExchangeResult result;
  try {
    const ClockReader clock = options.clock ? options.clock : ClockReader(read_event_clock_ns);
    const auto deadline = SteadyClock::now() + options.budget;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(address.port);
    if (const int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      result.failure = "cannot resolve '" + address.host + "': " + ::gai_strerror(rc);
      return result;
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, ::freeaddrinfo);
    // Every address the name has (IPv6 and IPv4 of localhost, say) until
    // one answers; a refused one fails at once.
    ExchangeRun run;
    std::string errors;
    std::size_t tried = 0;
    for (const addrinfo* a = found; a != nullptr && tried < kMaxResolvedAddresses &&
                                    run.exchanges.empty() && SteadyClock::now() < deadline;
         a = a->ai_next, ++tried) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      // A connected socket receives only the server's packets, and learns
      // of an unreachable port from the ICMP error.
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        run = ExchangeRun{};
        exchange_on(fd, options, clock, deadline, result, run);
        if (!run.stopped.empty()) errors += (errors.empty() ? "" : "; ") + run.stopped;
      } else {
        errors += (errors.empty() ? "connect: " : "; connect: ") + std::string(std::strerror(errno));
      }
      ::close(fd);
    }
    if (run.exchanges.empty()) {
      result.failure = "no reply from " + address.to_string() + " within " +
                       std::to_string(options.budget.count()) + " ms (" +
                       std::to_string(result.sent) + " requests sent" +
                       (errors.empty() ? "" : ", " + errors) + ")";
      return result;
    }
    result.reference_hostname = run.reference_hostname;
    result.estimate = trace::estimate_offset_of_sender(run.exchanges);
  } catch (const std::exception& e) {
    result.estimate.reset();
    result.failure = std::string("clock exchange failed: ") + e.what();
  } catch (...) {
    result.estimate.reset();
    result.failure = "clock exchange failed";
  }
  return result;
}

}  // namespace ssgd::tracer
