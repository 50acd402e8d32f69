// Collective algorithms: the decomposition into steps and the closed form
// must tell the same story. The central check evaluates each decomposition on
// an idealised star network, where every endpoint has its own full-duplex
// port per link level, and compares it with closed_form_time().

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "simulator/collective/collective.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;
using Op = CollectiveOp;
using Alg = CollectiveAlgorithm;
using PairBytes = std::map<std::pair<std::int32_t, std::int32_t>, double>;

constexpr double kM = 123'456'789.0;  // not a multiple of anything convenient

const std::vector<std::pair<Alg, std::vector<Op>>>& implemented() {
  static const std::vector<std::pair<Alg, std::vector<Op>>> kTable = {
      {Alg::kRing,
       {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast, Op::kAllToAll,
        Op::kReduce}},
      {Alg::kDoubleBinaryTree, {Op::kAllReduce, Op::kBroadcast}},
      {Alg::kHalvingDoubling, {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast}},
      {Alg::kHierarchical, {Op::kAllReduce, Op::kBroadcast}},
      {Alg::kTorus2d, {Op::kAllReduce}},
      {Alg::kParameterServer, {Op::kAllReduce}},
  };
  return kTable;
}

// Every shape the sweeps cover for P ranks: ranks per node 1, 2, 3, 4, 8 and
// P where they divide P; for the parameter server K = 1, 2, 4, colocated or
// not; for broadcast roots 0, P/2 and P-1.
std::vector<CollectiveShape> shapes(std::int64_t p, Op op, Alg alg) {
  std::vector<std::int64_t> per_node;
  for (const std::int64_t k :
       {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, std::int64_t{8}, p}) {
    if (p % k == 0 && std::find(per_node.begin(), per_node.end(), k) == per_node.end()) {
      per_node.push_back(k);
    }
  }
  std::vector<CollectiveShape> out;
  for (const std::int64_t k : per_node) {
    if (alg == Alg::kParameterServer) {
      for (const std::int64_t servers : {1, 2, 4}) {
        for (const bool colocated : {true, false}) {
          out.push_back({.ranks = p,
                         .ranks_per_node = k,
                         .servers = servers,
                         .servers_colocated = colocated});
        }
      }
    } else if (op == Op::kBroadcast || op == Op::kReduce) {
      for (const std::int64_t root : {std::int64_t{0}, p / 2, p - 1}) {
        out.push_back({.ranks = p, .ranks_per_node = k, .root = root});
      }
    } else {
      out.push_back({.ranks = p, .ranks_per_node = k});
    }
  }
  return out;
}

std::string describe(Op op, Alg alg, const CollectiveShape& s) {
  return std::string(to_string(op)) + "/" + to_string(alg) + " P=" + std::to_string(s.ranks) +
         " k=" + std::to_string(s.ranks_per_node) + " K=" + std::to_string(s.servers) +
         (s.servers_colocated ? " colocated" : " dedicated") + " root=" + std::to_string(s.root);
}

// The node of an endpoint, written out here rather than taken from the
// library, as collective.h documents it.
std::int64_t node_of(const CollectiveShape& s, std::int64_t e) {
  if (e < s.ranks) return e / s.ranks_per_node;
  const std::int64_t server = e - s.ranks;
  return s.servers_colocated ? server % s.nodes() : s.nodes() + server;
}

// The star network: a step takes its largest latency among the levels it
// uses plus the most bytes any one port (endpoint, direction, level) carries
// over that port's bandwidth; a repeated step takes repeat times as long.
double star_seconds(const std::vector<CollectiveStep>& steps, const CollectiveShape& shape,
                    const CollectiveCosts& costs) {
  double total = 0;
  for (const CollectiveStep& step : steps) {
    std::map<std::tuple<std::int32_t, bool, bool>, double> ports;  // (endpoint, sends, inter)
    bool uses[2] = {false, false};
    for (const Transfer& t : step.transfers) {
      const bool inter = node_of(shape, t.src) != node_of(shape, t.dst);
      uses[inter] = true;
      ports[{t.src, true, inter}] += t.bytes;
      ports[{t.dst, false, inter}] += t.bytes;
    }
    const LevelCost* level[2] = {&costs.intra, &costs.inter};
    double latency = 0;
    for (int i = 0; i < 2; ++i) {
      if (uses[i]) latency = std::max(latency, static_cast<double>(level[i]->latency.ns()) * 1e-9);
    }
    double busiest = 0;
    for (const auto& [port, bytes] : ports) {
      busiest = std::max(busiest, bytes / level[std::get<2>(port)]->bandwidth_bytes_per_s);
    }
    total += static_cast<double>(step.repeat) * (latency + busiest);
  }
  return total;
}

