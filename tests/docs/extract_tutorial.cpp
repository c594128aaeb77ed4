// SPDX-License-Identifier: MIT
// Turns docs/TUTORIAL.md into one C++ program per `## ` section, so that every
// code block of the tutorial is compiled and run by the tests (the rules are
// written at the top of the tutorial):
//   ```cpp          statements, in order, inside the section's main
//   ```cpp global   declarations at file scope, before main
//   ```text         the output the section prints, in order
// The generated main captures std::cout and fails (exit 1, both texts shown)
// unless the section printed exactly its ```text blocks. Other fences are prose.
// Usage: extract_tutorial TUTORIAL.md OUT_DIR SECTIONS; writes OUT_DIR/section_NN.cpp
// (NN from 01) only where the content changed, and fails unless the file has
// exactly SECTIONS sections (CMake counts them when it configures).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Section {
  std::string title;
  int line = 0;
  std::string globals, body, expected;
  int blocks = 0;
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  std::cerr << where << ": " << what << "\n";
  std::exit(1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string program(const Section& s, const std::string& source) {
  // A raw-string delimiter that the expected text cannot contain.
  std::string delim = "tutorial";
  while (s.expected.find(")" + delim + "\"") != std::string::npos) delim += "_";
  std::ostringstream p;
  p << "// Generated from " << source << ", section \"" << s.title << "\" (line " << s.line
    << ") by tests/docs/extract_tutorial.cpp. Edit the tutorial, not this file.\n"
    << "#include <cstdint>\n#include <cstdio>\n#include <iostream>\n#include <map>\n"
    << "#include <sstream>\n#include <string>\n#include <vector>\n\n#include <strata.hpp>\n\n"
    << "namespace st = strata;\n\n"
    << s.globals << "\nstatic void tutorial_section() {\n"
    << s.body << "}\n\n"
    << "int main() {\n"
    << "  std::ostringstream captured;\n"
    << "  std::streambuf* console = std::cout.rdbuf(captured.rdbuf());\n"
    << "  try {\n    tutorial_section();\n  } catch (...) {\n"
    << "    std::cout.rdbuf(console);\n    std::cout << captured.str();\n    throw;\n  }\n"
    << "  std::cout.rdbuf(console);\n  std::cout << captured.str();\n"
    << "  const std::string expected = R\"" << delim << "(" << s.expected << ")" << delim << "\";\n"
    << "  if (captured.str() != expected) {\n"
    << "    std::cerr << \"\\nthe output differs from the tutorial's text blocks; expected:\\n\"\n"
    << "              << expected;\n    return 1;\n  }\n  return 0;\n}\n";
  return p.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) fail("extract_tutorial", "usage: extract_tutorial TUTORIAL.md OUT_DIR SECTIONS");
  const std::string source = argv[1], out_dir = argv[2];
  const int want = std::stoi(argv[3]);
  std::istringstream in(read_file(source));
  std::vector<Section> sections;
  std::string line, kind;  // kind: the open fence's info string ("" when outside a fence)
  bool in_fence = false;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string where = source + ":" + std::to_string(n);
    if (!in_fence && line.rfind("## ", 0) == 0) {
      sections.push_back({line.substr(3), n, "", "", "", 0});
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      if (!in_fence) {
        in_fence = true;
        kind = line.substr(3);
        if ((kind == "cpp" || kind == "cpp global" || kind == "text") && sections.empty()) {
          fail(where, "a " + kind + " block before the first `## ` section");
        }
        if (kind.rfind("cpp", 0) == 0 && kind != "cpp" && kind != "cpp global") {
          fail(where, "unknown block kind '" + kind + "' (cpp or cpp global)");
        }
        if (kind == "cpp" || kind == "cpp global") ++sections.back().blocks;
        if (kind == "cpp")
          sections.back().body += "#line " + std::to_string(n + 1) + " \"" + source + "\"\n";
        if (kind == "cpp global")
          sections.back().globals += "#line " + std::to_string(n + 1) + " \"" + source + "\"\n";
      } else if (line == "```") {
        in_fence = false;
      } else {
        fail(where, "a fence opens inside a fence");
      }
      continue;
    }
    if (!in_fence) continue;
    if (kind == "cpp") sections.back().body += "  " + line + "\n";
    if (kind == "cpp global") sections.back().globals += line + "\n";
    if (kind == "text") sections.back().expected += line + "\n";
  }
  if (in_fence) fail(source, "the last fence is not closed");
  if (int(sections.size()) != want) {
    fail(source, std::to_string(sections.size()) + " sections, but CMake counted " +
                     std::to_string(want) + ": re-run cmake");
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].blocks == 0) {
      fail(source + ":" + std::to_string(sections[i].line), "section without a cpp block");
    }
    char name[48];
    std::snprintf(name, sizeof name, "/section_%02zu.cpp", i + 1);
    const std::string path = out_dir + name, text = program(sections[i], source);
    if (read_file(path) != text) std::ofstream(path, std::ios::binary) << text;
  }
  return 0;
}
