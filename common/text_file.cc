#include "common/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"

namespace ssgd {

std::string read_text_file(const std::filesystem::path& path, const std::string& what) {
  const std::string source = path.string();
  require_regular_file(path, "");  // a FIFO would block, a device never end
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError({source, {}, {}, ""}, "cannot read " + what + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError({source, {}, {}, ""}, "cannot read " + what + ": read failed");
  return text.str();
}

}  // namespace ssgd
