#include "traces/layer_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include "common/error.h"
#include "traces/event_rules.h"

namespace ssgd::trace {
namespace {

const std::filesystem::path kProfiles = std::filesystem::path(SSGD_SOURCE_DIR) / "tests/data/profiles";

// Parses `text` as "t.csv", expecting an InputError at `line` (if any) and
// `field` (if not empty) whose message holds `reason`.
void expect_error(const std::string& text, std::optional<std::int64_t> line, const std::string& field,
                  const std::string& reason) {
  try {
    parse_layer_profile_csv(text, "t.csv");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.where().file, "t.csv") << what;
    EXPECT_EQ(e.where().line, line) << what;
    EXPECT_EQ(e.where().field, field) << what;
    std::string prefix = "t.csv";
    if (line) prefix += ":" + std::to_string(*line);
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    if (!field.empty()) {
      EXPECT_NE(what.find("field '" + field + "'"), std::string::npos) << what;
    }
    EXPECT_NE(what.find(reason), std::string::npos) << "expected '" << reason << "' in: " << what;
  }
}

constexpr const char* kHeader = "layer,name,forward_ns,backward_ns,grad_bytes\n";

TEST(LayerProfile, ParsesGoodFile) {
  const LayerProfile p = read_layer_profile_csv(kProfiles / "good.csv");
  EXPECT_EQ(p.source, (kProfiles / "good.csv").string());
  EXPECT_EQ(p.model, "TinyNet");
  EXPECT_EQ(p.batch_per_gpu, 32);
  EXPECT_EQ(p.provenance, "hand-written test profile, not measured");
  ASSERT_EQ(p.layers.size(), 3u);
  EXPECT_FALSE(p.has_comm());
  EXPECT_EQ(p.layers[0].layer, 0);
  EXPECT_EQ(p.layers[0].name, "conv1");
  EXPECT_EQ(p.layers[0].forward, Duration(1000));
  EXPECT_EQ(p.layers[0].backward, Duration(2000));
  EXPECT_EQ(p.layers[0].grad_bytes, 4096);
  EXPECT_FALSE(p.layers[0].comm.has_value());
  EXPECT_EQ(p.layers[2].name, "fc");
  EXPECT_EQ(p.total_forward(), Duration(1600));
  EXPECT_EQ(p.total_backward(), Duration(3200));
  EXPECT_EQ(p.total_grad_bytes(), 45056);
}

TEST(LayerProfile, ParsesCommColumn) {
  const LayerProfile p = read_layer_profile_csv(kProfiles / "with_comm.csv");
  ASSERT_EQ(p.layers.size(), 3u);
  EXPECT_TRUE(p.has_comm());
  EXPECT_EQ(p.layers[0].comm, Duration(300));
  EXPECT_EQ(p.layers[1].comm, Duration(0));
  EXPECT_EQ(p.layers[2].comm, Duration(1200));
}

TEST(LayerProfile, ColumnsInAnyOrder) {
  const LayerProfile p = parse_layer_profile_csv(
      "comm_ns,grad_bytes,backward_ns,name,layer,forward_ns\n"
      "7,8,6,conv1,3,5\n"
      "9,0,2,pool1,10,1\n",
      "t.csv");
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_EQ(p.layers[0].layer, 3);
  EXPECT_EQ(p.layers[0].name, "conv1");
  EXPECT_EQ(p.layers[0].forward, Duration(5));
  EXPECT_EQ(p.layers[0].backward, Duration(6));
  EXPECT_EQ(p.layers[0].grad_bytes, 8);
  EXPECT_EQ(p.layers[0].comm, Duration(7));
  EXPECT_EQ(p.layers[1].layer, 10);
  EXPECT_EQ(p.layers[1].comm, Duration(9));
  EXPECT_TRUE(p.model.empty());
  EXPECT_FALSE(p.batch_per_gpu.has_value());
}

TEST(LayerProfile, ToleratesBomCrlfSpacesBlankLinesAndOtherComments) {
  const LayerProfile p = parse_layer_profile_csv(
      "\xEF\xBB\xBF# model:  ResNet-50 \r\n"
      "# a comment that is not metadata\r\n"
      "\r\n"
      " layer , name ,forward_ns,backward_ns , grad_bytes\r\n"
      "   \r\n"
      " 0 , conv 1 , 10 , 20 , +30 \r\n"
      "# trailing: comment\r\n"
      "1,fc,1,2,3",
      "t.csv");
  EXPECT_EQ(p.model, "ResNet-50");
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_EQ(p.layers[0].name, "conv 1");
  EXPECT_EQ(p.layers[0].grad_bytes, 30);
  EXPECT_EQ(p.layers[1].name, "fc");
  EXPECT_EQ(p.layers[1].grad_bytes, 3);
}

TEST(LayerProfile, AcceptsTheLargestTimesAndSizes) {
  const LayerProfile p = parse_layer_profile_csv(
      std::string(kHeader) + "0,a,4398046511104,0,1125899906842624\n", "t.csv");
  EXPECT_EQ(p.layers[0].forward.ns(), kMaxLayerTimeNs);
  EXPECT_EQ(p.layers[0].grad_bytes, kMaxSizeBytes);
}

// Values a replay could not add or scale without overflowing int64 are
// refused where they are read, naming the line and the column (issue 15).
TEST(LayerProfileErrors, TimesAndSizesBeyondTheLimits) {
  const std::string h(kHeader);
  expect_error(h + "0,a,9223372036854775807,0,1\n", 2, "forward_ns",
               "time 9223372036854775807 ns exceeds 2^42 ns (73 minutes)");
  expect_error(h + "0,a,1,4398046511105,1\n", 2, "backward_ns", "exceeds 2^42 ns");
  expect_error(h + "0,a,1,1,9223372036854775807\n", 2, "grad_bytes",
               "size 9223372036854775807 exceeds 2^50 bytes (1 PiB)");
  expect_error(h + "0,a,1,1,1125899906842624\n1,b,1,1,1\n", 3, "grad_bytes",
               "the gradients of the layers so far exceed 2^50 bytes");
  std::string many = h;
  for (int i = 0; i < 129; ++i) {
    many += std::to_string(i) + ",l" + std::to_string(i) + ",4398046511104,4398046511104,1\n";
  }
  expect_error(many, 130, "forward_ns", "the times of the layers so far exceed 2^50 ns");
  expect_error(h + "0,a\xFF,1,1,1\n", 2, "name", "the layer name is not valid UTF-8 (byte 0xff at offset 1)");
  // Found by fuzz/layer_csv_fuzzer: names the writer could not write back.
  expect_error(h + "0,#a,1,1,1\n", 2, "name", "a layer name may not start with '#'");
  expect_error(h + "0,a\rb,1,1,1\n", 2, "", "a carriage return inside the line");
  expect_error("# model: a\rb\n" + h + "0,a,1,1,1\n", 1, "", "a carriage return inside the line");
  expect_error("# model: x\xC0\xAF\n" + h + "0,a,1,1,1\n", 1, "model", "the value is not valid UTF-8");
}

TEST(LayerProfile, RoundTripsThroughWrite) {
  for (const char* file : {"good.csv", "with_comm.csv"}) {
    const LayerProfile p = read_layer_profile_csv(kProfiles / file);
    std::ostringstream out;
    write_layer_profile_csv(p, out);
    const LayerProfile q = parse_layer_profile_csv(out.str(), "again.csv");
    EXPECT_EQ(q.model, p.model);
    EXPECT_EQ(q.batch_per_gpu, p.batch_per_gpu);
    EXPECT_EQ(q.provenance, p.provenance);
    ASSERT_EQ(q.layers.size(), p.layers.size());
    for (std::size_t i = 0; i < p.layers.size(); ++i) {
      EXPECT_EQ(q.layers[i].layer, p.layers[i].layer);
      EXPECT_EQ(q.layers[i].name, p.layers[i].name);
      EXPECT_EQ(q.layers[i].forward, p.layers[i].forward);
      EXPECT_EQ(q.layers[i].backward, p.layers[i].backward);
      EXPECT_EQ(q.layers[i].grad_bytes, p.layers[i].grad_bytes);
      EXPECT_EQ(q.layers[i].comm, p.layers[i].comm);
    }
  }
}

TEST(LayerProfile, WritesMetadataThenHeaderThenRows) {
  LayerProfile p;
  p.model = "M";
  p.batch_per_gpu = 8;
  p.provenance = "analytical";
  p.layers.push_back({0, "a", Duration(1), Duration(2), 3, Duration(4), std::nullopt, std::nullopt});
  std::ostringstream out;
  write_layer_profile_csv(p, out);
  EXPECT_EQ(out.str(),
            "# model: M\n# batch_per_gpu: 8\n# provenance: analytical\n"
            "layer,name,forward_ns,backward_ns,grad_bytes,comm_ns\n0,a,1,2,3,4\n");

  p.update = Duration(1200);
  out.str("");
  write_layer_profile_csv(p, out);
  EXPECT_EQ(out.str(),
            "# model: M\n# batch_per_gpu: 8\n# provenance: analytical\n# update_ns: 1200\n"
            "layer,name,forward_ns,backward_ns,grad_bytes,comm_ns\n0,a,1,2,3,4\n");
  const LayerProfile back = parse_layer_profile_csv(out.str(), "again.csv");
  EXPECT_EQ(back.update, Duration(1200));
  p.update.reset();

  p.layers[0].comm.reset();
  p.model.clear();
  p.batch_per_gpu.reset();
  p.provenance.clear();
  out.str("");
  write_layer_profile_csv(p, out);
  EXPECT_EQ(out.str(), "layer,name,forward_ns,backward_ns,grad_bytes\n0,a,1,2,3\n");
}

TEST(LayerProfile, WriteRefusesWhatCannotBeReadBack) {
  LayerProfile p;
  p.layers.push_back({0, "a,b", Duration(1), Duration(2), 3, {}, std::nullopt, std::nullopt});
  std::ostringstream out;
  EXPECT_THROW(write_layer_profile_csv(p, out), InputError);
  p.layers[0].name = "a";
  p.layers.push_back({1, "b", Duration(1), Duration(2), 3, Duration(5), std::nullopt, std::nullopt});
  EXPECT_THROW(write_layer_profile_csv(p, out), InputError);
}

TEST(LayerProfile, LooksLikeLayerProfile) {
  EXPECT_TRUE(looks_like_layer_profile_csv("# model: x\n\nlayer,name,forward_ns,backward_ns,grad_bytes\n0,"));
  EXPECT_TRUE(looks_like_layer_profile_csv("\xEF\xBB\xBFgrad_bytes, backward_ns ,forward_ns,layer,name\r\n"));
  EXPECT_FALSE(looks_like_layer_profile_csv(""));
  EXPECT_FALSE(looks_like_layer_profile_csv("# only a comment\n"));
  EXPECT_FALSE(looks_like_layer_profile_csv("I0214 distributed.cpp:112] [0, 9408, 0, 0]\n"));
  EXPECT_FALSE(looks_like_layer_profile_csv("layer,name,forward_ns\n"));
  EXPECT_FALSE(looks_like_layer_profile_csv(std::string_view("\x0a\x00\x12\x05", 4)));
}

// --- errors from the bundled files, which the command-line tests reuse -----

TEST(LayerProfileErrors, BundledFilesNameFileLineAndField) {
  struct Case {
    const char* file;
    std::optional<std::int64_t> line;
    const char* field;
    const char* reason;
  };
  for (const Case& c : {
           Case{"missing_column.csv", 2, "grad_bytes", "missing column (header has: layer,name,forward_ns,backward_ns)"},
           Case{"negative_time.csv", 4, "backward_ns", "negative time -5"},
           Case{"non_numeric.csv", 3, "forward_ns", "not an integer: 'fast'"},
           Case{"empty.csv", std::nullopt, "",
                "empty file: expected a header row "
                "'layer,name,forward_ns,backward_ns,grad_bytes[,comm_ns][,unit][,activation_bytes][,forward_split,backward_split]'"},
       }) {
    const std::string path = (kProfiles / c.file).string();
    try {
      read_layer_profile_csv(kProfiles / c.file);
      ADD_FAILURE() << "no error for " << c.file;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.where().file, path);
      EXPECT_EQ(e.where().line, c.line) << what;
      EXPECT_EQ(e.where().field, c.field) << what;
      EXPECT_NE(what.find(c.reason), std::string::npos) << what;
    }
  }
}

