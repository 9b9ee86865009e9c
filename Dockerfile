# The project on Debian 12, built against the pinned CUDA LibTorch (jobs/libtorch-current.txt) by its
# own scripts: jobs/setup.sh (Debian packages), jobs/fetch_libtorch.sh, jobs/build.sh --libtorch
# current. For Docker, Podman and, through a docker archive, Apptainer (docs/cluster.md, "Containers").
# The GPU driver comes from the host at run time (docker run --gpus all, podman run --device
# nvidia.com/gpu=all, apptainer exec --nv); building needs no GPU.
#   docker build -t nmt-transformer .        podman build -t nmt-transformer .
FROM debian:bookworm

ARG DEBIAN_FRONTEND=noninteractive
# LibTorch's CMake config needs nvcc to configure, and jobs/fetch_libtorch.sh takes cuBLAS, cuDNN and
# NCCL from the system (its toolkit mode): the CUDA 13.0 toolkit, cuDNN 9 and NCCL from NVIDIA's
# Debian 12 repository. A mirror or other packages: --build-arg CUDA_REPO=... / CUDA_PACKAGES=...
ARG CUDA_REPO=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64
ARG CUDA_PACKAGES="cuda-toolkit-13-0 libcudnn9-dev-cuda-13 libnccl-dev"
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && curl -fsSL -o /tmp/cuda-keyring.deb "$CUDA_REPO/cuda-keyring_1.1-1_all.deb" \
 && dpkg -i /tmp/cuda-keyring.deb \
 && rm /tmp/cuda-keyring.deb \
 && apt-get update \
 && apt-get install -y --no-install-recommends $CUDA_PACKAGES \
 && echo /usr/local/cuda-13.0/lib64 > /etc/ld.so.conf.d/zz-cuda-13.0.conf \
 && ldconfig \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/local/cuda-13.0/bin:$PATH

WORKDIR /opt/nmt
# Each step copies only what it reads, so a change to the sources rebuilds the build step alone.
COPY jobs/setup.sh jobs/
RUN jobs/setup.sh && rm -rf /var/lib/apt/lists/*
COPY jobs/fetch_libtorch.sh jobs/libtorch-current.txt jobs/
RUN jobs/fetch_libtorch.sh
COPY . .
# No tests or benchmarks in the image (jobs/test.sh runs them from a checkout). NMT_BUILD_JOBS:
# parallel compile jobs (default: the builder's cores).
ARG NMT_BUILD_JOBS=
RUN NMT_BUILD_JOBS="${NMT_BUILD_JOBS:-$(nproc)}" jobs/build.sh --libtorch current \
      -DNMT_BUILD_TESTS=OFF -DNMT_BUILD_BENCH=OFF
ENV PATH=/opt/nmt/build-current/apps:/opt/nmt/jobs:$PATH
