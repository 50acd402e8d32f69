// The TCP stream model's fit (simulator/calibration/stream_fit.h): on times
// the model itself makes, it finds the streams, the rate and the latency it
// was given; it says when the data cannot tell the stream count apart; and
// it refuses what it cannot fit.
#include "simulator/calibration/stream_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace ssgd::sim {
namespace {

// All-reduce times of the ring under `streams` x `rate` (and the line rate,
// when given), `latency` per step, on P = 4 and 8 ranks, 1 KiB to 1 GiB.
std::vector<trace::Measurement> model_times(std::int64_t streams, double rate, Duration latency,
                                     double line_rate, double smallest = 1024) {
  StreamFitResult truth;
  truth.streams = streams;
  truth.stream_rate_bytes_per_s = rate;
  truth.latency = latency;
  std::vector<trace::Measurement> out;
  for (const std::int64_t p : {4, 8}) {
    for (double b = smallest; b <= double(1 << 30); b *= 2) {
      trace::Measurement m;
      m.ranks = p;
      m.bytes = b;
      m.time = predict_streams(truth, p, b, line_rate);
      m.source = "model";
      out.push_back(m);
    }
  }
  return out;
}

TEST(StreamFit, FindsTheStreamsTheRateAndTheLatencyOfTheModel) {
  const auto points = model_times(2, 1.25e9, Duration(20'000), 0);
  const StreamFitResult f = fit_streams(points, {});
  EXPECT_EQ(f.streams, 2);
  EXPECT_NEAR(f.stream_rate_bytes_per_s, 1.25e9, 1.25e9 * 0.005);
  EXPECT_NEAR(static_cast<double>(f.latency.ns()), 20'000, 200);
  EXPECT_TRUE(f.streams_identified);
  EXPECT_LT(f.max_error, 0.005);
  EXPECT_EQ(f.ranks, (std::vector<std::int64_t>{4, 8}));
  EXPECT_EQ(f.by_streams.size(), 64u);
}

TEST(StreamFit, AGivenStreamCountIsKept) {
  const auto points = model_times(4, 0.6e9, Duration(15'000), 0);
  StreamFitOptions o;
  o.streams = 4;
  const StreamFitResult f = fit_streams(points, o);
  EXPECT_EQ(f.streams, 4);
  EXPECT_NEAR(f.stream_rate_bytes_per_s, 0.6e9, 0.6e9 * 0.005);
  EXPECT_EQ(f.by_streams.size(), 1u);
}

// With the line rate below streams x rate the line binds large transfers
// (4 x 0.6 GB/s above 2 GB/s, 3 x 0.6 below it), and the fit bounded by
// the same line rate still finds the streams. Unbounded, it cannot.
TEST(StreamFit, TheLineRateBoundsTheStreams) {
  const double line = 2.0e9;
  const auto points = model_times(4, 0.6e9, Duration(10'000), line);
  StreamFitOptions o;
  o.line_rate_bytes_per_s = line;
  const StreamFitResult f = fit_streams(points, o);
  EXPECT_EQ(f.streams, 4);
  EXPECT_NEAR(f.stream_rate_bytes_per_s, 0.6e9, 0.6e9 * 0.01);
  EXPECT_LT(f.median_error, 0.005);
  EXPECT_GT(fit_streams(points, {}).median_error, 0.01);
}

// When every step moves more than streams x 64 KiB only the product shows:
// the fit takes the smallest count that explains the data and says so.
TEST(StreamFit, OnlyLargeMessagesCannotTellTheStreamCount) {
  const auto points = model_times(4, 1.0e9, Duration(10'000), 0, double(64 << 20));
  const StreamFitResult f = fit_streams(points, {});
  EXPECT_FALSE(f.streams_identified);
  EXPECT_EQ(f.streams, 1);
  EXPECT_NEAR(static_cast<double>(f.streams) * f.stream_rate_bytes_per_s, 4.0e9, 4.0e9 * 0.01);
}

TEST(StreamFit, HeldBackSizesArePredicted) {
  const auto points = model_times(2, 1.25e9, Duration(20'000), 0);
  StreamFitOptions o;
  o.holdout = 3;
  const StreamFitResult f = fit_streams(points, o);
  ASSERT_EQ(f.holdout.size(), 2u);
  for (const HoldoutError& h : f.holdout) {
    EXPECT_GT(h.points, 0);
    EXPECT_LT(h.max_error, 0.01);
  }
}

TEST(StreamFit, RefusesWhatItCannotFit) {
  auto points = model_times(2, 1.25e9, Duration(20'000), 0);
  std::vector<trace::Measurement> two(points.begin(), points.begin() + 2);
  EXPECT_THROW(fit_streams(two, {}), std::invalid_argument);
  StreamFitOptions o;
  o.streams = 65;
  EXPECT_THROW(fit_streams(points, o), std::invalid_argument);
  o.streams = 0;
  EXPECT_THROW(fit_streams(points, o), std::invalid_argument);
  o.streams.reset();
  o.line_rate_bytes_per_s = -1;
  EXPECT_THROW(fit_streams(points, o), std::invalid_argument);
  EXPECT_THROW(fit_streams({}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ssgd::sim
