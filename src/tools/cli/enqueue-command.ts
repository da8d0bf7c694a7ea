// `sidekiq-bridge enqueue`: push one job, as `Sidekiq::Client.push` from Ruby
// would (Client.push: normalize, client middleware none, strict args, the
// fleet's dialect).
import { SidekiqArgumentError } from "../../core/client/errors.js";
import type { PushItem } from "../../core/client/normalize.js";
import { parseJson, WireParseError } from "../../core/wire/json-scan.js";
import { RubyFloat, type RubyJsonValue } from "../../core/wire/ruby-json.js";
import { UsageError } from "./errors.js";
import { command } from "./command.js";
import { isoSeconds, printJson } from "./output.js";
import { pushFlags, withApi, withClient } from "./connect.js";

/**
 * Parses JSON the way Ruby's JSON.parse types it: float lexemes become
 * RubyFloat (so `1.0` stays a Float), integers beyond 2^53 bigint, objects keep
 * their keys (in a null-prototype object).
 */
export function parseRubyJson(text: string): RubyJsonValue {
  parseJson(text); // validates, with a position on error
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const STRING = /"(?:[^"\\]|\\.)*"/y;
  const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const str = (): string => {
    STRING.lastIndex = i;
    const m = STRING.exec(text)!;
    i += m[0].length;
    return JSON.parse(m[0]) as string;
  };
  const value = (): RubyJsonValue => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const o = Object.create(null) as { [k: string]: RubyJsonValue };
      ws();
      if (text[i] === "}") return (i++, o);
      for (;;) {
        ws();
        const k = str();
        ws();
        i++; // ':'
        o[k] = value();
        ws();
        if (text[i++] === "}") return o;
      }
    }
    if (c === "[") {
      i++;
      const a: RubyJsonValue[] = [];
      ws();
      if (text[i] === "]") return (i++, a);
      for (;;) {
        a.push(value());
        ws();
        if (text[i++] === "]") return a;
      }
    }
    if (c === '"') return str();
    for (const [word, v] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (text.startsWith(word, i)) return ((i += word.length), v);
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text)!;
    i += m[0].length;
    if (m[1] !== undefined || m[2] !== undefined) return new RubyFloat(Number(m[0]));
    const n = Number(m[0]);
    return Number.isSafeInteger(n) ? n : BigInt(m[0]);
  };
  return value();
}

/** --at: epoch seconds, or a date Date.parse understands. */
export function parseAt(v: string): number {
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new UsageError(`--at must be epoch seconds or an ISO 8601 time, got "${v}"`);
  return t / 1000;
}

/** --in: a number of seconds. */
function parseIn(v: string): number {
  const s = Number(v);
  if (v.trim() === "" || !Number.isFinite(s)) throw new UsageError(`--in must be a number of seconds, got "${v}"`);
  return s;
}

export function parseRetry(v: string): boolean | number {
  if (v === "true") return true;
  if (v === "false") return false;
  if (/^\d+$/.test(v)) return Number(v);
  throw new UsageError(`--retry must be true, false or a number, got "${v}"`);
}

export const { summary, help, run } = command({
  name: "enqueue",
  summary: "push a job for Ruby (or Node) workers",
  usage: "CLASS [ARGS_JSON] [options]",
  about: `Pushes one job, as Sidekiq::Client.push does: CLASS is the job class name
("HardJob", "Billing::InvoiceJob"), ARGS_JSON a JSON array of its arguments
(default []). Integers beyond 2^53 and float lexemes such as 1.0 reach Ruby as
written.`,
  flags: {
    queue: { short: "q", value: "NAME", help: "queue (default: default)", default: "default" },
    at: { value: "TIME", help: "run at TIME: epoch seconds or an ISO 8601 date (past: now)", parse: parseAt },
    in: { value: "SECONDS", help: "run in SECONDS from now", parse: parseIn },
    retry: { value: "VALUE", help: "true, false or a number of retries (default: true)", parse: parseRetry },
    ...pushFlags(),
  },
  json: true,
  positionals: Infinity,
  footer: `Example:
  sidekiq-bridge enqueue HardJob '[42, "hello"]' --queue critical --in 60`,
  async run({ values, positionals, setUrl }) {
    const [klass, argsText, ...extra] = positionals;
    if (klass === undefined || klass === "")
      throw new UsageError("a job class is required, e.g. sidekiq-bridge enqueue HardJob '[1, 2]'");
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" (quote ARGS_JSON as one argument)`);
    let args: RubyJsonValue = [];
    if (argsText !== undefined) {
      try {
        args = parseRubyJson(argsText);
      } catch (e) {
        throw new UsageError(`ARGS_JSON is not valid JSON: ${e instanceof WireParseError ? e.message : String(e)}`);
      }
      if (!Array.isArray(args))
        throw new UsageError(`ARGS_JSON must be a JSON array of arguments, e.g. '[1, "a"]', got ${argsText}`);
    }
    if (values.at !== undefined && values.in !== undefined) throw new UsageError("give --at or --in, not both");
    const now = Date.now() / 1000;
    let at = values.at ?? (values.in !== undefined ? now + values.in : undefined);
    if (at !== undefined && at <= now) at = undefined; // Ruby's perform_at: a past time means now
    const item: PushItem = { class: klass, args: args as RubyJsonValue[], queue: values.queue };
    if (values.retry !== undefined) item.retry = values.retry;
    if (at !== undefined) item.at = at;
    return withApi(values.redis, setUrl, {}, (api) =>
      withClient(api.redis, values, async (client) => {
        const jid = await client.push(item).catch((e: unknown) => {
          throw e instanceof SidekiqArgumentError ? new UsageError(e.message) : e;
        });
        const profile = await client.profile(item.queue);
        if (values.json) {
          printJson({ jid, class: klass, queue: item.queue!, at: at ?? null, dialect: profile.version });
        } else if (at !== undefined) {
          console.log(`Scheduled ${klass} ${jid} for queue ${item.queue} at ${isoSeconds(at)}`);
        } else {
          console.log(`Enqueued ${klass} ${jid} to queue ${item.queue}`);
        }
        return 0;
      }),
    );
  },
});