PairBytes pair_bytes(const std::vector<CollectiveStep>& steps) {
  PairBytes out;
  for (const CollectiveStep& step : steps) {
    for (const Transfer& t : step.transfers) {
      out[{t.src, t.dst}] += static_cast<double>(step.repeat) * t.bytes;
    }
  }
  return out;
}

void expect_pairs_near(const PairBytes& got, const PairBytes& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [pair, bytes] : want) {
    const auto it = got.find(pair);
    ASSERT_NE(it, got.end()) << what << " missing " << pair.first << "->" << pair.second;
    EXPECT_NEAR(it->second, bytes, 1e-6 * kM) << what << " " << pair.first << "->" << pair.second;
  }
}

std::int64_t ceil_log2(std::int64_t n) {
  std::int64_t s = 0;
  while ((std::int64_t{1} << s) < n) ++s;
  return s;
}

std::int64_t floor_pow2(std::int64_t n) {
  std::int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

const std::vector<CollectiveCosts>& cost_sets() {
  static const std::vector<CollectiveCosts> kSets = {
      {{Duration(2'000), 100e9}, {Duration(10'000), 10e9}},  // NVLink-like inside, NIC between
      {{Duration(7'000), 5e9}, {Duration(3'000), 20e9}},     // the inside is the slow level
      {{Duration(5'000), 10e9}, {Duration(5'000), 10e9}},    // one level
  };
  return kSets;
}

TEST(Collective, ClosedFormEqualsDecompositionOnStarNetwork) {
  int checked = 0;
  for (const auto& [alg, ops] : implemented()) {
    for (const Op op : ops) {
      for (std::int64_t p = 2; p <= 64; ++p) {
        for (const CollectiveShape& shape : shapes(p, op, alg)) {
          const std::string what = describe(op, alg, shape);
          const auto steps = decompose(op, alg, shape, kM);
          ASSERT_FALSE(steps.empty()) << what;
          for (const CollectiveStep& step : steps) {
            ASSERT_GE(step.repeat, 1) << what;
            ASSERT_FALSE(step.transfers.empty()) << what;
            for (const Transfer& t : step.transfers) {
              ASSERT_NE(t.src, t.dst) << what;
              ASSERT_GT(t.bytes, 0) << what;
              ASSERT_GE(std::min(t.src, t.dst), 0) << what;
              ASSERT_LT(std::max(t.src, t.dst), p + shape.servers) << what;
              if (alg != Alg::kParameterServer) {
                ASSERT_LT(std::max(t.src, t.dst), p) << what;
              }
            }
          }
          const std::int64_t tolerance_ns = std::max<std::int64_t>(1, step_count(steps));
          for (const CollectiveCosts& costs : cost_sets()) {
            const Duration star = duration_from_seconds(star_seconds(steps, shape, costs));
            const Duration closed = closed_form_time(op, alg, shape, kM, costs);
            EXPECT_LE(std::llabs(star.ns() - closed.ns()), tolerance_ns)
                << what << " star " << star.ns() << " closed " << closed.ns();
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

TEST(Collective, StepCounts) {
  for (std::int64_t p = 2; p <= 64; ++p) {
    const CollectiveShape flat{.ranks = p};
    const auto count = [&](Op op, Alg alg, const CollectiveShape& s) {
      return step_count(decompose(op, alg, s, kM));
    };
    EXPECT_EQ(count(Op::kAllReduce, Alg::kRing, flat), 2 * (p - 1));
    EXPECT_EQ(count(Op::kReduceScatter, Alg::kRing, flat), p - 1);
    EXPECT_EQ(count(Op::kAllGather, Alg::kRing, flat), p - 1);
    EXPECT_EQ(count(Op::kBroadcast, Alg::kRing, flat), 2 * (p - 1) - 1);
    EXPECT_EQ(count(Op::kAllToAll, Alg::kRing, flat), p - 1);
    EXPECT_EQ(count(Op::kAllReduce, Alg::kDoubleBinaryTree, flat), 2 * ceil_log2(p)) << p;
    EXPECT_EQ(count(Op::kBroadcast, Alg::kDoubleBinaryTree, flat), p == 2 ? 1 : ceil_log2(p) + 1)
        << p;
    const std::int64_t lg = ceil_log2(floor_pow2(p));
    const std::int64_t fold = p == floor_pow2(p) ? 0 : 2;
    EXPECT_EQ(count(Op::kAllReduce, Alg::kHalvingDoubling, flat), 2 * lg + fold) << p;
    EXPECT_EQ(count(Op::kReduceScatter, Alg::kHalvingDoubling, flat), lg + fold) << p;
    EXPECT_EQ(count(Op::kAllGather, Alg::kHalvingDoubling, flat), lg + fold) << p;
    EXPECT_EQ(count(Op::kBroadcast, Alg::kHalvingDoubling, flat), ceil_log2(p)) << p;
    EXPECT_EQ(count(Op::kAllReduce, Alg::kParameterServer, flat), 2);
    for (const std::int64_t k : {1, 2, 4, 8}) {
      if (p % k != 0) continue;
      const CollectiveShape s{.ranks = p, .ranks_per_node = k};
      const std::int64_t n = p / k;
      EXPECT_EQ(count(Op::kAllReduce, Alg::kHierarchical, s), 2 * ceil_log2(k) + 2 * (n - 1));
      EXPECT_EQ(count(Op::kBroadcast, Alg::kHierarchical, s),
                ceil_log2(k) + (n > 1 ? 2 * n - 3 : 0));
      EXPECT_EQ(count(Op::kAllReduce, Alg::kTorus2d, s), 2 * (k - 1) + 2 * (n - 1));
    }
  }
  EXPECT_EQ(step_count({}), 0);
}

// NCCL's binary tree (ncclGetBtree), written as NCCL writes it.
std::int64_t nccl_btree_parent(std::int64_t rank, std::int64_t nranks) {
  if (rank == 0) return -1;
  std::int64_t bit = 1;
  for (; bit < nranks; bit <<= 1) {
    if (bit & rank) break;
  }
  std::int64_t up = (rank ^ bit) | (bit << 1);
  if (up >= nranks) up = rank ^ bit;
  return up;
}

PairBytes expected_pairs(Op op, Alg alg, const CollectiveShape& s, double m) {
  const std::int64_t p = s.ranks;
  const std::int64_t k = s.ranks_per_node;
  const std::int64_t n = s.nodes();
  PairBytes want;
  const auto add = [&](std::int64_t a, std::int64_t b, double bytes) {
    want[{static_cast<std::int32_t>(a), static_cast<std::int32_t>(b)}] += bytes;
  };
  const double pd = static_cast<double>(p);
  switch (alg) {
    case Alg::kRing:
      if (op == Op::kAllToAll) {
        for (std::int64_t a = 0; a < p; ++a) {
          for (std::int64_t b = 0; b < p; ++b) {
            if (a != b) add(a, b, m / pd);
          }
        }
      } else if (op == Op::kBroadcast) {
        for (std::int64_t h = 0; h + 1 < p; ++h) add((s.root + h) % p, (s.root + h + 1) % p, m);
      } else if (op == Op::kReduce) {  // the ring's reduce-scatter, then M/P from each to the root
        for (std::int64_t r = 0; r < p; ++r) {
          add(r, (r + 1) % p, (pd - 1) / pd * m);
          if (r != s.root) add(r, s.root, m / pd);
        }
      } else {
        const double factor = op == Op::kAllReduce ? 2 * (pd - 1) / pd : (pd - 1) / pd;
        for (std::int64_t r = 0; r < p; ++r) add(r, (r + 1) % p, factor * m);
      }
      break;
    case Alg::kDoubleBinaryTree:  // all_reduce: up and down each tree edge, M/2 per tree
      for (std::int64_t r = 0; r < p; ++r) {
        const std::int64_t a = nccl_btree_parent(r, p);
        if (a >= 0) {
          add(r, a, m / 2);
          add(a, r, m / 2);
        }
        const std::int64_t mirrored =
            p % 2 == 0 ? nccl_btree_parent(p - 1 - r, p) : nccl_btree_parent((r - 1 + p) % p, p);
        if (mirrored < 0) continue;
        const std::int64_t b = p % 2 == 0 ? p - 1 - mirrored : (mirrored + 1) % p;
        add(r, b, m / 2);
        add(b, r, m / 2);
      }
      break;
    case Alg::kHalvingDoubling: {
      const std::int64_t core = floor_pow2(p);
      const std::int64_t extra = p - core;
      const auto rank = [&](std::int64_t i) { return i < extra ? 2 * i + 1 : i + extra; };
      const double rs = op == Op::kAllGather ? 0 : 1;      // halving half
      const double ag = op == Op::kReduceScatter ? 0 : 1;  // doubling half
      for (std::int64_t d = 1; d < core; d *= 2) {
        for (std::int64_t i = 0; i < core; ++i) {
          add(rank(i), rank(i ^ d), (rs + ag) * m / static_cast<double>(2 * d));
        }
      }
      for (std::int64_t i = 0; i < extra; ++i) {
        add(2 * i, 2 * i + 1, op == Op::kAllGather ? m / pd : m);
        add(2 * i + 1, 2 * i, op == Op::kReduceScatter ? m / pd : m);
      }
      break;
    }
    case Alg::kHierarchical:  // all_reduce
      for (std::int64_t r = 0; r < p; ++r) {
        const std::int64_t j = r % k;
        if (j == 0) continue;
        const std::int64_t parent = r - (j & -j);  // binomial tree: clear the lowest bit
        add(r, parent, m);
        add(parent, r, m);
      }
      for (std::int64_t node = 0; n > 1 && node < n; ++node) {
        add(node * k, (node + 1) % n * k,
            2.0 * static_cast<double>(n - 1) / static_cast<double>(n) * m);
      }
      break;
    case Alg::kTorus2d: {
      const double x = static_cast<double>(k);
      const double y = static_cast<double>(n);
      for (std::int64_t r = 0; r < p; ++r) {
        if (k > 1) add(r, r / k * k + (r % k + 1) % k, 2 * (x - 1) / x * m);
        if (n > 1) add(r, (r + k) % p, 2 * (y - 1) / y * m / x);
      }
      break;
    }
    case Alg::kParameterServer:
      for (std::int64_t r = 0; r < p; ++r) {
        for (std::int64_t srv = p; srv < p + s.servers; ++srv) {
          add(r, srv, m / static_cast<double>(s.servers));
          add(srv, r, m / static_cast<double>(s.servers));
        }
      }
      break;
    case Alg::kBytePS: break;  // tests/simulator/byteps_test.cc: its NICs are per machine
    case Alg::kAuto:
    case Alg::kNvls:  // NCCL's own: no textbook decomposition (nccl_test.cc)
    case Alg::kNvlsTree:
    case Alg::kCollNetDirect:
    case Alg::kCollNetChain:
    case Alg::kPat: break;
  }
  return want;
}

TEST(Collective, BytesPerLink) {
  for (const auto& [alg, ops] : implemented()) {
    for (const Op op : ops) {
      for (std::int64_t p = 2; p <= 64; ++p) {
        for (const CollectiveShape& s : shapes(p, op, alg)) {
          const std::string what = describe(op, alg, s);
          const PairBytes got = pair_bytes(decompose(op, alg, s, kM));
          if (op != Op::kBroadcast || alg == Alg::kRing) {
            expect_pairs_near(got, expected_pairs(op, alg, s, kM), what);
          }
          if (op == Op::kBroadcast) {  // every rank but the root receives M, once
            std::vector<double> received(p, 0);
            for (const auto& [pair, bytes] : got) received[pair.second] += bytes;
            for (std::int64_t r = 0; r < p; ++r) {
              EXPECT_NEAR(received[r], r == s.root ? 0 : kM, 1e-6 * kM) << what << " rank " << r;
            }
          }
          if (alg == Alg::kHierarchical && op == Op::kBroadcast && s.nodes() > 1) {
            const std::int64_t k = s.ranks_per_node;
            for (std::int64_t h = 0; h + 1 < s.nodes(); ++h) {  // the chain of leaders
              const auto a =
                  static_cast<std::int32_t>((s.root / k + h) % s.nodes() * k + s.root % k);
              const auto b =
                  static_cast<std::int32_t>((s.root / k + h + 1) % s.nodes() * k + s.root % k);
              EXPECT_NEAR(got.at({a, b}), kM, 1e-6 * kM) << what;
            }
          }
          if (alg == Alg::kParameterServer) {  // every server takes in P M / K
            for (std::int64_t srv = p; srv < p + s.servers; ++srv) {
              double in = 0;
              for (const auto& [pair, bytes] : got) in += pair.second == srv ? bytes : 0;
              EXPECT_NEAR(in, static_cast<double>(p) * kM / static_cast<double>(s.servers),
                          1e-6 * kM)
                  << what;
            }
          }
        }
      }
    }
  }
}

TEST(Collective, DoubleBinaryTreeKeepsEveryPortAtMostM) {
  // The two trees are complementary: no rank takes more than two halves in
  // one step, and for P a power of two all but the two steps next to the
  // roots move M through the busiest port: (2 log2 P - 1) M in all.
  for (std::int64_t p = 2; p <= 64; ++p) {
    for (const Op op : {Op::kAllReduce, Op::kBroadcast}) {
      for (const CollectiveStep& step : decompose(op, Alg::kDoubleBinaryTree, {.ranks = p}, kM)) {
        std::map<std::pair<std::int32_t, bool>, double> port;
        for (const Transfer& t : step.transfers) {
          port[{t.src, true}] += t.bytes;
          port[{t.dst, false}] += t.bytes;
        }
        for (const auto& [key, bytes] : port) EXPECT_LE(bytes, kM * (1 + 1e-12)) << p;
      }
    }
    if (p == floor_pow2(p)) {
      const AlphaBetaTerms t = alpha_beta_terms(Op::kAllReduce, Alg::kDoubleBinaryTree, p);
      EXPECT_DOUBLE_EQ(t.alpha_count, 2.0 * static_cast<double>(ceil_log2(p)));
      EXPECT_DOUBLE_EQ(t.beta_factor, 2.0 * static_cast<double>(ceil_log2(p)) - 1);
    }
  }
}

TEST(Collective, AlphaBetaTermsReproduceTheClosedFormOnOneLevel) {
  const LevelCost level{Duration(4'000), 12.5e9};
  const CollectiveCosts costs{level, level};
  for (const auto& [alg, ops] : implemented()) {
    for (const Op op : ops) {
      for (std::int64_t p = 1; p <= 64; ++p) {
        for (const CollectiveShape& s : shapes(p, op, alg)) {
          const AlphaBetaTerms t =
              s.ranks_per_node == 1 && s.servers == 1 && s.servers_colocated && s.root == 0
                  ? alpha_beta_terms(op, alg, p)
                  : alpha_beta_terms(op, alg, s);
          const double seconds = t.alpha_count * 4e-6 + t.beta_factor * kM / 12.5e9;
          EXPECT_LE(std::llabs(duration_from_seconds(seconds).ns() -
                               closed_form_time(op, alg, s, kM, costs).ns()),
                    1)
              << describe(op, alg, s);
        }
      }
    }
  }
  for (std::int64_t p = 2; p <= 64; ++p) {
    const double pd = static_cast<double>(p);
    const auto terms = [&](Op op, Alg alg) { return alpha_beta_terms(op, alg, p); };
    EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kRing).alpha_count, 2 * (pd - 1));
    EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kRing).beta_factor, 2 * (pd - 1) / pd);
    EXPECT_DOUBLE_EQ(terms(Op::kBroadcast, Alg::kRing).beta_factor, (2 * pd - 3) / (pd - 1));
    EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kHierarchical).beta_factor, 2 * (pd - 1) / pd);
    EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kTorus2d).beta_factor, 2 * (pd - 1) / pd);
    // One colocated server on node 0: P-1 pushes reach it over the network.
    EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kParameterServer).alpha_count, 2);
    EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kParameterServer).beta_factor,
                     2 * std::max(pd - 1, 1.0));
    if (p == floor_pow2(p)) {
      EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kHalvingDoubling).alpha_count,
                       2.0 * static_cast<double>(ceil_log2(p)));
      EXPECT_DOUBLE_EQ(terms(Op::kAllReduce, Alg::kHalvingDoubling).beta_factor, 2 * (pd - 1) / pd);
    }
  }
  const CollectiveShape dedicated{.ranks = 16, .servers = 4, .servers_colocated = false};
  EXPECT_DOUBLE_EQ(alpha_beta_terms(Op::kAllReduce, Alg::kParameterServer, dedicated).beta_factor,
                   2.0 * 16 / 4);
  EXPECT_EQ(alpha_beta_terms(Op::kAllReduce, Alg::kRing, 1).alpha_count, 0);
}

