#include "tracker/client/daemon_address.h"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "common/checked_paths.h"
#include "tracker/api/token_file.h"
#include "tracker/client/http_client.h"

namespace nmt::tracker {
namespace {

// A setting's value and the name of what gave it.
struct Given {
  std::string value;
  std::string named_by;
};

std::vector<DaemonSource> with_environment(std::vector<DaemonSource> sources,
                                           const GetEnv& getenv) {
  const auto env = [&](const char* name) {
    const char* value = getenv(name);
    return std::string(value != nullptr ? value : "");
  };
  const SettingNames& n = kEnvironmentNames;
  sources.push_back({{env(n.url), "", env(n.token_file), env(n.ca_file)}, n});
  return sources;
}

// The first source's non-blank value of `field`.
std::optional<Given> first_given(const std::vector<DaemonSource>& sources,
                                 std::string DaemonSettings::*field,
                                 const char* SettingNames::*name) {
  for (const auto& source : sources) {
    std::string value = api::trim_blanks(source.settings.*field);
    if (!value.empty()) return Given{std::move(value), source.names.*name};
  }
  return std::nullopt;
}

// The first source that gives the daemon at all: its URL, else its port file.
std::optional<Given> first_location(const std::vector<DaemonSource>& sources, bool& by_port_file) {
  for (const auto& source : sources) {
    std::string url = api::trim_blanks(source.settings.url);
    if (!url.empty()) {
      by_port_file = false;
      return Given{std::move(url), source.names.url};
    }
    std::string port_file = api::trim_blanks(source.settings.port_file);
    if (!port_file.empty()) {
      by_port_file = true;
      return Given{std::move(port_file), source.names.port_file};
    }
  }
  return std::nullopt;
}

// nmt-trackerd writes the port it listens on (on 127.0.0.1) once it is ready, and removes the
// file on exit.
std::string url_of_port_file(const Given& port_file) {
  if (path_kind(port_file.value) == PathKind::kMissing) {
    throw TrackerUnreachable(fmt::format("no port file {} (named by {}): is nmt-trackerd running?",
                                         port_file.value, port_file.named_by));
  }
  // A port is a few digits: 4 KiB is far past any.
  const std::string port = api::trim_blanks(read_regular_file(
      port_file.value, 4096, fmt::format("the port file (named by {})", port_file.named_by)));
  try {
    return parse_url("http://127.0.0.1:" + port).to_string();
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format("the port file {} (named by {}) holds '{}', not a port",
                                            port_file.value, port_file.named_by, port));
  }
}

}  // namespace

bool is_given(const std::string& value) {
  return !api::trim_blanks(value).empty();
}

std::optional<DaemonAddress> resolve_daemon(const std::vector<DaemonSource>& sources,
                                            const GetEnv& getenv) {
  const auto all = with_environment(sources, getenv);
  bool by_port_file = false;
  const auto location = first_location(all, by_port_file);
  if (!location) return std::nullopt;
  DaemonAddress address;
  address.url_from = location->named_by;
  if (by_port_file) {
    address.url = url_of_port_file(*location);
  } else {
    try {
      address.url = parse_url(location->value).to_string();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(location->named_by + ": " + e.what());
    }
  }
  if (const auto token_file =
          first_given(all, &DaemonSettings::token_file, &SettingNames::token_file)) {
    address.token = api::read_token_file(token_file->value, token_file->named_by);
  }
  const auto ca_file = first_given(all, &DaemonSettings::ca_file, &SettingNames::ca_file);
  if (ca_file && parse_url(address.url).tls()) {
    if (!std::ifstream(ca_file->value)) {
      throw std::runtime_error(fmt::format("cannot read the CA file {} (named by {})",
                                           ca_file->value, ca_file->named_by));
    }
    address.ca_file = ca_file->value;
  }
  return address;
}

bool names_daemon(const std::vector<DaemonSource>& sources, const GetEnv& getenv) {
  bool by_port_file = false;
  return first_location(with_environment(sources, getenv), by_port_file).has_value();
}

DaemonAddress find_daemon(const DaemonFlags& flags, const GetEnv& getenv) {
  auto address = resolve_daemon({{flags, kToolFlagNames}}, getenv);
  if (!address) {
    throw std::invalid_argument(
        "say where nmt-trackerd is: --url http://HOST:PORT (or https://), --port-file FILE, or "
        "the environment variable NMT_TRACKER_URL");
  }
  return std::move(*address);
}

}  // namespace nmt::tracker
