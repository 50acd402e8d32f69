// presentation/html: the inputs recognised by content and checked field
// by field (errors naming file, line and field), the text made safe for the
// page, and the page itself: self-contained and deterministic; what-ifs
// labelled by the keys that differ, scale and optimize reports overlaid,
// sweeps never joining points of another key's values into one line, and
// dataset verify and diff reports charted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>

#include "common/error.h"
#include "presentation/html/charts.h"
#include "presentation/html/html_report.h"
#include "presentation/html/html_text.h"
#include "presentation/html/labels.h"
#include "presentation/html/measured_charts.h"
#include "presentation/html/quantity.h"
#include "presentation/html/report_input.h"
#include "presentation/html/sections.h"
#include "presentation/html/sweep_charts.h"
#include "presentation/html/timeline_input.h"
#include "presentation/html/vega_bundle.h"
#include "tests/support/test_files.h"

namespace {

using ssgd::InputError;
using ssgd::html::InputKind;
using ssgd::html::Json;
using ssgd::html::parse_report_input;
using ::testing::HasSubstr;

const std::string kSource = SSGD_SOURCE_DIR;

std::string golden(const std::string& name) {
  return ssgd::testing::read_file_bytes(kSource + "/tests/data/" + name);
}

// parse_report_input(path, text) fails with a message holding `want`.
std::string error_of(const std::string& text, const std::string& path = "r.json") {
  try {
    (void)parse_report_input(path, text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(HtmlReportInput, RecognisesEachKindByContent) {
  EXPECT_EQ(parse_report_input("a", golden("golden/simulate/scenario_v100_4x4_10gbe.json")).kind,
            InputKind::kSimulate);
  EXPECT_EQ(parse_report_input("a", golden("golden/scale/resnet50_v100_4x4_10gbe.json")).kind,
            InputKind::kScale);
  EXPECT_EQ(parse_report_input("a", golden("report/optimize.json")).kind, InputKind::kOptimize);
  const auto sweep = parse_report_input("a", golden("report/sweep.jsonl"));
  ASSERT_EQ(sweep.kind, InputKind::kSweep);
  const auto& s = std::get<ssgd::html::SweepReport>(sweep.content);
  EXPECT_EQ(s.points.size(), 8u);
  EXPECT_EQ(s.keys,
            (std::vector<std::string>{"cluster.nodes", "policy.overlap", "network.inter_node"}));
}

TEST(HtmlReportInput, ReadsTheSimulateFiguresItShows) {
  const auto in = parse_report_input("a", golden("golden/simulate/scenario_v100_4x4_10gbe.json"));
  const auto& run = std::get<ssgd::html::SimulateRun>(in.content);
  const Json j = Json::parse(golden("golden/simulate/scenario_v100_4x4_10gbe.json"));
  EXPECT_EQ(run.iteration_time_ns, j["iteration_time_ns"].get<std::int64_t>());
  EXPECT_EQ(run.breakdown.exposed_comm_ns, j["breakdown"]["exposed_comm_ns"].get<std::int64_t>());
  EXPECT_EQ(run.collectives.size(), j["communication"]["collectives_last_iteration"].size());
  EXPECT_EQ(run.busiest_links.size(), j["links"]["busiest"].size());
  ASSERT_TRUE(run.critical_path.has_value());
  // In the order an iteration runs them, not the report's (alphabetical).
  std::vector<std::string> kinds;
  for (const auto& [kind, ns] : run.critical_path->time_by_kind_ns) kinds.push_back(kind);
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"io", "h2d", "forward", "backward", "comm", "update"}));
  EXPECT_EQ(run.iterations, j["scenario"]["iterations"].get<std::int64_t>());
}

TEST(HtmlReportInput, RefusesWhatIsNotAReportNamingFileLineAndField) {
  EXPECT_THAT(error_of(""), HasSubstr("r.json: empty; expected a report of ssgd simulate"));
  EXPECT_THAT(error_of("{\n  \"a\": 1,\n  oops\n}"), HasSubstr("r.json:3: not valid JSON: "));
  EXPECT_THAT(error_of("[1, 2]"), HasSubstr("r.json: expected a report of ssgd simulate"));
  EXPECT_THAT(error_of("[1, 2]"), HasSubstr("got an array"));
  EXPECT_THAT(error_of("{\"x\": 1}"), HasSubstr("found none of those keys"));
  EXPECT_THAT(
      error_of("{\"ssgd_report_version\": 2}"),
      HasSubstr(
          "field 'ssgd_report_version': version 2; this ssgd reads simulate reports of version 1"));
  EXPECT_THAT(error_of("{\"ssgd_report_version\": 1, \"kind\": \"graph\"}"),
              HasSubstr("field 'kind': a graph report"));
  EXPECT_THAT(error_of("{\"measured\": {}, \"matched\": []}"),
              HasSubstr("r.json: field 'measured.iteration': missing"));
  EXPECT_THAT(error_of("\xff\xfe{}"), HasSubstr("not valid JSON"));
  EXPECT_THAT(error_of("{\"ssgd_report_version\": 1e400}"),
              HasSubstr("r.json: not valid JSON: number overflow parsing '1e400'"));
  const std::string sweep = golden("report/sweep.jsonl");
  EXPECT_THAT(error_of(sweep.substr(0, sweep.find('\n') + 1) + "{\"x\": 1e400}\n", "s.jsonl"),
              HasSubstr("s.jsonl:2: not valid JSON: number overflow parsing '1e400'"));
  // Nesting a million deep is an error, not a stack overflow, refused at the
  // 65th level before it is parsed (common/json_depth.h).
  EXPECT_THAT(error_of(std::string(1'000'000, '[') + std::string(1'000'000, ']')),
              HasSubstr("r.json: JSON nested deeper than 64 levels (at byte 64)"));
}

TEST(HtmlReportInput, RefusesSimulateFieldsOfTheWrongType) {
  Json j = Json::parse(golden("golden/simulate/scenario_v100_4x4_10gbe.json"));
  Json bad = j;
  bad["breakdown"]["idle_ns"] = "12";
  EXPECT_THAT(
      error_of(bad.dump()),
      HasSubstr(
          "r.json: field 'breakdown.idle_ns': expected a whole number, got the string \"12\""));
  bad = j;
  bad.erase("iteration_time_ns");
  EXPECT_THAT(error_of(bad.dump()), HasSubstr("field 'iteration_time_ns': missing"));
  bad = j;
  bad["communication"]["collectives_last_iteration"][3]["time_ns"] = -5;
  EXPECT_THAT(error_of(bad.dump()),
              HasSubstr("field 'communication.collectives_last_iteration[3].time_ns': "
                        "must not be negative, got -5"));
  bad = j;
  bad["links"] = 7;
  EXPECT_THAT(error_of(bad.dump()),
              HasSubstr("field 'links': expected an object, got the number 7"));
  bad = j;
  bad["speedup"] = true;
  EXPECT_THAT(error_of(bad.dump()), HasSubstr("field 'speedup': expected a number, got true"));
  bad = j;
  bad["speedup"] = nullptr;  // library callers without a baseline
  EXPECT_EQ(error_of(bad.dump()), "(accepted)");
}

TEST(HtmlReportInput, RefusesBadScaleAndOptimizeReports) {
  Json scale = Json::parse(golden("golden/scale/resnet50_v100_4x4_10gbe.json"));
  scale["rows"][1]["speedup"] = "fast";
  EXPECT_THAT(error_of(scale.dump()), HasSubstr("field 'rows[1].speedup': expected a number"));
  scale["rows"] = Json::array();
  EXPECT_THAT(error_of(scale.dump()), HasSubstr("field 'rows': no rows"));
  Json opt = Json::parse(golden("report/optimize.json"));
  opt["best"]["value"] = "3MiB";
  EXPECT_THAT(error_of(opt.dump()),
              HasSubstr("field 'best.value': '3MiB' is not the value of any point"));
  opt = Json::parse(golden("report/optimize.json"));
  opt["curve"][2].erase("iteration_time_ns");
  EXPECT_THAT(error_of(opt.dump()), HasSubstr("field 'curve[2].iteration_time_ns': missing"));
  opt = Json::parse(golden("report/optimize.json"));
  opt["scenario_sets"] = Json::array({"policy.overlap=ddp", 3});
  EXPECT_THAT(error_of(opt.dump()),
              HasSubstr("field 'scenario_sets[1]': expected a string KEY=VALUE, got the number 3"));
  opt["scenario_sets"] = "policy.overlap=ddp";
  EXPECT_THAT(error_of(opt.dump()), HasSubstr("field 'scenario_sets'"));
}

TEST(HtmlReportInput, RefusesBadSweepLinesByLine) {
  const std::string sweep = golden("report/sweep.jsonl");
  const std::size_t second = sweep.find('\n') + 1;
  const std::size_t third = sweep.find('\n', second) + 1;
  const std::string first_line = sweep.substr(0, second);
  EXPECT_THAT(error_of(first_line + "{\"ssgd_sweep_version\": 1, \"point\": 1,\n", "s.jsonl"),
              HasSubstr("s.jsonl:2: not valid JSON"));
  EXPECT_THAT(
      error_of(first_line + first_line, "s.jsonl"),
      HasSubstr(
          "s.jsonl:2: field 'point': expected point 1 (the lines are in point order), got 0"));
  std::string wrong = sweep.substr(second, third - second);
  wrong.replace(wrong.find("\"workers\":8"), 11, "\"workers\":-8");
  EXPECT_THAT(error_of(first_line + wrong, "s.jsonl"),
              HasSubstr("s.jsonl:2: field 'figures.workers': must not be negative, got -8"));
  std::string other_keys = sweep.substr(second, third - second);
  other_keys.replace(other_keys.find("\"policy.overlap\""), 16, "\"policy.overlop\"");
  EXPECT_THAT(error_of(first_line + other_keys, "s.jsonl"),
              HasSubstr("s.jsonl:2: field 'keys': not the first line's keys"));
  EXPECT_THAT(
      error_of("{\"ssgd_sweep_version\": 2, \"point\": 0}\n", "s.jsonl"),
      HasSubstr("s.jsonl:1: field 'ssgd_sweep_version': version 2; this ssgd reads version 1"));
}

// ---------------------------------------------------------------- timelines

// A timeline as ssgd simulate --timeline writes it: each rank's iteration is
// a forward (1 ms x its factor) then a backward (2 ms x its factor) on track
// "compute", and the network's all-reduce at 5 ms; iterations 10 ms apart.
std::string timeline_text(int ranks, int iterations, const std::map<int, double>& slow = {}) {
  std::string t = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  t += R"({"name":"process_name","ph":"M","pid":0,"args":{"name":"network"}})";
  t += R"(,{"name":"thread_name","ph":"M","pid":0,"tid":5,"args":{"name":"all-reduce"}})";
  for (int r = 0; r < ranks; ++r) {
    t += ",{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(r + 1) +
         ",\"args\":{\"name\":\"rank " + std::to_string(r) + "\"}}";
    t += ",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(r + 1) +
         ",\"tid\":2,\"args\":{\"name\":\"compute\"}}";
  }
  for (int i = 0; i < iterations; ++i) {
    for (int r = 0; r < ranks; ++r) {
      const double f = slow.count(r) ? slow.at(r) : 1.0;
      const double at = i * 10000.0;
      t += ",{\"name\":\"forward conv1\",\"cat\":\"forward\",\"ph\":\"X\",\"pid\":" +
           std::to_string(r + 1) + ",\"tid\":2,\"ts\":" + std::to_string(at) +
           ",\"dur\":" + std::to_string(1000 * f) +
           ",\"args\":{\"iteration\":" + std::to_string(i) + ",\"task\":1,\"layer\":0}}";
      t += ",{\"name\":\"backward conv1\",\"cat\":\"backward\",\"ph\":\"X\",\"pid\":" +
           std::to_string(r + 1) + ",\"tid\":2,\"ts\":" + std::to_string(at + 1000 * f) +
           ",\"dur\":" + std::to_string(2000 * f) +
           ",\"args\":{\"iteration\":" + std::to_string(i) + ",\"task\":2,\"layer\":0}}";
    }
    t += ",{\"name\":\"comm\",\"cat\":\"comm\",\"ph\":\"X\",\"pid\":0,\"tid\":5,\"ts\":" +
         std::to_string(i * 10000.0 + 5000) +
         ",\"dur\":500,\"args\":{\"iteration\":" + std::to_string(i) +
         ",\"task\":3,\"bytes\":1024,\"group\":0,\"replayed\":false}}";
  }
  return t + "\n]}\n";
}

ssgd::html::TimelineView timeline_of(const std::string& text) {
  const auto in = parse_report_input("t.json", text);
  EXPECT_EQ(in.kind, InputKind::kTimeline);
  return std::get<ssgd::html::TimelineView>(in.content);
}

TEST(HtmlReportTimeline, IdenticalRanksAreOneGroupDrawnOnce) {
  const auto t = timeline_of(timeline_text(16, 3));
  EXPECT_EQ(t.iteration, 2);  // the last
  EXPECT_EQ(t.iterations, 3);
  EXPECT_EQ(t.ranks, 16);
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].label, "ranks 0-15 (16 identical)");
  EXPECT_EQ(t.lanes, (std::vector<std::string>{"ranks 0-15 (16 identical) \u00b7 compute",
                                               "network \u00b7 all-reduce"}));
  ASSERT_EQ(t.bars.size(), 3u);
  EXPECT_EQ(t.bars[0].name, "forward conv1");
  EXPECT_EQ(t.bars[0].start_ns, 0);
  EXPECT_EQ(t.bars[1].start_ns, 1'000'000);
  EXPECT_EQ(t.bars[1].end_ns, 3'000'000);
  EXPECT_EQ(t.bars[2].kind, "comm");
  EXPECT_EQ(t.bars[2].start_ns, 5'000'000);
  EXPECT_EQ(t.span_ns, 5'500'000);
  EXPECT_EQ(t.tasks_dropped, 0u);
  // One iteration: iteration 0.
  EXPECT_EQ(timeline_of(timeline_text(2, 1)).iteration, 0);
}

