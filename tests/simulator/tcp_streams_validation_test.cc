// Issue 18's validation of the TCP stream model (docs/platforms.md, "TCP
// streams"; simulator/calibration/stream_fit.h) against published nccl-tests
// all-reduce curves over NCCL's socket transport (docs/validation.md,
// section 10). The measurements are others', copied with their sources:
//
// AWS: aws-samples/aws-hpc-tutorials, content/05-batch-mnp-train-gpu/
//   08-submit-mnp-job.md at 1fca9c4 (2022-07): 2 x g5.2xlarge (one A10G
//   each; AWS rates the instance "up to 10 Gbps"), NCCL 2.11.4 over
//   NET/Socket with AWS's defaults, 2 threads x 8 sockets per connection and
//   2 channels; out-of-place times of all_reduce_perf -b 8 -e 128M -f 2.
// Alibaba: huyutuo/horovod-test-data, scripts/nccl_test.txt at 27727c0
//   (2021-01-05): 4 nodes x 1 V100 (ecs.gn6e, "16 Gbit/s out+in"), NCCL_ALGO=
//   Ring, every pair of NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD in
//   {1, 2, 4}; out-of-place bus bandwidth in Gbit/s (the file's busbw x 8),
//   3 iterations without warm-up each, so noisy: the median over the sizes
//   from 10 to 1000 MiB stands for each setting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "simulator/calibration/fit_error.h"
#include "simulator/calibration/stream_fit.h"
#include "simulator/platform/link_preset.h"

