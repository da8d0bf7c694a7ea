// Flag parsing shared by every command (node:util parseArgs, strict), the
// flags every API command takes, and the checks of flag values.
import { type ParseArgsConfig, parseArgs } from "node:util";
import { profileFor } from "../../core/wire/dialect.js";
import { UsageError } from "./errors.js";
import { DEFAULT_REDIS_URL } from "./redis-url.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Flags every API command takes. */
export const COMMON_OPTIONS = {
  redis: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

export const COMMON_HELP = `      --redis URL             Redis URL (default: $REDIS_URL or ${DEFAULT_REDIS_URL})
      --json                  machine output: one JSON document on stdout
  -h, --help                  this help
      --version               the version of sidekiq-bridge`;

/** parseArgs (strict unless said otherwise), with its errors turned into UsageErrors. */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs<T>({ strict: true, ...config });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (code.startsWith("ERR_PARSE_ARGS")) throw new UsageError((e as Error).message);
    throw e;
  }
}

/** A non-negative integer flag. */
export function intFlag(name: string, v: string | undefined, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`--${name} must be an integer >= ${min}, got "${v}"`);
  return Number(v);
}

/** --api-version: a Sidekiq version or dialect whose API rules to follow. */
export function apiVersionFlag(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  try {
    profileFor(v);
  } catch (e) {
    throw new UsageError(`--api-version: ${(e as Error).message}`);
  }
  return v;
}