TEST(HtmlReportTimeline, AStragglerIsItsOwnGroup) {
  const auto t = timeline_of(timeline_text(8, 2, {{5, 1.2}}));
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].label, "ranks 0-4, 6-7 (7 identical)");
  EXPECT_EQ(t.groups[1].label, "rank 5");
  EXPECT_EQ(t.groups_shown, 2u);
  EXPECT_EQ(t.lanes.size(), 3u);
  EXPECT_EQ(t.bars.size(), 5u);
  const std::string html =
      ssgd::html::html_report({parse_report_input("t.json", timeline_text(8, 2, {{5, 1.2}}))});
  EXPECT_THAT(html, HasSubstr("Timeline of iteration 1 of t.json"));
  EXPECT_THAT(html, HasSubstr("8 ranks in 2 groups"));
  EXPECT_THAT(html, HasSubstr("\"x2\":{\"field\":\"end\"}"));
}

TEST(HtmlReportTimeline, AtMostEightGroupsAndAFewThousandBars) {
  std::map<int, double> all_differ;
  for (int r = 0; r < 12; ++r) all_differ[r] = 1.0 + r * 0.01;
  const auto t = timeline_of(timeline_text(12, 1, all_differ));
  EXPECT_EQ(t.groups.size(), 12u);
  EXPECT_EQ(t.groups_shown, ssgd::html::kMaxTimelineGroups);
  EXPECT_EQ(t.lanes.size(), 9u);  // 8 groups and the network
  const std::string html = ssgd::html::html_report(
      {parse_report_input("t.json", timeline_text(12, 1, all_differ))});
  EXPECT_THAT(html, HasSubstr("The first 8 groups are drawn; 4 more are left out: rank 8; rank 9"));

  // 3000 short tasks and 10 long ones: the short ones go, and the page says so.
  std::string many = "{\"traceEvents\":[";
  for (int i = 0; i < 3010; ++i) {
    many += std::string(i ? "," : "") +
            "{\"name\":\"f\",\"cat\":\"forward\",\"ph\":\"X\",\"pid\":1," +
            "\"tid\":2,\"ts\":" + std::to_string(i * 10) +
            ",\"dur\":" + (i % 301 == 0 ? "9" : "1") + ",\"args\":{\"iteration\":0}}";
  }
  many += "]}";
  const auto m = timeline_of(many);
  EXPECT_EQ(m.tasks_in_lanes, 3010u);
  EXPECT_EQ(m.bars.size(), 10u);
  EXPECT_EQ(m.tasks_dropped, 3000u);
  EXPECT_EQ(m.dropped_up_to_ns, 1000);
  EXPECT_THAT(
      ssgd::html::html_report({parse_report_input("t.json", many)}),
      HasSubstr(
          "3000 of the 3010 tasks of the drawn rows, those of 0.001 ms or less, are not drawn"));
}

