#pragma once
// The git state of the source tree a binary was built from, for run provenance and nmt-sysinfo:
// taken by the build every time it runs (cmake/GitState.cmake writes its definition, rewritten
// only when the state changed), so that a tracked run records the tree it was trained with.

#include <string>

namespace nmt {

struct GitState {
  std::string revision;     // `git rev-parse --short=12 HEAD`; empty outside a git checkout
  bool dirty = false;       // tracked files differ from the revision
  std::string diff_sha256;  // SHA-256 of `git diff HEAD --binary` when dirty, else empty
};

const GitState& git_state();

}  // namespace nmt
