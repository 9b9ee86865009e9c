// Numbers as a researcher reads them: the shortest decimal that survives six significant digits
// (1e-5, not 1.0000000000000001e-05), exponents for small and large values (5e-4, 3.5e-3: never
// SI prefixes such as "500µ" or "3.5m", which read as units), SI prefixes only for counts
// (25k tokens/s, 1.2M steps).
"use strict";

window.nmt = window.nmt || {};

(function (nmt) {
  // The shortest text of `v` rounded to `digits` significant digits.
  function shortest(v, digits) {
    return String(Number(v.toPrecision(digits)));
  }

  // "3.5e-3" for 0.0035 (JavaScript's "3.5e-3" form; toExponential() is shortest already).
  function exponent(v, digits) {
    return Number(v.toPrecision(digits)).toExponential().replace("e+", "e");
  }

  // A value in a table or read-out: integers whole (thousands separated from 1e5), other numbers
  // to six significant digits, exponents below 1e-3 and from 1e6.
  nmt.fmtNumber = function (v) {
    if (!Number.isFinite(v)) return String(v);
    if (Number.isInteger(v)) return Math.abs(v) >= 1e5 ? v.toLocaleString("en-US") : String(v);
    const a = Math.abs(v);
    return a < 1e-3 || a >= 1e6 ? exponent(v, 6) : shortest(v, 6);
  };

  const SI = [
    [1e12, "T"],
    [1e9, "G"],
    [1e6, "M"],
    [1e3, "k"],
  ];

  // A count: 950, 25k, 1.2M.
  nmt.fmtCount = function (v) {
    const a = Math.abs(v);
    for (const [size, prefix] of SI) {
      if (a >= size) return shortest(v / size, 4) + prefix;
    }
    return shortest(v, 4);
  };

  // An axis tick of a measured value: counts (|v| >= 1e4) with SI prefixes, small values
  // (|v| < 1e-2) as exponents, the rest as short decimals.
  nmt.fmtAxis = function (v) {
    if (!Number.isFinite(v)) return String(v);
    const a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1e4) return nmt.fmtCount(v);
    if (a < 1e-2) return exponent(v, 3);
    return shortest(v, 4);
  };
})(window.nmt);
