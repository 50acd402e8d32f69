// Fuzz target: the inputs of `ssgd report` (presentation/html/
// report_input.h): simulate, scale, optimize, dataset verify and diff
// reports, sweeps' JSON lines and timelines of ssgd simulate --timeline (timeline_input.h, gzip
// too), recognised by content.
//
// Promise: read_report_input returns an input or throws an InputError naming
// the file. An accepted input makes a page (html_report), the same bytes
// twice, whose chart data cannot end its <script> element: the only "</"
// in the page's scripts are the bundles' own (none) and the closing tags.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "presentation/html/html_report.h"
#include "presentation/html/report_input.h"

using ssgd::fuzz::finding;
using ssgd::fuzz::must;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("in.json", data, size).string();
  std::vector<ssgd::html::ReportInput> inputs;
  if (!ssgd::fuzz::accepts("read_report_input", {in},
                           [&] { inputs.push_back(ssgd::html::read_report_input(in)); })) {
    return 0;
  }
  std::string page, again;
  must("making the page of an accepted input",
       [&] { page = ssgd::html::html_report(inputs); });
  must("making the page again", [&] { again = ssgd::html::html_report(inputs); });
  if (page != again) finding("the same input made two different pages");
  // The chart data: between its opening tag and the next "</script>".
  const std::string open = "<script type=\"application/json\" id=\"ssgd-charts\">";
  const std::size_t start = page.find(open);
  if (start == std::string::npos) finding("the page has no chart data");
  const std::size_t body = start + open.size();
  const std::size_t end = page.find("</script>", body);
  if (end == std::string::npos) finding("the chart data's <script> element is not closed");
  const std::string json = page.substr(body, end - body);
  if (json.find("</") != std::string::npos || json.find("<!--") != std::string::npos) {
    finding("the chart data holds </ or <!--");
  }
  const std::string after = "</script>\n<script>\n(function () {\n  var status";
  if (page.compare(end, after.size(), after) != 0) {
    finding("the chart data's <script> element ends before the data does");
  }
  return 0;
}
