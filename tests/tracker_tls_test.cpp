// nmt-trackerd over HTTPS and with a token, against the real daemon (NMT_TRACKERD) on 127.0.0.1.
// The certificates are made here at test time with OpenSSL's C API (a throwaway CA valid for a
// day, a server certificate naming IP:127.0.0.1 and DNS:localhost), so nothing committed expires.
// What must work: an https client that trusts the CA writes a run and reads it back, by IP
// address and by name; the right token is accepted. What must fail, and say why: plain HTTP to the
// HTTPS daemon (no API answer at all), https to a plain daemon, a client trusting another CA or
// only the system's CAs, a certificate for another host, a missing or wrong token (401, also over
// TLS), and the trainer's client logs the refused token, naming the daemon, while its spool keeps
// what was not delivered for the next client.

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/test_utils.h"
#include "tests/tracker_daemon_harness.h"
#include "tests/tracker_test_runs.h"
#include "tracker/client/http_client.h"
#include "tracker/client/tracker_client.h"
#include "tracker/client/tracker_reader.h"

namespace nmt::tracker {
namespace {

using namespace std::chrono_literals;

// ---- a throwaway PKI ----------------------------------------------------------------------------

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

Key new_key() {
  Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) throw std::runtime_error("EC key generation failed");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr || X509_add_ext(cert, extension, -1) != 1) {
    throw std::runtime_error(std::string("cannot add the extension ") + value);
  }
  X509_EXTENSION_free(extension);
}

// A certificate for `key` named `common_name`, valid from a minute ago for one day, signed by
// `issuer` with `issuer_key` (both null: self-signed). A CA when `san` is empty; else a server
// certificate for the subjectAltName `san` ("IP:127.0.0.1,DNS:localhost").
Cert new_certificate(EVP_PKEY* key, const std::string& common_name, X509* issuer,
                     EVP_PKEY* issuer_key, const std::string& san) {
  static long serial = 1;
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (san.empty()) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert.get(), signer, NID_basic_constraints, "CA:FALSE");
    add_extension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
    add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), signer, NID_subject_alt_name, san.c_str());
  }
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    throw std::runtime_error("cannot sign the certificate of " + common_name);
  }
  return cert;
}

template <class Write>
void write_pem(const std::string& path, Write write) {
  BIO* bio = BIO_new_file(path.c_str(), "w");
  if (bio == nullptr || write(bio) != 1) throw std::runtime_error("cannot write " + path);
  BIO_free(bio);
}

// A CA and, signed by it, server certificates; files under `dir`.
class TestPki {
 public:
  TestPki(const testing::TempDir& dir, const std::string& name)
      : dir_(dir), name_(name), key_(new_key()) {
    cert_ = new_certificate(key_.get(), "nmt test CA " + name, nullptr, nullptr, "");
    write_pem(ca_file(), [&](BIO* bio) { return PEM_write_bio_X509(bio, cert_.get()); });
  }
  std::string ca_file() const { return dir_.file(name_ + "-ca.pem"); }

  // Writes PREFIX.crt and PREFIX.key for a server certificate naming `san`.
  void issue(const std::string& prefix, const std::string& san) const {
    const Key key = new_key();
    const Cert cert = new_certificate(key.get(), prefix, cert_.get(), key_.get(), san);
    write_pem(dir_.file(prefix + ".crt"),
              [&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); });
    write_pem(dir_.file(prefix + ".key"), [&](BIO* bio) {
      return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    });
  }

 private:
  const testing::TempDir& dir_;
  std::string name_;
  Key key_;
  Cert cert_;
};

std::vector<std::string> tls_flags(const testing::TempDir& dir, const std::string& prefix) {
  return {"--tls-cert", dir.file(prefix + ".crt"), "--tls-key", dir.file(prefix + ".key")};
}

