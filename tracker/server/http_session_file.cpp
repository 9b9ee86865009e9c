// A connection's answers whose body is a file (Response::body_file, a database backup): the header,
// then the file a piece at a time (see Session::FileAnswer in http_session.h).

#include <spdlog/spdlog.h>
#include <unistd.h>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tracker/server/http_session.h"

namespace nmt::tracker::detail {
namespace {

// The piece of a file read and written at a time.
constexpr std::size_t kFilePiece = 256 * 1024;

}  // namespace

// The header first; then read_file_piece() and write_file_piece() take turns until the body's
// last byte is written.
template <class Stream>
void Session<Stream>::send_file(Response response, bool close) {
  if (stopping_) return tcp_stream().close();
  file_ = std::make_unique<FileAnswer>();
  FileAnswer& file = *file_;
  file.source = std::move(response.body_file);
  file.size = file.source->size();
  file.piece.resize(kFilePiece);
  file.message =
      http::response<http::buffer_body>(static_cast<http::status>(response.status), version_);
  file.message.set(http::field::server, "nmt-trackerd");
  file.message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) file.message.insert(name, value);
  file.message.keep_alive(!close);
  file.message.content_length(file.size);
  file.message.body().data = nullptr;
  file.message.body().more = true;
  file.serializer.emplace(file.message);
  tcp_stream().expires_after(state_->options.write_timeout);
  http::async_write_header(
      stream_, *file.serializer,
      [self = this->shared_from_this(), close](beast::error_code ec, std::size_t) {
        if (ec) return self->on_write(ec, close, false);
        self->read_file_piece(close);
      });
}

template <class Stream>
void Session<Stream>::read_file_piece(bool close) {
  auto guard = asio::make_work_guard(state_->io_executor);
  asio::post(state_->handler_executor, [self = this->shared_from_this(), close,
                                        guard = std::move(guard)] {
    FileAnswer& file = *self->file_;
    const auto want =
        static_cast<std::size_t>(std::min<std::uint64_t>(file.piece.size(), file.size - file.sent));
    ssize_t got = 0;
    do {
      got = ::pread(file.source->descriptor(), file.piece.data(), want,
                    static_cast<off_t>(file.sent));
    } while (got < 0 && errno == EINTR);
    const int error = got < 0 ? errno : 0;
    asio::post(self->stream_.get_executor(),
               [self, got, error, close] { self->write_file_piece(got, error, close); });
  });
}

template <class Stream>
void Session<Stream>::write_file_piece(std::int64_t got, int error, bool close) {
  FileAnswer& file = *file_;
  const std::uint64_t left = file.size - file.sent;
  if (got < 0 || (got == 0 && left > 0)) {
    spdlog::error("connection {}: {} cut off at byte {} of {}: the file cannot be read: {}", id_,
                  summary_, file.sent, file.size,
                  got < 0 ? std::strerror(error) : "it ended early");
    file_.reset();
    return tcp_stream().close();
  }
  file.sent += static_cast<std::uint64_t>(got);
  file.message.body().data = file.piece.data();
  file.message.body().size = static_cast<std::size_t>(got);
  file.message.body().more = file.sent < file.size;
  // Every byte is read: the file is let go before its last piece is written, so a client that has
  // the whole body finds the file, and the route, free.
  if (!file.message.body().more) file.source.reset();
  tcp_stream().expires_after(state_->options.write_timeout);
  http::async_write(stream_, *file.serializer,
                    [self = this->shared_from_this(), close](beast::error_code ec, std::size_t) {
                      if (ec == http::error::need_buffer) return self->read_file_piece(close);
                      self->file_.reset();  // sent or abandoned
                      self->on_write(ec, close, false);
                    });
}

template void Session<PlainStream>::send_file(Response, bool);
template void Session<PlainStream>::read_file_piece(bool);
template void Session<PlainStream>::write_file_piece(std::int64_t, int, bool);
template void Session<TlsStream>::send_file(Response, bool);
template void Session<TlsStream>::read_file_piece(bool);
template void Session<TlsStream>::write_file_piece(std::int64_t, int, bool);

}  // namespace nmt::tracker::detail
