#pragma once
// Where nmt-trackerd is, the token it wants and the CAs that vouch for its certificate, resolved
// in one way for every client (nmt-tracker, nmt-analyze, nmt-train, nmt-evaluate). Each of the
// three is taken from the first place that gives it: the tool's explicit flags, then the run
// config's tracker section, then the environment (NMT_TRACKER_URL, NMT_TRACKER_TOKEN_FILE,
// NMT_TRACKER_CA_FILE). A place gives the daemon by URL or by the port file nmt-trackerd wrote
// (the URL when it has both). Every value is trimmed of the blanks around it, and a blank value
// counts as not given. The files named are read here; each error names the file and the flag,
// config key or environment variable that named it. Tools call this in main: nothing below main
// reads the environment.

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nmt::tracker {

// No answer at all: no daemon there (or none found), or the connection failed.
class TrackerUnreachable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What one place says about the daemon; empty: nothing. (A constructor rather than an aggregate,
// so that a shorter brace list leaves the rest empty without a missing-initializer warning.)
struct DaemonSettings {
  DaemonSettings(std::string url_ = {}, std::string port_file_ = {}, std::string token_file_ = {},
                 std::string ca_file_ = {})
      : url(std::move(url_)),
        port_file(std::move(port_file_)),
        token_file(std::move(token_file_)),
        ca_file(std::move(ca_file_)) {}

  std::string url;         // http://HOST:PORT or https://HOST:PORT
  std::string port_file;   // an nmt-trackerd --port-file: the daemon is http://127.0.0.1:PORT
  std::string token_file;  // holds the bearer token
  std::string ca_file;     // PEM certificates of the CAs that sign an https daemon's certificate
};

// How one place names those settings, for its errors; nullptr: it has no such setting.
struct SettingNames {
  const char* url;
  const char* port_file;
  const char* token_file;
  const char* ca_file;
};

inline constexpr SettingNames kTrainerFlagNames{"--tracker-url", "--tracker-port-file",
                                                "--tracker-token-file", "--tracker-ca-file"};
inline constexpr SettingNames kToolFlagNames{"--url", "--port-file", "--token-file", "--ca-file"};
inline constexpr SettingNames kConfigNames{"tracker.url", "tracker.port_file", "tracker.token_file",
                                           "tracker.ca_file"};
inline constexpr SettingNames kEnvironmentNames{"NMT_TRACKER_URL", nullptr,
                                                "NMT_TRACKER_TOKEN_FILE", "NMT_TRACKER_CA_FILE"};

struct DaemonSource {
  DaemonSettings settings;
  SettingNames names;
};

struct DaemonAddress {
  DaemonAddress(std::string url_ = {}, std::string token_ = {}, std::string ca_file_ = {},
                std::string url_from_ = {})
      : url(std::move(url_)),
        token(std::move(token_)),
        ca_file(std::move(ca_file_)),
        url_from(std::move(url_from_)) {}

  std::string url;       // http://host:port or https://host:port
  std::string token;     // empty: none
  std::string ca_file;   // for https: the CAs to trust; empty: the system's
  std::string url_from;  // what gave the URL ("--tracker-url", "NMT_TRACKER_URL"...), for logs
};

// Whether a setting's value gives anything: the rule every reader of these settings follows. A
// value is taken without the blanks around it (spaces, tabs, CRs, LFs: api::trim_blanks), and a
// blank one counts as not given.
bool is_given(const std::string& value);

// `getenv` is std::getenv in a tool's main and a fake one in tests.
using GetEnv = std::function<const char*(const char*)>;

// `sources` in order of precedence (a tool's flags, then a config), the environment after them.
// nullopt when none gives a URL or a port file. Throws TrackerUnreachable when the port file chosen
// does not exist (the daemon is not running, or not yet), std::invalid_argument for a malformed
// URL or port file, std::runtime_error for an unreadable or empty token file, or an unreadable CA
// file when the URL is https (an http URL ignores the CA file).
std::optional<DaemonAddress> resolve_daemon(const std::vector<DaemonSource>& sources,
                                            const GetEnv& getenv);

// Whether a source or the environment gives a URL or a port file. Reads no file.
bool names_daemon(const std::vector<DaemonSource>& sources, const GetEnv& getenv);

// The tools' form (nmt-tracker, nmt-analyze): their flags --url, --port-file, --token-file,
// --ca-file, then the environment. Throws std::invalid_argument when neither says where the
// daemon is, and as resolve_daemon.
using DaemonFlags = DaemonSettings;
DaemonAddress find_daemon(const DaemonFlags& flags, const GetEnv& getenv);

}  // namespace nmt::tracker
