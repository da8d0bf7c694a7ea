import { afterEach, describe, expect, it } from "vitest";
import { formatDuration, formatTable } from "../../src/tools/cli/output.js";
import { maskUrl, redisUrl, scrub, urlSecrets } from "../../src/tools/cli/redis-url.js";
import { command, commandSpec, integer, parse } from "../../src/tools/cli/command.js";
import { UsageError } from "../../src/tools/cli/errors.js";
import { parseAt, parseRetry, parseRubyJson } from "../../src/tools/cli/enqueue-command.js";
import { RubyFloat, toRubyJson } from "../../src/core/wire/ruby-json.js";

describe("URL masking", () => {
  it("hides the whole userinfo, keeps host, port and database", () => {
    expect(maskUrl("redis://user:s3cret@host:6380/2")).toBe("redis://***@host:6380/2");
    expect(maskUrl("rediss://:s3cret@host")).toBe("rediss://***@host");
    expect(maskUrl("redis://host:6379/0")).toBe("redis://host:6379/0");
  });
  it("also hides passwords that break URL syntax (raw /, #, @)", () => {
    expect(maskUrl("redis://u:pa/ss#w@rd@host:1/0")).toBe("redis://***@host:1/0");
    expect(maskUrl("u:secret@host")).toBe("***@host");
  });
  it("scrubs the URL and its password (raw and decoded) from any message", () => {
    const url = "redis://u:p%40ssword@h:1/0";
    expect(urlSecrets(url)).toEqual(expect.arrayContaining(["p%40ssword", "p@ssword"]));
    const msg = scrub(`failed on ${url}: bad p@ssword and p%40ssword`, url);
    expect(msg).not.toMatch(/ssword/);
    expect(msg).toContain("redis://***@h:1/0");
  });
});

describe("Redis URL flag", () => {
  const saved = process.env.REDIS_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.REDIS_URL;
    else process.env.REDIS_URL = saved;
  });
  it("takes --redis, else REDIS_URL, else redis://127.0.0.1:6379/0", () => {
    process.env.REDIS_URL = "redis://env:6379/1";
    expect(redisUrl("redis://flag/2")).toBe("redis://flag/2");
    expect(redisUrl(undefined)).toBe("redis://env:6379/1");
    delete process.env.REDIS_URL;
    expect(redisUrl(undefined)).toBe("redis://127.0.0.1:6379/0");
  });
  it("refuses other schemes and malformed URLs without showing the password", () => {
    for (const bad of ["http://u:topsecret@h", "redis://u:top/secret@h", "redis://u:topsecret@h/notadb"]) {
      let err: unknown;
      try {
        redisUrl(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).not.toContain("secret");
    }
  });
});

describe("flags", () => {
  const spec = commandSpec({
    name: "t",
    summary: "a test command",
    usage: "[list|show] [NAME] [options]",
    actions: { list: "every one", show: "one" },
    flags: {
      limit: { short: "l", value: "N", help: "at most N\n(default 25)", parse: integer(1), default: 25 },
      tag: { value: "T", help: "a tag (repeatable)", multiple: true },
      gem: {
        value: "GEM",
        help: "an add-on's flag",
        parse: (v: string) => {
          if (v !== "8") throw new Error(`--gem must be 8, got "${v}"`);
          return { gem: 8 };
        },
      },
    },
    json: true,
    positionals: 1,
    run: async () => 0,
  });

  it("turn parseArgs errors into usage errors", () => {
    expect(() => parse(spec, ["--nope"])).toThrow(UsageError);
    expect(() => parse(spec, ["list", "x", "y"])).toThrow('unexpected argument "y"');
    expect(parse(spec, ["--json", "show", "x"])).toMatchObject({
      values: { json: true },
      action: "show",
      positionals: ["x"],
    });
  });

  it("check each value with its flag's parser, default what is not given, and check the action", () => {
    expect(parse(spec, [])).toMatchObject({ values: { limit: 25, tag: [], json: false }, action: "list" });
    expect(parse(spec, ["show", "a", "-l", "3", "--tag", "x", "--tag=y", "--gem", "8"])).toMatchObject({
      values: { limit: 3, tag: ["x", "y"], gem: { gem: 8 } },
      action: "show",
      positionals: ["a"],
    });
    expect(() => parse(spec, ["--limit", "0"])).toThrow(new UsageError('--limit must be an integer >= 1, got "0"'));
    // A parser's own error (an add-on's flag) is a usage error too.
    expect(() => parse(spec, ["--gem", "7"])).toThrow(new UsageError('--gem must be 8, got "7"'));
    expect(() => parse(spec, ["frob"])).toThrow(new UsageError('unknown action "frob" for t: use list or show'));
  });

  it("write the help in one layout, the shared flags once", () => {
    const { help } = command(spec);
    expect(help).toMatch(
      /^Usage: sidekiq-bridge t \[list\|show\] \[NAME\] \[options\]\n\nActions:\n {2}list {10}every one\n/,
    );
    expect(help).toContain("  -l, --limit N               at most N\n                              (default 25)\n");
    for (const flag of ["--redis URL", "--json", "--network-timeout S", "-h, --help", "--version"])
      expect(help.split(flag)).toHaveLength(2);
  });
});

describe("enqueue arguments", () => {
  it("keep Ruby's types: float lexemes stay Floats, big integers exact", () => {
    const v = parseRubyJson('[1, 1.0, 2.5e3, 123456789012345678901234, {"a": null, "b": [true, "é"]}]');
    expect(toRubyJson(v)).toBe('[1,1.0,2500.0,123456789012345678901234,{"a":null,"b":[true,"é"]}]');
    expect((v as unknown[])[1]).toBeInstanceOf(RubyFloat);
  });
  it("are safe with a __proto__ key and reject invalid JSON", () => {
    expect(toRubyJson(parseRubyJson('[{"__proto__": 1}]'))).toBe('[{"__proto__":1}]');
    expect(() => parseRubyJson("[1,")).toThrow();
  });
  it("--at takes epoch seconds or ISO 8601, --retry true/false/N", () => {
    expect(parseAt("1795303600.5")).toBe(1795303600.5);
    expect(parseAt("2026-11-21T00:00:00Z")).toBe(Date.UTC(2026, 10, 21) / 1000);
    expect(() => parseAt("soon")).toThrow(UsageError);
    expect(parseRetry("false")).toBe(false);
    expect(parseRetry("5")).toBe(5);
    expect(() => parseRetry("maybe")).toThrow(UsageError);
  });
});

describe("human output", () => {
  it("aligns table columns (numbers right)", () => {
    expect(
      formatTable(
        ["NAME", "SIZE"],
        [
          ["default", "5"],
          ["critical", "120"],
        ],
        new Set([1]),
      ),
    ).toBe("NAME      SIZE\ndefault      5\ncritical   120");
  });
  it("formats durations", () => {
    expect(formatDuration(0.5)).toBe("0.50s");
    expect(formatDuration(42)).toBe("42s");
    expect(formatDuration(303)).toBe("5m 03s");
    expect(formatDuration(2 * 3600 + 7 * 60)).toBe("2h 07m");
    expect(formatDuration(-1.7e12)).toMatch(/^-\d+d/);
  });
});