TEST(LayerProfileErrors, MissingFile) {
  try {
    read_layer_profile_csv(kProfiles / "no_such_file.csv");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_file.csv: cannot read"), std::string::npos) << e.what();
  }
}

TEST(LayerProfileErrors, Header) {
  expect_error("layer,name,forward_ns,backward_ns\n0,a,1,2\n", 1, "grad_bytes",
               "missing column (header has: layer,name,forward_ns,backward_ns)");
  expect_error("# c\nlayer,name,forward_ns,backward_ns,grad_bytes,flops\n", 2, "flops", "unknown column");
  expect_error("layer,name,forward_ns,backward_ns,grad_bytes,name\n", 1, "name", "duplicate column (columns 2 and 6)");
  expect_error("layer,\"name\",forward_ns,backward_ns,grad_bytes\n", 1, "column 2", "quoted fields are not supported");
  expect_error("layer,name,forward_ns,backward_ns,grad_bytes,\n", 1, "column 6", "empty column name");
  expect_error("0,conv1,1,2,3\n", 1, "", "expected a header row");
  expect_error("", std::nullopt, "", "empty file");
  expect_error("\n  \r\n", std::nullopt, "", "empty file");
  expect_error("# model: x\n", std::nullopt, "", "no header row, only comments");
  expect_error("# model: x\nlayer,name,forward_ns,backward_ns,grad_bytes\n\n", 2, "", "no layer rows");
}

