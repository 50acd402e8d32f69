// The .ssgdt container: round trips, chunking, determinism, and every way a
// file can be cut short or corrupt (traces/container_format.h).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/utf8.h"
#include "tests/support/test_files.h"
#include "traces/container_format.h"
#include "traces/crc32c.h"
#include "traces/event_rules.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace ssgd::trace {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class TraceContainerTest : public ssgd::testing::TempDirTest {};

v1::CaptureMetadata make_metadata() {
  v1::CaptureMetadata m;
  m.set_tool("container_test");
  m.set_tool_version("1");
  m.set_capture_start_ns(1700000000000000000);
  auto* host = m.add_hosts();
  host->set_hostname("node0");
  auto* gpu = host->add_gpus();
  gpu->set_device_id(0);
  gpu->set_name("Tesla V100-SXM2-16GB");
  gpu->set_memory_bytes(17179869184);
  gpu->set_compute_capability_major(7);
  host->mutable_clock()->set_kind(v1::ClockDomain::MONOTONIC_RAW);
  auto* link = m.mutable_topology()->add_links();
  link->set_kind(v1::Link::NVLINK);
  link->set_bandwidth_bytes_per_s(25e9);
  m.set_cuda_version("12.2");
  m.set_nccl_version("2.18.3");
  m.set_world_size(2);
  m.set_provenance("synthetic");
  return m;
}

// One event of each kind, with times derived from i.
std::vector<v1::Event> make_events(int n) {
  std::vector<v1::Event> events;
  for (int i = 0; i < n; ++i) {
    v1::Event e;
    e.set_rank(i % 2);
    const std::int64_t t = 1000 * i;
    switch (i % 6) {
      case 0: {
        auto* k = e.mutable_kernel();
        k->set_name("kernel_" + std::to_string(i % 5));
        k->set_start_ns(t);
        k->set_end_ns(t + 700);
        k->set_grid_x(i + 1);
        k->set_correlation_id(static_cast<std::uint64_t>(i));
        break;
      }
      case 1: {
        auto* c = e.mutable_memcpy();
        c->set_kind(v1::Memcpy::HTOD);
        c->set_size_bytes(4096 * i);
        c->set_src_device(-1);
        c->set_start_ns(t);
        c->set_end_ns(t + 300);
        break;
      }
      case 2: {
        auto* s = e.mutable_memset();
        s->set_size_bytes(64);
        s->set_value(7);
        s->set_start_ns(t);
        s->set_end_ns(t + 10);
        break;
      }
      case 3: {
        auto* c = e.mutable_collective();
        c->set_op(v1::Collective::ALL_REDUCE);
        c->set_size_bytes(1 << 20);
        c->set_communicator_id(0xFFFFFFFFFFFFull);
        c->set_nranks(2);
        c->set_sequence_number(static_cast<std::uint64_t>(i));
        c->set_datatype("float32");
        c->set_start_ns(t);
        c->set_end_ns(t + 900);
        break;
      }
      case 4: {
        auto* r = e.mutable_marker();
        r->set_name("iteration " + std::to_string(i));
        r->set_thread_id(42);
        r->set_start_ns(t);
        r->set_end_ns(t + 5000);
        break;
      }
      default: {
        auto* a = e.mutable_api_call();
        a->set_api(v1::ApiCall::DRIVER);
        a->set_name("cuLaunchKernel");
        a->set_start_ns(t);
        a->set_end_ns(t + 5);
        break;
      }
    }
    events.push_back(e);
  }
  return events;
}

void write_trace(const fs::path& path, const std::vector<v1::Event>& events,
                 std::size_t events_per_chunk = 8192) {
  TraceWriter writer(path, make_metadata(), {.events_per_chunk = events_per_chunk});
  for (const auto& e : events) writer.append(e);
  writer.close();
}

std::vector<v1::Event> read_all(TraceReader& reader) {
  std::vector<v1::Event> events;
  v1::Event e;
  while (reader.next(e)) events.push_back(e);
  return events;
}