namespace ssgd::sim {
namespace {

struct Row {
  double bytes;
  double us;
};

// AWS g5.2xlarge, 2 nodes: size (B) and out-of-place time (us).
constexpr Row kAws[] = {
    {8, 172.7},          {16, 181.0},         {32, 181.3},         {64, 176.5},
    {128, 176.0},        {256, 177.5},        {512, 177.6},        {1024, 187.5},
    {2048, 196.4},       {4096, 203.6},       {8192, 233.0},       {16384, 300.1},
    {32768, 346.6},      {65536, 420.4},      {131072, 521.4},     {262144, 736.7},
    {524288, 991.4},     {1048576, 1762.4},   {2097152, 2918.4},   {4194304, 5208.9},
    {8388608, 12668},    {16777216, 20366},   {33554432, 43233},   {67108864, 87624},
    {134217728, 183560},
};

std::vector<trace::Measurement> aws_points() {
  std::vector<trace::Measurement> out;
  for (const Row& r : kAws) {
    trace::Measurement m;
    m.ranks = 2;
    m.bytes = r.bytes;
    m.time = Duration(static_cast<std::int64_t>(std::llround(r.us * 1000)));
    m.source = "aws-hpc-tutorials g5.2xlarge";
    out.push_back(m);
  }
  return out;
}

double relative_error(double predicted, double measured) {
  return (predicted - measured) / measured;
}

// Fitted on every other size, the model predicts the rest.
TEST(TcpStreamsValidation, AwsCurveFittedOnHalfPredictsTheOtherHalf) {
  StreamFitOptions o;
  o.line_rate_bytes_per_s = find_link_preset("10gbe")->bandwidth_bytes_per_s;
  o.holdout = 2;
  const StreamFitResult f = fit_streams(aws_points(), o);
  std::printf("\nAWS g5.2xlarge, 2 nodes: %lld stream(s) of %.3f GB/s, latency %.1f us; fitted "
              "%lld sizes, median %.1f%%, max %.1f%%; held back %lld, median %.1f%%, max %.1f%%\n",
              static_cast<long long>(f.streams), f.stream_rate_bytes_per_s / 1e9,
              static_cast<double>(f.latency.ns()) / 1e3, static_cast<long long>(f.points),
              100 * f.median_error, 100 * f.max_error,
              static_cast<long long>(f.holdout.at(0).points), 100 * f.holdout.at(0).median_error,
              100 * f.holdout.at(0).max_error);
  ASSERT_EQ(f.holdout.size(), 1u);
  EXPECT_LE(f.holdout[0].median_error, 0.10);  // today 6.7%
  EXPECT_LE(f.holdout[0].max_error, 0.30);     // today 25.6%
}

// NCCL's own setting on AWS is 2 channels x 2 threads x 8 sockets: with the
// stream count fixed there, only the rate and the latency are fitted.
TEST(TcpStreamsValidation, AwsCurveWithNcclsOwnSocketCount) {
  StreamFitOptions o;
  o.line_rate_bytes_per_s = find_link_preset("10gbe")->bandwidth_bytes_per_s;
  o.streams = 32;
  o.holdout = 2;
  const StreamFitResult f = fit_streams(aws_points(), o);
  std::printf("\nAWS g5.2xlarge, 32 streams given: %.3f GB/s each, latency %.1f us; fitted "
              "median %.1f%%, max %.1f%%; held back median %.1f%%, max %.1f%%\n",
              f.stream_rate_bytes_per_s / 1e9, static_cast<double>(f.latency.ns()) / 1e3,
              100 * f.median_error, 100 * f.max_error, 100 * f.holdout.at(0).median_error,
              100 * f.holdout.at(0).max_error);
  EXPECT_LE(f.holdout.at(0).median_error, 0.20);  // today 16.2%
}


// Alibaba, NCCL_ALGO=Ring: size (MiB) and bus bandwidth (Gbit/s) for each
// NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD, in the order of kSettings.
struct SweepRow {
  double mib;
  double gbit[9];
};
constexpr int kSettings[9][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2},
                                 {2, 4}, {4, 1}, {4, 2}, {4, 4}};
constexpr SweepRow kAlibaba[] = {
    {1, {7.12, 7.36, 6.96, 7.6, 7.2, 6.64, 6.8, 5.76, 5.52}},
    {10, {18.48, 14.96, 20.48, 19.04, 19.44, 21.2, 19.84, 19.92, 20.24}},
    {20, {13.44, 19.12, 15.76, 19.6, 18.16, 20.16, 15.28, 15.76, 18.96}},
    {30, {16.56, 18.32, 22.48, 20.96, 17.92, 19.36, 17.68, 22.16, 22.4}},
    {40, {12.88, 15.44, 20.72, 15.04, 21.84, 21.12, 17.52, 19.12, 19.76}},
    {50, {14.64, 16.56, 22.56, 18.64, 16.64, 20.0, 15.92, 19.52, 21.2}},
    {60, {10.88, 19.76, 21.36, 15.36, 21.2, 21.92, 21.52, 21.28, 20.96}},
    {70, {11.2, 14.72, 19.44, 16.08, 20.96, 21.36, 21.84, 21.2, 20.88}},
    {80, {12.88, 17.68, 17.36, 16.64, 22.24, 19.2, 20.16, 20.48, 22.48}},
    {90, {14.56, 16.8, 21.76, 16.72, 19.92, 22.56, 17.36, 21.92, 22.0}},
    {100, {17.44, 18.24, 20.16, 13.52, 22.48, 22.24, 18.72, 20.4, 20.4}},
    {150, {13.44, 16.8, 19.68, 20.32, 15.6, 21.44, 21.6, 20.24, 21.12}},
    {200, {13.6, 13.52, 21.44, 16.16, 20.48, 20.56, 17.6, 22.64, 20.24}},
    {250, {12.0, 20.08, 21.04, 17.6, 20.64, 21.84, 20.88, 17.44, 19.2}},
    {300, {18.8, 16.56, 20.4, 16.32, 20.8, 21.28, 19.6, 21.52, 20.8}},
    {350, {10.96, 16.32, 18.48, 16.8, 20.64, 19.84, 19.2, 21.28, 20.4}},
    {400, {13.84, 17.76, 22.16, 20.88, 21.2, 20.56, 18.48, 21.52, 21.68}},
    {450, {18.48, 16.72, 21.36, 17.36, 20.24, 21.44, 20.16, 21.76, 22.56}},
    {500, {10.24, 18.64, 19.28, 18.24, 22.24, 22.24, 19.44, 21.52, 21.44}},
    {550, {16.4, 20.16, 19.6, 16.4, 19.84, 19.04, 15.92, 21.12, 19.52}},
    {600, {10.24, 18.64, 17.12, 14.96, 20.08, 22.64, 18.56, 20.64, 21.84}},
    {650, {12.88, 20.08, 17.6, 15.68, 17.76, 22.48, 19.12, 20.08, 20.72}},
    {700, {17.52, 17.92, 16.08, 13.36, 18.88, 20.96, 21.12, 20.64, 21.36}},
    {750, {12.88, 16.8, 18.96, 19.76, 18.88, 19.2, 19.6, 19.52, 19.84}},
    {800, {13.36, 16.64, 20.88, 15.44, 19.68, 20.72, 19.28, 19.52, 19.6}},
    {850, {10.32, 15.92, 20.4, 18.32, 20.48, 19.52, 19.76, 19.84, 20.16}},
    {900, {17.6, 19.04, 18.88, 18.0, 19.12, 16.96, 19.68, 19.76, 18.64}},
    {950, {18.0, 18.88, 18.56, 17.6, 19.2, 19.12, 18.8, 19.28, 18.8}},
    {1000, {12.64, 15.84, 19.44, 19.12, 18.72, 19.28, 18.48, 19.52, 18.4}},
};


// A setting's measurements from 10 MiB up, as all-reduce times of 4 ranks:
// busbw = (M / t) x 2 (P - 1) / P.
std::vector<trace::Measurement> alibaba_points(int setting) {
  std::vector<trace::Measurement> out;
  for (const SweepRow& r : kAlibaba) {
    if (r.mib < 10) continue;
    trace::Measurement m;
    m.ranks = 4;
    m.bytes = r.mib * 1048576;
    const double busbw = r.gbit[setting] * 1e9 / 8;
    m.time = Duration(static_cast<std::int64_t>(std::llround(m.bytes * 1.5 / busbw * 1e9)));
    m.source = "horovod-test-data";
    out.push_back(m);
  }
  return out;
}

// The model's bus bandwidth (Gbit/s), median over the same sizes.
double predicted_gbit(const StreamFitResult& fit, double line_rate) {
  std::vector<double> v;
  for (const SweepRow& r : kAlibaba) {
    if (r.mib < 10) continue;
    const double bytes = r.mib * 1048576;
    const double t = static_cast<double>(predict_streams(fit, 4, bytes, line_rate).ns()) * 1e-9;
    v.push_back(bytes * 1.5 / t * 8 / 1e9);
  }
  return median(v);
}

double measured_gbit(int setting) {
  std::vector<double> v;
  for (const SweepRow& r : kAlibaba) {
    if (r.mib >= 10) v.push_back(r.gbit[setting]);
  }
  return median(v);
}

// One stream's rate from the 1 x 1 setting (2 channels, one socket each: 2
// streams), the line from the 4 x 4 setting (32 streams: past the line);
// then every other setting is predicted with 2 x threads x sockets streams.
TEST(TcpStreamsValidation, AlibabaSocketSweepPredictedFromTwoSettings) {
  // A ring's bus bandwidth is the rate of the link each step crosses.
  const double line = measured_gbit(8) * 1e9 / 8;
  StreamFitOptions o;
  o.streams = 2;
  o.line_rate_bytes_per_s = line;
  const StreamFitResult one = fit_streams(alibaba_points(0), o);
  std::printf("\nAlibaba, 4 nodes, ring: one stream %.3f GB/s (from 1 x 1), line %.3f GB/s (from 4 x 4)\n"
              "| threads x sockets | streams | measured | predicted | error |\n|---|---:|---:|---:|---:|\n",
              one.stream_rate_bytes_per_s / 1e9, line / 1e9);
  std::vector<double> errors;
  for (int s = 1; s < 8; ++s) {
    StreamFitResult f = one;
    f.streams = 2 * kSettings[s][0] * kSettings[s][1];
    const double p = predicted_gbit(f, line);
    const double m = measured_gbit(s);
    errors.push_back(relative_error(p, m));
    std::printf("| %d x %d | %lld | %.2f Gbit/s | %.2f Gbit/s | %+.1f%% |\n", kSettings[s][0],
                kSettings[s][1], static_cast<long long>(f.streams), m, p, 100 * errors.back());
  }
  std::vector<double> abs_errors;
  for (double e : errors) abs_errors.push_back(std::abs(e));
  std::printf("median |error| %.1f%%, worst %.1f%%\n", 100 * median(abs_errors),
              100 * *std::max_element(abs_errors.begin(), abs_errors.end()));
  // Today 3.2% and 20.4%: the model's hard minimum of streams x rate and
  // the line overshoots the knee (4 streams reach 17 Gbit/s, not the line's
  // 20.6: their rate falls as they share the host).
  EXPECT_LE(median(abs_errors), 0.05);
  EXPECT_LE(*std::max_element(abs_errors.begin(), abs_errors.end()), 0.25);
}

}  // namespace
}  // namespace ssgd::sim