TEST(HtmlReportTimeline, LabelsRankRanges) {
  using ssgd::html::rank_group_label;
  EXPECT_EQ(rank_group_label({5}), "rank 5");
  EXPECT_EQ(rank_group_label({0, 1, 2, 3}), "ranks 0-3 (4 identical)");
  EXPECT_EQ(rank_group_label({0, 2, 3, 7}), "ranks 0, 2-3, 7 (4 identical)");
  EXPECT_EQ(rank_group_label({0, 2, 4, 6, 8, 10}), "ranks 0, 2, 4, 6, ... (6 identical)");
}

TEST(HtmlReportTimeline, RefusesOtherTracesAndBadEventsNamingTheEventAndField) {
  const std::string head = "{\"traceEvents\":[";
  const std::string ok_args = ",\"args\":{\"iteration\":0}";
  auto x = [&](const std::string& fields) {
    return head + R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"rank 0"}},)" +
           "{\"ph\":\"X\"," + fields + "}]}";
  };
  const std::string good = R"("name":"f","cat":"forward","pid":1,"tid":2,"ts":0,"dur":1)";
  EXPECT_EQ(timeline_of(x(good + ok_args)).bars.size(), 1u);
  // A PyTorch profiler trace: no iteration on its events.
  EXPECT_THAT(
      error_of(x(R"("name":"aten::mm","cat":"cpu_op","pid":1,"tid":2,"ts":0,"dur":1,"args":{}})")),
      HasSubstr("r.json: field 'traceEvents[1].args.iteration': missing: not a timeline of "
                "ssgd simulate --timeline"));
  EXPECT_THAT(
      error_of(x(R"("name":"f","cat":"forward","pid":1,"tid":2,"ts":"0","dur":1)" + ok_args)),
      HasSubstr("field 'traceEvents[1].ts': expected a number, got the string \"0\""));
  EXPECT_THAT(
      error_of(x(R"("name":"f","cat":"forward","pid":1,"tid":2,"ts":0,"dur":-1)" + ok_args)),
      HasSubstr("field 'traceEvents[1].dur': expected microseconds from 0 to 1e+13, got -1"));
  EXPECT_THAT(
      error_of(x(R"("name":"f","cat":"forward","pid":1,"tid":2,"ts":1e300,"dur":1)" + ok_args)),
      HasSubstr("field 'traceEvents[1].ts': expected microseconds"));
  EXPECT_THAT(
      error_of(x(R"("name":"f","cat":"forward","pid":-1,"tid":2,"ts":0,"dur":1)" + ok_args)),
      HasSubstr("field 'traceEvents[1].pid'"));
  EXPECT_THAT(error_of(x(R"("name":7,"cat":"forward","pid":1,"tid":2,"ts":0,"dur":1)" + ok_args)),
              HasSubstr("field 'traceEvents[1].name'"));
  EXPECT_THAT(error_of(x(good + R"(,"args":{"iteration":1.5})")),
              HasSubstr("field 'traceEvents[1].args.iteration'"));
  EXPECT_THAT(error_of(head + "{\"ph\":\"M\"}, 3]}"),
              HasSubstr("field 'traceEvents[1]': expected an event (an object), got the number 3"));
  EXPECT_THAT(error_of(head + "[]]}"), HasSubstr("field 'traceEvents[0]': expected an event"));
  EXPECT_THAT(error_of("{\"traceEvents\": 5}"),
              HasSubstr("field 'traceEvents': expected an array of events, got the number 5"));
  EXPECT_THAT(error_of(head + "]}"), HasSubstr("no tasks ('X' events): nothing to draw"));
  EXPECT_THAT(error_of(head + "{\"ph\":\"M\"},\n{oops}]}"), HasSubstr("r.json:2: not valid JSON"));
  EXPECT_THAT(error_of(head + "{}]}"), HasSubstr("field 'traceEvents[0].ph': missing"));
  // Deep nesting inside an event: an error, not a stack overflow.
  EXPECT_THAT(error_of(head + "{\"ph\":" + std::string(1'000'000, '[') +
                       std::string(1'000'000, ']') + "}]}"),
              HasSubstr("traceEvents[0].ph"));
  // Iterations numbered far apart, on many ranks: memory follows the tasks.
  std::string sparse = head;
  for (int p = 1; p <= 2000; ++p) {
    sparse += std::string(p > 1 ? "," : "") + R"({"ph":"X","name":"f","cat":"forward","pid":)" +
              std::to_string(p) + R"(,"tid":1,"ts":0,"dur":1,"args":{"iteration":)" +
              (p % 2 ? "0" : "100000000") + "}}";
  }
  const auto far = timeline_of(sparse + "]}");
  EXPECT_EQ(far.iterations, 100'000'001);
  EXPECT_EQ(far.iteration, 100'000'000);  // no iteration has every rank: the last
  EXPECT_FALSE(far.complete);
  EXPECT_EQ(far.groups.size(), 1u);
  EXPECT_EQ(far.ranks, 1000);
  // Found later in the file (not in its first bytes): still a timeline.
  EXPECT_EQ(parse_report_input("t.json", "{\"x\":\"" + std::string(5000, 'a') + "\"," +
                                             x(good + ok_args).substr(1))
                .kind,
            InputKind::kTimeline);
}

