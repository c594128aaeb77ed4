// SPDX-License-Identifier: MIT
#pragma once
/// Test support: the suites' data files, scratch directories and whole-file reads and
/// writes, for the tests that build files (valid and hostile) byte by byte.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

namespace strata::testing {

/// The source tree's tests/ folder, under which the suites' data files live (ad/data,
/// nn/data).
std::filesystem::path tests_dir();

/// A fresh empty directory under the system's temporary directory, unique
/// to this process and name; removed with its content when the process exits.
inline std::filesystem::path scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  // One registry per process, whose destructor (at exit) removes every directory made.
  struct Made {
    std::vector<fs::path> dirs;
    ~Made() {
      std::error_code ignored;
      for (const fs::path& d : dirs) fs::remove_all(d, ignored);
    }
  };
  static Made made;
  const fs::path d =
      fs::temp_directory_path() / ("strata_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  made.dirs.push_back(d);
  return d;
}

/// The whole content of a file.
inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Replaces a file's content by bytes.
inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

}  // namespace strata::testing
