// Ruby's Time and DateTime as ActiveJob writes them (`iso8601(9)`): nanoseconds,
// years as Ruby spells them ("0000", "-0001", "10000"), the offset in hours and
// minutes, and DateTime's Julian calendar before 1582-10-15.

/** An instant: a Date (milliseconds) or a bigint of nanoseconds since the epoch (Ruby's Time keeps nanoseconds). */
export type AjInstant = Date | bigint;

/** An instant as whole epoch seconds and the nanoseconds past them. */
export function splitInstant(t: AjInstant): [seconds: number, nanos: number] {
  if (typeof t === "bigint") {
    const s = t / 1_000_000_000n - (t % 1_000_000_000n < 0n ? 1n : 0n);
    return [Number(s), Number(t - s * 1_000_000_000n)];
  }
  const ms = t.getTime();
  if (!Number.isFinite(ms)) throw new RangeError("Invalid Date cannot be serialized for ActiveJob");
  const s = Math.floor(ms / 1000);
  return [s, (ms - s * 1000) * 1_000_000];
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * Ruby's `iso8601(9)` of an instant at a UTC offset in seconds: the wall time
 * there, and the offset as `formatted_offset` writes it (hours and minutes,
 * seconds dropped), or "Z" when `offset` is "Z". Years as Ruby writes them:
 * "0000", "-0001", "10000".
 */
export function rubyIso8601(t: AjInstant, offset: number | "Z", calendar: "gregorian" | "date" = "gregorian"): string {
  const [seconds, nanos] = splitInstant(t);
  const shift = offset === "Z" ? 0 : offset;
  const wall = new Date((seconds + shift) * 1000);
  if (!Number.isFinite(wall.getTime())) throw new RangeError(`${String(t)} is beyond JavaScript's dates`);
  const jdn = Math.floor((seconds + shift) / 86400) + 2440588;
  const [y, m, d] =
    calendar === "date" && jdn < GREGORIAN_REFORM
      ? julianDate(jdn)
      : [wall.getUTCFullYear(), wall.getUTCMonth() + 1, wall.getUTCDate()];
  const date = `${y < 0 ? `-${pad(-y, 4)}` : pad(y, 4)}-${pad(m)}-${pad(d)}`;
  const time = `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}.${pad(nanos, 9)}`;
  if (offset === "Z") return `${date}T${time}Z`;
  const abs = Math.abs(offset);
  return `${date}T${time}${offset < 0 ? "-" : "+"}${pad(Math.floor(abs / 3600))}:${pad(Math.floor((abs % 3600) / 60))}`;
}

/** Date::ITALY, the day (a Julian Day Number) Ruby's Date and DateTime switch from the Julian calendar to the Gregorian. */
const GREGORIAN_REFORM = 2299161;

/** The Julian calendar's year, month and day of a Julian Day Number (as DateTime writes days before 1582-10-15). */
function julianDate(jdn: number): [number, number, number] {
  const c = jdn + 32082;
  const d = Math.floor((4 * c + 3) / 1461);
  const e = c - Math.floor((1461 * d) / 4);
  const m = Math.floor((5 * e + 2) / 153);
  return [d - 4800 + Math.floor(m / 10), m + 3 - 12 * Math.floor(m / 10), e - Math.floor((153 * m + 2) / 5) + 1];
}
