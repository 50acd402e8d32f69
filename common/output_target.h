#pragma once
// Where an output path leads, and so how ssgd may write it (AtomicFile does;
// the command line checks the same before any work, tools/ssgd/cli_options.h):
//
// - kFile: a regular file, or a name not taken yet. Written under a
//   temporary name beside it and renamed into place once complete, so a
//   failed run leaves no half-written output. A symbolic link to a regular
//   file (or to a name not taken yet) stays a link: the file it leads to is
//   the one written and renamed over (`path`), never the link itself.
// - kStream: a FIFO or a character device (/dev/null, a terminal), or a link
//   to one, and the process's own descriptors /dev/stdout, /dev/stderr,
//   /dev/fd/N, /proc/self/fd/N whatever they are open on (a pipe, a terminal,
//   a file the shell opened, even for appending), as a shell treats them.
//   Written THROUGH: opened as it is and streamed to, never renamed over,
//   truncated or removed. What was written before a failure (ENOSPC from
//   /dev/full, a reader that went away) has reached the reader; the error
//   names the path. Opening a FIFO waits for its reader, as `cmd > fifo`
//   does.
// - kRefused: anything else that exists, a folder, a block device, a
//   socket, a link that cannot be followed to a name (a loop, a /proc link
//   to a deleted file): `why` says which ("is a folder").
//
// Nothing is ever renamed over something that is not a regular file.

#include <filesystem>
#include <string>

namespace ssgd {

enum class OutputKind { kFile, kStream, kRefused };

struct OutputTarget {
  OutputKind kind = OutputKind::kFile;
  // kFile: the name written and renamed over (the end of a chain of links);
  // kStream: the path to open (as given).
  std::filesystem::path path;
  // kStream through one of the process's descriptors (/dev/stdout: 1): the
  // descriptor, written through a duplicate of it; -1 otherwise.
  int descriptor = -1;
  // kStream: what it is ("a FIFO (named pipe)", "a character device",
  // "descriptor 1"); kRefused: why, as "is a folder".
  std::string what;
};

// Looks at `path` (stat and readlink only: nothing is opened or made).
OutputTarget output_target(const std::filesystem::path& path);

}  // namespace ssgd