// Within a nanosecond: the hand-written sums round differently in the last bit.
void expect_ns_near(Duration got, double want_s) {
  EXPECT_LE(std::llabs(got.ns() - duration_from_seconds(want_s).ns()), 1) << got.ns();
}

TEST(Collective, TwoLevelClosedForms) {
  const CollectiveCosts costs{{Duration(2'000), 100e9}, {Duration(10'000), 10e9}};
  // A ring across 4 nodes of 8 is paced by the slower level on every step.
  const CollectiveShape grid{.ranks = 32, .ranks_per_node = 8};
  expect_ns_near(closed_form_time(Op::kAllReduce, Alg::kRing, grid, kM, costs),
                 62 * (10e-6 + kM / 32 / 10e9));
  // The 2D torus: 2 x 7 row steps of M/8 inside, 2 x 3 column steps of M/32 between.
  expect_ns_near(closed_form_time(Op::kAllReduce, Alg::kTorus2d, grid, kM, costs),
                 14 * (2e-6 + kM / 8 / 100e9) + 6 * (10e-6 + kM / 32 / 10e9));
  // Hierarchical: 3 + 3 binomial steps of M inside, ring of 4 leaders between.
  expect_ns_near(closed_form_time(Op::kAllReduce, Alg::kHierarchical, grid, kM, costs),
                 6 * (2e-6 + kM / 100e9) + 6 * (10e-6 + kM / 4 / 10e9));
  // Dedicated servers: 2 alpha + 2 (P/K) M beta between nodes.
  const CollectiveShape ps{
      .ranks = 32, .ranks_per_node = 8, .servers = 4, .servers_colocated = false};
  expect_ns_near(closed_form_time(Op::kAllReduce, Alg::kParameterServer, ps, kM, costs),
                 2 * (10e-6 + 8 * kM / 10e9));
  // P = 1 and M = 0 cost nothing and have no steps.
  EXPECT_EQ(closed_form_time(Op::kAllReduce, Alg::kRing, {.ranks = 1}, kM, costs),
            Duration::zero());
  EXPECT_EQ(closed_form_time(Op::kAllReduce, Alg::kRing, grid, 0, costs), Duration::zero());
  EXPECT_TRUE(decompose(Op::kAllReduce, Alg::kTorus2d, {.ranks = 1}, kM).empty());
  EXPECT_TRUE(decompose(Op::kAllReduce, Alg::kParameterServer, grid, 0).empty());
}

