// Network models behind one interface (simulator/network/network_model.h):
// the registry, what each model says of itself, and a model written here,
// outside the registry, that CommModel and a run on the engine use as they
// use the two built in: a new model is one implementation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "simulator/engine/engine.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/network/analytical_network.h"
#include "simulator/network/comm_model.h"
#include "simulator/network/network_model.h"
#include "simulator/platform/platform_preset.h"
#include "simulator/replay/job_graph.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

TEST(NetworkModels, RegistryByName) {
  EXPECT_EQ(network_model_names(), "analytical, flow");
  for (const NetworkModelEntry& m : network_models()) {
    const auto model = find_network_model(m.name);
    ASSERT_NE(model, nullptr) << m.name;
    EXPECT_EQ(model->name(), m.name);
    EXPECT_FALSE(m.description.empty());
    EXPECT_FALSE(m.source.empty());
  }
  EXPECT_EQ(find_network_model("packet"), nullptr);
  EXPECT_FALSE(find_network_model("analytical")->shares_links());
  EXPECT_TRUE(find_network_model("flow")->shares_links());
  try {
    (void)load_scenario(std::nullopt, {"network.model=packet"});
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown network model 'packet'; expected analytical, flow"));
  }
}

// Every collective takes a fixed time, and its runs on the engine end after
// it: a model of the kind a packet-level backend would be, reduced to what
// the interface asks.
class FixedTimeNetwork final : public NetworkModel {
 public:
  explicit FixedTimeNetwork(Duration each) : each_(each) {}
  std::string_view name() const override { return "fixed"; }
  bool shares_links() const override { return true; }
  void times_alone(const Platform&, CollectivePlanner&, std::span<const CollectiveCall> calls,
                   std::span<Duration> times, std::size_t) const override {
    for (std::size_t i = 0; i < calls.size(); ++i) times[i] = each_;
  }
  std::unique_ptr<NetworkRun> open(Engine& engine, const Platform& platform, CollectivePlanner&,
                                   std::vector<bool>) const override {
    return std::make_unique<Run>(engine, each_, platform.links().size());
  }

 private:
  class Run final : public NetworkRun {
   public:
    Run(Engine& engine, Duration each, std::size_t links)
        : engine_(engine), each_(each), links_(links) {
      handler_ = engine_.register_handler([this](Engine&, std::uint64_t id) {
        auto done = std::move(pending_[id]);
        done();
      });
    }
    void run(const CollectiveCall&, std::function<void()> done) override {
      ++runs_;
      pending_.push_back(std::move(done));
      engine_.schedule_after(each_, handler_, pending_.size() - 1);
    }
    std::vector<double> link_bytes() override { return std::vector<double>(links_, 0.0); }
    const std::vector<LinkActivity>& activity() const override { return none_; }
    std::string summary() const override { return std::to_string(runs_) + " collectives"; }
    std::int64_t runs_ = 0;

   private:
    Engine& engine_;
    Duration each_;
    std::size_t links_;
    HandlerId handler_ = 0;
    std::vector<std::function<void()>> pending_;
    std::vector<LinkActivity> none_;
  };
  Duration each_;
};

TEST(NetworkModels, AModelWrittenElsewhereRunsAJob) {
  Scenario s = load_scenario(std::nullopt, {"platform.preset=hgx_h100", "cluster.nodes=2",
                                            "iterations=2", "policy.overlap=bsp"});
  CommSettings settings = scenario_comm_settings(s, s.nodes);
  settings.model = std::make_shared<FixedTimeNetwork>(Duration(1'000'000));
  const CommModel comm(std::make_shared<const Platform>(scenario_platform_spec(s), s.nodes), settings, 0,
                       s.nodes);
  EXPECT_EQ(comm.isolated_time(CollectiveOp::kAllReduce, 1e6), Duration(1'000'000));
  EXPECT_THAT(comm.describe(), HasSubstr("fixed model, NCCL auto"));
  // A job of two layers whose gradients go one after another on its network.
  const trace::LayerProfile profile = trace::parse_layer_profile_csv(
      "layer,name,forward_ns,backward_ns,grad_bytes\n0,a,100000,200000,4194304\n"
      "1,b,100000,200000,4194304\n",
      "two.csv");
  const JobGraph job = build_job_graph(profile, s, comm, /*allow_folding=*/false);
  Engine engine;
  const auto network = comm.model().open(engine, comm.platform(), comm.planner(), {});
  CollectiveExecutor executor(*network, comm);
  ScheduleOptions options;
  options.executor = &executor;
  const Schedule schedule = std::move(run_schedules(engine, {job.graph.get()}, {options}).front());
  // Per iteration: forward 0.2 ms, backward 0.4 ms, then (BSP) the two
  // all-reduces of 1 ms each, one after another; nothing else.
  EXPECT_EQ(schedule.makespan - Time::zero(), Duration(2 * (200'000 + 400'000 + 2'000'000)));
  EXPECT_EQ(network->summary(), "4 collectives");
}

}  // namespace
}  // namespace ssgd::sim