TEST(LayerProfileErrors, Numbers) {
  const std::string h = kHeader;
  expect_error(h + "0,a,1,2,3\n1,b,4,-5,6\n", 3, "backward_ns", "negative time -5");
  expect_error(h + "0,a,-1,2,3\n", 2, "forward_ns", "negative time -1");
  expect_error(h + "0,a,1,2,-3\n", 2, "grad_bytes", "negative size -3");
  expect_error(h + "0,a,x1,2,3\n", 2, "forward_ns", "not an integer: 'x1'");
  expect_error(h + "0,a,1,2 ns,3\n", 2, "backward_ns", "not an integer: '2 ns'");
  expect_error(h + "0,a,12.5,2,3\n", 2, "forward_ns", "integers are required, got 12.5");
  expect_error(h + "0,a,1,1e3,3\n", 2, "backward_ns", "integers are required, got 1e3");
  expect_error(h + "0,a,1,2,9223372036854775808\n", 2, "grad_bytes",
               "value 9223372036854775808 does not fit in a 64-bit integer");
  expect_error(h + "0,a,-9223372036854775809,2,3\n", 2, "forward_ns", "does not fit in a 64-bit integer");
  expect_error(h + "0,a,,2,3\n", 2, "forward_ns", "missing value");
  expect_error(h + "0,a,1,\"2\",3\n", 2, "backward_ns", "quoted fields are not supported");
  expect_error(h + "-1,a,1,2,3\n", 2, "layer", "negative layer index -1");
  expect_error(h + "1.0,a,1,2,3\n", 2, "layer", "integers are required");
}

