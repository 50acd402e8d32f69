// The UDP clock exchange (tracer/core/clock_exchange.h) on the loopback
// interface: the packet format and its malformed forms, server addresses,
// an exchange with the host's own clock, servers whose clocks are shifted
// by a known offset (the sign of the stored offset), a closed port and a
// silent server (no estimate, within the budget), garbage packets (ignored
// and counted) and stale replies (ignored by the client).
#include "tracer/core/clock_exchange.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/support/tracer_test_doubles.h"

namespace ssgd::tracer {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kFiveSeconds = 5'000'000'000;

// A UDP socket bound to an ephemeral loopback port; closes on destruction.
struct UdpSocket {
  int fd = -1;
  std::uint16_t port = 0;
  UdpSocket() {
    fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~UdpSocket() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  void send_to(std::uint16_t to, const std::vector<std::uint8_t>& bytes) const {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(to);
    ASSERT_EQ(::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&a),
                       sizeof a),
              static_cast<ssize_t>(bytes.size()));
  }
};

using ssgd::testing::shifted_clock_server;

ClockExchangeOptions quick(std::chrono::milliseconds budget = 2000ms) {
  ClockExchangeOptions o;
  o.budget = budget;
  return o;
}

TEST(ClockExchangeTest, PacketsRoundTripAndMalformedOnesAreNamed) {
  std::string why;
  const auto request = encode_clock_request({0x0102030405060708, -42});
  ASSERT_EQ(request.size(), kClockRequestBytes);
  const auto r = decode_clock_request(request, why);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->sequence, 0x0102030405060708u);
  EXPECT_EQ(r->t0, -42);

  const auto reply = encode_clock_reply({7, 1, 2, 3, "node0"});
  ASSERT_EQ(reply.size(), kClockReplyHeaderBytes + 5);
  const auto p = decode_clock_reply(reply, why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->sequence, 7u);
  EXPECT_EQ(p->t0, 1);
  EXPECT_EQ(p->t1, 2);
  EXPECT_EQ(p->t2, 3);
  EXPECT_EQ(p->hostname, "node0");

  // Too short: a request shorter than the longest reply, a cut reply.
  EXPECT_FALSE(decode_clock_request(std::span(request).first(100), why));
  EXPECT_EQ(why, "request of 100 bytes, expected at least 128");
  EXPECT_FALSE(decode_clock_reply(std::span(reply).first(kClockReplyHeaderBytes + 2), why));
  EXPECT_EQ(why, "reply with a host name of 5 bytes in a packet of 42");
  // A reply is not a request, and the other way round.
  auto padded_reply = reply;
  padded_reply.resize(kClockRequestBytes);
  EXPECT_FALSE(decode_clock_request(padded_reply, why));
  EXPECT_EQ(why, "request with another magic number");
  EXPECT_FALSE(decode_clock_reply(request, why));
  EXPECT_EQ(why, "reply with another magic number");
  auto version2 = request;
  version2[5] = 2;
  EXPECT_FALSE(decode_clock_request(version2, why));
  EXPECT_EQ(why, "request of version 2, expected 1");
  // A long host name is cut so that a reply is never longer than a request.
  const auto long_name = encode_clock_reply({1, 1, 1, 1, std::string(300, 'h')});
  EXPECT_EQ(long_name.size(), kClockRequestBytes);
}

TEST(ClockExchangeTest, ServerAddressesAreParsedOrRefusedWithAReason) {
  std::string why;
  auto a = parse_clock_server_address("node0:4791", why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->host, "node0");
  EXPECT_EQ(a->port, 4791);
  EXPECT_EQ(a->to_string(), "node0:4791");
  a = parse_clock_server_address("[fe80::1]:65535", why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->host, "fe80::1");
  EXPECT_EQ(a->to_string(), "[fe80::1]:65535");
  const std::vector<std::pair<std::string, std::string>> bad{
      {"node0", "'node0': expected HOST:PORT, e.g. node0:4791"},
      {":80", "':80': expected HOST:PORT, e.g. node0:4791"},
      {"node0:", "'node0:': the port '' is not a decimal number"},
      {"node0:8x", "'node0:8x': the port '8x' is not a decimal number"},
      {"node0:0", "'node0:0': the port 0 is not in 1..65535"},
      {"node0:65536", "'node0:65536': the port 65536 is not in 1..65535"},
      {"fe80::1:80", "'fe80::1:80': put an IPv6 address in brackets, e.g. [fe80::1]:4791"},
      {"[fe80::1:80", "'[fe80::1:80': an IPv6 address in brackets must be closed, e.g. [fe80::1]:4791"},
  };
  for (const auto& [text, expected] : bad) {
    EXPECT_FALSE(parse_clock_server_address(text, why)) << text;
    EXPECT_EQ(why, expected);
  }
}

TEST(ClockExchangeTest, LoopbackWithTheSameClockGivesASmallOffset) {
  auto server = shifted_clock_server(0, "refhost");
  ASSERT_TRUE(server);
  const ClockExchangeResult r = measure_clock_offset({"127.0.0.1", server->port()}, quick());
  ASSERT_TRUE(r.estimate) << r.failure;
  EXPECT_EQ(r.reference_hostname, "refhost");
  EXPECT_EQ(r.sent, 16);
  EXPECT_EQ(r.replies, 16);
  // The true offset is 0 and always lies within the uncertainty.
  EXPECT_LE(std::llabs(r.estimate->offset_ns), r.estimate->uncertainty_ns);
  EXPECT_LT(r.estimate->uncertainty_ns, 5'000'000) << "a loopback round trip over 10 ms";
  server->stop();  // its thread counts a reply after sending it
  EXPECT_EQ(server->counters().answered, 16u);
  EXPECT_EQ(server->counters().ignored, 0u);
}