TEST(Collective, DecompositionIsDeterministic) {
  for (const auto& [alg, ops] : implemented()) {
    for (const Op op : ops) {
      const CollectiveShape s{.ranks = 24, .ranks_per_node = 4, .servers = 2, .root = 5};
      const auto a = decompose(op, alg, s, kM);
      const auto b = decompose(op, alg, s, kM);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].repeat, b[i].repeat);
        ASSERT_EQ(a[i].transfers.size(), b[i].transfers.size());
        for (std::size_t j = 0; j < a[i].transfers.size(); ++j) {
          EXPECT_EQ(a[i].transfers[j].src, b[i].transfers[j].src);
          EXPECT_EQ(a[i].transfers[j].dst, b[i].transfers[j].dst);
          EXPECT_EQ(a[i].transfers[j].bytes, b[i].transfers[j].bytes);
        }
      }
    }
  }
}

TEST(Collective, ChooseAlgorithmLikeNccl) {
  const LevelCost level{Duration(5'000), 10e9};
  const CollectiveCosts costs{level, level};
  const CollectiveShape many{.ranks = 64};
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, many, 1024, costs), Alg::kDoubleBinaryTree);
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, many, 1e9, costs), Alg::kRing);
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, {.ranks = 2}, 1e6, costs), Alg::kRing);  // a tie
  // Eight nodes of eight behind a NIC: the ring's 126 inter-node latencies
  // lose to the tree's 12 for small buffers, its bandwidth wins for large.
  const CollectiveCosts nodes{{Duration(2'000), 100e9}, {Duration(10'000), 10e9}};
  const CollectiveShape grid{.ranks = 64, .ranks_per_node = 8};
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, grid, 4096, nodes), Alg::kDoubleBinaryTree);
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, grid, 1e9, nodes), Alg::kRing);
  for (double m = 1; m < 1e10; m *= 3.7) {
    for (const Op op :
         {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast, Op::kAllToAll}) {
      const Alg chosen = choose_algorithm(op, many, m, costs);
      EXPECT_NE(chosen, Alg::kAuto);
      if (op != Op::kAllReduce) {
        EXPECT_EQ(chosen, Alg::kRing);
      }
      const Duration ring = closed_form_time(op, Alg::kRing, many, m, costs);
      EXPECT_LE(closed_form_time(op, chosen, many, m, costs), ring);
    }
  }
}