using ssgd::testing::read_file_bytes;

using ssgd::testing::write_file_bytes;

void put_u32(std::string& bytes, std::size_t at, std::uint32_t v) {
  std::string le;
  format::append_u32_le(le, v);
  bytes.replace(at, 4, le);
}

std::size_t header_end(const std::string& bytes) {
  return 16 + format::load_u32_le(bytes.data() + 12) + 4;
}

// Where each chunk of a well-formed file ends, and how many events the file
// holds up to there.
struct ChunkEnd {
  std::size_t end;
  std::uint64_t events;
};
std::vector<ChunkEnd> chunk_ends(const std::string& bytes) {
  std::vector<ChunkEnd> ends;
  std::uint64_t events = 0;
  for (std::size_t pos = header_end(bytes); bytes.compare(pos, 4, "CHNK") == 0;) {
    events += format::load_u32_le(bytes.data() + pos + 12);
    pos += 24 + format::load_u32_le(bytes.data() + pos + 4);
    ends.push_back({pos, events});
  }
  return ends;
}

// A chunk record holding `payload` as its decompressed content, with valid
// CRCs, claiming `event_count` events.
std::string forge_chunk(const std::string& payload, std::uint32_t event_count) {
  std::string z(ZSTD_compressBound(payload.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), payload.data(), payload.size(), 3));
  std::string chunk = "CHNK";
  format::append_u32_le(chunk, static_cast<std::uint32_t>(z.size()));
  format::append_u32_le(chunk, static_cast<std::uint32_t>(payload.size()));
  format::append_u32_le(chunk, event_count);
  format::append_u32_le(chunk, crc32c(z));
  format::append_u32_le(chunk, crc32c(chunk));
  return chunk + z;
}

