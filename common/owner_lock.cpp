#include "common/owner_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "common/json_fields.h"

namespace nmt {
namespace {

std::string host_name() {
  char host[256] = {0};
  return ::gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string("?");
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string read_all(int fd) {
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

// A holder as its record names it.
struct Holder {
  std::string tool, host, since, state;
  long pid = 0;

  std::string words() const {
    return fmt::format("{} (pid {} on host {}, since {}{})", tool, pid, host, since,
                       state == "stopping" ? ", stopping" : "");
  }
  // On this host and no longer running: the record of a holder that died.
  bool gone() const {
    return host == host_name() && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
           errno == ESRCH;
  }
  // On this host and on its way out: exiting (a zombie), or a SIGKILL, SIGTERM or SIGINT
  // delivered that it has not acted on yet. Its lock goes with it.
  bool ending() const {
    if (host != host_name() || pid <= 0) return false;
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    constexpr unsigned long long kEndingSignals =
        (1ULL << (SIGKILL - 1)) | (1ULL << (SIGTERM - 1)) | (1ULL << (SIGINT - 1));
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("State:", 0) == 0 && line.find_first_of("ZX", 6) != std::string::npos) {
        return true;
      }
      if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
        const auto mask = std::strtoull(line.c_str() + 7, nullptr, 16);
        if ((mask & kEndingSignals) != 0) return true;
      }
    }
    return false;
  }
};

// The record in `text`; nullopt when empty or malformed (one being written, one left torn).
std::optional<Holder> parse_record(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  try {
    const Fields fields(json);
    Holder holder;
    holder.tool = fields.optional_text("tool").value_or("?");
    holder.pid = static_cast<long>(fields.optional_integer("pid").value_or(0));
    holder.host = fields.optional_text("host").value_or("?");
    holder.since = fields.optional_text("since").value_or("?");
    holder.state = fields.optional_text("state").value_or("running");
    return holder;
  } catch (const FieldError&) {
    return std::nullopt;
  }
}

// The holder of a lock found taken, as its record names it; nullopt where the record is missing,
// empty or malformed, or names a process gone from this host (a predecessor's record, which the
// holder is about to replace).
std::optional<Holder> read_holder(const std::string& record) {
  const int fd = ::open(record.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto holder = parse_record(read_all(fd));
  ::close(fd);
  if (holder && holder->gone()) return std::nullopt;
  return holder;
}

// flock(LOCK_EX | LOCK_NB) on `fd`: 0, or the errno.
int try_lock(int fd) {
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
}

}  // namespace

OwnerLock::OwnerLock(const OwnerLockSpec& spec) : spec_(spec) {
  anchor_fd_ = ::open(spec_.anchor.c_str(), O_RDONLY | O_CLOEXEC);
  if (anchor_fd_ < 0) {
    throw std::runtime_error(
        fmt::format("{}: cannot open it to lock it: {}", spec_.anchor, std::strerror(errno)));
  }
  int lock_fd = anchor_fd_;
  int cause = try_lock(anchor_fd_);
  const auto open_record = [&] {
    record_fd_ = ::open(spec_.record.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, spec_.record_mode);
    if (record_fd_ < 0) {
      const int error = errno;
      ::close(anchor_fd_);
      anchor_fd_ = -1;
      throw std::runtime_error(
          fmt::format("{}: cannot open the lock's record: {}", spec_.record, std::strerror(error)));
    }
  };
  if (cause != 0 && cause != EWOULDBLOCK) {
    // The file system locks no directory (NFS): the record file carries the lock.
    open_record();
    const int refused = cause;
    lock_fd = record_fd_;
    cause = try_lock(record_fd_);
    if (cause == 0) {
      spdlog::warn(
          "{}: the file system refuses to lock it ({}); the lock is on {} instead, and deleting "
          "that file while it is held would let a second process in",
          spec_.anchor, std::strerror(refused), spec_.record);
    }
  }
  // A holder without a record is given a second (one between taking the lock and writing its
  // record, one releasing it), one running the spec's grace, and one that is stopping, or ending
  // on this host, the spec's wait.
  const auto start = std::chrono::steady_clock::now();
  const auto stopping_deadline = start + spec_.wait_for_stopping;
  const auto unrecorded_deadline = start + std::chrono::seconds(1);
  const auto grace_deadline = start + spec_.grace;
  bool waited = false;
  while (cause == EWOULDBLOCK) {
    const auto holder = read_holder(spec_.record);
    const auto now = std::chrono::steady_clock::now();
    const bool stopping =
        holder && (holder->state == "stopping" || holder->ending()) && now < stopping_deadline;
    if (stopping || now < (holder ? grace_deadline : unrecorded_deadline)) {
      if (stopping && !waited) {
        spdlog::info("{} is held by {}: waiting for it to end", spec_.what, holder->words());
        waited = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      cause = try_lock(lock_fd);
      continue;
    }
    if (record_fd_ >= 0) ::close(record_fd_);
    ::close(anchor_fd_);
    record_fd_ = anchor_fd_ = -1;
    throw OwnerBusy(fmt::format(
        "{} is in use by {}: {}", spec_.what,
        holder ? holder->words()
               : fmt::format("a process that has not recorded itself in {} (was it deleted?)",
                             spec_.record),
        spec_.advice));
  }
  if (cause != 0) {
    spdlog::warn(
        "{}: the file system refuses locks ({}): nothing keeps a second process from using {} at "
        "the same time",
        spec_.record, std::strerror(cause), spec_.what);
    if (record_fd_ >= 0) ::close(record_fd_);
    record_fd_ = -1;
    return;
  }
  held_ = true;
  if (record_fd_ < 0) open_record();
  if (const auto before = parse_record(read_all(record_fd_))) {
    spdlog::warn("{}: taking over from {}, which ended without releasing it", spec_.what,
                 before->words());
  }
  since_ = utc_now();
  write_record("running");
}

void OwnerLock::write_record(const std::string& state) {
  const std::string record = nlohmann::json{{"tool", spec_.tool},
                                            {"pid", ::getpid()},
                                            {"host", host_name()},
                                            {"since", since_},
                                            {"state", state}}
                                 .dump() +
                             "\n";
  if (::ftruncate(record_fd_, 0) != 0 || ::pwrite(record_fd_, record.data(), record.size(), 0) !=
                                             static_cast<ssize_t>(record.size())) {
    throw std::runtime_error(
        fmt::format("{}: cannot record the lock's holder: {}", spec_.record, std::strerror(errno)));
  }
}

void OwnerLock::mark_stopping() {
  if (!held_) return;
  try {
    write_record("stopping");
  } catch (const std::exception& e) {
    spdlog::warn("{}", e.what());
  }
}

OwnerLock::~OwnerLock() {
  // Emptied first: a successor that finds the record full knows its holder died.
  if (held_ && ::ftruncate(record_fd_, 0) != 0) {
    spdlog::warn("{}: cannot empty the lock's record: {}", spec_.record, std::strerror(errno));
  }
  if (record_fd_ >= 0) ::close(record_fd_);
  if (anchor_fd_ >= 0) ::close(anchor_fd_);  // releases the lock
}

}  // namespace nmt
