#pragma once
// Test harness for the tracker daemon as scripts see it: the real nmt-trackerd binary started as a
// child process on 127.0.0.1 with --port 0 and --port-file, and a small blocking HTTP client whose
// every read and write has a timeout, so a misbehaving daemon fails a test instead of hanging it.

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "common/proc_memory.h"
#include "tests/test_utils.h"

extern char** environ;

namespace nmt::testing {

namespace http = boost::beast::http;

// A process's resident memory in kB: "VmRSS" (now) or "VmHWM" (peak).
inline long proc_status_kb(pid_t pid, const std::string& field) {
  return nmt::proc_status_kb(field, pid);
}

// A connected TCP socket to 127.0.0.1 with receive/send timeouts. Models Beast's SyncReadStream
// and SyncWriteStream, so http::read and http::write work on it. (Asio's own sync sockets ignore
// SO_RCVTIMEO: after a timed-out recv they poll without a limit.) `source`, when given, is the
// local address to connect from: Linux routes all of 127.0.0.0/8 to loopback, so 127.0.0.2 is
// another client address to the daemon.
class TestSocket {
 public:
  explicit TestSocket(unsigned short port,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10),
                      const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (source) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &local.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
        const int error = errno;
        ::close(fd_);
        throw std::system_error(error, std::generic_category(), "bind to " + std::string(source));
      }
    }
    timeval tv{static_cast<time_t>(timeout.count() / 1000),
               static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      const int error = errno;
      ::close(fd_);
      throw std::system_error(error, std::generic_category(), "connect to the daemon");
    }
  }
  ~TestSocket() { ::close(fd_); }
  TestSocket(const TestSocket&) = delete;
  TestSocket& operator=(const TestSocket&) = delete;

  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, boost::beast::error_code& ec) {
    const auto buffer = first_nonempty<boost::asio::mutable_buffer>(buffers);
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    return result(n, n == 0 ? boost::asio::error::eof : errno_code(), ec);
  }
  // One gathered send: a header and body sent apart would meet Nagle and delayed ACK (40 ms).
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers, boost::beast::error_code& ec) {
    std::vector<iovec> parts;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && parts.size() < 64; ++it) {
      const boost::asio::const_buffer b(*it);
      parts.push_back({const_cast<void*>(b.data()), b.size()});
    }
    msghdr message{};
    message.msg_iov = parts.data();
    message.msg_iovlen = parts.size();
    const ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    return result(n, errno_code(), ec);
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers) {
    return or_throw([&](auto& ec) { return read_some(buffers, ec); });
  }
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers) {
    return or_throw([&](auto& ec) { return write_some(buffers, ec); });
  }

  void send_raw(const std::string& bytes) { boost::asio::write(*this, boost::asio::buffer(bytes)); }

  // True when the server has closed the connection (EOF or reset), without waiting; data that
  // arrived is discarded.
  bool closed_now() {
    char scratch[4096];
    while (true) {
      const ssize_t n = ::recv(fd_, scratch, sizeof scratch, MSG_DONTWAIT);
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    }
  }

  // True when the server closes the connection (EOF or reset) within `limit`; data is discarded.
  bool closed_within(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char scratch[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (::poll(&p, 1, static_cast<int>(std::max<long>(left.count(), 0))) <= 0) continue;
      if (::recv(fd_, scratch, sizeof scratch, 0) <= 0) return true;
    }
    return false;
  }

 private:
  template <class Buffer, class Buffers>
  static Buffer first_nonempty(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      if (Buffer(*it).size() > 0) return Buffer(*it);
    }
    return Buffer();
  }
  static boost::beast::error_code errno_code() {
    return {errno, boost::system::generic_category()};
  }
  static std::size_t result(ssize_t n, boost::beast::error_code error,
                            boost::beast::error_code& ec) {
    ec = n > 0 ? boost::beast::error_code() : error;
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  template <class Op>
  static std::size_t or_throw(Op op) {
    boost::beast::error_code ec;
    const std::size_t n = op(ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  int fd_ = -1;
};

struct Reply {
  int status = 0;
  std::string body;
  bool keep_alive = true;
  std::string content_type, location, set_cookie;  // those headers, empty when absent
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

// One keep-alive HTTP/1.1 connection. Throws boost::system::system_error when the daemon is gone.
class Connection {
 public:
  explicit Connection(unsigned short port, std::string token = {}, const char* source = nullptr)
      : socket_(port, std::chrono::seconds(10), source), token_(token) {}

  Reply request(http::verb method, const std::string& target, const std::string& body = {}) {
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
    if (!cookie_.empty()) req.set(http::field::cookie, cookie_);
    if (!body.empty()) req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::write(socket_, req);
    return read_reply();
  }
  Reply get(const std::string& target) { return request(http::verb::get, target); }
  Reply post(const std::string& target, const nlohmann::json& body) {
    return request(http::verb::post, target, body.dump());
  }
  Reply read_reply() {
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    http::read(socket_, buffer_, parser);
    const auto& res = parser.get();
    return {static_cast<int>(res.result_int()),
            res.body(),
            res.keep_alive(),
            std::string(res[http::field::content_type]),
            std::string(res[http::field::location]),
            std::string(res[http::field::set_cookie])};
  }
  // Sent as the Cookie header of every later request.
  void set_cookie(std::string cookie) { cookie_ = std::move(cookie); }
  TestSocket& socket() { return socket_; }

 private:
  TestSocket socket_;
  boost::beast::flat_buffer buffer_;
  std::string token_;
  std::string cookie_;
};

// The real daemon as a child process. Its stderr goes to a log file in `dir`, shown on failure.
class Daemon {
 public:
  // `port_file` defaults to a file of this daemon's own; given one another daemon wrote, the
  // constructor waits until this daemon has replaced its contents.
  Daemon(const TempDir& dir, const std::vector<std::string>& flags, const std::string& db = "",
         const std::string& port_file = "")
      : port_file_(port_file.empty() ? dir.file("port" + std::to_string(++counter())) : port_file),
        log_file_(dir.file("daemon" + std::to_string(++counter()) + ".log")) {
    std::vector<std::string> args = {
        "--db", db.empty() ? dir.file("tracker.db") : db, "--port", "0", "--port-file", port_file_};
    args.insert(args.end(), flags.begin(), flags.end());
    const std::string before = read_text(port_file_);
    pid_ = spawn(args, log_file_);
    wait_for_port(before);
  }
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& port_file() const { return port_file_; }
  std::string log() const { return read_text(log_file_); }

  // Sends `signal` and waits (at most `limit`, then SIGKILL) for the exit. Returns the wait status.
  // The default limit is generous for a loaded machine; a test of promptness measures its own.
  int signal_and_wait(int signal, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    ::kill(pid_, signal);
    return wait(limit);
  }
  int wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) ::kill(pid_, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
    return status;
  }

  // Runs nmt-trackerd with `args` to its exit (at most 30 s); returns the wait status.
  static int run_to_exit(const std::vector<std::string>& args, const std::string& log_file) {
    const pid_t pid = spawn(args, log_file);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return status;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }

  static pid_t spawn(const std::vector<std::string>& args, const std::string& log_file) {
    std::vector<std::string> all = {NMT_TRACKERD};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 2, 1);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::system_error(rc, std::generic_category(), "posix_spawn nmt-trackerd");
    return pid;
  }

  // At most 60 s, for a loaded machine: a daemon that exits ends the wait at once.
  void wait_for_port(const std::string& before) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string text = read_text(port_file_);
      if (!text.empty() && text.back() == '\n' && text != before) {
        port_ = static_cast<unsigned short>(std::stoi(text));
        return;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("nmt-trackerd exited before listening:\n" + log());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // The destructor will not run for a throwing constructor: reap the child here.
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    throw std::runtime_error("nmt-trackerd wrote no port file within 60 s:\n" + log());
  }

  std::string port_file_;
  std::string log_file_;
  pid_t pid_ = -1;
  unsigned short port_ = 0;
};

// A daemon started with `flags` in a scratch directory of its own, and a connection to it.
struct ServedDaemon {
  explicit ServedDaemon(const std::vector<std::string>& flags = {})
      : daemon(dir, flags), c(daemon.port()) {}
  TempDir dir;
  Daemon daemon;
  Connection c;
};

}  // namespace nmt::testing