TEST(Collective, BusBandwidthFactor) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Op::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Op::kReduceScatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Op::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Op::kAllToAll, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Op::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Op::kAllReduce, 1), 0.0);
  EXPECT_THROW(bus_bandwidth_factor(Op::kAllReduce, 0), std::invalid_argument);
}

// Reduce runs as gloo runs it (gloo/reduce.cc): a ring reduce-scatter, then
// every rank sends its reduced chunk to the root at once. Every ring edge
// carries (P-1)/P M, the root receives M/P more from each rank, and one
// level's time is P alpha + 2(P-1)/P M beta: an all-reduce's bytes through
// the root's port, in P steps instead of 2(P-1).
TEST(Collective, RingReduceIsAReduceScatterThenAGatherToTheRoot) {
  for (std::int64_t p = 2; p <= 16; ++p) {
    for (const std::int64_t root : {std::int64_t{0}, p - 1}) {
      const CollectiveShape shape{.ranks = p, .root = root};
      const auto steps = decompose(Op::kReduce, Alg::kRing, shape, kM);
      EXPECT_EQ(step_count(steps), p) << p;
      PairBytes want;
      const double block = kM / static_cast<double>(p);
      for (std::int64_t r = 0; r < p; ++r) {
        want[{static_cast<std::int32_t>(r), static_cast<std::int32_t>((r + 1) % p)}] +=
            static_cast<double>(p - 1) * block;
        if (r != root) want[{static_cast<std::int32_t>(r), static_cast<std::int32_t>(root)}] += block;
      }
      expect_pairs_near(pair_bytes(steps), want, "reduce p=" + std::to_string(p));
      const CollectiveCosts one_level{{Duration(5'000), 10e9}, {Duration(5'000), 10e9}};
      const double seconds = static_cast<double>(p) * 5e-6 +
                             2.0 * static_cast<double>(p - 1) / static_cast<double>(p) * kM / 10e9;
      EXPECT_NEAR(static_cast<double>(closed_form_time(Op::kReduce, Alg::kRing, shape, kM, one_level).ns()),
                  seconds * 1e9, static_cast<double>(p)) << p;
    }
  }
  EXPECT_THROW(decompose(Op::kReduce, Alg::kDoubleBinaryTree, {.ranks = 4}, kM),
               std::invalid_argument);
}