// ---------------------------------------------------------------- what-ifs compared

using ssgd::html::Labelling;
using ssgd::html::ReportInput;
using ssgd::html::Settings;

// The golden simulate report with `overlap` and `inter_node` in its scenario.
std::string simulate_with(const std::string& overlap, const std::string& inter_node) {
  Json j = Json::parse(golden("golden/simulate/scenario_v100_4x4_10gbe.json"));
  j["scenario"]["policy"]["overlap"] = overlap;
  j["scenario"]["network"]["inter_node"]["preset"] = inter_node;
  return j.dump();
}

// The chart specifications of a page, from its #ssgd-charts element.
Json charts_of(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"ssgd-charts\">";
  const std::size_t at = page.find(open);
  EXPECT_NE(at, std::string::npos);
  const std::size_t from = at + open.size();
  std::string text = page.substr(from, page.find("</script>", from) - from);
  // The page escapes "</" as "<\/", which is the same JSON.
  return Json::parse(text);
}

// `what` is in `page` (a failure names what, not the whole page).
::testing::AssertionResult has(const std::string& page, const std::string& what) {
  if (page.find(what) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the page lacks: " << what;
}

TEST(HtmlReportLabels, RunsAreNamedByTheScenarioKeysThatDifferEverywhereOnThePage) {
  const std::vector<ReportInput> inputs = {
      parse_report_input("runs/a.json", simulate_with("wfbp", "10gbe")),
      parse_report_input("runs/b.json", simulate_with("bsp", "ib_ndr400"))};
  const std::string page = ssgd::html::html_report(inputs);
  const std::string a = "policy.overlap=wfbp, network.inter_node=10gbe";
  const std::string b = "policy.overlap=bsp, network.inter_node=ib_ndr400";
  // The comparison table, the breakdown chart's data, the section headings,
  // the list of inputs; never the file names as labels.
  EXPECT_TRUE(has(page, "<tr><td>" + b + "</td>"));
  EXPECT_TRUE(has(page, "\"run\":\"" + b + "\""));
  EXPECT_TRUE(has(page, "<h2 id=\"input-2\">2. " + b + " (simulate report, runs/b.json)</h2>"));
  EXPECT_TRUE(has(page, "runs/a.json</a> (simulate report): " + a + "</li>"));
  EXPECT_FALSE(has(page, "1: a.json"));
  // The keys that differ, as a table.
  EXPECT_TRUE(has(page, "<tr><td>network.inter_node</td><td>10gbe</td><td>ib_ndr400</td></tr>"));
  EXPECT_TRUE(has(page, "Each is named by the scenario keys whose values differ"));
}

TEST(HtmlReportLabels, TheFewestKeysThatTellManyApartFileNamesWhenNoneDiffer) {
  // Thirteen keys differ between the three golden runs: their scenario files
  // tell them apart.
  const std::vector<ReportInput> three = {
      parse_report_input("a.json", golden("golden/simulate/scenario_v100_4x4_10gbe.json")),
      parse_report_input("b.json", golden("golden/simulate/scenario_dgx1_8x8_ib100.json")),
      parse_report_input("c.json", golden("golden/simulate/scenario_whatif_perturb.json"))};
  const std::string page = ssgd::html::html_report(three);
  EXPECT_TRUE(has(page, "\"run\":\"scenario=dgx1_8x8_ib100.yaml\""));
  EXPECT_TRUE(has(page, "13 scenario keys differ between them"));
  // Nothing differs: the file names, numbered where they are the same.
  const std::string same = simulate_with("wfbp", "10gbe");
  const std::string twins = ssgd::html::html_report({parse_report_input("x/r.json", same),
                                                          parse_report_input("y/r.json", same),
                                                          parse_report_input("z/s.json", same)});
  EXPECT_TRUE(has(twins, "\"run\":\"1: r.json\""));
  EXPECT_TRUE(has(twins, "\"run\":\"2: r.json\""));
  EXPECT_TRUE(has(twins, "\"run\":\"s.json\""));
  EXPECT_TRUE(has(twins, "No scenario key differs between them"));
}

// An optimize report's --set lines are settings of their own; a key set
// twice ran with its last value, and the reports' own keys are not repeated.
TEST(HtmlReportLabels, ASetTwiceIsItsLastValue) {
  ssgd::html::OptimizeReport o;
  o.input = "in.csv";
  o.scenario_sets = {"network.inter_node=10gbe", "cluster.nodes=4", "network.inter_node=100gbe",
                     "bad", "=x"};
  const auto settings = ssgd::html::optimize_settings(o);
  std::map<std::string, std::string> by_key;
  std::vector<std::string> keys;
  for (const auto& x : settings) {
    keys.push_back(x.key);
    by_key[x.key] = x.text;
  }
  EXPECT_EQ(keys,
            (std::vector<std::string>{"input", "scenario", "network.inter_node", "cluster.nodes"}));
  EXPECT_EQ(by_key["network.inter_node"], "100gbe");
  ssgd::html::ScaleReport s;
  s.scenario_sets = {"policy.overlap=bsp", "network.inter_node=100gbe"};
  s.settings = {{"policy", "bsp"}, {"scenario_sets", s.scenario_sets}};
  keys.clear();
  for (const auto& x : ssgd::html::scale_settings(s)) keys.push_back(x.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"policy", "network.inter_node"}));
}

