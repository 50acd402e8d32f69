// simulator/html_report: the inputs recognised by content and checked field
// by field (errors naming file, line and field), the text made safe for the
// page, and the page itself: self-contained and deterministic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/error.h"
#include "simulator/html_report/html_report.h"
#include "simulator/html_report/html_text.h"
#include "simulator/html_report/report_input.h"
#include "simulator/html_report/timeline_input.h"
#include "simulator/html_report/vega_bundle.h"
#include "tests/support/test_files.h"

namespace {

using ssgd::InputError;
using ssgd::sim::html::InputKind;
using ssgd::sim::html::Json;
using ssgd::sim::html::parse_report_input;
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
  const auto& s = std::get<ssgd::sim::html::SweepReport>(sweep.content);
  EXPECT_EQ(s.points.size(), 8u);
  EXPECT_EQ(s.keys,
            (std::vector<std::string>{"cluster.nodes", "policy.overlap", "network.inter_node"}));
}

TEST(HtmlReportInput, ReadsTheSimulateFiguresItShows) {
  const auto in = parse_report_input("a", golden("golden/simulate/scenario_v100_4x4_10gbe.json"));
  const auto& run = std::get<ssgd::sim::html::SimulateRun>(in.content);
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
              HasSubstr("a diff report (ssgd diff)"));
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

ssgd::sim::html::TimelineView timeline_of(const std::string& text) {
  const auto in = parse_report_input("t.json", text);
  EXPECT_EQ(in.kind, InputKind::kTimeline);
  return std::get<ssgd::sim::html::TimelineView>(in.content);
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
      ssgd::sim::html::html_report({parse_report_input("t.json", timeline_text(8, 2, {{5, 1.2}}))});
  EXPECT_THAT(html, HasSubstr("Timeline of iteration 1 of t.json"));
  EXPECT_THAT(html, HasSubstr("8 ranks in 2 groups"));
  EXPECT_THAT(html, HasSubstr("\"x2\":{\"field\":\"end\"}"));
}

TEST(HtmlReportTimeline, AtMostEightGroupsAndAFewThousandBars) {
  std::map<int, double> all_differ;
  for (int r = 0; r < 12; ++r) all_differ[r] = 1.0 + r * 0.01;
  const auto t = timeline_of(timeline_text(12, 1, all_differ));
  EXPECT_EQ(t.groups.size(), 12u);
  EXPECT_EQ(t.groups_shown, ssgd::sim::html::kMaxTimelineGroups);
  EXPECT_EQ(t.lanes.size(), 9u);  // 8 groups and the network
  const std::string html = ssgd::sim::html::html_report(
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
      ssgd::sim::html::html_report({parse_report_input("t.json", many)}),
      HasSubstr(
          "3000 of the 3010 tasks of the drawn rows, those of 0.001 ms or less, are not drawn"));
}

TEST(HtmlReportTimeline, LabelsRankRanges) {
  using ssgd::sim::html::rank_group_label;
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

TEST(HtmlText, ScriptJsonCannotEndTheScriptElement) {
  const Json v = {{"name", "</script><!-- \xE2\x80\xA8 \xE2\x80\xA9"}};
  const std::string s = ssgd::sim::html::script_json(v);
  EXPECT_EQ(s.find("</"), std::string::npos) << s;
  EXPECT_EQ(s.find("<!--"), std::string::npos) << s;
  EXPECT_EQ(s.find("\xE2\x80\xA8"), std::string::npos) << s;
  EXPECT_THAT(s, HasSubstr("<\\/script>\\u003c!-- \\u2028 \\u2029"));
  EXPECT_EQ(Json::parse(s), v);  // the same JSON
}

TEST(HtmlText, EscapesHtmlAndFormatsNumbers) {
  EXPECT_EQ(ssgd::sim::html::html_escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(ssgd::sim::html::html_escape("a\xff"
                                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ssgd::sim::html::format_ms(274858521), "274.859 ms");
  EXPECT_EQ(ssgd::sim::html::format_ms(499), "0.000 ms");
  EXPECT_EQ(ssgd::sim::html::format_change(1.25), "+25.0%");
  EXPECT_EQ(ssgd::sim::html::format_change(0.9), "-10.0%");
  EXPECT_EQ(ssgd::sim::html::format_change(1.0), "0.0%");
}

TEST(HtmlReport, IsSelfContainedAndDeterministic) {
  std::vector<ssgd::sim::html::ReportInput> inputs;
  inputs.push_back(
      parse_report_input("a.json", golden("golden/simulate/scenario_v100_4x4_10gbe.json")));
  inputs.push_back(
      parse_report_input("b.json", golden("golden/simulate/scenario_dgx1_8x8_ib100.json")));
  inputs.push_back(parse_report_input("s.jsonl", golden("report/sweep.jsonl")));
  const std::string page = ssgd::sim::html::html_report(inputs);
  EXPECT_EQ(page, ssgd::sim::html::html_report(inputs));
  EXPECT_THAT(page, HasSubstr(std::string(ssgd::sim::html::vega_js())));
  EXPECT_THAT(page, HasSubstr(std::string(ssgd::sim::html::vega_lite_js())));
  EXPECT_THAT(page, HasSubstr(std::string(ssgd::sim::html::vega_embed_js())));
  EXPECT_THAT(page, HasSubstr("Comparison of the 2 simulate runs"));
  // No script or style is loaded from anywhere.
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

TEST(VegaBundle, IsTheVendoredFilesByteForByte) {
  EXPECT_EQ(std::string(ssgd::sim::html::vega_js()), golden("../../third_party/vega/vega.min.js"));
  EXPECT_EQ(std::string(ssgd::sim::html::vega_lite_js()),
            golden("../../third_party/vega/vega-lite.min.js"));
  EXPECT_EQ(std::string(ssgd::sim::html::vega_embed_js()),
            golden("../../third_party/vega/vega-embed.min.js"));
  EXPECT_THAT(std::string(ssgd::sim::html::vega_lite_js()),
              HasSubstr(std::string(ssgd::sim::html::kVegaLiteVersion)));
}

}  // namespace
