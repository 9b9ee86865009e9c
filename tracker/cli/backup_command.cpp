// nmt-tracker backup: a consistent snapshot of the daemon's database (GET /api/backup,
// tracker/API.md "Backups") written to a file atomically: streamed to OUT.tmp.PID beside OUT
// (owner-only, its blocks reserved first so a full disk shows before any byte is written), checked
// with SQLite (the integrity check, the schema version the daemon sent), then fsynced and renamed
// over OUT, the folder fsynced. Any failure leaves OUT as it was and no temporary behind.

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "tracker/cli/commands.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"

namespace nmt::tracker::cli {
namespace {

namespace fs = std::filesystem;

// What the copy says of itself once checked.
struct CopyFacts {
  std::int64_t runs = 0;
};

// `path` as a SQLite URI opening it immutable: the copy is this process's alone, so SQLite takes no
// lock and creates nothing beside it (a -shm, were the copy in WAL mode).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

// SQLite's integrity check of the whole copy, its schema version against the daemon's word, and
// its run count; std::runtime_error naming the first problems otherwise.
CopyFacts check_copy(const std::string& path, int schema_version) {
  try {
    SQLite::Database copy(immutable_uri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    SQLite::Statement check(copy, "PRAGMA integrity_check");
    std::vector<std::string> problems;
    while (check.executeStep() && problems.size() < 5) {
      const std::string line = check.getColumn(0).getString();
      if (line != "ok") problems.push_back(line);
    }
    if (!problems.empty()) {
      throw std::runtime_error(
          fmt::format("the copy fails SQLite's integrity check: {}", fmt::join(problems, "; ")));
    }
    const int version = copy.execAndGet("PRAGMA user_version").getInt();
    if (version != schema_version) {
      throw std::runtime_error(fmt::format(
          "the copy has schema version {}, the daemon sent version {}", version, schema_version));
    }
    return CopyFacts{copy.execAndGet("SELECT COUNT(*) FROM runs").getInt64()};
  } catch (const SQLite::Exception& e) {
    throw std::runtime_error(
        fmt::format("the copy is not a readable tracker database: {}", e.what()));
  }
}

}  // namespace

int backup(TrackerReader& reader, const BackupArgs& args, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<AtomicFileWriter> file;
  try {
    file.emplace(args.out_file);
    // The copy holds what the database holds (configs, hosts): owner-only, like the database.
    fs::permissions(file->temporary(), fs::perms::owner_read | fs::perms::owner_write);
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("cannot write the backup {}: {}", args.out_file, e.what()));
  }
  api::BackupInfo info;
  try {
    info = reader.backup([&](const api::BackupInfo& sent) { file->reserve(sent.size); },
                         [&](const char* data, std::size_t size) { file->append(data, size); },
                         std::chrono::seconds(args.snapshot_timeout_s));
  } catch (const TrackerError& e) {
    throw TrackerError(fmt::format("no backup written to {}: {}", args.out_file, e.what()),
                       e.status(), e.field());
  } catch (const TrackerUnreachable&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("no backup written to {}: {}", args.out_file, e.what()));
  }
  CopyFacts facts;
  try {
    facts = check_copy(file->temporary(), info.schema_version);
    file->commit();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("no backup written to {}: {}", args.out_file, e.what()));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << fmt::format("{}: {} ({} bytes), {}, schema version {}, {}\n", args.out_file,
                     format_bytes(info.size), info.size, format_quantity(facts.runs, "run"),
                     info.schema_version, format_duration(seconds));
  return 0;
}

}  // namespace nmt::tracker::cli