TEST(HtmlReportLabels, LabelsAreShortAndUnique) {
  using ssgd::html::label_by_differences;
  const auto item = [](std::vector<std::pair<std::string, Json>> kv) {
    Settings s;
    for (auto& [k, v] : kv) s.push_back({k, v, ssgd::html::setting_text(v)});
    return s;
  };
  // Four keys differ; a and b together tell the four apart, c and d add nothing.
  const std::vector<Settings> four = {item({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}}),
                                      item({{"a", 1}, {"b", 2}, {"c", 2}, {"d", 1}}),
                                      item({{"a", 2}, {"b", 1}, {"c", 1}, {"d", 2}}),
                                      item({{"a", 2}, {"b", 2}, {"c", 2}, {"d", 2}})};
  const Labelling l = label_by_differences(four, {"1.json", "2.json", "3.json", "4.json"}, {});
  EXPECT_EQ(l.differing, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(l.shown, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(l.labels, (std::vector<std::string>{"a=1, b=1", "a=1, b=2", "a=2, b=1", "a=2, b=2"}));
  // Priority names the keys and picks among equals.
  const Labelling p = label_by_differences(four, {"1", "2", "3", "4"}, {"d", "c"});
  EXPECT_EQ(p.labels[3], "d=2, c=2");
  // Values cut short to the same text stay apart by their files.
  const std::string long_a(60, 'x'), long_b = std::string(59, 'x') + "y";
  const Labelling cut = label_by_differences({item({{"k", long_a}}), item({{"k", long_b}})},
                                             {"dir/a.json", "dir/b.json"}, {});
  ASSERT_EQ(cut.labels.size(), 2u);
  EXPECT_NE(cut.labels[0], cut.labels[1]);
  EXPECT_LT(cut.labels[0].size(), 60u);
  EXPECT_THAT(cut.labels[1], HasSubstr("(b.json)"));
  // "network.inter_node.preset" is named as --set names it.
  Settings flat;
  ssgd::html::flatten_settings(Json::parse(R"({"network": {"inter_node": {"preset": "x"}},
                                                   "platform": {"preset": "y"}})"),
                                    "", flat);
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_EQ(flat[0].key, "network.inter_node");
  EXPECT_EQ(flat[1].key, "platform.preset");
}

// The golden scale report with another policy and scenario file.
std::string scale_with(const std::string& policy, const std::string& scenario_file) {
  Json j = Json::parse(golden("golden/scale/resnet50_v100_4x4_10gbe.json"));
  j["policy"] = policy;
  j["scenario_file"] = scenario_file;
  for (auto& row : j["rows"]) row["speedup"] = row["speedup"].get<double>() * 0.5;
  return j.dump();
}

TEST(HtmlReportCompare, TwoScaleReportsAreOverlaidInOneSpeedupAndOneEfficiencyChart) {
  const std::vector<ReportInput> inputs = {
      parse_report_input("s1.json", golden("golden/scale/resnet50_v100_4x4_10gbe.json")),
      parse_report_input("s2.json", scale_with("bsp", "scenarios/v100_4x4_10gbe.yaml"))};
  const std::string page = ssgd::html::html_report(inputs);
  EXPECT_TRUE(has(page, "Comparison of the 2 scale reports"));
  const Json charts = charts_of(page);
  ASSERT_EQ(charts.size(), 2u);  // one speedup, one efficiency: not two each
  std::set<std::string> series;
  for (const Json& v : charts[0]["spec"]["data"]["values"])
    series.insert(v["series"].get<std::string>());
  EXPECT_EQ(series, (std::set<std::string>{"policy=wfbp", "policy=bsp", "ideal (speedup = GPUs)"}));
  EXPECT_THAT(charts[0]["spec"]["title"].get<std::string>(), HasSubstr("Speedup against GPUs"));
  EXPECT_THAT(charts[1]["spec"]["title"].get<std::string>(), HasSubstr("Scaling efficiency"));
  EXPECT_TRUE(has(page, "2. policy=bsp (scale report, s2.json)"));
  // One report alone keeps its own two charts.
  EXPECT_EQ(charts_of(ssgd::html::html_report({inputs[0]})).size(), 2u);
}

TEST(HtmlReportCompare, OptimizeReportsOfOneParameterShareACurveInHumanUnits) {
  Json other = Json::parse(golden("report/optimize.json"));
  other["scenario_file"] = "scenarios/dgx1_8x8_ib100.yaml";
  other["curve"][1]["value"] = "1048576B";  // as --from/--to write it
  const std::vector<ReportInput> inputs = {
      parse_report_input("o1.json", golden("report/optimize.json")),
      parse_report_input("o2.json", other.dump())};
  const Json charts = charts_of(ssgd::html::html_report(inputs));
  ASSERT_EQ(charts.size(), 1u);
  const Json& spec = charts[0]["spec"];
  EXPECT_EQ(spec["layer"][0]["encoding"]["x"]["type"], "quantitative");
  EXPECT_EQ(spec["layer"][0]["encoding"]["x"]["title"], "policy.bucket_cap (MiB)");
  std::set<std::string> series;
  for (const Json& v : spec["data"]["values"]) {
    series.insert(v["series"].get<std::string>());
    if (v["value"] == "1048576B") {
      EXPECT_EQ(v["x"].get<double>(), 1.0);
    }
  }
  EXPECT_EQ(series, (std::set<std::string>{"scenario=v100_4x4_10gbe.yaml",
                                           "scenario=dgx1_8x8_ib100.yaml"}));
  // Values that are not quantities: names in the order tried.
  Json names = Json::parse(golden("report/optimize.json"));
  names["param"] = "sharding.strategy";
  const char* strategies[] = {"none", "zero1", "zero2", "zero3", "hsdp"};
  for (std::size_t i = 0; i < names["curve"].size(); ++i)
    names["curve"][i]["value"] = strategies[i];
  names["best"]["value"] = "zero2";
  const Json one =
      charts_of(ssgd::html::html_report({parse_report_input("o.json", names.dump())}));
  EXPECT_EQ(one[0]["spec"]["layer"][0]["encoding"]["x"]["type"], "ordinal");
}