TEST(LayerProfileErrors, Rows) {
  const std::string h = kHeader;
  expect_error(h + "0,a,1,2,3\n1,b,1,2\n", 3, "grad_bytes", "row has 4 fields but the header");
  expect_error(h + "0,a,1,2,3\n1,b\n", 3, "forward_ns", "row has 2 fields");
  expect_error(h + "0,a,1,2,3,4\n", 2, "column 6", "row has 6 fields but the header");
  expect_error(h + "0,a,1,2,3\n0,b,1,2,3\n", 3, "layer", "layer index 0 does not increase (previous row has 0)");
  expect_error(h + "5,a,1,2,3\n\n4,b,1,2,3\n", 4, "layer", "does not increase");
  expect_error(h + "0,a,1,2,3\n1,b,1,2,3\n2,a,1,2,3\n", 4, "name", "duplicate name 'a' (first on line 2)");
  expect_error(h + "0, ,1,2,3\n", 2, "name", "empty layer name");
  expect_error(h + "0,\"a,b\",1,2,3\n", 2, "column 6", "row has 6 fields");
  expect_error(h + "0,\"a\",1,2,3\n", 2, "name", "quoted fields are not supported");
}

TEST(LayerProfileErrors, CommOnSomeRowsOnly) {
  const std::string h = "layer,name,forward_ns,backward_ns,grad_bytes,comm_ns\n";
  expect_error(h + "0,a,1,2,3,4\n1,b,1,2,3,\n", 3, "comm_ns", "comm_ns must be set on every row");
  expect_error(h + "0,a,1,2,3,\n1,b,1,2,3,4\n", 2, "comm_ns", "comm_ns must be set on every row");
  expect_error(h + "0,a,1,2,3,4\n1,b,1,2,3\n", 3, "comm_ns", "row has 5 fields but the header");
  expect_error(h + "0,a,1,2,3,-4\n", 2, "comm_ns", "negative time -4");
}

