// simulator/html_report: the inputs recognised by content and checked field
// by field (errors naming file, line and field), the text made safe for the
// page, and the page itself: self-contained and deterministic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "simulator/html_report/html_report.h"
#include "simulator/html_report/html_text.h"
#include "simulator/html_report/report_input.h"
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
  // Nesting a million deep is an error, not a stack overflow.
  EXPECT_THAT(error_of(std::string(1'000'000, '[') + std::string(1'000'000, ']')),
              HasSubstr("got an array"));
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
