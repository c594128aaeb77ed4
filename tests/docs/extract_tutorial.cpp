// SPDX-License-Identifier: MIT
// Turns docs/TUTORIAL.md into one C++ program whose every `## ` section is a test,
// so that every code block of the tutorial is compiled and run by the tests (the
// rules are written at the top of the tutorial):
//   ```cpp          statements, in order, inside the section's function
//   ```cpp global   declarations in the section's namespace, before that function
//   ```text         the output the section prints, in order
// Section N lives in namespace section_N; `tutorial_sections N` runs it, captures std::cout,
// and fails (exit 1, both texts shown) unless it printed exactly its ```text blocks.
// Other fences are prose. One program instead of one per section: each section would
// parse strata.hpp again (3 s) and link once more.
// Usage: extract_tutorial TUTORIAL.md OUT_FILE SECTIONS; writes OUT_FILE only where the
// content changed, and fails unless the file has exactly SECTIONS sections (CMake counts
// them when it configures).
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

// Section `number`'s namespace: its declarations, its statements in run(), its expected text.
std::string section_code(const Section& s, std::size_t number) {
  // A raw-string delimiter that the expected text cannot contain.
  std::string delim = "tutorial";
  while (s.expected.find(")" + delim + "\"") != std::string::npos) delim += "_";
  std::ostringstream p;
  p << "// Section \"" << s.title << "\" (line " << s.line << ")\n"
    << "namespace section_" << number << " {\n"
    << s.globals << "\nvoid run() {\n"
    << s.body << "}\n\n"
    << "const char* const expected = R\"" << delim << "(" << s.expected << ")" << delim
    << "\";\n}  // namespace section_" << number << "\n\n";
  return p.str();
}

// The program: every section, then a main that runs the one its argument names.
std::string program(const std::vector<Section>& sections, const std::string& source) {
  std::ostringstream p;
  p << "// Generated from " << source
    << " by tests/docs/extract_tutorial.cpp. Edit the tutorial, not this file.\n"
    << "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <iostream>\n"
    << "#include <map>\n#include <sstream>\n#include <string>\n#include <vector>\n\n"
    << "#include <strata.hpp>\n\nnamespace st = strata;\n\n";
  for (std::size_t i = 0; i < sections.size(); ++i) p << section_code(sections[i], i + 1);
  p << "struct Section {\n  void (*run)();\n  const char* expected;\n};\n"
    << "const Section sections[] = {\n";
  for (std::size_t i = 1; i <= sections.size(); ++i) {
    p << "    {section_" << i << "::run, section_" << i << "::expected},\n";
  }
  p << "};\n\n"
    << "int main(int argc, char** argv) {\n"
    << "  const int n = argc == 2 ? std::atoi(argv[1]) : 0;\n"
    << "  if (n < 1 || n > int(std::size(sections))) {\n"
    << "    std::cerr << \"usage: tutorial_sections SECTION (1 to \" << std::size(sections) << "
       "\")\\n\";\n"
    << "    return 2;\n  }\n"
    << "  const Section& s = sections[n - 1];\n"
    << "  std::ostringstream captured;\n"
    << "  std::streambuf* console = std::cout.rdbuf(captured.rdbuf());\n"
    << "  try {\n    s.run();\n  } catch (...) {\n"
    << "    std::cout.rdbuf(console);\n    std::cout << captured.str();\n    throw;\n  }\n"
    << "  std::cout.rdbuf(console);\n  std::cout << captured.str();\n"
    << "  if (captured.str() != s.expected) {\n"
    << "    std::cerr << \"\\nthe output differs from the tutorial's text blocks; expected:\\n\"\n"
    << "              << s.expected;\n    return 1;\n  }\n  return 0;\n}\n";
  return p.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) fail("extract_tutorial", "usage: extract_tutorial TUTORIAL.md OUT_FILE SECTIONS");
  const std::string source = argv[1], out_file = argv[2];
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
  }
  const std::string text = program(sections, source);
  if (read_file(out_file) != text) std::ofstream(out_file, std::ios::binary) << text;
  return 0;
}
