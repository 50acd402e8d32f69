#pragma once
// An Nsight Systems SQLite export (`nsys export --type sqlite`), opened
// read-only, and the located reading of its rows: every value a reader
// takes out of a row names the file, the table, the row (its rowid) and the
// column when it is not what the schema promises (docs/nsys.md).
//
// The file is untrusted input. It is opened through a URI with
// `mode=ro&immutable=1` (SQLite neither writes nor locks it, and leaves no
// -wal or -shm file), in defensive mode with the schema untrusted, strings
// and blobs capped at kMaxValueBytes; only real tables are read (a view of
// the same name, which could run any query, is refused). Rows are read one
// at a time with sqlite3_step, so memory does not grow with a table.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ssgd::trace {

// The longest string or blob a value of the export may hold.
inline constexpr int kNsysMaxValueBytes = 16 << 20;

class NsysStatement;

class NsysDatabase {
 public:
  // Opens `path` read-only. Throws ssgd::InputError (the file) when SQLite
  // cannot open it or it is not an SQLite database.
  explicit NsysDatabase(const std::filesystem::path& path);
  ~NsysDatabase();
  NsysDatabase(const NsysDatabase&) = delete;
  NsysDatabase& operator=(const NsysDatabase&) = delete;

  // The columns of table `table`, or nullopt when the file has no table of
  // that name (a view or an index of that name is not a table).
  [[nodiscard]] std::optional<std::set<std::string>> table_columns(std::string_view table);
  // True when `column` is the table's INTEGER PRIMARY KEY (the rowid).
  [[nodiscard]] bool is_rowid_column(std::string_view table, std::string_view column);

  // Prepares `sql` (built by the importer from checked names only); a
  // failure is an InputError naming `table`.
  NsysStatement prepare(const std::string& sql, std::string_view table);

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] sqlite3* handle() const { return db_; }

 private:
  std::string file_;
  sqlite3* db_ = nullptr;
};

// One prepared statement whose first result column is the row's rowid.
class NsysStatement {
 public:
  NsysStatement(NsysDatabase& db, sqlite3_stmt* stmt, std::string table);
  ~NsysStatement();
  NsysStatement(NsysStatement&&) noexcept;
  NsysStatement& operator=(NsysStatement&&) = delete;
  NsysStatement(const NsysStatement&) = delete;
  NsysStatement& operator=(const NsysStatement&) = delete;

  // Binds text to parameter `index` (1-based), before the first step.
  void bind_text(int index, std::string_view text);
  // Binds an integer to parameter `index` (1-based) and resets the statement.
  void rebind(int index, std::int64_t value);
  // The next row; false at the end. A damaged file is an InputError naming
  // the table and the last row read.
  bool step();

  // The current row's rowid (result column 0).
  [[nodiscard]] std::int64_t rowid() const;
  // Result column `index` named `column`: an integer, else an InputError
  // at this row and column (NULL, text, a real, a blob).
  [[nodiscard]] std::int64_t integer(int index, std::string_view column) const;
  // The same, nullopt when NULL.
  [[nodiscard]] std::optional<std::int64_t> optional_integer(int index,
                                                             std::string_view column) const;
  // Text (a blob is read as its bytes), nullopt when NULL; an integer or a
  // real is an InputError.
  [[nodiscard]] std::optional<std::string> optional_text(int index, std::string_view column) const;
  [[nodiscard]] bool is_null(int index) const;

  // Throws the InputError for this row and column.
  [[noreturn]] void fail(std::string_view column, const std::string& problem) const;

  [[nodiscard]] const std::string& table() const { return table_; }

 private:
  NsysDatabase* db_;
  sqlite3_stmt* stmt_;
  std::string table_;
  std::int64_t last_rowid_ = -1;
};

// `"name"`: an identifier quoted for SQL (names come from the importer's
// own tables of names, never from the file).
std::string nsys_quoted(std::string_view name);

}  // namespace ssgd::trace
