#include "trainer/distributed/communicator.h"

#include <mpi.h>
#include <unistd.h>

#if defined(OPEN_MPI) && OPEN_MPI && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <deque>
#include <thread>
#include <utility>

#include "trainer/distributed/communicator_state.h"
#include "trainer/distributed/mpi_context.h"

namespace nmt::distributed {
namespace {

// An all-reduce of more than kWholeBytes runs as a chain of MPI_Iallreduce pieces of kPieceBytes,
// at most kPiecesInFlight at a time: Open MPI allocates a scratch buffer as large as the message on
// every call, fresh memory above glibc's mmap threshold, where pieces reuse one small buffer. A
// buffer up to kWholeBytes stays one call, as in the blocking path (docs/scaling.md, "Figures
// behind the defaults").
constexpr std::size_t kWholeBytes = std::size_t{4} << 20;
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;
constexpr std::size_t kPiecesInFlight = 2;

std::function<void(const std::string&)>& abort_hook() {
  static std::function<void(const std::string&)> hook;
  return hook;
}

int checked_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw MpiError(fmt::format("MPI message of {} elements exceeds INT_MAX; split it", count));
  }
  return static_cast<int>(count);
}

MPI_Datatype mpi_type(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return MPI_FLOAT;
    case ElementType::kFloat64:
      return MPI_DOUBLE;
    case ElementType::kInt64:
      return MPI_INT64_T;
  }
  throw MpiError("unknown element type");
}

std::size_t element_bytes(ElementType type) {
  return type == ElementType::kFloat32 ? 4 : 8;
}

}  // namespace

struct Communicator::Request::Handle {
  std::shared_ptr<std::size_t> left;  // pieces of the all-reduce not completed yet
};

void Communicator::State::wait(MPI_Request* requests, int count, const char* label) {
  wait_until([&] {
    int done = 0;
    check_mpi(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), label);
    return done != 0;
  });
}

// Non-blocking collectives advance only inside MPI calls, so this tests without pause, as a
// blocking MPI call spins inside. A sched_yield between tests costs 170 ns, a test 20 ns and the
// clock read 20 ns (2-core Xeon, idle): invisible in the all-reduce bench on an idle machine, but
// beside one busy process a yielding wait gives the core away: its worst ratio to the blocking
// call in two runs was 0.42 (4 MiB), the spinning wait's 0.88. When mpirun oversubscribes the
// cores, Open MPI yields inside its tests itself (mpi_yield_when_idle), as in its blocking calls.
template <typename Done>
void Communicator::State::wait_until(Done&& done) {
  const auto start = Clock::now();
  double waited = 0.0;
  for (int polls = 0;; ++polls) {
    const bool finished = done();
    waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (finished) break;
    pulse();
    if (watching && waited > limit()) overdue(waited);
    // Inside a LongWait the others allow rank 0 long solo work, but not silence once it has
    // arrived: frozen there, it would hold the job for the long limit.
    if (watching && long_waits > 0 && waited > hang.timeout_s && polls % 1024 == 0) {
      abort_if_silent(waited, hang.timeout_s);
    }
    // A LongWait lasts as long as rank 0's solo work (saving, decoding): leave the core to it,
    // or to whatever else shares this node, between tests.
    if (long_waits > 0 && polls > 100) std::this_thread::yield();
  }
  wait_seconds += waited;
}