// Reads `path` to the end and returns the InputError message, or "" if none.
std::string read_error(const fs::path& path) {
  try {
    auto reader = TraceReader::open(path);
    read_all(reader);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  EXPECT_EQ(crc32c(""), 0u);
  const std::string s = "the quick brown fox jumps over the lazy dog";
  EXPECT_EQ(crc32c_extend(crc32c(s.substr(0, 11)), s.data() + 11, s.size() - 11), crc32c(s));
}

TEST_F(TraceContainerTest, RoundTripsEveryEventKind) {
  const auto path = dir_ / "t.ssgdt";
  const auto events = make_events(12);
  write_trace(path, events);
  auto reader = TraceReader::open(path);
  EXPECT_EQ(reader.metadata().SerializeAsString(), make_metadata().SerializeAsString());
  const auto back = read_all(reader);
  ASSERT_EQ(back.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(back[i].SerializeAsString(), events[i].SerializeAsString()) << "event " << i;
  }
  EXPECT_FALSE(reader.truncated());
  EXPECT_TRUE(reader.truncation_warning().empty());
  ASSERT_NE(reader.footer(), nullptr);
  const auto& f = *reader.footer();
  EXPECT_EQ(f.chunk_count(), 1u);
  EXPECT_EQ(f.event_count(), 12u);
  EXPECT_EQ(f.kernel_count(), 2u);
  EXPECT_EQ(f.memcpy_count(), 2u);
  EXPECT_EQ(f.memset_count(), 2u);
  EXPECT_EQ(f.collective_count(), 2u);
  EXPECT_EQ(f.marker_count(), 2u);
  EXPECT_EQ(f.api_call_count(), 2u);
  EXPECT_EQ(f.first_timestamp_ns(), 0);
  EXPECT_EQ(f.last_timestamp_ns(), 10000 + 5000);  // marker of event 10
  EXPECT_EQ(reader.chunks_read(), 1u);
  v1::Event e;
  EXPECT_FALSE(reader.next(e));  // stays at the end
}

TEST_F(TraceContainerTest, SplitsIntoChunksAndKeepsFooterCounters) {
  const auto path = dir_ / "t.ssgdt";
  const auto events = make_events(1000);
  {
    TraceWriter writer(path, make_metadata(), {.events_per_chunk = 64});
    for (int i = 0; i < 100; ++i) writer.append(events[i]);
    writer.flush_chunk();  // a short chunk of 100 - 64 = 36 events
    writer.flush_chunk();  // nothing buffered: no chunk
    for (std::size_t i = 100; i < events.size(); ++i) writer.append(events[i]);
    writer.add_dropped(3);
    writer.add_invalid_timestamps(5);
    writer.add_dropped(1);
    writer.close();
  }
  auto reader = TraceReader::open(path);
  EXPECT_EQ(read_all(reader).size(), 1000u);
  EXPECT_EQ(reader.chunks_read(), 2u + 15u);  // 64 + 36, then 900 = 14 x 64 + 4
  ASSERT_NE(reader.footer(), nullptr);
  EXPECT_EQ(reader.footer()->chunk_count(), 17u);
  EXPECT_EQ(reader.footer()->dropped_records(), 4u);
  EXPECT_EQ(reader.footer()->invalid_timestamps(), 5u);
}

TEST_F(TraceContainerTest, EmptyTraceHasHeaderAndFooterOnly) {
  const auto path = dir_ / "t.ssgdt";
  write_trace(path, {});
  auto reader = TraceReader::open(path);
  EXPECT_TRUE(read_all(reader).empty());
  ASSERT_NE(reader.footer(), nullptr);
  EXPECT_EQ(reader.footer()->chunk_count(), 0u);
  EXPECT_FALSE(reader.truncated());
}

TEST_F(TraceContainerTest, SameInputGivesByteIdenticalFile) {
  const auto events = make_events(500);
  write_trace(dir_ / "a.ssgdt", events, 100);
  write_trace(dir_ / "b.ssgdt", events, 100);
  EXPECT_EQ(read_file_bytes(dir_ / "a.ssgdt"), read_file_bytes(dir_ / "b.ssgdt"));
}

TEST_F(TraceContainerTest, WritesUnderATemporaryNameUntilClose) {
  const auto path = dir_ / "t.ssgdt";
  {
    TraceWriter writer(path, make_metadata());
    writer.append(make_events(1)[0]);
    EXPECT_FALSE(fs::exists(path));
    // Destroyed without close(): the temporary file goes too.
  }
  EXPECT_TRUE(fs::is_empty(dir_));
  {
    TraceWriter writer(path, make_metadata());
    writer.close();
    EXPECT_THROW(writer.append(make_events(1)[0]), std::logic_error);
  }
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(TraceContainerTest, RejectsBadWriterOptions) {
  EXPECT_THROW(TraceWriter(dir_ / "t.ssgdt", make_metadata(), {.events_per_chunk = 0}),
               std::invalid_argument);
  EXPECT_THROW(TraceWriter(dir_ / "t.ssgdt", make_metadata(), {.zstd_level = 99}),
               std::invalid_argument);
  EXPECT_THROW(TraceWriter(dir_ / "no/such/dir/t.ssgdt", make_metadata()), std::runtime_error);
}

TEST_F(TraceContainerTest, LooksLikeTrace) {
  write_trace(dir_ / "t.ssgdt", {});
  EXPECT_TRUE(looks_like_trace(read_file_bytes(dir_ / "t.ssgdt")));
  EXPECT_FALSE(looks_like_trace("metadata {"));
  EXPECT_FALSE(looks_like_trace("\x89SSG"));
}

// Every prefix of a small file: a header cut short is an error; a cut later
// keeps the events of every whole chunk before it and warns.
TEST_F(TraceContainerTest, CutShortAtEveryByte) {
  const auto full = dir_ / "full.ssgdt";
  write_trace(full, make_events(10), 3);
  const std::string bytes = read_file_bytes(full);
  const auto ends = chunk_ends(bytes);
  ASSERT_EQ(ends.size(), 4u);
  const auto cut = dir_ / "cut.ssgdt";
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    SCOPED_TRACE("cut at " + std::to_string(size));
    write_file_bytes(cut, bytes.substr(0, size));
    if (size < header_end(bytes)) {
      try {
        TraceReader::open(cut);
        ADD_FAILURE() << "a cut header opened";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(cut.string()), std::string::npos) << e.what();
        EXPECT_TRUE(std::string(e.what()).find(size == 0 ? "empty" : "cut short") !=
                    std::string::npos)
            << e.what();
      }
      continue;
    }
    auto reader = TraceReader::open(cut);
    const auto events = read_all(reader);  // never throws
    std::uint64_t expected = 0;
    for (const auto& end : ends) {
      if (end.end <= size) expected = end.events;
    }
    EXPECT_EQ(events.size(), expected);
    EXPECT_TRUE(reader.truncated());
    EXPECT_EQ(reader.footer(), nullptr);
    EXPECT_NE(reader.truncation_warning().find(cut.string() + ": cut short"), std::string::npos)
        << reader.truncation_warning();
    EXPECT_NE(reader.truncation_warning().find(std::to_string(expected) + " event"),
              std::string::npos)
        << reader.truncation_warning();
  }
}