// NCCL's own algorithms have no textbook decomposition: the NCCL
// communicator plans them (simulator/nccl).
TEST(Collective, NcclAlgorithmsAreNotDecomposedHere) {
  const auto refused = [](Op op, Alg a) {
    try {
      (void)decompose(op, a, {.ranks = 8}, kM);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("not refused");
  };
  for (const Alg a : {Alg::kNvls, Alg::kNvlsTree, Alg::kCollNetDirect, Alg::kCollNetChain}) {
    EXPECT_THAT(refused(Op::kAllReduce, a), HasSubstr("is NCCL's algorithm")) << to_string(a);
  }
  EXPECT_THAT(refused(Op::kAllGather, Alg::kPat), HasSubstr("is NCCL's algorithm"));
  EXPECT_TRUE(library_runs(CollectiveLibrary::kNccl, Alg::kNvls));
  EXPECT_FALSE(library_runs(CollectiveLibrary::kGeneric, Alg::kNvls));
  EXPECT_FALSE(library_runs(CollectiveLibrary::kNccl, Alg::kHierarchical));
  EXPECT_TRUE(library_runs(CollectiveLibrary::kGeneric, Alg::kRing));
}

TEST(Collective, NamesRoundTrip) {
  for (const Op op : {Op::kAllReduce, Op::kReduceScatter, Op::kAllGather, Op::kBroadcast,
                      Op::kAllToAll, Op::kReduce}) {
    EXPECT_EQ(parse_collective_op(to_string(op)), op);
    EXPECT_THAT(collective_op_names(), HasSubstr(to_string(op)));
  }
  for (const Alg a : {Alg::kAuto, Alg::kRing, Alg::kDoubleBinaryTree, Alg::kHalvingDoubling,
                      Alg::kHierarchical, Alg::kTorus2d, Alg::kParameterServer, Alg::kBytePS,
                      Alg::kNvls, Alg::kNvlsTree, Alg::kCollNetDirect, Alg::kCollNetChain,
                      Alg::kPat}) {
    EXPECT_EQ(parse_collective_algorithm(to_string(a)), a);
    EXPECT_THAT(collective_algorithm_names(), HasSubstr(to_string(a)));
  }
  EXPECT_EQ(collective_op_names(),
            "all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, reduce");
  EXPECT_EQ(collective_algorithm_names(),
            "auto, ring, double_binary_tree, halving_doubling, hierarchical, torus2d, "
            "parameter_server, byteps, nvls, nvls_tree, collnet_direct, collnet_chain, pat");
  EXPECT_EQ(parse_collective_algorithm("tree"), Alg::kDoubleBinaryTree);
  EXPECT_EQ(parse_collective_op("allreduce"), std::nullopt);
  EXPECT_EQ(parse_collective_algorithm("Ring"), std::nullopt);
}

TEST(Collective, EndpointNodes) {
  const CollectiveShape s{.ranks = 8, .ranks_per_node = 4, .servers = 3};
  EXPECT_EQ(endpoint_node(s, 3), 0);
  EXPECT_EQ(endpoint_node(s, 4), 1);
  EXPECT_EQ(endpoint_node(s, 8), 0);   // server 0
  EXPECT_EQ(endpoint_node(s, 9), 1);   // server 1
  EXPECT_EQ(endpoint_node(s, 10), 0);  // server 2 wraps round to node 0
  CollectiveShape apart = s;
  apart.servers_colocated = false;
  EXPECT_EQ(endpoint_node(apart, 8), 2);
  EXPECT_EQ(endpoint_node(apart, 10), 4);
  EXPECT_THROW(endpoint_node(s, 11), std::out_of_range);
  EXPECT_THROW(endpoint_node(s, -1), std::out_of_range);
}

void expect_message(const std::function<void()>& call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one mentioning " << parts.front();
  } catch (const std::invalid_argument& e) {
    for (const std::string& part : parts) EXPECT_THAT(e.what(), HasSubstr(part));
  }
}