// Completes the pieces in flight that are done, then starts queued ones until `in_flight` run.
void Communicator::State::advance(std::size_t in_flight) {
  if (!flying.empty()) {
    int completed = 0;
    landed.resize(flying.size());
    check_mpi(MPI_Testsome(static_cast<int>(flying.size()), flying.data(), &completed,
                           landed.data(), MPI_STATUSES_IGNORE),
              "MPI_Testsome(allreduce)");
    for (int i = 0; i < completed; ++i) --*flying_left[static_cast<std::size_t>(landed[i])];
    for (std::size_t i = flying.size(); i-- > 0;) {
      if (flying[i] != MPI_REQUEST_NULL) continue;
      flying.erase(flying.begin() + static_cast<std::ptrdiff_t>(i));
      flying_left.erase(flying_left.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  while (!queued.empty() && flying.size() < in_flight) {
    const Piece& piece = queued.front();
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Iallreduce(MPI_IN_PLACE, piece.data, piece.count, piece.type, MPI_SUM, comm, &request),
        "MPI_Iallreduce");
    flying.push_back(request);
    flying_left.push_back(piece.left);
    queued.pop_front();
  }
}

Communicator::Communicator(std::shared_ptr<State> state) : state_(std::move(state)) {}

Communicator Communicator::world() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) throw MpiError("Communicator::world() before MPI_Init (create an MpiContext)");
  auto s = std::make_shared<State>();
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &s->comm), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(s->comm, &s->rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(s->comm, &s->size), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(s->comm, MPI_COMM_TYPE_SHARED, s->rank, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  check_mpi(MPI_Comm_rank(node, &s->local_rank), "MPI_Comm_rank(node)");
  check_mpi(MPI_Comm_size(node, &s->local_size), "MPI_Comm_size(node)");
  MPI_Comm_free(&node);
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  std::string mine = fmt::format("{}:{}", host, static_cast<long>(getpid()));
  mine.resize(kNameBytes, '\0');
  std::string all(kNameBytes * static_cast<std::size_t>(s->size), '\0');
  check_mpi(MPI_Allgather(mine.data(), static_cast<int>(kNameBytes), MPI_CHAR, all.data(),
                          static_cast<int>(kNameBytes), MPI_CHAR, s->comm),
            "MPI_Allgather(names)");
  for (int r = 0; r < s->size; ++r) s->names.emplace_back(all.c_str() + kNameBytes * r);
  return Communicator(std::move(s));
}

Communicator Communicator::self() {
  auto s = std::make_shared<State>();
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  s->names.push_back(fmt::format("{}:{}", host, static_cast<long>(getpid())));
  return Communicator(std::move(s));
}

int Communicator::rank() const {
  return state_->rank;
}
int Communicator::size() const {
  return state_->size;
}
int Communicator::local_rank() const {
  return state_->local_rank;
}
int Communicator::local_size() const {
  return state_->local_size;
}
const std::vector<std::string>& Communicator::rank_names() const {
  return state_->names;
}

std::string Communicator::host_of(int r) const {
  return state_->host_of(r);
}

std::vector<std::string> Communicator::hosts() const {
  std::vector<std::string> hosts;
  for (int r = 0; r < size(); ++r) {
    std::string host = host_of(r);
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end())
      hosts.push_back(std::move(host));
  }
  return hosts;
}

void Communicator::allreduce_sum(void* data, std::size_t count, ElementType type) const {
  if (state_->size == 1) return;
  auto request = start_allreduce_sum(data, count, type);
  std::vector<Request> one;
  one.push_back(std::move(request));
  wait_all(one, "allreduce");
}

void Communicator::allreduce_sum(std::vector<double>& values) const {
  allreduce_sum(values.data(), values.size(), ElementType::kFloat64);
}
void Communicator::allreduce_sum(std::vector<float>& values) const {
  allreduce_sum(values.data(), values.size(), ElementType::kFloat32);
}
void Communicator::allreduce_sum(std::vector<std::int64_t>& values) const {
  allreduce_sum(values.data(), values.size(), ElementType::kInt64);
}

void Communicator::broadcast(void* data, std::size_t bytes, int root) const {
  if (state_->size == 1) return;
  state_->begin("broadcast");
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(data, checked_count(bytes), MPI_BYTE, root, state_->comm, &r), "MPI_Ibcast");
  state_->wait(&r, 1, "MPI_Ibcast");
}

void Communicator::broadcast(std::vector<float>& values, int root) const {
  broadcast(values.data(), values.size() * sizeof(float), root);
}