// A server certificate for 127.0.0.1 and localhost from `pki`, and the token "s3cret-token" in
// dir/token: the daemon's flags for both.
std::vector<std::string> tls_and_token_flags(const testing::TempDir& dir, const TestPki& pki) {
  pki.issue("server", "IP:127.0.0.1,DNS:localhost");
  testing::write_text(dir.file("token"), "s3cret-token\n");
  auto flags = tls_flags(dir, "server");
  flags.insert(flags.end(), {"--token-file", dir.file("token")});
  return flags;
}

std::string https_url(const Daemon& daemon, const std::string& host = "127.0.0.1") {
  return "https://" + host + ":" + std::to_string(daemon.port());
}

// The message of the HttpError that `call` throws; fails the test when it throws none.
template <class Call>
std::string http_error_of(Call call) {
  try {
    const HttpResponse response = call();
    ADD_FAILURE() << "an answer (" << response.status << ") where the request must fail";
  } catch (const HttpError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- the tests
// ------------------------------------------------------------------------------------

TEST(TrackerTls, HttpsClientTrustingTheCaWritesARunAndReadsItBack) {
  testing::TempDir dir;
  const TestPki pki(dir, "main");
  pki.issue("server", "IP:127.0.0.1,DNS:localhost");
  auto flags = tls_flags(dir, "server");
  flags.insert(flags.end(), {"--idle-timeout", "0.3"});
  Daemon daemon(dir.path(), 0, flags);

  auto options = options_for(https_url(daemon), dir);
  options.ca_file = pki.ca_file();
  {
    TrackerClient client(options);
    const auto run = client.start_run(run_info("over-tls"));
    ASSERT_TRUE(run.has_value());
    for (int step = 0; step < 100; ++step) client.log_metric("train/loss", step, 5.0 - step * 0.01);
    client.set_status(RunStatus::kFinished);
    ASSERT_TRUE(client.flush(60s));
    EXPECT_EQ(client.stats().delivered_points, 100);
  }
  // By IP address and by the DNS name the certificate also carries.
  for (const char* host : {"127.0.0.1", "localhost"}) {
    TrackerReader reader({https_url(daemon, host), "", pki.ca_file()});
    const auto runs = reader.find_runs_by_name("over-tls");
    ASSERT_EQ(runs.size(), 1u) << host;
    EXPECT_EQ(runs[0].status, "finished");
    EXPECT_EQ(reader.metric_series(runs[0].run_id, "train/loss").total_points, 100);
  }
  // Many requests over one kept-alive TLS connection, then a new one after the daemon closed it.
  HttpClient http(parse_url(https_url(daemon)), "", 5s, pki.ca_file());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(http.request("GET", "/api/health").status, 200);
  std::this_thread::sleep_for(800ms);  // past the idle timeout: the daemon closes it
  EXPECT_EQ(http.request("GET", "/api/nothing").status, 404);
}

TEST(TrackerTls, PlainHttpToTheHttpsDaemonGetsNoAnswer) {
  testing::TempDir dir;
  const TestPki pki(dir, "main");
  pki.issue("server", "IP:127.0.0.1,DNS:localhost");
  Daemon daemon(dir.path(), 0, tls_flags(dir, "server"));

  HttpClient plain(parse_url(daemon.url()), "", 5s);  // http://127.0.0.1:PORT
  http_error_of([&] { return plain.request("GET", "/api/health"); });
  http_error_of([&] {
    return plain.request("POST", "/api/runs", R"({"experiment":"e","name":"sneaked-in"})");
  });
  // A raw socket sees the connection closed, never an HTTP status line.
  testing::TestSocket raw(static_cast<unsigned short>(daemon.port()));
  raw.send_raw("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string received;
  char buffer[4096];
  boost::beast::error_code ec;
  for (std::size_t n; (n = raw.read_some(boost::asio::buffer(buffer), ec)) > 0 && !ec;) {
    received.append(buffer, n);
  }
  EXPECT_TRUE(ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset)
      << ec.message();
  EXPECT_EQ(received.find("HTTP/"), std::string::npos) << received;
  TrackerReader reader({https_url(daemon), "", pki.ca_file()});
  EXPECT_TRUE(reader.list_runs().empty());  // nothing was stored, and TLS is still served
  EXPECT_EQ(reader.health().status, "ok");
}

TEST(TrackerTls, HttpsToAPlainDaemonFailsTheHandshakeSayingSo) {
  testing::TempDir dir;
  const TestPki pki(dir, "main");
  Daemon daemon(dir.path());
  HttpClient http(parse_url(https_url(daemon)), "", 5s, pki.ca_file());
  const std::string message = http_error_of([&] { return http.request("GET", "/api/health"); });
  EXPECT_TRUE(contains(message, "TLS handshake with " + https_url(daemon))) << message;
  EXPECT_TRUE(contains(message, "plain HTTP")) << message;
  EXPECT_THROW(http.request("GET", "/api/health"), TlsError);
}

TEST(TrackerTls, CertificateOfAnotherCaOrAnotherHostIsRefusedWithTheReason) {
  testing::TempDir dir;
  const TestPki pki(dir, "main");
  const TestPki other(dir, "other");
  pki.issue("server", "IP:127.0.0.1,DNS:localhost");
  pki.issue("elsewhere", "IP:10.9.8.7,DNS:elsewhere.example");
  Daemon daemon(dir.path(), 0, tls_flags(dir, "server"));
  testing::TempDir dir2;
  Daemon elsewhere(dir2.path(), 0, tls_flags(dir, "elsewhere"));

  const auto refusal = [](const std::string& url, const std::string& ca_file) {
    HttpClient http(parse_url(url), "", 5s, ca_file);
    return http_error_of([&] { return http.request("GET", "/api/health"); });
  };
  // Another CA, and the system's CAs (no CA file): the chain does not verify.
  for (const std::string& ca_file : {other.ca_file(), std::string()}) {
    const std::string message = refusal(https_url(daemon), ca_file);
    EXPECT_TRUE(contains(message, https_url(daemon))) << message;
    EXPECT_TRUE(contains(message, "certificate did not verify")) << message;
    EXPECT_TRUE(contains(message, "local issuer") || contains(message, "self-signed") ||
                contains(message, "self signed"))
        << message;
  }
  // The right CA, but a certificate for another host: by IP address and by name.
  const std::string by_ip = refusal(https_url(elsewhere), pki.ca_file());
  EXPECT_TRUE(contains(by_ip, "IP address mismatch")) << by_ip;
  const std::string by_name = refusal(https_url(elsewhere, "localhost"), pki.ca_file());
  EXPECT_TRUE(contains(by_name, "hostname mismatch")) << by_name;
  EXPECT_TRUE(contains(by_name, "https://localhost:")) << by_name;

  // The reader says the same, as an unreachable daemon.
  TrackerReader reader({https_url(daemon), "", other.ca_file()});
  const std::string url = https_url(daemon);
  NMT_EXPECT_THROW_WITH(reader.health(), TrackerUnreachable, url,
                        std::string("certificate did not verify"));
  // A CA file that is not PEM is refused when the client is made, naming the file.
  testing::write_text(dir.file("junk.pem"), "not a certificate\n");
  NMT_EXPECT_THROW_WITH(HttpClient(parse_url(https_url(daemon)), "", 5s, dir.file("junk.pem")),
                        std::invalid_argument, "junk.pem");
}

TEST(TrackerTls, TokenIsRequiredOverTls) {
  testing::TempDir dir;
  const TestPki pki(dir, "main");
  Daemon daemon(dir.path(), 0, tls_and_token_flags(dir, pki));

  const std::string run = R"({"experiment":"e","name":"r"})";
  const auto status = [&](const std::string& token) {
    HttpClient http(parse_url(https_url(daemon)), token, 5s, pki.ca_file());
    return http.request("POST", "/api/runs", run).status;
  };
  EXPECT_EQ(status(""), 401);
  EXPECT_EQ(status("wrong"), 401);
  EXPECT_EQ(status("s3cret-token"), 200);
  HttpClient anyone(parse_url(https_url(daemon)), "", 5s, pki.ca_file());
  EXPECT_EQ(anyone.request("GET", "/api/health").status, 200);           // health needs no token
  EXPECT_EQ(anyone.request("GET", "/?token=s3cret-token").status, 303);  // the dashboard's login
  EXPECT_EQ(anyone.request("GET", "/?token=wrong").status, 401);
}

// The limits hold for TLS connections as for plain ones: the body limit, the handshake bounded by
// the header timeout, the per-client connection cap (past it a TLS connection is closed
// unanswered). The refused connection must come after the daemon accepted the silent ones and
// before their 2 s header timeout frees the cap: 300 ms and the client's start, on either side.
TEST(TrackerTls, LimitsHoldOverTls) {
  testing::TempDir dir;
  const TestPki pki(dir, "main");
  pki.issue("server", "IP:127.0.0.1,DNS:localhost");
  auto flags = tls_flags(dir, "server");
  flags.insert(flags.end(), {"--body-limit", "1k", "--header-timeout", "2",
                             "--max-connections-per-client", "2"});
  Daemon daemon(dir.path(), 0, flags);
  HttpClient http(parse_url(https_url(daemon)), "", 5s, pki.ca_file());
  const std::string big = R"({"experiment":"e","name":")" + std::string(2000, 'x') + "\"}";
  EXPECT_EQ(http.request("POST", "/api/runs", big).status, 413);
  http.close();

  // Two connections that never start the handshake fill the cap, then time out.
  const auto port = static_cast<unsigned short>(daemon.port());
  testing::TestSocket silent1(port), silent2(port);
  std::this_thread::sleep_for(300ms);  // both accepted before the next connection
  HttpClient refused(parse_url(https_url(daemon)), "", 5s, pki.ca_file());
  http_error_of([&] { return refused.request("GET", "/api/health"); });
  EXPECT_TRUE(silent1.closed_within(15s));
  EXPECT_TRUE(silent2.closed_within(15s));
  EXPECT_EQ(http.request("GET", "/api/health").status, 200);
}

// The trainer's client: a refused token is an error naming the daemon, training goes on (nothing
// throws), and the spool keeps everything for a client that has the right token.
TEST(TrackerTls, RefusedTokenIsLoggedNamingTheDaemonAndTheSpoolKeepsThePoints) {
  testing::TempDir dir;
  const TestPki pki(dir, "main");
  Daemon daemon(dir.path(), 0, tls_and_token_flags(dir, pki));

  auto options = options_for(https_url(daemon), dir);
  options.ca_file = pki.ca_file();
  auto info = run_info("refused");
  info.uid = generate_run_uid();
  info.attempt = 1;
  std::ostringstream log;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  for (const char* token : {"", "wrong"}) {
    options.token = token;
    TrackerClient client(options);
    EXPECT_FALSE(client.start_run(info).has_value());
    for (int step = 0; step < 50; ++step) client.log_metric("train/loss", step, 1.0);
    EXPECT_FALSE(client.flush(300ms));
  }
  spdlog::set_default_logger(previous);
  const std::string text = log.str();
  EXPECT_TRUE(contains(
      text, "[error] tracker: nmt-trackerd at " + https_url(daemon) + " refused the token (401"))
      << text;
  EXPECT_TRUE(contains(text, "none was sent")) << text;
  EXPECT_TRUE(contains(text, "not the daemon's")) << text;

  options.token = "s3cret-token";
  TrackerClient client(options);
  EXPECT_TRUE(client.start_run(info).has_value());
  ASSERT_TRUE(client.flush(60s));
  EXPECT_EQ(client.stats().delivered_points, 100);  // both refused clients' points
  EXPECT_EQ(client.stats().spooled_points, 0u);
}

}  // namespace
}  // namespace nmt::tracker
