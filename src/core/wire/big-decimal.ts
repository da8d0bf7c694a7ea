// Ruby's BigDecimal as Rails writes it: the strings `BigDecimal()` accepts
// (bigdecimal 3.1's strict VpAlloc) and ActiveSupport's `BigDecimal#to_s`, the
// "F" form: "12.50" is written "12.5", "1e3" "1000.0", "-0" "-0.0". Both
// checked against Ruby by interop-tests/rails-values.test.ts.

/** Ruby's ISSPACE: the blanks `BigDecimal()` skips before and after a number. */
const SPACE = "[ \\t\\n\\v\\f\\r]*";
const SPECIAL = new RegExp(`^${SPACE}(Infinity|\\+Infinity|-Infinity|NaN)${SPACE}$`);
// Digits joined by single underscores; the integer part alone may end in one
// underscore, when only blanks follow ("1_" is 1, "1_.5" and "1.5_" are refused).
const NUMBER = new RegExp(
  `^${SPACE}([+-]?)(?:(\\d+(?:_\\d+)*)(?:_(?=${SPACE}$))?)?(?:\\.(\\d+(?:_\\d+)*))?(?:[eEdD]([+-]?\\d+(?:_\\d+)*))?${SPACE}$`,
);

/** Beyond this many digits of exponent Ruby writes strings of gigabytes (or runs out of memory): refused. */
export const BIG_DECIMAL_MAX_EXPONENT = 1_000_000;

/** Why `bigDecimalString` refused a string. */
export type BigDecimalRefusal = "invalid" | "too large";

/**
 * `BigDecimal(s).to_s` under ActiveSupport (format "F"), or why not: "invalid"
 * where `BigDecimal()` raises ArgumentError, "too large" for a non-zero value
 * whose exponent passes BIG_DECIMAL_MAX_EXPONENT.
 */
export function bigDecimalString(s: string): string | BigDecimalRefusal {
  const special = SPECIAL.exec(s);
  if (special) return special[1] === "+Infinity" ? "Infinity" : special[1]!;
  const m = NUMBER.exec(s);
  // "." alone, "1." and "e5" have no digits where Ruby needs them.
  if (!m || (m[2] === undefined && m[3] === undefined)) return "invalid";
  const negative = m[1] === "-";
  const int = (m[2] ?? "").replaceAll("_", "");
  const frac = (m[3] ?? "").replaceAll("_", "");
  const all = int + frac;
  const first = all.search(/[1-9]/);
  if (first < 0) return negative ? "-0.0" : "0.0";
  const digits = all.slice(first).replace(/0+$/, "");
  // The value is 0.DIGITS * 10**point (BigDecimal's own exponent).
  const exp = m[4] === undefined ? 0 : Number(m[4].replaceAll("_", ""));
  const point = int.length - first + exp;
  if (!Number.isSafeInteger(exp) || Math.abs(point) > BIG_DECIMAL_MAX_EXPONENT) return "too large";
  const sign = negative ? "-" : "";
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