TEST(LayerProfileErrors, Metadata) {
  const std::string rows = std::string(kHeader) + "0,a,1,2,3\n";
  expect_error("# batch_per_gpu: 0\n" + rows, 1, "batch_per_gpu", "must be a positive integer, got 0");
  expect_error("# batch_per_gpu: -2\n" + rows, 1, "batch_per_gpu", "must be a positive integer");
  expect_error("\n# batch_per_gpu: 6.5\n" + rows, 2, "batch_per_gpu", "integers are required");
  expect_error("# batch_per_gpu: lots\n" + rows, 1, "batch_per_gpu", "not an integer");
  expect_error("# batch_per_gpu:\n" + rows, 1, "batch_per_gpu", "missing value");
  expect_error("# model: a\n# model: b\n" + rows, 2, "model", "metadata given twice (first on line 1)");
  expect_error("# update_ns: -5\n" + rows, 1, "update_ns", "negative time -5");
  expect_error("# update_ns: 1.5\n" + rows, 1, "update_ns", "integers are required");
  expect_error("# update_ns: 1\n# update_ns: 2\n" + rows, 2, "update_ns",
               "metadata given twice (first on line 1)");
  EXPECT_EQ(parse_layer_profile_csv("# update_ns: 0\n" + rows, "t.csv").update, Duration(0));
  EXPECT_FALSE(parse_layer_profile_csv(rows, "t.csv").update.has_value());
}

}  // namespace
}  // namespace ssgd::trace

namespace ssgd::trace {
namespace {

// The split by rate (traces/rate_split.h): read, written back, and every bad
// value refused naming the line and the column.
TEST(LayerProfile, SplitsByRateRoundTripAndAddUp) {
  const std::string text =
      "# gpu: NVIDIA H200\n"
      "# update_split: memory=900;host=100\n"
      "# update_ns: 1000\n"
      "layer,name,forward_ns,backward_ns,grad_bytes,forward_split,backward_split\n"
      "0,conv1,300,700,64,tf32=200;latency=50;host=50,tf32=500;memory=200\n"
      "1,fc,10,0,4,other=10,\n";
  const LayerProfile p = parse_layer_profile_csv(text, "split.csv");
  EXPECT_EQ(p.gpu, "NVIDIA H200");
  ASSERT_TRUE(p.has_splits());
  EXPECT_EQ((*p.layers[0].forward_split)[WorkRate::kTf32], 200);
  EXPECT_EQ((*p.layers[0].backward_split)[WorkRate::kMemory], 200);
  EXPECT_EQ(p.layers[1].backward_split->total(), 0);
  EXPECT_EQ((*p.update_split)[WorkRate::kHost], 100);
  std::ostringstream out;
  write_layer_profile_csv(p, out);
  const LayerProfile q = parse_layer_profile_csv(out.str(), "again.csv");
  EXPECT_EQ(q.gpu, p.gpu);
  EXPECT_EQ(q.update_split, p.update_split);
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    EXPECT_EQ(q.layers[i].forward_split, p.layers[i].forward_split);
    EXPECT_EQ(q.layers[i].backward_split, p.layers[i].backward_split);
  }
}

TEST(LayerProfileErrors, BadSplitsNameTheLineAndColumn) {
  const std::string header = "layer,name,forward_ns,backward_ns,grad_bytes,forward_split,backward_split\n";
  struct Case {
    std::string row;
    std::string field;
    std::string reason;
  };
  for (const Case& c : {
           Case{"0,a,10,0,0,tf32=9,\n", "forward_split", "add up to 9 ns, not the row's 10 ns"},
           Case{"0,a,10,0,0,tensor=10,\n", "forward_split", "unknown rate 'tensor'"},
           Case{"0,a,10,0,0,tf32=5;tf32=5,\n", "forward_split", "given twice"},
           Case{"0,a,10,0,0,tf32=-10,\n", "forward_split", "not a number of nanoseconds"},
           Case{"0,a,10,5,0,tf32=10,host\n", "backward_split", "is not rate=nanoseconds"},
       }) {
    SCOPED_TRACE(c.row);
    try {
      (void)parse_layer_profile_csv(header + c.row, "bad.csv");
      FAIL() << "expected an error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.csv:2"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.field), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos) << e.what();
    }
  }
  for (const auto& [text, reason] :
       {std::pair{"# update_split: host=5\nlayer,name,forward_ns,backward_ns,grad_bytes\n0,a,1,1,0\n",
                  "without '# update_ns:'"},
        std::pair{"# update_ns: 6\n# update_split: host=5\nlayer,name,forward_ns,backward_ns,grad_bytes\n0,a,1,1,0\n",
                  "add up to 5 ns, not update_ns's 6 ns"}}) {
    try {
      (void)parse_layer_profile_csv(text, "update.csv");
      FAIL() << "expected an error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("update_split"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
  try {
    (void)parse_layer_profile_csv("layer,name,forward_ns,backward_ns,grad_bytes,forward_split\n0,a,1,1,0,host=1\n", "half.csv");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("come together"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ssgd::trace
