// The one path of every `sidekiq-bridge` command, the add-ons' included. A
// command declares itself (name, summary, usage, flags, actions or
// subcommands) and this module does the rest the same way for all: parses
// argv (node:util parseArgs, strict), checks each value with its flag's
// parser, writes the help in one layout with the shared flags (--redis,
// --json, --network-timeout, --help, --version) spelled once, and reports a
// bad flag or value as `sidekiq-bridge <command>: <why>` with a pointer to
// --help and exit code 2 (errors.ts).
import { parseArgs } from "node:util";
import { permissionLine } from "../../core/redis/acl.js";
import { NETWORK_TIMEOUT_ENV } from "../../core/redis/network.js";
import { profileFor } from "../../core/wire/dialect.js";
import { UsageError } from "./errors.js";
import { DEFAULT_REDIS_URL, scrub } from "./redis-url.js";
import { cliVersion } from "./version.js";

/** One flag: a switch, or with `value` a flag that takes one (its placeholder in the help). */
export interface Flag<T = unknown> {
  /** The one-letter alias: "q" for -q. */
  readonly short?: string;
  /** The value's placeholder ("NAME"); without it the flag is a switch. */
  readonly value?: string;
  /** Its help; each further line after a "\n". */
  readonly help: string;
  /** Repeatable: the values in order (none given: an empty list). */
  readonly multiple?: boolean;
  /** Checks and converts a value; throws a UsageError that names `flag`. */
  readonly parse?: (value: string, flag: string) => T;
  readonly default?: T;
}

export type Flags = Readonly<Record<string, Flag>>;

type One<F> = F extends { parse: (v: string, f: string) => infer T }
  ? T
  : F extends { value: string }
    ? string
    : boolean;
type Value<F> = F extends { multiple: true }
  ? One<F>[]
  : F extends { default: unknown }
    ? One<F>
    : F extends { value: string }
      ? One<F> | undefined
      : boolean;

/** What a command's flags parse to, with the shared --redis and --json. */
export type Values<F extends Flags> = { -readonly [K in keyof F]: Value<F[K]> } & {
  redis: string | undefined;
  json: boolean;
};

/** What a command's body is handed. */
export interface Args<F extends Flags> {
  values: Values<F>;
  /** The action (a command with actions: the first positional, else its first action). */
  action: string;
  /** The positional arguments after the action. */
  positionals: string[];
  /** The arguments as given (the worker hands them on to its children). */
  argv: string[];
  /** Names the Redis URL in use, so that no message shows its password. */
  setUrl(url: string): void;
}

export interface CommandSpec<F extends Flags = Flags> {
  /** As typed after `sidekiq-bridge`: "stats", "migrate audit". */
  readonly name: string;
  /** Its line in `sidekiq-bridge --help`. */
  readonly summary: string;
  /** The usage lines, each after `sidekiq-bridge <name> `. */
  readonly usage: string | readonly string[];
  /** What it does, after the usage. */
  readonly about?: string;
  /** Its actions (the first positional) and their help; the first is the default. */
  readonly actions?: Readonly<Record<string, string>>;
  readonly flags?: F;
  /** Takes --redis (default: yes). */
  readonly redis?: boolean;
  /** Takes --json; a string is its help when it means more than one JSON document. */
  readonly json?: boolean | string;
  /** How many positional arguments it takes after the action (default none); more are refused. */
  readonly positionals?: number;
  /** Text after the options: exit codes, signals, examples. */
  readonly footer?: string;
  /**
   * "report" (default): a failure is one line, `sidekiq-bridge <name>: <why>`
   * with the Redis URL masked, exit 1. "throw": it goes to main, which prints
   * `sidekiq-bridge: <why>` (the worker's could-not-start line).
   */
  readonly failures?: "report" | "throw";
  run(args: Args<F>): Promise<number>;
}

/** A command of `sidekiq-bridge <name>` as main and the add-ons' entries hold it. */
export interface CommandModule {
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

/** The flags every command takes, or those that say so (--redis, --json). */
const SHARED = {
  redis: { value: "URL", help: `Redis URL (default: $REDIS_URL or ${DEFAULT_REDIS_URL})` },
  json: { help: "machine output: one JSON document on stdout" },
  // Set for the whole process through the environment, so every connection
  // a command opens (its API, a worker's fetch lanes, a swarm's children)
  // reads the same value (Sidekiq's network_timeout).
  "network-timeout": {
    value: "S",
    help: `seconds a Redis connection may stay silent before it is made again\n(default: $${NETWORK_TIMEOUT_ENV} or 3, as Sidekiq 8)`,
    parse: (v: string, flag: string) => void (process.env[NETWORK_TIMEOUT_ENV] = String(positive("seconds")(v, flag))),
  },
  help: { short: "h", help: "this help" },
  version: { help: "the version of sidekiq-bridge" },
} as const satisfies Flags;

function sharedFlags(spec: CommandSpec<Flags>): Flags {
  const { redis, json, ...always } = SHARED;
  return {
    ...(spec.redis === false ? {} : { redis }),
    ...(spec.json ? { json: typeof spec.json === "string" ? { help: spec.json } : json } : {}),
    ...always,
  };
}

// ---- flag values ----

/** An integer from `min` (to `max`). */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER): (v: string, flag: string) => number {
  return (v, flag) => {
    if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`${flag} must be an integer >= ${min}, got "${v}"`);
    if (Number(v) > max) throw new UsageError(`${flag} must be at most ${max}, got ${v}`);
    return Number(v);
  };
}

