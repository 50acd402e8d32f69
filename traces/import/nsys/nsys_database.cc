#include "traces/import/nsys/nsys_database.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <utility>

#include "common/error.h"

namespace ssgd::trace {
namespace {

// A file: URI for `path`, every byte but the unreserved ones and '/'
// percent-encoded (a name with '?', '#' or '%' stays one path).
std::string file_uri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  return uri + "?mode=ro&immutable=1";
}

// SQLite's message, which may quote the file's own bytes (a damaged
// schema's text), with every byte that is not printable ASCII as '?'.
std::string printable(const char* message) {
  std::string out = message != nullptr ? message : "unknown error";
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return out;
}

const char* value_kind(int type) {
  switch (type) {
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT: return "a real number";
    case SQLITE_TEXT: return "text";
    case SQLITE_BLOB: return "a blob";
    default: return "NULL";
  }
}

}  // namespace

std::string nsys_quoted(std::string_view name) {
  std::string q = "\"";
  for (char c : name) {
    q += c;
    if (c == '"') q += '"';
  }
  return q + "\"";
}

NsysDatabase::NsysDatabase(const std::filesystem::path& path) : file_(path.string()) {
  const std::string uri = file_uri(path);
  const int rc =
      sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = printable(db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError({file_, std::nullopt, std::nullopt, ""},
                     "cannot open as an SQLite database: " + why);
  }
  // SQLite's advice for untrusted database files ("Defense Against The Dark
  // Arts", sqlite.org/security.html): defensive mode, no trust in the
  // schema's functions, bounded values, cells checked as they are read.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, kNsysMaxValueBytes);
  sqlite3_limit(db_, SQLITE_LIMIT_SQL_LENGTH, 1 << 16);
  sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_exec(db_, "PRAGMA cell_size_check=ON", nullptr, nullptr, nullptr);
  // The first read of the schema says whether this is a database at all.
  char* err = nullptr;
  if (sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, &err) !=
      SQLITE_OK) {
    const std::string why = printable(err != nullptr ? err : sqlite3_errmsg(db_));
    sqlite3_free(err);
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError({file_, std::nullopt, std::nullopt, ""},
                     "not an Nsight Systems SQLite export: SQLite cannot read it (" + why + ")");
  }
}

NsysDatabase::~NsysDatabase() { sqlite3_close(db_); }

NsysStatement NsysDatabase::prepare(const std::string& sql, std::string_view table) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    const std::string why = printable(sqlite3_errmsg(db_));
    sqlite3_finalize(stmt);
    throw InputError({file_, std::nullopt, std::nullopt, std::string(table)},
                     fmt::format("table {} cannot be read: {}", table, why));
  }
  return NsysStatement(*this, stmt, std::string(table));
}

std::optional<std::set<std::string>> NsysDatabase::table_columns(std::string_view table) {
  {
    NsysStatement kind =
        prepare("SELECT rowid, type FROM sqlite_master WHERE name = ?1", "sqlite_master");
    kind.bind_text(1, table);
    bool is_table = false;
    while (kind.step()) {
      if (kind.optional_text(1, "type").value_or("") == "table") is_table = true;
    }
    if (!is_table) return std::nullopt;
  }
  std::set<std::string> columns;
  NsysStatement info = prepare("SELECT 0, name FROM pragma_table_info(?1)", table);
  info.bind_text(1, table);
  while (info.step()) {
    if (auto name = info.optional_text(1, "name")) columns.insert(*name);
  }
  return columns;
}

bool NsysDatabase::is_rowid_column(std::string_view table, std::string_view column) {
  NsysStatement info = prepare("SELECT 0, name, type, pk FROM pragma_table_info(?1)", table);
  info.bind_text(1, table);
  int keys = 0;
  bool found = false;
  while (info.step()) {
    if (info.optional_integer(3, "pk").value_or(0) == 0) continue;
    ++keys;
    std::string type = info.optional_text(2, "type").value_or("");
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    found = info.optional_text(1, "name").value_or("") == column && type == "INTEGER";
  }
  return keys == 1 && found;
}

NsysStatement::NsysStatement(NsysDatabase& db, sqlite3_stmt* stmt, std::string table)
    : db_(&db), stmt_(stmt), table_(std::move(table)) {}

NsysStatement::~NsysStatement() { sqlite3_finalize(stmt_); }

NsysStatement::NsysStatement(NsysStatement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      table_(std::move(other.table_)),
      last_rowid_(other.last_rowid_) {}

void NsysStatement::bind_text(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

void NsysStatement::rebind(int index, std::int64_t value) {
  sqlite3_reset(stmt_);
  sqlite3_bind_int64(stmt_, index, value);
}

bool NsysStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    last_rowid_ = sqlite3_column_int64(stmt_, 0);
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  const std::string why = printable(sqlite3_errmsg(db_->handle()));
  throw InputError(
      {db_->file(), std::nullopt,
       last_rowid_ >= 0 ? std::optional<std::int64_t>(last_rowid_) : std::nullopt, table_},
      last_rowid_ >= 0 ? fmt::format("table {}: reading past row (rowid) {} failed: {}", table_,
                                     last_rowid_, why)
                       : fmt::format("table {}: reading failed: {}", table_, why));
}

std::int64_t NsysStatement::rowid() const { return last_rowid_; }

bool NsysStatement::is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

void NsysStatement::fail(std::string_view column, const std::string& problem) const {
  throw InputError(
      {db_->file(), std::nullopt, last_rowid_, table_ + "." + std::string(column)},
      fmt::format("table {}, row (rowid) {}, column {}: {}", table_, last_rowid_, column, problem));
}

std::int64_t NsysStatement::integer(int index, std::string_view column) const {
  const int type = sqlite3_column_type(stmt_, index);
  if (type != SQLITE_INTEGER) fail(column, fmt::format("is {}, not an integer", value_kind(type)));
  return sqlite3_column_int64(stmt_, index);
}

std::optional<std::int64_t> NsysStatement::optional_integer(int index,
                                                            std::string_view column) const {
  if (is_null(index)) return std::nullopt;
  return integer(index, column);
}

std::optional<std::string> NsysStatement::optional_text(int index, std::string_view column) const {
  const int type = sqlite3_column_type(stmt_, index);
  if (type == SQLITE_NULL) return std::nullopt;
  if (type != SQLITE_TEXT && type != SQLITE_BLOB) {
    fail(column, fmt::format("is {}, not text", value_kind(type)));
  }
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt_, index));
  const int n = sqlite3_column_bytes(stmt_, index);
  return bytes == nullptr ? std::string() : std::string(bytes, static_cast<std::size_t>(n));
}

}  // namespace ssgd::trace