TEST(HtmlReportQuantity, SizesTimesAndRatesInAUnitThatSuitsThem) {
  using ssgd::html::parse_quantity;
  using ssgd::html::quantity_text;
  using ssgd::html::QuantityKind;
  ASSERT_TRUE(parse_quantity("1048576B"));
  EXPECT_EQ(parse_quantity("1048576B")->kind, QuantityKind::kSize);
  EXPECT_EQ(quantity_text(*parse_quantity("1048576B")), "1.0 MiB");
  EXPECT_EQ(quantity_text(*parse_quantity("250us")), "250.000 us");
  EXPECT_EQ(quantity_text(*parse_quantity("12.5GB/s")), "12.5 GB/s");
  EXPECT_EQ(quantity_text(*parse_quantity("0B")), "0 B");
  EXPECT_EQ(parse_quantity("3")->kind, QuantityKind::kNumber);
  EXPECT_FALSE(parse_quantity("zero3"));
  EXPECT_FALSE(parse_quantity("zero3 sharding.forward_prefetch=1"));
  EXPECT_FALSE(parse_quantity(""));
}

// A sweep of the cross product of `values` (key i's values), in point order.
std::string sweep_of(const std::vector<std::vector<Json>>& values) {
  std::size_t total = 1;
  for (const auto& v : values) total *= v.size();
  std::string out;
  for (std::size_t p = 0; p < total; ++p) {
    Json keys = Json::object();
    std::size_t rest = p;
    for (std::size_t k = values.size(); k-- > 0;) {
      keys[fmt::format("k{}", k)] = values[k][rest % values[k].size()];
      rest /= values[k].size();
    }
    Json ordered = Json::object();
    for (std::size_t k = 0; k < values.size(); ++k)
      ordered[fmt::format("k{}", k)] = keys[fmt::format("k{}", k)];
    Json line = {{"ssgd_sweep_version", 1},
                 {"point", p},
                 {"keys", ordered},
                 {"figures",
                  {{"iteration_time_ns", 1'000'000 + 1000 * p},
                   {"throughput_samples_per_s", 100.0 + static_cast<double>(p)},
                   {"workers", 4},
                   {"breakdown.compute_ns", 1},
                   {"breakdown.exposed_comm_ns", 0},
                   {"breakdown.io_ns", 0},
                   {"breakdown.idle_ns", 0}}}};
    out += line.dump() + "\n";
  }
  return out;
}

// In every chart, the points one line joins (those of one colour and one
// detail value) agree on every varying key but x, and have distinct x.
void expect_no_line_across_keys(const std::string& text, std::size_t charts_per_figure) {
  const auto in = parse_report_input("s.jsonl", text);
  const auto& sweep = std::get<ssgd::html::SweepReport>(in.content);
  const auto layout = ssgd::html::sweep_layout(sweep);
  ASSERT_TRUE(layout.x.has_value());
  std::size_t x_index = 0;
  while (layout.varying[x_index] != *layout.x) ++x_index;
  const auto charts = ssgd::html::sweep_charts(sweep, layout, false);
  EXPECT_EQ(charts.size(), charts_per_figure);
  std::size_t points = 0;
  for (const Json& spec : charts) {
    EXPECT_EQ(spec["mark"]["type"], "line");
    const Json& enc = spec["encoding"];
    std::map<std::string, std::vector<const Json*>> lines;
    for (const Json& v : spec["data"]["values"]) {
      const std::string colour =
          enc.contains("color") ? v[enc["color"]["field"].get<std::string>()].dump() : "";
      const std::string detail =
          enc.contains("detail") ? v[enc["detail"]["field"].get<std::string>()].dump() : "";
      const std::string line = fmt::format("{}|{}", colour, detail);
      lines[line].push_back(&v);
      ++points;
    }
    for (const auto& [name, members] : lines) {
      std::set<std::string> xs;
      for (const Json* m : members) {
        EXPECT_TRUE(xs.insert((*m)["x"].dump()).second) << "two points at one x in line " << name;
        for (std::size_t i = 0; i < layout.varying.size(); ++i) {
          if (i == x_index) continue;
          const std::string k = fmt::format("k{}", i);
          EXPECT_EQ((*m)[k], (*members.front())[k])
              << "line " << name << " joins values of " << sweep.keys[layout.varying[i]];
        }
      }
    }
  }
  EXPECT_EQ(points, sweep.points.size());
}

TEST(HtmlReportSweep, ThreeOrMoreVaryingKeysNeverJoinPointsOfAnotherKeysValues) {
  const std::vector<Json> nodes = {1, 2, 4, 8}, nets = {"10gbe", "25gbe", "100gbe"},
                          policies = {"bsp", "wfbp", "mgwfbp", "ddp"}, two = {"a", "b"};
  // x nodes, colour network, a chart per policy (the sweep of
  // scenarios/sweeps/resnet50_network_policy.yaml).
  expect_no_line_across_keys(sweep_of({nodes, nets, policies}), 4);
  // Four and five keys: a chart per combination of the others.
  expect_no_line_across_keys(sweep_of({nodes, nets, policies, two}), 8);
  // Text before the number key: x is still the number key.
  expect_no_line_across_keys(sweep_of({policies, nodes, two}), 2);
  // More combinations than kMaxSweepPanels: one chart, a line per combination.
  std::vector<Json> many;
  for (int i = 0; i < 13; ++i) many.push_back(fmt::format("v{}", i));
  expect_no_line_across_keys(sweep_of({nodes, two, many}), 1);
  expect_no_line_across_keys(sweep_of({nodes, two, many, two, two}), 1);
  // Two keys: one chart, coloured by the second.
  expect_no_line_across_keys(sweep_of({nodes, policies}), 1);
  // The page says how it is drawn.
  EXPECT_TRUE(has(ssgd::html::html_report(
                      {parse_report_input("s.jsonl", sweep_of({nodes, nets, policies}))}),
                  "Plotted against k0, coloured by k1, a chart per value of k2 (4 charts per "
                  "figure, on the same axes)"));
}

// ---------------------------------------------------------------- shared fabric, verify, diff

