// The NTP-style offset estimator and the drift mapping
// (traces/clock_calibration.h) on synthetic exchanges with known true
// offsets: symmetric and asymmetric delays, the minimum-round-trip choice,
// the error bound over many random exchanges, drift between a start and an
// end estimate, and impossible input.
#include "traces/clock_calibration.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <vector>

namespace ssgd::trace {
namespace {

// An exchange with a remote clock that reads `true_offset` less than the
// reference (so true_offset is what to add to remote time), sent at
// reference time t0 with the given one-way delays and remote turnaround.
ClockExchange exchange(std::int64_t t0, std::int64_t true_offset, std::int64_t forward,
                       std::int64_t turnaround, std::int64_t back) {
  ClockExchange e;
  e.t0 = t0;
  e.t1 = t0 + forward - true_offset;
  e.t2 = e.t1 + turnaround;
  e.t3 = e.t2 + true_offset + back;
  return e;
}

TEST(ClockCalibrationTest, SymmetricDelaysGiveTheExactOffset) {
  const std::vector<ClockExchange> ex{exchange(1000, -500, 100, 50, 100)};
  const OffsetEstimate e = estimate_offset(ex);
  EXPECT_EQ(e.offset_ns, -500);
  EXPECT_EQ(e.uncertainty_ns, 100);  // half of the 200 ns round trip
  EXPECT_EQ(e.measured_at_ns, (ex[0].t1 + ex[0].t2) / 2);
}

TEST(ClockCalibrationTest, TheMinimumRoundTripExchangeIsKept) {
  // Asymmetric paths: the estimate is off by half the asymmetry, which the
  // exchange with the shortest round trip keeps smallest.
  const std::vector<ClockExchange> ex{
      exchange(0, 7000, 300, 10, 100),     // round trip 400, error 100
      exchange(10'000, 7000, 60, 10, 40),  // round trip 100, error 10
      exchange(20'000, 7000, 40, 10, 900), // round trip 940, error -430
  };
  const OffsetEstimate e = estimate_offset(ex);
  EXPECT_EQ(e.offset_ns, 7000 - 10);
  EXPECT_EQ(e.uncertainty_ns, 50);
  EXPECT_EQ(e.measured_at_ns, ex[1].t1 + 5);
}

TEST(ClockCalibrationTest, TiesKeepTheFirstExchange) {
  const std::vector<ClockExchange> ex{exchange(0, 100, 30, 0, 10), exchange(50, 100, 10, 0, 30)};
  EXPECT_EQ(estimate_offset(ex).offset_ns, 100 - 10);
}

TEST(ClockCalibrationTest, TheTrueOffsetIsAlwaysWithinTheUncertainty) {
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<std::int64_t> delay(0, 50'000);
  std::uniform_int_distribution<std::int64_t> offset(-5'000'000'000, 5'000'000'000);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::int64_t truth = offset(rng);
    std::vector<ClockExchange> ex;
    for (int i = 0; i < 1 + trial % 7; ++i) {
      ex.push_back(exchange(1'000'000 * i, truth, delay(rng), delay(rng) % 997, delay(rng)));
    }
    const OffsetEstimate e = estimate_offset(ex);
    ASSERT_LE(std::llabs(e.offset_ns - truth), e.uncertainty_ns) << "trial " << trial;
  }
}

TEST(ClockCalibrationTest, ImpossibleExchangesAreRejectedByIndex) {
  EXPECT_THROW(estimate_offset({}), std::invalid_argument);
  std::vector<ClockExchange> ex{exchange(0, 0, 10, 10, 10), {100, 50, 40, 200}};
  try {
    estimate_offset(ex);
    FAIL() << "t2 < t1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("exchange 1"), std::string::npos) << e.what();
  }
  ex[1] = {100, 0, 0, 50};
  ex[1].t3 = 90;  // answered before it was asked
  EXPECT_THROW(estimate_offset(ex), std::invalid_argument);
}

TEST(ClockCalibrationTest, DriftIsInterpolatedAndExtrapolatedLinearly) {
  const ClockMapping m({100, 4, 0}, OffsetEstimate{200, 9, 1000});
  EXPECT_EQ(m.offset_at(0), 100);
  EXPECT_EQ(m.offset_at(250), 125);
  EXPECT_EQ(m.offset_at(500), 150);
  EXPECT_EQ(m.offset_at(1000), 200);
  EXPECT_EQ(m.offset_at(2000), 300);
  EXPECT_EQ(m.offset_at(-1000), 0);
  EXPECT_EQ(m.to_reference(500), 650);
  EXPECT_EQ(m.uncertainty_ns(), 9);
  const ClockMapping down({0, 0, 0}, OffsetEstimate{-1, 0, 3});
  EXPECT_EQ(down.offset_at(1), -1);  // floor(-1/3)
  EXPECT_EQ(ClockMapping({42, 3, 0}).offset_at(1'000'000), 42);
  EXPECT_TRUE(ClockMapping().is_identity());
  EXPECT_THROW(ClockMapping({0, 0, 10}, OffsetEstimate{0, 0, 10}), std::invalid_argument);
}

TEST(ClockCalibrationTest, TheSenderSideEstimateHasTheSignOfItsReference) {
  // The remote host sends at t0 (its clock), the reference, whose clock
  // reads 5 s more, receives at t1 and answers at t2; back at t3.
  constexpr std::int64_t kAhead = 5'000'000'000;
  ClockExchange e;
  e.t0 = 1000;
  e.t1 = e.t0 + 100 + kAhead;  // 100 ns forward
  e.t2 = e.t1 + 30;
  e.t3 = e.t2 - kAhead + 300;  // 300 ns back
  std::vector<ClockExchange> ex{e};
  OffsetEstimate r = estimate_offset_of_sender(ex);
  EXPECT_EQ(r.offset_ns, kAhead - 100);  // off by half the 200 ns asymmetry
  EXPECT_EQ(r.uncertainty_ns, 200);      // half of the 400 ns round trip
  EXPECT_EQ(r.measured_at_ns, (e.t0 + e.t3) / 2);
  EXPECT_LE(std::llabs(r.offset_ns - kAhead), r.uncertainty_ns);
  // A reference behind: the offset is negative.
  e.t1 = e.t0 + 100 - kAhead;
  e.t2 = e.t1 + 30;
  e.t3 = e.t2 + kAhead + 100;
  ex = {e, exchange(0, 0, 1, 1, 1)};
  ex[1] = ex[0];
  ex[1].t3 += 50;  // a longer round trip: not kept
  r = estimate_offset_of_sender(ex);
  EXPECT_EQ(r.offset_ns, -kAhead);
  EXPECT_EQ(r.uncertainty_ns, 100);
  ex[1].t3 = ex[1].t0 - 1;
  EXPECT_THROW(estimate_offset_of_sender(ex), std::invalid_argument);
}

TEST(ClockCalibrationTest, AStoredCalibrationNeedsAnEstimateAndMayHoldOnlyItsEnd) {
  v1::ClockCalibration c;
  c.set_reference_hostname("login");
  EXPECT_THROW(ClockMapping::from_proto(c), std::invalid_argument);
  c.mutable_end()->set_offset_ns(-70);
  c.mutable_end()->set_uncertainty_ns(9);
  const ClockMapping m = ClockMapping::from_proto(c);
  EXPECT_EQ(m.offset_at(123), -70);
  EXPECT_EQ(m.uncertainty_ns(), 9);
  EXPECT_EQ(describe_calibration(c), "to 'login': -70 ns +- 9 ns at the end");
  c.mutable_start()->set_offset_ns(12);
  c.mutable_start()->set_uncertainty_ns(3);
  c.mutable_start()->set_measured_at_ns(-5);
  EXPECT_EQ(describe_calibration(c),
            "to 'login': +12 ns +- 3 ns at the start, -70 ns +- 9 ns at the end");
}

TEST(ClockCalibrationTest, TheFootersCalibrationIsPreferredToTheHeaders) {
  v1::CaptureMetadata header;
  v1::Footer footer;
  EXPECT_EQ(stored_calibration(header, nullptr), nullptr);
  header.add_hosts()->mutable_clock()->mutable_calibration()->set_reference_hostname("h");
  EXPECT_EQ(stored_calibration(header, &footer), &header.hosts(0).clock().calibration());
  footer.mutable_clock_calibration()->set_reference_hostname("f");
  EXPECT_EQ(stored_calibration(header, &footer)->reference_hostname(), "f");
  EXPECT_EQ(stored_calibration(header, nullptr)->reference_hostname(), "h");
}

TEST(ClockCalibrationTest, StartAndEndEstimatesTrackADriftingClock) {
  // The remote clock runs 20 ppm fast: remote = ref * (1 + 2e-5) - 3000,
  // so the offset to add falls by 20 ns per ms of capture.
  const auto remote_of = [](std::int64_t ref) { return ref + ref / 50'000 - 3000; };
  const auto exchange_at = [&](std::int64_t t0, std::int64_t forward, std::int64_t back) {
    ClockExchange e;
    e.t0 = t0;
    e.t1 = remote_of(t0 + forward);
    e.t2 = remote_of(t0 + forward + 20);
    e.t3 = t0 + forward + 20 + back;
    return e;
  };
  const std::vector<ClockExchange> start{exchange_at(1'000'000, 500, 700),
                                         exchange_at(2'000'000, 300, 310)};
  const std::vector<ClockExchange> end{exchange_at(10'000'000'000, 400, 420)};
  const ClockMapping m(estimate_offset(start), estimate_offset(end));
  for (std::int64_t ref : {2'000'000LL, 3'000'000'000LL, 7'500'000'000LL, 9'999'000'000LL}) {
    const std::int64_t remote = remote_of(ref);
    ASSERT_LE(std::llabs(m.to_reference(remote) - ref), m.uncertainty_ns() + 1) << ref;
  }
  // Without the end estimate the error at the end of the capture is the
  // drift: 200 us, far outside the bound.
  const ClockMapping constant(estimate_offset(start));
  const std::int64_t late = remote_of(9'999'000'000);
  EXPECT_GT(std::llabs(constant.to_reference(late) - 9'999'000'000), 100'000);
}

}  // namespace
}  // namespace ssgd::trace