TEST(ClockExchangeTest, AShiftedServerClockGivesTheOffsetWithItsSign) {
  // The server's clock reads 5 s ahead (then behind) of this host's: the
  // stored offset is what to add to this host's time to get the server's.
  for (const std::int64_t shift : {kFiveSeconds, -kFiveSeconds}) {
    auto server = shifted_clock_server(shift, "ref");
    ASSERT_TRUE(server);
    const std::int64_t before = read_event_clock_ns();
    const ClockExchangeResult r = measure_clock_offset({"localhost", server->port()}, quick());
    const std::int64_t after = read_event_clock_ns();
    ASSERT_TRUE(r.estimate) << r.failure;
    EXPECT_LE(std::llabs(r.estimate->offset_ns - shift), r.estimate->uncertainty_ns)
        << "shift " << shift << ", offset " << r.estimate->offset_ns;
    // Measured at this host's time, not the server's.
    EXPECT_GE(r.estimate->measured_at_ns, before);
    EXPECT_LE(r.estimate->measured_at_ns, after);
  }
}

TEST(ClockExchangeTest, AClosedPortGivesNoEstimateWithinTheBudget) {
  UdpSocket probe;
  const std::uint16_t port = probe.port;
  probe.close();  // nobody listens there now
  const auto start = std::chrono::steady_clock::now();
  const ClockExchangeResult r = measure_clock_offset({"127.0.0.1", port}, quick(300ms));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.estimate);
  EXPECT_NE(r.failure.find("no reply from 127.0.0.1:" + std::to_string(port) + " within 300 ms"),
            std::string::npos)
      << r.failure;
  EXPECT_LT(took, 1000ms);
}

TEST(ClockExchangeTest, ASilentServerGivesNoEstimateAfterTheBudget) {
  UdpSocket silent;  // bound, never answers
  const auto start = std::chrono::steady_clock::now();
  ClockExchangeOptions o = quick(300ms);
  o.reply_timeout = 50ms;
  const ClockExchangeResult r = measure_clock_offset({"127.0.0.1", silent.port}, o);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.estimate);
  EXPECT_GE(r.sent, 2);
  EXPECT_NE(r.failure.find("no reply"), std::string::npos) << r.failure;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 1000ms);
}

TEST(ClockExchangeTest, GarbagePacketsAreIgnoredAndCounted) {
  auto server = shifted_clock_server(0, "ref");
  ASSERT_TRUE(server);
  UdpSocket sender;
  sender.send_to(server->port(), std::vector<std::uint8_t>(10, 0xab));  // short
  sender.send_to(server->port(), std::vector<std::uint8_t>(kClockRequestBytes, 0));  // magic
  auto truncated = encode_clock_request({1, 2});
  truncated.resize(kClockRequestBytes - 1);
  sender.send_to(server->port(), truncated);
  for (int i = 0; i < 200 && server->counters().ignored < 3; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(server->counters().ignored, 3u);
  EXPECT_EQ(server->counters().answered, 0u);
  // It still answers.
  const ClockExchangeResult r = measure_clock_offset({"127.0.0.1", server->port()}, quick());
  EXPECT_TRUE(r.estimate) << r.failure;
  server->stop();
  server->stop();  // twice is fine
}

TEST(ClockExchangeTest, StaleAndForeignRepliesAreIgnoredByTheClient) {
  // A hand-made server that answers each request first with a reply to
  // another sequence number and a malformed packet, then properly.
  UdpSocket fake;
  std::thread answer([&] {
    for (int i = 0; i < 2; ++i) {
      std::vector<std::uint8_t> buffer(256);
      sockaddr_storage from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(fake.fd, buffer.data(), buffer.size(), 0,
                                   reinterpret_cast<sockaddr*>(&from), &len);
      std::string why;
      const auto request = decode_clock_request(std::span(buffer.data(), std::size_t(n)), why);
      if (!request) return;
      const auto send = [&](const std::vector<std::uint8_t>& bytes) {
        ::sendto(fake.fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&from), len);
      };
      const std::int64_t now = read_event_clock_ns();
      send(encode_clock_reply({request->sequence + 1, request->t0, now, now, "fake"}));
      send(std::vector<std::uint8_t>(12, 1));
      send(encode_clock_reply({request->sequence, request->t0, now, now + 1, "fake"}));
    }
  });
  ClockExchangeOptions o = quick();
  o.exchanges = 2;
  const ClockExchangeResult r = measure_clock_offset({"127.0.0.1", fake.port}, o);
  answer.join();
  ASSERT_TRUE(r.estimate) << r.failure;
  EXPECT_EQ(r.replies, 2);
  EXPECT_EQ(r.ignored, 4);
  EXPECT_EQ(r.reference_hostname, "fake");
}

TEST(ClockExchangeTest, AFixedPortInUseIsAnErrorNotAThrow) {
  auto first = shifted_clock_server(0, "ref");
  ASSERT_TRUE(first);
  ClockServerOptions o;
  o.port = first->port();
  std::string error;
  std::unique_ptr<ClockServer> second;
  EXPECT_NO_THROW(second = ClockServer::start(o, &error));
  EXPECT_FALSE(second);
  EXPECT_NE(error.find("cannot listen on UDP port " + std::to_string(first->port())),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace ssgd::tracer