TEST(Collective, ErrorsNameTheProblem) {
  const CollectiveCosts costs{{Duration(1'000), 1e9}, {Duration(1'000), 1e9}};
  const CollectiveShape ok{.ranks = 8, .ranks_per_node = 4};
  expect_message([&] { decompose(Op::kAllReduce, Alg::kAuto, ok, kM); },
                 {"auto", "choose_algorithm"});
  expect_message([&] { closed_form_time(Op::kAllReduce, Alg::kAuto, ok, kM, costs); }, {"auto"});
  expect_message([&] { alpha_beta_terms(Op::kAllReduce, Alg::kAuto, 8); }, {"auto"});
  expect_message([&] { decompose(Op::kAllToAll, Alg::kDoubleBinaryTree, ok, kM); },
                 {"double_binary_tree", "all_to_all", "algorithms that do: ring"});
  expect_message(
      [&] { decompose(Op::kBroadcast, Alg::kTorus2d, ok, kM); },
      {"torus2d", "broadcast", "ring, double_binary_tree, halving_doubling, hierarchical"});
  expect_message(
      [&] { closed_form_time(Op::kReduceScatter, Alg::kParameterServer, ok, kM, costs); },
      {"parameter_server", "reduce_scatter", "ring, halving_doubling"});
  // The unsupported op is refused even where there would be nothing to do.
  expect_message([&] { decompose(Op::kAllGather, Alg::kHierarchical, {.ranks = 1}, 0); },
                 {"hierarchical", "all_gather"});
  expect_message([&] { decompose(Op::kAllReduce, Alg::kRing, {.ranks = 0}, kM); }, {"ranks", "0"});
  expect_message(
      [&] { decompose(Op::kAllReduce, Alg::kRing, {.ranks = 8, .ranks_per_node = 3}, kM); },
      {"ranks_per_node", "divide", "3"});
  expect_message(
      [&] { decompose(Op::kAllReduce, Alg::kRing, {.ranks = 8, .ranks_per_node = 0}, kM); },
      {"ranks_per_node"});
  expect_message(
      [&] { decompose(Op::kAllReduce, Alg::kParameterServer, {.ranks = 8, .servers = 0}, kM); },
      {"servers", "0"});
  expect_message([&] { decompose(Op::kBroadcast, Alg::kRing, {.ranks = 8, .root = 8}, kM); },
                 {"root", "8"});
  expect_message([&] { decompose(Op::kBroadcast, Alg::kRing, {.ranks = 8, .root = -1}, kM); },
                 {"root", "-1"});
  expect_message([&] { decompose(Op::kAllReduce, Alg::kRing, ok, -1); }, {"bytes", "-1"});
  expect_message([&] { decompose(Op::kAllReduce, Alg::kRing, ok, std::nan("")); }, {"bytes"});
  expect_message(
      [&] { decompose(Op::kAllReduce, Alg::kRing, ok, std::numeric_limits<double>::infinity()); },
      {"bytes"});
  expect_message([&] { choose_algorithm(Op::kAllReduce, ok, -5, costs); }, {"bytes"});
  expect_message(
      [&] {
        closed_form_time(Op::kAllReduce, Alg::kRing, ok, kM,
                         {{Duration(1'000), 0}, {Duration(1'000), 1e9}});
      },
      {"intra", "bandwidth"});
  expect_message(
      [&] {
        closed_form_time(Op::kAllReduce, Alg::kRing, ok, kM,
                         {{Duration(1'000), 1e9}, {Duration(-1), 1e9}});
      },
      {"inter", "latency"});
  expect_message([&] { alpha_beta_terms(Op::kAllReduce, Alg::kRing, 0); }, {"ranks"});
}

}  // namespace
}  // namespace ssgd::sim