// Any single flipped byte anywhere is caught, by a CRC or a structural check.
TEST_F(TraceContainerTest, EveryFlippedByteIsAnError) {
  const auto full = dir_ / "full.ssgdt";
  write_trace(full, make_events(10), 3);
  const std::string bytes = read_file_bytes(full);
  const auto bad = dir_ / "bad.ssgdt";
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    write_file_bytes(bad, flipped);
    const std::string error = read_error(bad);
    EXPECT_NE(error.find(bad.string()), std::string::npos)
        << "byte " << at << ": '" << error << "'";
  }
}

TEST_F(TraceContainerTest, FlippedByteInChunkNamesTheChunkAndOffset) {
  const auto path = dir_ / "t.ssgdt";
  write_trace(path, make_events(10), 3);
  std::string bytes = read_file_bytes(path);
  const auto ends = chunk_ends(bytes);
  const std::size_t chunk1 = ends[0].end;
  bytes[chunk1 + 24 + 5] ^= 0x01;  // inside chunk 1's compressed data
  write_file_bytes(path, bytes);
  auto reader = TraceReader::open(path);
  v1::Event e;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reader.next(e));  // chunk 0 is fine
  try {
    reader.next(e);
    FAIL() << "no error";
  } catch (const InputError& err) {
    EXPECT_EQ(err.where().record, 1);
    EXPECT_EQ(err.where().file, path.string());
    const std::string what = err.what();
    EXPECT_NE(what.find("chunk 1 (byte offset " + std::to_string(chunk1) + ")"), std::string::npos)
        << what;
    EXPECT_NE(what.find("CRC-32C mismatch"), std::string::npos) << what;
  }
}

TEST_F(TraceContainerTest, WrongMagicEmptyMissingAndDirectory) {
  write_file_bytes(dir_ / "text.ssgdt", "metadata { tool: \"x\" }\n");
  EXPECT_NE(read_error(dir_ / "text.ssgdt").find("wrong magic: not an ssgd trace"),
            std::string::npos);
  write_file_bytes(dir_ / "empty.ssgdt", "");
  EXPECT_NE(read_error(dir_ / "empty.ssgdt").find("empty"), std::string::npos);
  EXPECT_NE(read_error(dir_ / "missing.ssgdt").find("cannot open"), std::string::npos);
  EXPECT_NE(read_error(dir_).find("is a folder, not a regular file"), std::string::npos);
}

