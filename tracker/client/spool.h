#pragma once
// The client's write-ahead file: requests the daemon has not acknowledged yet, kept in the run
// directory so that neither a dead daemon nor a crashed trainer loses them. One JSON object a
// line, in the order the trainer produced them:
//   {"kind":"metrics","run_id":7,"body":{"rank":0,"sequence":1833...,"points":[...]}}
//   {"kind":"evals","run_id":null,"body":{"split":"valid","bleu":25.8}}
// run_id is null while the run is not registered yet; replay then uses the current run. Every
// append is fsync'd. Entries leave the file only after the daemon acknowledged them (the file is
// truncated, or rewritten atomically with the rest), so each is delivered at least once; metric
// batches keep their sequence number, and the daemon's (run, rank, sequence) key turns a second
// delivery into a no-op.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace nmt::tracker {

// Bodies are kept as JSON text, not parsed trees: a spool that grows through a long outage costs
// its size in memory once, not ten times over.
struct SpoolEntry {
  std::string kind;                      // "metrics", "evals", "artifacts" or "status"
  std::optional<std::int64_t> run_id;    // unknown until the run is registered
  std::string body;                      // the request body (a JSON object), sent as is
  std::size_t points = 0;                // metric points in body (metrics only)
  std::optional<std::int64_t> sequence;  // the batch's sequence number (metrics only)
};

// One line of the file, without the newline; and back (throws std::invalid_argument).
std::string encode_spool_entry(const SpoolEntry& entry);
SpoolEntry decode_spool_entry(const std::string& line);

class Spool {
 public:
  // Loads what an earlier client left at `path` (a missing file is an empty spool). A line that
  // does not parse, such as the torn last line of a crash during append, is skipped with a
  // warning and the file rewritten without it, so later appends start on a clean line.
  explicit Spool(std::string path);

  // Appends `entries` with one write and one fsync. Throws std::runtime_error naming the path.
  void append(const std::vector<SpoolEntry>& entries);

  // Forgets the first `count` entries (the acknowledged ones) and makes the file match.
  void drop_front(std::size_t count);

  const std::deque<SpoolEntry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  std::size_t points() const { return points_; }
  std::optional<std::int64_t> max_sequence() const;
  const std::string& path() const { return path_; }

 private:
  void rewrite();

  std::string path_;
  std::deque<SpoolEntry> entries_;
  std::size_t points_ = 0;
};

}  // namespace nmt::tracker