/** A positive number (`unit`: what it counts, for the message). */
export function positive(unit?: string): (v: string, flag: string) => number {
  return (v, flag) => {
    const n = Number(v);
    if (v.trim() === "" || !Number.isFinite(n) || n <= 0)
      throw new UsageError(`${flag} must be a positive number${unit ? ` of ${unit}` : ""}, got "${v}"`);
    return n;
  };
}

/** A Sidekiq version or dialect: "7.3.2", 6, 7, 8. */
export function version(v: string, flag: string): string {
  try {
    profileFor(v);
  } catch (e) {
    throw new UsageError(`${flag}: ${(e as Error).message}`);
  }
  return v;
}

/** --dialect: a version or dialect, or auto (what the live Ruby fleet reads). */
export const dialect = (v: string, flag: string): string => (v === "auto" ? v : version(v, flag));

// ---- help ----

/** --network-timeout's lines in the help, for main's. */
export const NETWORK_TIMEOUT_FLAG = flagHelp("network-timeout", SHARED["network-timeout"]);

/** A flag's lines in the help: the names, then its help from column 30. */
export function flagHelp(name: string, f: Flag): string {
  const label = `--${name}${f.value ? ` ${f.value}` : ""}`;
  const [first, ...more] = f.help.split("\n");
  const head = `  ${f.short ? `-${f.short}, ` : "    "}${label.padEnd(Math.max(24, label.length + 2))}${first}`;
  return [head, ...more.map((l) => `${" ".repeat(30)}${l}`)].join("\n");
}

const table = (flags: Flags) =>
  Object.entries(flags)
    .map(([n, f]) => flagHelp(n, f))
    .join("\n");

const indent = (text: string, n: number) =>
  text
    .split("\n")
    .map((l) => (l ? `${" ".repeat(n)}${l}` : l))
    .join("\n");

function usageLines(name: string, usage: string | readonly string[]): string {
  const lines = typeof usage === "string" ? [usage] : usage;
  return lines.map((u, i) => `${i ? "      " : "Usage:"} sidekiq-bridge ${name} ${u}`).join("\n");
}

function helpOf(spec: CommandSpec<Flags>): string {
  const parts = [usageLines(spec.name, spec.usage)];
  if (spec.about) parts.push(spec.about);
  if (spec.actions)
    parts.push(
      `Actions:\n${Object.entries(spec.actions)
        .map(([a, h]) => `  ${a.padEnd(13)} ${h}`)
        .join("\n")}`,
    );
  parts.push(`Options:\n${table({ ...spec.flags, ...sharedFlags(spec) })}`);
  if (spec.footer) parts.push(spec.footer);
  return parts.join("\n\n");
}

/** "a, b or c". */
function either(words: readonly string[]): string {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

// ---- parsing and running ----

/** A command's flags, its own and the shared ones, as node:util parseArgs takes them. */
export function parseArgsOptions(spec: CommandSpec<Flags>) {
  return Object.fromEntries(
    Object.entries({ ...spec.flags, ...sharedFlags(spec) }).map(([n, f]) => [
      n,
      { type: f.value ? "string" : "boolean", multiple: !!f.multiple, ...(f.short ? { short: f.short } : {}) } as const,
    ]),
  );
}

/** Parses argv by the command's flags; a bad flag, value or argument is a UsageError. */
export function parse<F extends Flags>(spec: CommandSpec<F>, argv: string[]): Omit<Args<F>, "setUrl"> {
  const flags: Flags = { ...spec.flags, ...sharedFlags(spec as CommandSpec<Flags>) };
  const options = parseArgsOptions(spec as CommandSpec<Flags>);
  let given: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    given = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (e) {
    if (((e as NodeJS.ErrnoException).code ?? "").startsWith("ERR_PARSE_ARGS"))
      throw new UsageError((e as Error).message);
    throw e;
  }
  const values: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(flags)) {
    const v = given.values[name];
    const check = (s: string | boolean) => {
      if (!f.parse || typeof s !== "string") return s;
      try {
        return f.parse(s, `--${name}`);
      } catch (e) {
        // A value its parser refuses is a usage error, whoever wrote the parser (an add-on's flag).
        throw e instanceof UsageError ? e : new UsageError((e as Error).message);
      }
    };
    values[name] =
      v === undefined
        ? (f.default ?? (f.multiple ? [] : f.value ? undefined : false))
        : Array.isArray(v)
          ? v.map(check)
          : check(v);
  }
  let positionals = given.positionals;
  let action = "";
  if (spec.actions) {
    const names = Object.keys(spec.actions);
    [action = names[0]!, ...positionals] = positionals;
    if (!names.includes(action))
      throw new UsageError(`unknown action "${action}" for ${spec.name}: use ${either(names)}`);
  }
  if (positionals.length > (spec.positionals ?? 0))
    throw new UsageError(`unexpected argument "${positionals[spec.positionals ?? 0]}"`);
  return { values: values as Values<F>, action, positionals, argv };
}