TEST(HtmlReportSharedFabric, TheJobsAloneAndSharedAsATable) {
  Json j = Json::parse(golden("golden/simulate/scenario_v100_4x4_10gbe.json"));
  j["shared_fabric"] = Json::parse(R"({"platform_nodes": 8, "events": 10, "jobs": [
      {"name": "main", "kind": "training", "first_node": 0, "nodes": 4, "workers": 16,
       "measure": "iteration", "detail": "wfbp, 6 iterations", "alone_ns": 282982239,
       "shared_ns": 570732265, "slowdown": 2.016848361285317, "count": 6},
      {"name": "checkpoint", "kind": "traffic", "first_node": 0, "nodes": 8, "workers": 32,
       "measure": "collective", "detail": "all_gather of 512.0 MiB", "alone_ns": 693802962,
       "shared_ns": 1303924671, "slowdown": 1.879387581801647, "count": 7}]})");
  const std::string page = ssgd::html::html_report({parse_report_input("r.json", j.dump())});
  EXPECT_TRUE(has(page, "<h3>Shared fabric</h3>"));
  EXPECT_TRUE(has(page, "<tr><td>checkpoint</td><td>traffic</td><td class=\"num\">0-7</td>"));
  EXPECT_TRUE(has(page,
                  "<td class=\"num\">282.982 ms</td><td class=\"num\">570.732 ms</td>"
                  "<td class=\"num\">2.02x</td>"));
  EXPECT_TRUE(has(page, "Slowdown of each job on the shared fabric"));
  j["shared_fabric"]["jobs"][1]["alone_ns"] = "fast";
  EXPECT_THAT(error_of(j.dump()),
              HasSubstr("r.json: field 'shared_fabric.jobs[1].alone_ns': expected a whole number"));
}

TEST(HtmlReportMeasured, ADatasetVerifyReportIsChartedPredictedAgainstMeasured) {
  const auto in = parse_report_input("v.json", golden("golden/dataset_verify/cpu-cluster.json"));
  ASSERT_EQ(in.kind, InputKind::kDatasetVerify);
  const auto& v = std::get<ssgd::html::DatasetVerifyReport>(in.content);
  const Json j = Json::parse(golden("golden/dataset_verify/cpu-cluster.json"));
  EXPECT_EQ(v.cases.size(), j["cases"].size());
  EXPECT_EQ(v.cases[0].predicted_ns, j["cases"][0]["predicted_ns"].get<std::int64_t>());
  EXPECT_EQ(v.all.worst_case, j["summary"]["all"]["worst_case"].get<std::string>());
  const std::string page = ssgd::html::html_report({in});
  EXPECT_TRUE(has(page, "(dataset verify report)"));
  EXPECT_TRUE(has(page, "Predicted against measured iteration time, one dot per case"));
  EXPECT_TRUE(has(page, fmt::format("median |error| {:.1f}%, worst {:.1f}%",
                                    j["summary"]["all"]["median_abs_error_percent"].get<double>(),
                                    j["summary"]["all"]["worst_abs_error_percent"].get<double>())));
  // Every case's error is written beside its bar.
  const Json charts = charts_of(page);
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_EQ(charts[1]["spec"]["data"]["values"].size(), j["cases"].size());
  EXPECT_TRUE(charts[1]["spec"]["data"]["values"][0].contains("text"));
}

TEST(HtmlReportMeasured, RefusesBadDatasetVerifyFieldsNamingFileAndField) {
  const Json good = Json::parse(golden("golden/dataset_verify/cpu-cluster.json"));
  Json bad = good;
  bad["cases"][3]["predicted_ns"] = "soon";
  EXPECT_THAT(error_of(bad.dump(), "v.json"),
              HasSubstr("v.json: field 'cases[3].predicted_ns': expected a whole number, got the "
                        "string \"soon\""));
  bad = good;
  bad["format_version"] = 2;
  EXPECT_THAT(error_of(bad.dump(), "v.json"),
              HasSubstr("v.json: field 'format_version': version 2; this ssgd reads dataset verify "
                        "reports of version 1"));
  bad = good;
  bad["cases"][0]["measured_median_ns"] = 0;
  EXPECT_THAT(error_of(bad.dump(), "v.json"),
              HasSubstr("field 'cases[0].measured_median_ns': must be greater than zero"));
  bad = good;
  bad["cases"][1]["error_percent"] = nullptr;
  EXPECT_THAT(error_of(bad.dump(), "v.json"), HasSubstr("field 'cases[1].error_percent'"));
  bad = good;
  bad["summary"]["all"]["cases"] = 3;
  EXPECT_THAT(error_of(bad.dump(), "v.json"), HasSubstr("field 'summary.all.cases': 3 cases"));
  bad = good;
  bad["summary"].erase("what_if");
  EXPECT_THAT(error_of(bad.dump(), "v.json"), HasSubstr("field 'summary.what_if': missing"));
  bad = good;
  bad["cases"] = Json::array();  // --no-replay
  bad["summary"]["all"]["cases"] = 0;
  EXPECT_EQ(error_of(bad.dump(), "v.json"), "(accepted)");
}

// A case whose entry measured its memory: the page sets the estimate beside
// the measurement, says when the trace gave no activations, and refuses a
// broken memory field by name.
TEST(HtmlReportMeasured, AVerifyReportWithMeasuredMemoryShowsItsMemoryTable) {
  Json j = Json::parse(golden("golden/dataset_verify/cpu-cluster.json"));
  j["cases"][0]["memory"] = {
      {"predicted_bytes", 150 << 20},    {"measured_median_bytes", 200 << 20},
      {"measured_min_bytes", 190 << 20}, {"measured_p10_bytes", 195 << 20},
      {"measured_p90_bytes", 215 << 20}, {"error_percent", -25.0},
      {"noise_percent", 10.0},           {"activations_known", false}};
  j["summary"]["memory"] = {{"cases", 1},
                            {"median_abs_error_percent", 25.0},
                            {"worst_abs_error_percent", 25.0},
                            {"worst_case", j["cases"][0]["case"]}};
  const auto in = parse_report_input("v.json", j.dump());
  const auto& v = std::get<ssgd::html::DatasetVerifyReport>(in.content);
  ASSERT_TRUE(v.cases[0].memory.has_value());
  EXPECT_FALSE(v.cases[1].memory.has_value());
  EXPECT_EQ(v.cases[0].memory->measured_bytes, 200 << 20);
  ASSERT_TRUE(v.memory.has_value());
  const std::string page = ssgd::html::html_report({in});
  EXPECT_TRUE(has(page,
                  "Memory: 1 case(s) whose entry measured its peak memory, median |error| "
                  "25.0%, worst 25.0%"));
  EXPECT_TRUE(has(page,
                  "<td class=\"num\">150.0 MiB</td><td class=\"num\">200.0 MiB</td>"
                  "<td class=\"num\">-25.00%</td><td class=\"num\">10.0%</td>"
                  "<td>not in the trace: left out</td>"));
  j["cases"][0]["memory"]["measured_p90_bytes"] = 1;
  EXPECT_THAT(
      error_of(j.dump(), "v.json"),
      HasSubstr("field 'cases[0].memory.measured_p90_bytes': less than measured_p10_bytes"));
  j["cases"][0]["memory"]["measured_median_bytes"] = 0;
  EXPECT_THAT(
      error_of(j.dump(), "v.json"),
      HasSubstr("field 'cases[0].memory.measured_median_bytes': must be greater than zero"));
}

