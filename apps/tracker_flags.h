#pragma once
// The --tracker-* flags that nmt-train and nmt-evaluate share: where the daemon is, its token and
// the CA that verifies it. Each beats the config's tracker.* value and the NMT_TRACKER_* variable
// (tracker/client/daemon_address.h resolves them).

#include <cstdlib>
#include <optional>
#include <string>

#include "common/cli.h"
#include "common/environment.h"
#include "tracker/client/daemon_address.h"
#include "tracking/run_records.h"
#include "tracking/run_tracking.h"

namespace nmt::apps {

// `when` prefixes each description, e.g. "With --record: " (empty: always used).
inline void add_tracker_flags(CLI::App& app, tracker::DaemonSettings& flags,
                              const std::string& when, const std::string& url_beats) {
  app.add_option("--tracker-url", flags.url,
                 when + "the nmt-trackerd at http://HOST:PORT or https://HOST:PORT (beats " +
                     url_beats + " and NMT_TRACKER_URL)");
  app.add_option(
      "--tracker-port-file", flags.port_file,
      when + "the nmt-trackerd of this port file, on this host (beats " + url_beats + ")");
  app.add_option("--tracker-token-file", flags.token_file,
                 "File holding the tracker's bearer token (beats tracker.token_file and "
                 "NMT_TRACKER_TOKEN_FILE)");
  app.add_option("--tracker-ca-file", flags.ca_file,
                 "PEM CA certificates to verify an https tracker (beats tracker.ca_file and "
                 "NMT_TRACKER_CA_FILE; default: the system's)");
}

// A recording tool's daemon (nmt-evaluate --record, nmt-average --record): its flags, else the
// checkpoint's tracker config, else the environment; found before the work, so that a bad flag or
// file fails at once. A port file that is not there means a daemon not running: the records are
// then spooled (tracking/run_records.h). Throws UsageError when none names a daemon.
inline tracking::RecordingDaemon record_daemon(const tracker::DaemonSettings& flags,
                                               const TrackerConfig& config) {
  tracking::RecordingDaemon daemon;
  try {
    daemon.address =
        tracker::resolve_daemon(tracking::daemon_sources(flags, config), process_environment);
  } catch (const tracker::TrackerUnreachable& e) {
    daemon.unreachable = e.what();
    return daemon;
  }
  if (!daemon.address) {
    throw UsageError(
        "--record: no tracker to record in: give --tracker-url (or --tracker-port-file), or set "
        "NMT_TRACKER_URL (the checkpoint's config names none)");
  }
  return daemon;
}

}  // namespace nmt::apps