/** Prints what --help or --version ask for, if argv asks (anywhere: as before any other check). */
function answered(argv: readonly string[], help: string): boolean {
  if (argv.includes("--help") || argv.includes("-h")) console.log(help);
  else if (argv.includes("--version")) console.log(cliVersion());
  else return false;
  return true;
}

/**
 * Runs a command's body with the CLI's exit codes: a UsageError prints the
 * message and `Run 'sidekiq-bridge <name> --help'` (2), any other error its
 * message with the Redis URL masked (1), or goes to main with "throw".
 */
async function report(
  name: string,
  failures: "report" | "throw",
  body: (setUrl: (url: string) => void) => Promise<number>,
): Promise<number> {
  let url: string | undefined;
  try {
    return await body((u) => void (url = u));
  } catch (e) {
    if (!(e instanceof UsageError) && failures === "throw") throw e;
    const text = e instanceof Error ? e.message : String(e);
    // An ACL refusal: the one line naming the permission, not Redis's reply.
    const msg = scrub(permissionLine(text, aclUser(url)) ?? text, url);
    const usage = e instanceof UsageError ? `\nRun 'sidekiq-bridge ${name} --help' for usage.` : "";
    process.stderr.write(`sidekiq-bridge ${name}: ${msg}${usage}\n`);
    return usage ? 2 : 1;
  }
}

/** The ACL user a Redis URL logs in as (undefined: the default user). */
function aclUser(url: string | undefined): string | undefined {
  try {
    return url === undefined ? undefined : decodeURIComponent(new URL(url).username) || undefined;
  } catch {
    return undefined;
  }
}

/** A declaration, typed by its flags (a subcommand's, for commandGroup). */
export function commandSpec<const F extends Flags>(spec: CommandSpec<F>): CommandSpec<F> {
  return spec;
}

/** A command from its declaration. */
export function command<const F extends Flags>(spec: CommandSpec<F>): CommandModule {
  const help = helpOf(spec as CommandSpec<Flags>);
  return {
    summary: spec.summary,
    help,
    run: async (argv) =>
      answered(argv, help)
        ? 0
        : report(spec.name, spec.failures ?? "report", (setUrl) => spec.run({ ...parse(spec, argv), setUrl })),
  };
}

export interface GroupSpec {
  readonly name: string;
  readonly summary: string;
  /** Its subcommands, by the word that names them (each spec's name: "<group> <word>"). */
  readonly subcommands: Readonly<Record<string, CommandSpec<Flags>>>;
  readonly footer?: string;
}

/**
 * A command of subcommands (`migrate audit`): its help lists each one's usage,
 * what it does and its flags; `<name> <sub> --help` is that subcommand's alone.
 */
export function commandGroup(group: GroupSpec): CommandModule {
  const subs = group.subcommands;
  const words = Object.keys(subs);
  const blocks = Object.entries(subs).map(([word, s]) => {
    const usage = (typeof s.usage === "string" ? [s.usage] : s.usage).map((u) => `  ${word} ${u}`);
    return `${usage.join("\n")}\n${indent(s.about ?? s.summary, 8)}${s.flags ? `\n${table(s.flags)}` : ""}`;
  });
  const shared = sharedFlags(Object.values(subs)[0]!);
  const help = [
    usageLines(group.name, `<${words.join("|")}> [options]`),
    `Subcommands:\n${blocks.join("\n\n")}`,
    `Options of every subcommand:\n${table(shared)}`,
    ...(group.footer ? [group.footer] : []),
  ].join("\n\n");
  const modules = Object.fromEntries(
    Object.entries(subs).map(([w, s]) => [w, command({ ...s, footer: s.footer ?? group.footer })]),
  );
  return {
    summary: group.summary,
    help,
    run: async (argv) => {
      const [word, ...rest] = argv;
      const sub = word !== undefined && Object.hasOwn(modules, word) ? modules[word]! : undefined;
      if (sub) return sub.run(rest);
      if (answered(argv, help)) return 0;
      return report(group.name, "report", () => {
        throw new UsageError(
          word === undefined
            ? `name a subcommand: ${either(words)}`
            : `unknown subcommand "${word}": use ${either(words)}`,
        );
      });
    },
  };
}