TEST(HtmlReportMeasured, ADiffReportIsChartedMeasuredAgainstSimulatedWithTheDifference) {
  const auto in = parse_report_input("d.json", golden("report/diff.json"));
  ASSERT_EQ(in.kind, InputKind::kDiff);
  const auto& d = std::get<ssgd::html::DiffReport>(in.content);
  const Json j = Json::parse(golden("report/diff.json"));
  EXPECT_EQ(d.matched.size(), j["matched"].size());
  EXPECT_EQ(d.by, "duration");
  const auto kinds = ssgd::html::diff_by_kind(d);
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front().kind, "forward");  // io and h2d have no tasks here
  const std::string page = ssgd::html::html_report({in});
  EXPECT_TRUE(has(page, "(diff report)"));
  EXPECT_TRUE(has(page, "Measured against simulated: the iteration, and each task kind"));
  EXPECT_TRUE(has(page, "tasks whose busy time differs most: simulated minus measured"));
  EXPECT_TRUE(has(page, "-7.097 ms (-1.0%)"));  // the iteration's difference
  EXPECT_EQ(charts_of(page).size(), 2u);
}

TEST(HtmlReportMeasured, RefusesBadDiffFieldsNamingFileAndField) {
  const Json good = Json::parse(golden("report/diff.json"));
  Json bad = good;
  bad["matched"][0]["simulated"] = nullptr;
  EXPECT_THAT(error_of(bad.dump(), "d.json"),
              HasSubstr("d.json: field 'matched[0].simulated': expected the simulated task (an "
                        "object), got null"));
  bad = good;
  bad["matched"][2]["measured"]["busy_ns"] = -4;
  EXPECT_THAT(error_of(bad.dump(), "d.json"),
              HasSubstr("field 'matched[2].measured.busy_ns': must not be negative, got -4"));
  bad = good;
  bad["matched"][1]["measured"]["end_ns"] = 0;
  EXPECT_THAT(error_of(bad.dump(), "d.json"),
              HasSubstr("field 'matched[1].measured.end_ns': ends before it starts"));
  bad = good;
  bad["measured_only"] = Json::array({good["matched"][0]});
  EXPECT_THAT(error_of(bad.dump(), "d.json"),
              HasSubstr("field 'measured_only[0].simulated': expected null"));
  bad = good;
  bad["by"] = "sideways";
  EXPECT_THAT(
      error_of(bad.dump(), "d.json"),
      HasSubstr("field 'by': expected start, end or duration, got the string \"sideways\""));
  bad = good;
  bad["simulated"]["iteration_time_ns"] = 1.5;
  EXPECT_THAT(error_of(bad.dump(), "d.json"),
              HasSubstr("field 'simulated.iteration_time_ns': expected a whole number"));
  bad = good;
  bad["matched"][0]["measured"]["start_ns"] = -5;  // before the iteration's start: allowed
  EXPECT_EQ(error_of(bad.dump(), "d.json"), "(accepted)");
}

TEST(HtmlReport, ChartsAreAsWideAsThePage) {
  const std::string page = ssgd::html::html_report(
      {parse_report_input("a.json", golden("golden/simulate/scenario_v100_4x4_10gbe.json"))});
  for (const Json& c : charts_of(page)) EXPECT_EQ(c["spec"]["width"], "container") << c["id"];
  EXPECT_TRUE(has(page, "max-width: 1600px"));
}

TEST(HtmlText, ScriptJsonCannotEndTheScriptElement) {
  const Json v = {{"name", "</script><!-- \xE2\x80\xA8 \xE2\x80\xA9"}};
  const std::string s = ssgd::html::script_json(v);
  EXPECT_EQ(s.find("</"), std::string::npos) << s;
  EXPECT_EQ(s.find("<!--"), std::string::npos) << s;
  EXPECT_EQ(s.find("\xE2\x80\xA8"), std::string::npos) << s;
  EXPECT_THAT(s, HasSubstr("<\\/script>\\u003c!-- \\u2028 \\u2029"));
  EXPECT_EQ(Json::parse(s), v);  // the same JSON
}

TEST(HtmlText, EscapesHtmlAndFormatsNumbers) {
  EXPECT_EQ(ssgd::html::html_escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(ssgd::html::html_escape("a\xff"
                                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ssgd::html::format_ms(274858521), "274.859 ms");
  EXPECT_EQ(ssgd::html::format_ms(499), "0.000 ms");
  EXPECT_EQ(ssgd::html::format_change(1.25), "+25.0%");
  EXPECT_EQ(ssgd::html::format_change(0.9), "-10.0%");
  EXPECT_EQ(ssgd::html::format_change(1.0), "0.0%");
}

TEST(HtmlReport, IsSelfContainedAndDeterministic) {
  std::vector<ssgd::html::ReportInput> inputs;
  inputs.push_back(
      parse_report_input("a.json", golden("golden/simulate/scenario_v100_4x4_10gbe.json")));
  inputs.push_back(
      parse_report_input("b.json", golden("golden/simulate/scenario_dgx1_8x8_ib100.json")));
  inputs.push_back(parse_report_input("s.jsonl", golden("report/sweep.jsonl")));
  const std::string page = ssgd::html::html_report(inputs);
  EXPECT_EQ(page, ssgd::html::html_report(inputs));
  EXPECT_THAT(page, HasSubstr(std::string(ssgd::html::vega_js())));
  EXPECT_THAT(page, HasSubstr(std::string(ssgd::html::vega_lite_js())));
  EXPECT_THAT(page, HasSubstr(std::string(ssgd::html::vega_embed_js())));
  EXPECT_THAT(page, HasSubstr("Comparison of the 2 simulate runs"));
  // No script or style is loaded from anywhere.
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

TEST(VegaBundle, IsTheVendoredFilesByteForByte) {
  EXPECT_EQ(std::string(ssgd::html::vega_js()), golden("../../third_party/vega/vega.min.js"));
  EXPECT_EQ(std::string(ssgd::html::vega_lite_js()),
            golden("../../third_party/vega/vega-lite.min.js"));
  EXPECT_EQ(std::string(ssgd::html::vega_embed_js()),
            golden("../../third_party/vega/vega-embed.min.js"));
  EXPECT_THAT(std::string(ssgd::html::vega_lite_js()),
              HasSubstr(std::string(ssgd::html::kVegaLiteVersion)));
}

}  // namespace