TEST_F(TraceContainerTest, BadHeaderFields) {
  const auto path = dir_ / "t.ssgdt";
  write_trace(path, make_events(3));
  const std::string good = read_file_bytes(path);

  std::string bytes = good;
  put_u32(bytes, 8, 2);
  write_file_bytes(path, bytes);
  EXPECT_NE(read_error(path).find("format version 2 is not supported"), std::string::npos);

  bytes = good;
  put_u32(bytes, 12, 0xFFFFFFF0u);
  write_file_bytes(path, bytes);
  EXPECT_NE(read_error(path).find("header_length 4294967280 at byte offset 12 exceeds"),
            std::string::npos);

  bytes = good;
  bytes[20] ^= 0x40;
  write_file_bytes(path, bytes);
  EXPECT_NE(read_error(path).find("header CRC-32C mismatch"), std::string::npos);
}

// Chunk headers whose CRC holds but whose lengths are impossible.
TEST_F(TraceContainerTest, BadChunkLengthFields) {
  const auto path = dir_ / "t.ssgdt";
  write_trace(path, make_events(3));
  const std::string good = read_file_bytes(path);
  const std::size_t at = header_end(good);
  const auto with_fields = [&](std::uint32_t c, std::uint32_t u, std::uint32_t n) {
    std::string bytes = good;
    put_u32(bytes, at + 4, c);
    put_u32(bytes, at + 8, u);
    put_u32(bytes, at + 12, n);
    put_u32(bytes, at + 20, crc32c_extend(0, bytes.data() + at, 20));
    write_file_bytes(path, bytes);
    return read_error(path);
  };
  const std::uint32_t c = format::load_u32_le(good.data() + at + 4);
  const std::uint32_t u = format::load_u32_le(good.data() + at + 8);
  EXPECT_NE(with_fields(0, u, 3).find("chunk 0 (byte offset " + std::to_string(at) +
                                      "): compressed_length 0 is out of range"),
            std::string::npos);
  EXPECT_NE(with_fields(c, 0x7FFFFFFFu, 3).find("uncompressed_length 2147483647 exceeds"),
            std::string::npos);
  EXPECT_NE(with_fields(c, u, 0).find("event_count 0 is impossible"), std::string::npos);
  EXPECT_NE(with_fields(c, u + 1, 3).find("the chunk header says"), std::string::npos);
  EXPECT_NE(with_fields(c - 1, u, 3).find("CRC-32C mismatch in its"), std::string::npos);

  // A genuine header claiming more data than the file holds: cut short.
  EXPECT_EQ(with_fields(0x00FFFFFFu, u, 3), "");
  auto reader = TraceReader::open(path);
  EXPECT_TRUE(read_all(reader).empty());
  EXPECT_TRUE(reader.truncated());

  // A chunk header with a flipped length and its old CRC.
  std::string bytes = good;
  put_u32(bytes, at + 4, c + 1);
  write_file_bytes(path, bytes);
  EXPECT_NE(read_error(path).find("CRC-32C mismatch in the chunk header"), std::string::npos);
}

// Chunks whose framing is sound but whose events are not.
TEST_F(TraceContainerTest, BadEventsInsideAChunk) {
  const auto path = dir_ / "t.ssgdt";
  write_trace(path, {});
  const std::string header = read_file_bytes(path).substr(0, header_end(read_file_bytes(path)));
  const auto error_for = [&](const std::string& payload, std::uint32_t n) {
    write_file_bytes(path, header + forge_chunk(payload, n));
    return read_error(path);
  };
  const std::string event = make_events(1)[0].SerializeAsString();
  const std::string one = std::string("\x0A") + static_cast<char>(event.size()) + event;
  EXPECT_EQ(error_for(one, 1), "");  // the forgery itself is well formed (and cut short)

  EXPECT_NE(error_for("\x12" + one.substr(1), 1).find("expected the event tag 0x0a, found 0x12"),
            std::string::npos);
  EXPECT_NE(error_for(std::string("\x0A\x7F\x08\x01", 4), 1).find("length 127 runs past the end"),
            std::string::npos);
  EXPECT_NE(
      error_for(std::string("\x0A\xFF\xFF\xFF\xFF\x7F", 6), 1).find("not a valid 32-bit varint"),
      std::string::npos);
  EXPECT_NE(error_for(std::string("\x0A\x02\x08\x80", 4), 1).find("not a valid Event"),
            std::string::npos);
  EXPECT_NE(error_for(one + one, 3).find("it holds 2 events but its header says 3"),
            std::string::npos);
  EXPECT_NE(error_for(one + one, 1).find("more events than the chunk header's event_count 1"),
            std::string::npos);
}

