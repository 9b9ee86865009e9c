#include "trainer/distributed/gradient_reducer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>

namespace nmt::distributed {
namespace {

// Where a parameter's gradient lives inside its bucket.
struct Slot {
  at::Tensor parameter;
  std::size_t bucket = 0;
  std::int64_t offset = 0;
  bool ready = false;  // copied in during this update
  unsigned hook = 0;
};

struct Bucket {
  at::Tensor buffer;  // flat, of the reduction type, on the staging device
  ElementType type = ElementType::kFloat32;
  std::size_t slots = 0;  // parameters in it
  std::size_t filled = 0;
  Communicator::Request request;  // buckets [0, next_to_start) have started
};

at::ScalarType reduction_type(at::ScalarType t) {
  if (t == at::kDouble) return at::kDouble;
  if (t == at::kFloat || t == at::kHalf || t == at::kBFloat16) return at::kFloat;
  throw std::invalid_argument(fmt::format("cannot all-reduce gradients of type {}", toString(t)));
}

}  // namespace

struct GradientReducer::Impl {
  const Communicator& comm;
  ReducerOptions options;
  std::vector<Slot> slots;
  std::vector<Bucket> buckets;
  std::size_t next_to_start = 0;
  std::size_t overlapped = 0;  // of the last update
  bool armed = false;

  Impl(const Communicator& c, ReducerOptions o) : comm(c), options(o) {}
  void plan(const std::vector<at::Tensor>& parameters);
  void copy_in(Slot& slot, const at::Tensor& gradient);
  void on_gradient(std::size_t index, const at::Tensor& gradient);
  void start_ready_buckets();
  void drive_progress();
};

// Buckets in reverse parameter order, one run of buckets per (type, device), each closed when the
// next gradient would take it past bucket_mb (a gradient larger than that gets a bucket alone).
void GradientReducer::Impl::plan(const std::vector<at::Tensor>& parameters) {
  const double cap_bytes = options.bucket_mb * 1024.0 * 1024.0;
  struct Open {
    at::ScalarType type;
    at::Device device;
    std::size_t bucket;
    std::int64_t elements;
  };
  std::vector<Open> open;
  std::vector<std::int64_t> sizes;
  std::vector<std::pair<at::ScalarType, at::Device>> kinds;
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    const auto type = reduction_type(it->scalar_type());
    const bool on_device =
        it->is_cuda() && (options.device_buffers || options.device_collective != nullptr);
    const at::Device device = on_device ? it->device() : at::Device(at::kCPU);
    const auto bytes = static_cast<double>(it->numel() * at::elementSize(type));
    Open* current = nullptr;
    for (auto& o : open) {
      if (o.type == type && o.device == device) current = &o;
    }
    if (current == nullptr ||
        (current->elements > 0 &&
         static_cast<double>(current->elements) * at::elementSize(type) + bytes > cap_bytes)) {
      sizes.push_back(0);
      kinds.emplace_back(type, device);
      if (current == nullptr) {
        open.push_back({type, device, sizes.size() - 1, 0});
        current = &open.back();
      } else {
        *current = {type, device, sizes.size() - 1, 0};
      }
    }
    Slot slot;
    slot.parameter = *it;
    slot.bucket = current->bucket;
    slot.offset = current->elements;
    slots.push_back(slot);
    current->elements += it->numel();
    sizes[current->bucket] = current->elements;
  }
  for (std::size_t b = 0; b < sizes.size(); ++b) {
    Bucket bucket;
    const auto [type, device] = kinds[b];
    auto options_for = at::TensorOptions().dtype(type).device(device);
    // Host buckets of CUDA gradients are pinned, so the copies to and from them are fast.
    bool pinned = false;
    for (const auto& s : slots) pinned = pinned || (s.bucket == b && s.parameter.is_cuda());
    if (device.is_cpu() && pinned) options_for = options_for.pinned_memory(true);
    bucket.buffer = at::zeros({sizes[b]}, options_for);
    bucket.type = type == at::kDouble ? ElementType::kFloat64 : ElementType::kFloat32;
    buckets.push_back(std::move(bucket));
  }
  for (const auto& s : slots) ++buckets[s.bucket].slots;
}

void GradientReducer::Impl::copy_in(Slot& slot, const at::Tensor& gradient) {
  auto& bucket = buckets[slot.bucket];
  bucket.buffer.narrow(0, slot.offset, slot.parameter.numel()).copy_(gradient.reshape({-1}));
  slot.ready = true;
  ++bucket.filled;
}

