// `error_backtrace`: JSON.generate(lines) -> zlib deflate -> base64.
// Before 7.2.1 Ruby used Base64.encode64 (a newline every 60 chars and one at
// the end); from 7.2.1 strict base64. Every reader accepts both.
import { deflateSync, inflateSync } from "node:zlib";
import { parseJson } from "./json-scan.js";
import { toRubyJson } from "./ruby-json.js";
import { profileFor, type DialectLike } from "./dialect.js";

/** Encodes backtrace lines as the dialect's `error_backtrace` (base64 of zlib-compressed JSON). */
export function encodeBacktrace(lines: readonly string[], profile: DialectLike): string {
  const b64 = deflateSync(Buffer.from(toRubyJson([...lines]), "utf8")).toString("base64");
  if (profileFor(profile).backtraceBase64 === "strict") return b64;
  return (b64.match(/.{1,60}/g) ?? []).map((l) => `${l}\n`).join("");
}

/** An `error_backtrace` that is not what Sidekiq writes (base64 of zlib of JSON). */
export class BacktraceDecodeError extends Error {
  override name = "BacktraceDecodeError";
}

/** Decodes any encoding Sidekiq 6.0.2+ writes, plus 6.0.0's plain array. */
export function decodeBacktrace(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== "string") throw new BacktraceDecodeError("error_backtrace is neither a string nor an array");
  let text: string;
  try {
    text = inflateSync(Buffer.from(value.replace(/\s+/g, ""), "base64")).toString("utf8");
  } catch (e) {
    throw new BacktraceDecodeError(
      `error_backtrace is not zlib+base64 (${(e as Error).message}); Marshal-encoded backtraces from 6.0.1 cannot be read outside Ruby`,
    );
  }
  const lines = parseJson(text);
  if (!Array.isArray(lines)) throw new BacktraceDecodeError("error_backtrace does not hold a JSON array");
  return lines.map(String);
}