TEST_F(TraceContainerTest, BadFooters) {
  const auto path = dir_ / "t.ssgdt";
  write_trace(path, make_events(6), 3);
  const std::string good = read_file_bytes(path);
  const auto ends = chunk_ends(good);

  // Chunk 1 removed: the footer's counts no longer match.
  write_file_bytes(path, good.substr(0, ends[0].end) + good.substr(ends[1].end));
  EXPECT_NE(read_error(path).find("it counts 2 chunks and 6 events, the file holds 1 chunk and 3 "
                                  "events"),
            std::string::npos);

  write_file_bytes(path, good + "x");
  EXPECT_NE(read_error(path).find("1 bytes follow the end magic"), std::string::npos);

  std::string bytes = good;
  const std::size_t footer = ends[1].end;
  put_u32(bytes, footer + 4, format::kMaxFooterBytes + 1);
  write_file_bytes(path, bytes);
  EXPECT_NE(read_error(path).find("CRC-32C mismatch in the footer's length"), std::string::npos);
  put_u32(bytes, footer + 8, crc32c_extend(0, bytes.data() + footer, 8));
  write_file_bytes(path, bytes);
  EXPECT_NE(read_error(path).find("footer (byte offset " + std::to_string(footer) +
                                  "): footer_length 1048577 exceeds"),
            std::string::npos);

  bytes = good;
  bytes[ends[1].end] = 'X';
  write_file_bytes(path, bytes);
  EXPECT_NE(read_error(path).find("bad record marker 58 4f 4f 54"), std::string::npos);
}

// A header whose metadata is forged (the writer refuses to write it).
std::string forge_header(const v1::CaptureMetadata& metadata) {
  const std::string m = metadata.SerializeAsString();
  std::string bytes(format::kMagic.begin(), format::kMagic.end());
  std::string covered;
  format::append_u32_le(covered, format::kFormatVersion);
  format::append_u32_le(covered, static_cast<std::uint32_t>(m.size()));
  covered += m;
  bytes += covered;
  format::append_u32_le(bytes, crc32c(covered));
  return bytes;
}

std::string forge_events(const std::vector<v1::Event>& events) {
  std::string payload;
  for (const auto& e : events) {
    const std::string bytes = e.SerializeAsString();
    payload += '\x0A';
    payload += static_cast<char>(bytes.size());  // events here are < 128 bytes
    payload += bytes;
  }
  return forge_chunk(payload, static_cast<std::uint32_t>(events.size()));
}

