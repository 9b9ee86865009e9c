// xml_escape (common/xml_text.h): what any byte string becomes in an SVG document.

#include "common/xml_text.h"

#include <gtest/gtest.h>

namespace nmt {
namespace {

TEST(XmlText, EscapesSpecialsAndReplacesWhatXmlCannotHold) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("tab\tnew\nline"), "tab\tnew\nline");
  EXPECT_EQ(xml_escape("esc\x1b[2J\x7f"), "esc\xEF\xBF\xBD[2J\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape("bad \xff\xc3 end"), "bad \xEF\xBF\xBD\xEF\xBF\xBD end");
  EXPECT_EQ(xml_escape("non\xEF\xBF\xBE"
                       "char"),
            "non\xEF\xBF\xBD"
            "char");
  EXPECT_EQ(xml_escape("Grüße, 日本, 🙂"), "Grüße, 日本, 🙂");
  EXPECT_EQ(xml_escape(""), "");
}

}  // namespace
}  // namespace nmt
