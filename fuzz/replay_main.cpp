// The fuzz harnesses as plain executables: main() hands every file of the folders (or the files)
// named on the command line to LLVMFuzzerTestOneInput, as libFuzzer would. CTest runs each harness
// so over its seed corpus and its regression inputs (fuzz/CMakeLists.txt), in every build.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

void run_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, so that AddressSanitizer sees a read past its end.
  const std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(input.data(), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "Usage: " << argv[0] << " FOLDER_OR_FILE...\n"
              << "Runs the fuzz harness once on every file named, or in the folders named.\n";
    return 2;
  }
  std::size_t inputs = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      const fs::path path = argv[i];
      // A harness without regression inputs has no folder for them: nothing to replay there.
      if (!fs::exists(path)) continue;
      if (!fs::is_directory(path)) {
        run_file(path);
        ++inputs;
        continue;
      }
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& file : files) {
        std::cout << "replay: " << file.string() << std::endl;
        run_file(file);
        ++inputs;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "replay: " << e.what() << "\n";
    return 1;
  }
  std::cout << "replay: " << inputs << " inputs, no finding\n";
  return 0;
}
