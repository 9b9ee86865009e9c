#include "common/config_reference.h"

#include <fmt/format.h>

namespace nmt {
namespace {

// A table cell: Markdown reads '|' as the cell's end.
std::string cell(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

void render_section(const SectionDoc& section, std::string& out) {
  if (!section.path.empty()) out += "### " + section.path + "\n\n";
  if (!section.about.empty()) out += section.about + "\n\n";
  out += "| key | type | default | paper | description |\n";
  out += "| --- | --- | --- | --- | --- |\n";
  for (const auto& f : section.fields) {
    const std::string type = f.empty ? f.type + " (`\"\"`: " + *f.empty + ")" : f.type;
    out += fmt::format("| `{}` | {} | `{}` | {} | {} |\n", f.key, cell(type), cell(f.default_value),
                       cell(f.paper), cell(f.description));
  }
  out += "\n";
}

}  // namespace

std::string render_config_reference(const ConfigReference& reference) {
  std::string out = "## " + reference.title + "\n\n";
  if (!reference.about.empty()) out += reference.about + "\n\n";
  for (const auto& section : reference.sections) {
    if (!section.fields.empty()) render_section(section, out);
  }
  return out;
}

}  // namespace nmt