// The reader applies the trace's rules (event_rules.h) to every event and to
// the header, so a hand-made file cannot carry what a writer refuses.
TEST_F(TraceContainerTest, ReaderRefusesEventsThatBreakTheRules) {
  const auto path = dir_ / "t.ssgdt";
  const std::string header = forge_header(make_metadata());
  const auto error_for = [&](const v1::Event& e) {
    write_file_bytes(path, header + forge_events({make_events(1)[0], e}));
    return read_error(path);
  };
  v1::Event backwards;
  backwards.mutable_kernel()->set_start_ns(2000);
  backwards.mutable_kernel()->set_end_ns(1000);
  const std::string bad = error_for(backwards);
  EXPECT_NE(bad.find("record 0"), std::string::npos) << bad;
  EXPECT_NE(bad.find("field 'kernel.end_ns'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("event 1 of the file"), std::string::npos) << bad;
  EXPECT_NE(bad.find("end_ns 1000 is before start_ns 2000"), std::string::npos) << bad;

  v1::Event negative;
  negative.mutable_memcpy()->set_size_bytes(-4096);
  EXPECT_NE(error_for(negative).find("size_bytes -4096 is out of range"), std::string::npos);

  v1::Event outside;
  outside.set_rank(2);  // the world is 2
  outside.mutable_marker()->set_name("m");
  EXPECT_NE(error_for(outside).find("rank 2 is not a rank of the world of 2"), std::string::npos);

  v1::Event far;
  far.mutable_api_call()->set_end_ns(std::numeric_limits<std::int64_t>::max());
  EXPECT_NE(error_for(far).find("end_ns 9223372036854775807 is out of range"), std::string::npos);

  v1::Event count;
  count.mutable_collective()->set_count(-1);
  EXPECT_NE(error_for(count).find("count -1 is negative"), std::string::npos);

  v1::CaptureMetadata world = make_metadata();
  world.set_world_size(-1);
  write_file_bytes(path, forge_header(world));
  EXPECT_NE(read_error(path).find("field 'metadata.world_size'"), std::string::npos);
  world.set_world_size(1 << 30);
  write_file_bytes(path, forge_header(world));
  EXPECT_NE(read_error(path).find("world_size 1073741824 is out of range"), std::string::npos);
}

TEST_F(TraceContainerTest, WriterRefusesWhatTheReaderWouldAndStaysUsable) {
  const auto path = dir_ / "t.ssgdt";
  TraceWriter writer(path, make_metadata());
  v1::Event e;
  e.mutable_kernel()->set_name(std::string("bad\xFF", 4));
  try {
    writer.append(e);
    FAIL() << "an invalid UTF-8 name was accepted";
  } catch (const InvalidTraceContent& broken) {
    EXPECT_EQ(broken.problem().field, "kernel.name");
    EXPECT_NE(broken.problem().what.find("not valid UTF-8 (byte 0xff at offset 3)"),
              std::string::npos);
  }
  writer.append(make_events(1)[0]);
  writer.close();
  EXPECT_EQ(read_error(path), "");
  EXPECT_EQ(writer.footer().event_count(), 1u);

  v1::CaptureMetadata m = make_metadata();
  m.set_rank(5);
  EXPECT_THROW(TraceWriter(dir_ / "u.ssgdt", m), InvalidTraceContent);
  EXPECT_FALSE(fs::exists(dir_ / "u.ssgdt"));
  m = make_metadata();
  m.mutable_hosts(0)->set_hostname(std::string("n\xC0\xAF", 3));  // an overlong '/'
  try {
    TraceWriter w(dir_ / "u.ssgdt", m);
    FAIL() << "an overlong UTF-8 form was accepted";
  } catch (const InvalidTraceContent& broken) {
    EXPECT_EQ(broken.problem().field, "metadata.hosts[0].hostname");
  }
}

TEST(Utf8Test, WellFormedSequencesOnly) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));  // e-acute, euro, emoji
  EXPECT_EQ(invalid_utf8_offset("ab\x80"), 2u);              // a lone continuation byte
  EXPECT_EQ(invalid_utf8_offset("\xC0\xAF"), 0u);            // overlong
  EXPECT_EQ(invalid_utf8_offset("\xE0\x80\xAF"), 0u);        // overlong
  EXPECT_EQ(invalid_utf8_offset("x\xED\xA0\x80"), 1u);       // a surrogate
  EXPECT_EQ(invalid_utf8_offset("\xF4\x90\x80\x80"), 0u);    // above U+10FFFF
  EXPECT_EQ(invalid_utf8_offset("\xE2\x82"), 0u);            // cut short
  EXPECT_EQ(invalid_utf8_offset("\xF5\x80\x80\x80"), 0u);    // never a lead byte
  EXPECT_EQ(utf8_problem("a\xFF"), "is not valid UTF-8 (byte 0xff at offset 1)");
}

}  // namespace
}  // namespace ssgd::trace