// A hook runs before LibTorch adds `gradient` to .grad, so the update's full gradient is
// .grad (earlier batches of an accumulated update) plus `gradient`.
void GradientReducer::Impl::on_gradient(std::size_t index, const at::Tensor& gradient) {
  if (!armed) return;
  auto& slot = slots[index];
  if (slot.ready) return;  // LibTorch sums a leaf's uses before calling its hook; be safe anyway
  const auto& earlier = slot.parameter.grad();
  copy_in(slot, earlier.defined() ? earlier + gradient : gradient);
  start_ready_buckets();
  drive_progress();
}

void GradientReducer::Impl::start_ready_buckets() {
  while (next_to_start < buckets.size()) {
    auto& bucket = buckets[next_to_start];
    if (bucket.filled < bucket.slots) return;
    ++next_to_start;
    if (bucket.buffer.is_cuda() && options.device_collective != nullptr) {
      options.device_collective->start(bucket.buffer);  // ordered on the device's streams
      continue;
    }
    // CUDA-aware MPI reads device memory directly: the kernels that wrote it must be done.
    if (bucket.buffer.is_cuda()) torch::cuda::synchronize(bucket.buffer.device().index());
    bucket.request = comm.start_allreduce_sum(
        bucket.buffer.data_ptr(), static_cast<std::size_t>(bucket.buffer.numel()), bucket.type);
  }
}

// MPI progresses non-blocking collectives only inside MPI calls; testing them from the hooks
// lets the reductions advance while the backward pass computes.
void GradientReducer::Impl::drive_progress() {
  for (std::size_t b = 0; b < next_to_start; ++b) {
    if (buckets[b].request.pending()) comm.test(buckets[b].request);
  }
}

GradientReducer::GradientReducer(std::vector<at::Tensor> parameters, const Communicator& comm,
                                 ReducerOptions options)
    : impl_(std::make_unique<Impl>(comm, options)) {
  impl_->plan(parameters);
  if (!options.overlap) return;
  for (std::size_t i = 0; i < impl_->slots.size(); ++i) {
    Impl* impl = impl_.get();
    impl->slots[i].hook = impl->slots[i].parameter.register_hook(
        [impl, i](const at::Tensor& gradient) { impl->on_gradient(i, gradient); });
  }
}

GradientReducer::~GradientReducer() {
  if (!impl_->options.overlap) return;
  for (auto& slot : impl_->slots) slot.parameter.remove_hook(slot.hook);
}

void GradientReducer::arm() {
  impl_->armed = impl_->options.overlap;
}

void GradientReducer::finish() {
  auto& m = *impl_;
  m.overlapped = m.next_to_start;
  for (auto& slot : m.slots) {
    if (slot.ready) continue;
    const auto& grad = slot.parameter.grad();
    m.copy_in(slot, grad.defined() ? grad : at::zeros_like(slot.parameter));
  }
  m.start_ready_buckets();
  std::vector<Communicator::Request> requests;
  for (auto& bucket : m.buckets) requests.push_back(std::move(bucket.request));
  if (m.options.device_collective != nullptr) m.options.device_collective->wait_all();
  m.comm.wait_all(requests, "gradients");
  for (auto& slot : m.slots) {
    const auto reduced = m.buckets[slot.bucket]
                             .buffer.narrow(0, slot.offset, slot.parameter.numel())
                             .view(slot.parameter.sizes());
    auto& grad = slot.parameter.mutable_grad();
    if (grad.defined()) {
      grad.copy_(reduced);
    } else {
      grad = reduced.to(slot.parameter.options(), /*non_blocking=*/false, /*copy=*/true);
    }
    slot.ready = false;
  }
  for (auto& bucket : m.buckets) bucket.filled = 0;
  m.next_to_start = 0;
  m.armed = false;
}

std::size_t GradientReducer::bucket_count() const {
  return impl_->buckets.size();
}
std::size_t GradientReducer::overlapped_buckets() const {
  return impl_->overlapped;
}

std::vector<std::int64_t> GradientReducer::bucket_elements() const {
  std::vector<std::int64_t> sizes;
  for (const auto& b : impl_->buckets) sizes.push_back(b.buffer.numel());
  return sizes;
}

}  // namespace nmt::distributed
