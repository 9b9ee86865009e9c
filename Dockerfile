# The project on Debian 12, built from source against the pinned CUDA LibTorch
# (jobs/libtorch-current.txt) by its own scripts: the Debian packages of jobs/setup.sh --libraries,
# jobs/fetch_libtorch.sh, jobs/build.sh --libtorch current. For Docker, Podman and, through a
# docker archive, Apptainer (docs/cluster.md, "Containers"). jobs/container/build.sh runs this with
# podman or docker and makes the Debian base itself where no registry is reachable.
# The GPU driver comes from the host at run time (docker run --gpus all, podman run --device
# nvidia.com/gpu=all, apptainer exec --nv); building needs no GPU.
#   docker build -t nmt-transformer .        podman build -t nmt-transformer .
#
# Build arguments:
#   BASE_IMAGE   a Debian bookworm image (default debian:bookworm)
#   CUDA_SOURCE  pypi (default): the CUDA 13.0 libraries, cuDNN, NCCL and nvcc from PyPI beside the
#                LibTorch wheel (NMT_LIBTORCH_CUDA_LIBS=wheel), nothing from NVIDIA's repository;
#                nvidia: the CUDA 13.0 toolkit, cuDNN 9 and NCCL from NVIDIA's Debian 12 repository
#                (CUDA_REPO for a mirror, CUDA_PACKAGES for other packages), LibTorch's own CUDA
#                libraries only where the toolkit lacks them
#   NMT_BUILD_JOBS  parallel compile jobs (default: the builder's cores)
ARG BASE_IMAGE=debian:bookworm
FROM ${BASE_IMAGE}

ARG DEBIAN_FRONTEND=noninteractive
ARG CUDA_SOURCE=pypi
ARG CUDA_REPO=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64
ARG CUDA_PACKAGES="cuda-toolkit-13-0 libcudnn9-dev-cuda-13 libnccl-dev"
RUN case "$CUDA_SOURCE" in \
      pypi) ;; \
      nvidia) apt-get update \
        && apt-get install -y --no-install-recommends ca-certificates curl \
        && curl -fsSL -o /tmp/cuda-keyring.deb "$CUDA_REPO/cuda-keyring_1.1-1_all.deb" \
        && dpkg -i /tmp/cuda-keyring.deb \
        && rm /tmp/cuda-keyring.deb \
        && apt-get update \
        && apt-get install -y --no-install-recommends $CUDA_PACKAGES \
        && echo /usr/local/cuda-13.0/lib64 > /etc/ld.so.conf.d/zz-cuda-13.0.conf \
        && ldconfig \
        && rm -rf /var/lib/apt/lists/* ;; \
      *) echo "CUDA_SOURCE must be pypi or nvidia, not '$CUDA_SOURCE'" >&2; exit 2 ;; \
    esac
ENV PATH=/usr/local/cuda-13.0/bin:$PATH

WORKDIR /opt/nmt
# Each step copies only what it reads, so a change to the sources rebuilds the build step alone.
# The build tools and the libraries the tools link (jobs/setup.sh --libraries), not the test
# suite's extras (browsers, Slurm, clang).
COPY jobs/setup.sh jobs/
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake ninja-build ccache pkg-config \
      git ca-certificates python3 python3-pip $(jobs/setup.sh --libraries) \
 && rm -rf /var/lib/apt/lists/*
COPY jobs/fetch_libtorch.sh jobs/libtorch-current.txt jobs/cuda-compiler-pypi.txt jobs/
RUN if [ "$CUDA_SOURCE" = pypi ]; then export NMT_LIBTORCH_CUDA_LIBS=wheel; fi \
 && jobs/fetch_libtorch.sh
COPY . .
# No tests or benchmarks in the image (jobs/test.sh runs them from a checkout).
ARG NMT_BUILD_JOBS=
RUN if [ "$CUDA_SOURCE" = pypi ]; then export NMT_LIBTORCH_CUDA_LIBS=wheel; fi \
 && NMT_BUILD_JOBS="${NMT_BUILD_JOBS:-$(nproc)}" jobs/build.sh --libtorch current \
      -DNMT_BUILD_TESTS=OFF -DNMT_BUILD_BENCH=OFF
ENV PATH=/opt/nmt/build-current/apps:/opt/nmt/jobs:$PATH
