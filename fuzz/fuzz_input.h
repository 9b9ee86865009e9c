#pragma once
// What the fuzz harnesses share: the input cut into parts, files of a scratch folder that lives as
// long as the process, and the project's logs kept quiet (a harness runs millions of inputs).
//
// A harness whose input is several files reads them as parts separated by the byte 0x1e (ASCII
// record separator), which no seed uses otherwise: "run.json <RS> config.yaml <RS> ...".

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nmt::fuzz {

inline constexpr char kPartSeparator = '\x1e';

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The parts of `input` between separators; at least `count` of them (missing ones are empty), the
// last holding the rest of the input.
inline std::vector<std::string> split_parts(std::string_view input, std::size_t count) {
  std::vector<std::string> parts;
  while (parts.size() + 1 < count) {
    const std::size_t end = input.find(kPartSeparator);
    if (end == std::string_view::npos) break;
    parts.emplace_back(input.substr(0, end));
    input.remove_prefix(end + 1);
  }
  parts.emplace_back(input);
  parts.resize(count);
  return parts;
}

// A folder of its own for this process, removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nmt-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a scratch folder in the temporary directory");
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `content` to `name` (a path relative to the folder) and returns the file's path.
  std::string write(const std::string& name, std::string_view content) const {
    const std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file.string());
    return file.string();
  }

  // Removes everything in the folder, for the next input.
  void clear() const {
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      std::filesystem::remove_all(entry.path());
    }
  }

 private:
  std::filesystem::path path_;
};

// The one scratch folder of this process.
inline const ScratchDir& scratch() {
  static const ScratchDir dir;
  return dir;
}

// Logs off: a warning per bad input would cost more than the input.
inline void quiet_logs() {
  static const bool done = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)done;
}

// A finding that is no crash (a broken promise the harness checks): the message, then abort(),
// which libFuzzer and the replay driver both report as a failure with this input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

// The non-empty lines of `text` (--set overrides, one a line).
inline std::vector<std::string> nonempty_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// A finding unless `reload` (the YAML a valid config writes, loaded and written again) gives
// `written` back: a config writes what loads to the same config.
template <typename Reload>
void check_yaml_round_trip(const std::string& written, Reload reload) {
  std::string again;
  try {
    again = reload(written);
  } catch (const std::exception& e) {
    finding("a valid config writes YAML that does not load: " + std::string(e.what()) + "\n" +
            written);
  }
  if (again != written) {
    finding("a valid config changes through to_yaml and back:\n" + written + "\n" + again);
  }
}

}  // namespace nmt::fuzz
