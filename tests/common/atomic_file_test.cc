// AtomicFile (common/atomic_file.h) and output_target (common/output_target.h):
// a regular file is replaced whole or not at all; a link stays a link; a
// FIFO, a character device or a process descriptor is written through and
// never replaced; a folder or a socket is refused; and commit() never renames
// over what has become something else meanwhile.
//
// Devices are made with mknod in the test's own folder (root only, skipped
// otherwise), never the system's /dev nodes, so that a regression replaces a
// node of the test's, not one of the machine's. FIFOs need no privilege.
#include "common/atomic_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/output_target.h"
#include "tests/support/special_files.h"
#include "tests/support/test_files.h"

namespace ssgd {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::FifoReader;
using testing::file_type_of;
using testing::make_char_device;
using testing::read_file_bytes;
using testing::write_file_bytes;

class AtomicFileTest : public testing::TempDirTest {
 protected:
  // The folder's names, sorted.
  std::vector<std::string> names() { return testing::sorted_names(dir_); }
};

using ssgd::testing::FifoReader;
using testing::file_type_of;
using testing::make_char_device;

TEST_F(AtomicFileTest, ARegularFileIsReplacedWholeOnCommitAndLeftAloneOtherwise) {
  const fs::path out = dir_ / "out.txt";
  write_file_bytes(out, "old\n");
  {
    AtomicFile f(out);
    f.stream() << "new\n";
    EXPECT_FALSE(f.writes_through());
    EXPECT_EQ(read_file_bytes(out), "old\n");  // until commit
    EXPECT_TRUE(fs::exists(f.temporary_path()));
  }  // not committed: the temporary is removed, the file kept
  EXPECT_EQ(read_file_bytes(out), "old\n");
  EXPECT_EQ(names(), std::vector<std::string>{"out.txt"});
  write_file_atomically(out, "new\n");
  EXPECT_EQ(read_file_bytes(out), "new\n");
  write_file_atomically(dir_ / "made.txt", "made\n");
  EXPECT_EQ(read_file_bytes(dir_ / "made.txt"), "made\n");
  EXPECT_EQ(names(), (std::vector<std::string>{"made.txt", "out.txt"}));
}

TEST_F(AtomicFileTest, ALinkToAFileStaysALinkAndItsTargetIsReplaced) {
  fs::create_directories(dir_ / "real");
  write_file_bytes(dir_ / "real/r.json", "old\n");
  fs::create_symlink("real/r.json", dir_ / "link.json");
  fs::create_symlink("link.json", dir_ / "link2.json");  // a chain of two
  EXPECT_EQ(output_target(dir_ / "link2.json").path, dir_ / "real/r.json");
  write_file_atomically(dir_ / "link2.json", "new\n");
  EXPECT_EQ(file_type_of(dir_ / "link.json"), S_IFLNK);
  EXPECT_EQ(file_type_of(dir_ / "link2.json"), S_IFLNK);
  EXPECT_EQ(file_type_of(dir_ / "real/r.json"), S_IFREG);
  EXPECT_EQ(read_file_bytes(dir_ / "real/r.json"), "new\n");
  // A link to a name not taken yet: the name is made, the link kept.
  fs::create_symlink("real/later.json", dir_ / "dangling.json");
  write_file_atomically(dir_ / "dangling.json", "made\n");
  EXPECT_EQ(file_type_of(dir_ / "dangling.json"), S_IFLNK);
  EXPECT_EQ(read_file_bytes(dir_ / "real/later.json"), "made\n");
  EXPECT_EQ(names(),
            (std::vector<std::string>{"dangling.json", "link.json", "link2.json", "real"}));
}

TEST_F(AtomicFileTest, AFifoIsWrittenThroughToItsReaderAndStaysAFifo) {
  const fs::path fifo = dir_ / "report.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(output_target(fifo).kind, OutputKind::kStream);
  FifoReader reader(fifo);
  ASSERT_TRUE(reader.opened());
  // More than the buffer and the pipe hold, so the writer waits on the reader.
  const std::string page(1 << 20, 'x');
  std::string error;
  std::thread writer([&] {
    try {
      AtomicFile f(fifo);
      EXPECT_TRUE(f.writes_through());
      EXPECT_TRUE(f.temporary_path().empty());
      f.stream() << page << "end\n";
      f.commit();
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  bool done = false;
  const std::string got = reader.read_all(done);
  writer.join();
  EXPECT_EQ(error, "");
  EXPECT_TRUE(done);
  EXPECT_EQ(got.size(), page.size() + 4);
  EXPECT_TRUE(got.ends_with("xend\n"));
  EXPECT_EQ(file_type_of(fifo), S_IFIFO);
  EXPECT_EQ(names(), std::vector<std::string>{"report.fifo"});
}

TEST_F(AtomicFileTest, ALinkToAFifoIsWrittenThroughAndTheLinkKept) {
  const fs::path fifo = dir_ / "p.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fs::create_symlink("p.fifo", dir_ / "link");
  FifoReader reader(fifo);
  ASSERT_TRUE(reader.opened());
  std::thread writer([&] { write_file_atomically(dir_ / "link", "through the link\n"); });
  bool done = false;
  EXPECT_EQ(reader.read_all(done), "through the link\n");
  writer.join();
  EXPECT_EQ(file_type_of(dir_ / "link"), S_IFLNK);
  EXPECT_EQ(file_type_of(fifo), S_IFIFO);
}

TEST_F(AtomicFileTest, ACharacterDeviceIsWrittenThroughAndNeverReplaced) {
  const fs::path null = dir_ / "null";
  if (!make_char_device(null, 3)) GTEST_SKIP() << "mknod needs root: " << std::strerror(errno);
  const OutputTarget t = output_target(null);
  EXPECT_EQ(t.kind, OutputKind::kStream);
  EXPECT_EQ(t.what, "a character device");
  write_file_atomically(null, std::string(200000, 'x'));
  EXPECT_EQ(file_type_of(null), S_IFCHR);
  // A link to it, as /dev/stdout is to /proc/self/fd/1.
  fs::create_symlink("null", dir_ / "to-null");
  write_file_atomically(dir_ / "to-null", "gone\n");
  EXPECT_EQ(file_type_of(dir_ / "to-null"), S_IFLNK);
  EXPECT_EQ(file_type_of(null), S_IFCHR);
  EXPECT_EQ(names(), (std::vector<std::string>{"null", "to-null"}));
}

TEST_F(AtomicFileTest, AFullDeviceIsAnErrorNamingThePathAndStaysADevice) {
  const fs::path full = dir_ / "full";
  if (!make_char_device(full, 7)) GTEST_SKIP() << "mknod needs root: " << std::strerror(errno);
  try {
    write_file_atomically(full, "a report\n");
    ADD_FAILURE() << "writing to a full device succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("error while writing '" + full.string() + "'"));
    EXPECT_THAT(e.what(), HasSubstr(std::strerror(ENOSPC)));
  }
  EXPECT_EQ(file_type_of(full), S_IFCHR);
  EXPECT_EQ(names(), std::vector<std::string>{"full"});
}

TEST_F(AtomicFileTest, AProcessDescriptorIsWrittenThroughIt) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const fs::path p = prefix + std::to_string(fds[1]);
    const OutputTarget t = output_target(p);
    EXPECT_EQ(t.kind, OutputKind::kStream) << p;
    EXPECT_EQ(t.descriptor, fds[1]);
    write_file_atomically(p, "via " + prefix + "\n");
  }
  // A link to one, as a user's shortcut to /dev/stdout would be.
  fs::create_symlink("/dev/fd/" + std::to_string(fds[1]), dir_ / "out");
  EXPECT_EQ(output_target(dir_ / "out").descriptor, fds[1]);
  write_file_atomically(dir_ / "out", "via a link\n");
  ::close(fds[1]);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  ::close(fds[0]);
  EXPECT_EQ(got, "via /dev/fd/\nvia /proc/self/fd/\nvia a link\n");
  EXPECT_EQ(file_type_of(dir_ / "out"), S_IFLNK);
  // The process's standard names are descriptors too, and one not open for
  // writing is refused.
  EXPECT_EQ(output_target("/dev/stdout").descriptor, 1);
  EXPECT_EQ(output_target("/dev/stderr").descriptor, 2);
  const OutputTarget closed = output_target("/dev/fd/" + std::to_string(fds[0]));
  EXPECT_EQ(closed.kind, OutputKind::kRefused);
  EXPECT_THAT(closed.what, HasSubstr("which is not open"));
}

TEST_F(AtomicFileTest, AFolderASocketAndALinkLoopAreRefusedBeforeAnythingIsWritten) {
  fs::create_directories(dir_ / "folder");
  const auto refused = [&](const fs::path& p, const std::string& why) {
    const OutputTarget t = output_target(p);
    EXPECT_EQ(t.kind, OutputKind::kRefused) << p;
    EXPECT_THAT(t.what, HasSubstr(why)) << p;
    try {
      AtomicFile f(p);
      ADD_FAILURE() << p << " was opened";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("cannot write '" + p.string() + "': " + why));
    }
  };
  refused(dir_ / "folder", "is a folder");
  fs::create_symlink("folder", dir_ / "to-folder");
  refused(dir_ / "to-folder", "is a folder");
  const std::string sock = (dir_ / "s.sock").string();
  const int s = testing::bind_unix_socket(sock);
  ASSERT_GE(s, 0) << std::strerror(errno);
  refused(sock, "is a socket");
  ::close(s);
  fs::create_symlink("loop-b", dir_ / "loop-a");
  fs::create_symlink("loop-a", dir_ / "loop-b");
  refused(dir_ / "loop-a", "is a loop of symbolic links");
  // Nothing was made, and each is what it was.
  EXPECT_EQ(file_type_of(dir_ / "folder"), S_IFDIR);
  EXPECT_EQ(file_type_of(sock), S_IFSOCK);
  EXPECT_EQ(names(),
            (std::vector<std::string>{"folder", "loop-a", "loop-b", "s.sock", "to-folder"}));
}

TEST_F(AtomicFileTest, CommitNeverRenamesOverWhatBecameSomethingElse) {
  // The path was free when the output was opened; a FIFO took it since.
  const fs::path out = dir_ / "out.json";
  {
    AtomicFile f(out);
    f.stream() << "{}\n";
    ASSERT_EQ(::mkfifo(out.c_str(), 0644), 0);
    try {
      f.commit();
      ADD_FAILURE() << "renamed over a FIFO";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("cannot replace '" + out.string() +
                                      "': it is now a FIFO (named pipe), not a regular file"));
    }
  }
  EXPECT_EQ(file_type_of(out), S_IFIFO);
  EXPECT_EQ(names(), std::vector<std::string>{"out.json"});  // no temporary left
  // A file that became a link since: the link is not replaced either.
  const fs::path file = dir_ / "file.json";
  write_file_bytes(file, "old\n");
  {
    AtomicFile f(file);
    f.stream() << "new\n";
    fs::remove(file);
    fs::create_symlink("out.json", file);
    EXPECT_THROW(f.commit(), std::runtime_error);
  }
  EXPECT_EQ(file_type_of(file), S_IFLNK);
}

TEST_F(AtomicFileTest, AFailedWriteToAFileKeepsTheSystemsReason) {
  // A FIFO whose reader has gone: EPIPE, with SIGPIPE ignored as a shell's
  // `trap '' PIPE` would.
  const fs::path fifo = dir_ / "gone.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto* reader = new FifoReader(fifo);
  ASSERT_TRUE(reader->opened());
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old), 0);
  try {
    AtomicFile f(fifo);
    delete reader;  // the reader goes away
    reader = nullptr;
    f.stream() << std::string(100000, 'x');
    f.commit();
    ADD_FAILURE() << "writing to a FIFO without a reader succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("error while writing '" + fifo.string() + "': " + std::strerror(EPIPE)));
  }
  delete reader;
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_EQ(file_type_of(fifo), S_IFIFO);
}

}  // namespace
}  // namespace ssgd
