// Hostile text for the input fuzzers (the dashboard's and the CLI's): markup,
// numbers out of range, broken escapes, control and astral characters, path
// tricks, glob and Lua pattern characters, and a long string.

/** Text that must never come back as markup. */
export const PROBE = "<fz-x>";

export const HOSTILE_TEXT: readonly string[] = [
  PROBE,
  "-1",
  "0",
  "1e309",
  "NaN",
  "99999999999999999999999",
  "%zz",
  "\u0000",
  "日本😀",
  "\u2028",
  "../../etc",
  "",
  " ",
  "*",
  "[",
  "\\",
  "x".repeat(5000),
];