void Communicator::broadcast(std::string& text, int root) const {
  std::uint64_t length = text.size();
  broadcast(&length, sizeof length, root);
  text.resize(length);
  broadcast(text.data(), length, root);
}

std::vector<double> Communicator::gather(double value, int root) const {
  std::vector<double> values(static_cast<std::size_t>(state_->size), value);
  if (state_->size == 1) return values;
  state_->begin("gather");
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Igather(&value, 1, MPI_DOUBLE, values.data(), 1, MPI_DOUBLE, root, state_->comm, &r),
      "MPI_Igather");
  state_->wait(&r, 1, "MPI_Igather");
  return values;
}

void Communicator::barrier() const {
  if (state_->size == 1) return;
  state_->begin("barrier");
  MPI_Request r = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(state_->comm, &r), "MPI_Ibarrier");
  state_->wait(&r, 1, "MPI_Ibarrier");
}

Communicator::Request::Request() : handle_(std::make_unique<Handle>()) {}
Communicator::Request::~Request() = default;
Communicator::Request::Request(Request&&) noexcept = default;
Communicator::Request& Communicator::Request::operator=(Request&&) noexcept = default;
bool Communicator::Request::pending() const {
  return handle_ && handle_->left && *handle_->left > 0;
}

Communicator::Request Communicator::start_allreduce_sum(void* data, std::size_t count,
                                                        ElementType type) const {
  Request request;
  if (state_->size == 1 || count == 0) return request;
  const std::size_t per_piece =
      count * element_bytes(type) <= kWholeBytes ? count : kPieceBytes / element_bytes(type);
  request.handle_->left = std::make_shared<std::size_t>((count + per_piece - 1) / per_piece);
  for (std::size_t offset = 0; offset < count; offset += per_piece) {
    State::Piece piece;
    piece.data = static_cast<char*>(data) + offset * element_bytes(type);
    piece.count = static_cast<int>(std::min(per_piece, count - offset));
    piece.type = mpi_type(type);
    piece.left = request.handle_->left;
    state_->queued.push_back(std::move(piece));
  }
  state_->advance(kPiecesInFlight);
  return request;
}

bool Communicator::test(Request& request) const {
  if (!request.pending()) return true;
  state_->advance(kPiecesInFlight);
  return !request.pending();
}

void Communicator::wait_all(std::vector<Request>& requests, const char* what) const {
  std::vector<std::shared_ptr<std::size_t>> left;
  for (auto& r : requests) {
    if (r.pending()) left.push_back(r.handle_->left);
  }
  state_->announce(what);
  if (!left.empty()) {
    state_->wait_until([&] {
      state_->advance(kPiecesInFlight);
      return std::all_of(left.begin(), left.end(), [](const auto& l) { return *l == 0; });
    });
  }
  for (auto& r : requests) {
    if (r.handle_) r.handle_->left.reset();
  }
}

void Communicator::watch_for_hangs(HangOptions options) {
  state_->hang = options;
  state_->watching = true;
  state_->last_heard.assign(static_cast<std::size_t>(state_->size), Clock::now());
}

void Communicator::set_step(std::int64_t step) {
  state_->step = step;
}

Communicator::LongWait::LongWait(const Communicator& comm) : comm_(comm) {
  ++comm_.state_->long_waits;
}
Communicator::LongWait::~LongWait() {
  --comm_.state_->long_waits;
}

void Communicator::set_abort_hook(std::function<void(const std::string&)> hook) {
  abort_hook() = std::move(hook);
}

void Communicator::abort_job(const std::string& message, int code) {
  spdlog::critical("{}", message);
  spdlog::default_logger()->flush();
  if (auto hook = std::exchange(abort_hook(), nullptr)) hook(message);  // once, even if it aborts
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

double Communicator::take_wait_seconds() const {
  const double seconds = state_->wait_seconds;
  state_->wait_seconds = 0.0;
  return seconds;
}

bool Communicator::cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;  // this MPI library was built without CUDA support
#endif
}

}  // namespace nmt::distributed
