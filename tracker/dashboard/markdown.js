// A small, safe Markdown renderer for artifacts (the analysis report): headings, paragraphs,
// bullet and numbered lists, pipe tables, fenced code blocks, block quotes, rules, and inline
// code, strong and emphasised text and links. It builds DOM nodes and sets only textContent, so
// markup in the text (an <img onerror=...>) is shown as text, never parsed; links keep http(s)
// targets only (others stay plain text), and images are shown as links to their source.
"use strict";

window.nmt = window.nmt || {};

(function (nmt) {
  function node(tag, children) {
    const n = document.createElement(tag);
    for (const c of children || []) n.append(c);
    return n;
  }

  const INLINE = /`([^`]+)`|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s](?:[^*]*[^*\s])?)\*|(?<![\w])_([^_\s](?:[^_]*[^_\s])?)_(?![\w])|(!?)\[([^\]]*)\]\(\s*([^)\s]+)\s*\)/;

  function safeHref(url) {
    return /^https?:\/\//i.test(url) ? url : null;
  }

  // Inline markup of one line or paragraph, as a list of nodes and strings.
  function inline(text) {
    const out = [];
    let rest = text;
    for (let m = INLINE.exec(rest); m; m = INLINE.exec(rest)) {
      if (m.index > 0) out.push(rest.slice(0, m.index));
      if (m[1] !== undefined) out.push(node("code", [m[1]]));
      else if (m[2] !== undefined || m[3] !== undefined) out.push(node("strong", inline(m[2] ?? m[3])));
      else if (m[4] !== undefined || m[5] !== undefined) out.push(node("em", inline(m[4] ?? m[5])));
      else {
        const href = safeHref(m[8]);
        const label = m[6] === "!" ? `image: ${m[7] || m[8]}` : m[7];
        if (href) {
          const a = node("a", m[6] === "!" ? [label] : inline(label));
          a.href = href;
          a.rel = "noopener noreferrer";
          a.target = "_blank";
          out.push(a);
        } else {
          out.push(m[6] === "!" ? label : m[0]);
        }
      }
      rest = rest.slice(m.index + m[0].length);
    }
    if (rest) out.push(rest);
    return out;
  }

  const isRule = (line) => /^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line);
  const isFence = (line) => /^\s{0,3}(```|~~~)/.test(line);
  const heading = (line) => /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
  const listItem = (line) => /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
  const isTableRow = (line) => /^\s*\|.*\|\s*$/.test(line);
  const isTableRule = (line) => /^\s*\|?(\s*:?-+:?\s*\|)+(\s*:?-+:?\s*)?\|?\s*$/.test(line);

  function cells(line) {
    return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  }

  function table(lines) {
    const head = cells(lines[0]);
    const aligns = cells(lines[1]).map((c) =>
      (c.endsWith(":") ? (c.startsWith(":") ? "center" : "right") : "left"));
    const row = (tag, values) => node("tr", values.map((v, i) => {
      const cell = node(tag, inline(v));
      cell.style.textAlign = aligns[i] || "left";
      return cell;
    }));
    return node("table", [node("thead", [row("th", head)]),
      node("tbody", lines.slice(2).map((l) => row("td", cells(l))))]);
  }

  // Block structure, line by line; anything not recognised joins the current paragraph.
  function blocks(lines) {
    const out = [];
    let i = 0;
    const paragraphEnds = (line) => line.trim() === "" || isFence(line) || heading(line) ||
      isRule(line) || listItem(line) || /^\s*>/.test(line) || isTableRow(line);
    while (i < lines.length) {
      const line = lines[i];
      if (line.trim() === "") {
        i += 1;
      } else if (isFence(line)) {
        const fence = line.trim().slice(0, 3);
        const code = [];
        for (i += 1; i < lines.length && !lines[i].trim().startsWith(fence); i += 1) code.push(lines[i]);
        i += 1;
        out.push(node("pre", [node("code", [code.join("\n")])]));
      } else if (heading(line)) {
        const m = heading(line);
        out.push(node("h" + m[1].length, inline(m[2])));
        i += 1;
      } else if (isRule(line)) {
        out.push(node("hr"));
        i += 1;
      } else if (isTableRow(line) && i + 1 < lines.length && isTableRule(lines[i + 1])) {
        const rows = [];
        for (; i < lines.length && isTableRow(lines[i]); i += 1) rows.push(lines[i]);
        out.push(table(rows));
      } else if (/^\s*>/.test(line)) {
        const quoted = [];
        for (; i < lines.length && /^\s*>/.test(lines[i]); i += 1) quoted.push(lines[i].replace(/^\s*>\s?/, ""));
        out.push(node("blockquote", blocks(quoted)));
      } else if (listItem(line)) {
        const ordered = /\d/.test(listItem(line)[1]);
        const items = [];
        for (; i < lines.length; i += 1) {
          const m = listItem(lines[i]);
          if (m && /\d/.test(m[1]) === ordered) items.push([m[2]]);
          else if (m || lines[i].trim() === "" || !/^\s/.test(lines[i])) break;
          else items[items.length - 1].push(lines[i].trim()); // a continuation line
        }
        out.push(node(ordered ? "ol" : "ul", items.map((parts) => node("li", inline(parts.join(" "))))));
      } else {
        const text = [];
        for (; i < lines.length && (text.length === 0 || !paragraphEnds(lines[i])); i += 1) text.push(lines[i].trim());
        out.push(node("p", inline(text.join(" "))));
      }
    }
    return out;
  }

  // A <div class="markdown"> holding `text` rendered.
  nmt.renderMarkdown = function (text) {
    const box = node("div", blocks(String(text).replace(/\r\n?/g, "\n").split("\n")));
    box.className = "markdown";
    return box;
  };
})(window.nmt);
