#pragma once
// Every input a command reads is a regular file (or a symbolic link to one).
// A FIFO would block the reader forever, a folder has no contents to read,
// and a device such as /dev/zero never ends: each is refused before it is
// opened, with an InputError naming the file and what it was given as.

#include <filesystem>
#include <string_view>

namespace ssgd {

// Throws ssgd::InputError "PATH: field 'WHAT': is a FIFO (named pipe), not a
// regular file" (a folder, a character or block device, a socket likewise)
// when `path` exists and is not a regular file. A path that does not exist
// passes: the reader that opens it says so in its own words. `what` names
// how the file was given: a flag ("--scenario"), an argument ("INPUT") or a
// scenario key ("network.calibration"); empty for none.
void require_regular_file(const std::filesystem::path& path, std::string_view what);

}  // namespace ssgd
