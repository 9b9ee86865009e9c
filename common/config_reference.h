#pragma once
// A config's reference: every key with its type, default, the paper's value and what it does, as
// the field lists of common/config_fields.h document them; rendered into docs/config.md by
// nmt-config-doc.

#include <optional>
#include <string>
#include <vector>

namespace nmt {

struct FieldDoc {
  std::string key;
  std::string type;  // integer, number, boolean, string, non-empty string, enum: a, b, list of ...
  std::string default_value;  // as YAML reads it
  std::string paper;          // empty where the paper has no such setting
  std::string description;
  // What the empty string means, for a string key that takes it; no key takes a YAML null.
  std::optional<std::string> empty;
};

struct SectionDoc {
  std::string path;  // dotted ("model", "corpora.train[]"); empty: the top level
  std::string about;
  std::vector<FieldDoc> fields;
};

// One tool's config: its sections in the order of the field lists.
struct ConfigReference {
  std::string title;
  std::string about;
  std::vector<SectionDoc> sections;
};

// Markdown: a "##" heading with the title, then a table per section
// (key | type | default | paper | description) under a "###" heading naming its dotted path. The
// type of a string key that takes "" says what "" means: string (`""`: no validation).
std::string render_config_reference(const ConfigReference& reference);

}  // namespace nmt
