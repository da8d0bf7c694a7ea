#!/usr/bin/env -S node --max-semi-space-size=2 --heap-growing-percent=50
// sidekiq-bridge command line. Each command lives in its own module,
// `<name>-command.ts`, exporting `summary`, `help` and `run(argv)`. This map
// is the top layer's: it knows the add-ons, so it adds their commands and
// hands the commands that need them the add-ons' audit checks and tabs.

import type { CommandModule } from "../tools/cli/extension.js";
import { addonCommands, webTabs } from "./registry.js";
import { cliVersion } from "../tools/cli/version.js";
import { NETWORK_TIMEOUT_HELP, takeNetworkTimeout } from "../tools/cli/network-flag.js";

type Loader = () => Promise<CommandModule>;

/** A command whose run also takes what only this layer knows (the add-ons' audit checks or dashboard tabs). */
interface CommandTaking<A> extends Omit<CommandModule, "run"> {
  run(argv: string[], given: A): Promise<number>;
}

/** The command with `what` bound as its run's second argument, fetched when it runs. */
function given<A>(mod: CommandTaking<A>, what: () => A | Promise<A>): CommandModule {
  return {
    summary: mod.summary,
    help: mod.help,
    ...(mod.helpFor ? { helpFor: mod.helpFor } : {}),
    run: async (argv) => mod.run(argv, await what()),
  };
}

/** The add-ons' `migrate audit` checks, loaded only by the commands that audit. */
const auditAddons = async () => (await import("./audits.js")).auditAddons();

// name -> its module, loaded only when run (a literal import() each, so tools
// and bundlers see every command; the worker's code is not loaded for `stats`).
const COMMANDS: Record<string, Loader> = {
  worker: () => import("./worker-command.js"),
  enqueue: () => import("../tools/cli/enqueue-command.js"),
  stats: () => import("../tools/cli/stats-command.js"),
  queues: () => import("../tools/cli/queues-command.js"),
  processes: () => import("../tools/cli/processes-command.js"),
  scheduled: async () => (await import("../tools/cli/sorted-set-command.js")).scheduled,
  retries: async () => (await import("../tools/cli/sorted-set-command.js")).retries,
  dead: async () => (await import("../tools/cli/sorted-set-command.js")).dead,
  quiet: async () => (await import("../tools/cli/signal-command.js")).quiet,
  stop: async () => (await import("../tools/cli/signal-command.js")).stop,
  migrate: async () => given(await import("../tools/cli/migrate-command.js"), auditAddons),
  export: () => import("../tools/cli/export-command.js"),
  import: () => import("../tools/cli/import-command.js"),
  web: async () => given(await import("../tools/cli/web-command.js"), webTabs),
  metrics: () => import("../tools/cli/metrics-command.js"),
  contract: async () => given(await import("../tools/cli/contract-command.js"), auditAddons),
  // What the add-ons contribute (sidekiq-cron's `cron`).
  ...addonCommands(),
};

function load(name: string): Promise<CommandModule> {
  return COMMANDS[name]!();
}

async function help(): Promise<string> {
  const lines: string[] = [];
  for (const name of Object.keys(COMMANDS)) {
    lines.push(`  ${name.padEnd(10)} ${(await load(name)).summary}`);
  }
  return `Usage: sidekiq-bridge <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun sidekiq-bridge <command> --help for a command's options, --version for the version.\nREDIS_URL (or --redis) names the Redis; passwords in it are never printed.\nEvery command also takes:\n${NETWORK_TIMEOUT_HELP}`;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...flags] = argv;
  let rest: string[];
  try {
    rest = takeNetworkTimeout(flags);
  } catch (e) {
    console.error(`sidekiq-bridge: ${(e as Error).message}`);
    return 2;
  }
  if (cmd === undefined || cmd === "-h" || cmd === "--help" || cmd === "help") {
    console.log(await help());
    return 0;
  }
  if (cmd === "--version") {
    console.log(cliVersion());
    return 0;
  }
  const mod = Object.hasOwn(COMMANDS, cmd) ? await load(cmd) : undefined;
  if (!mod) {
    console.error(`sidekiq-bridge: unknown command "${cmd}"\n\n${await help()}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(mod.helpFor?.(rest) ?? mod.help);
    return 0;
  }
  if (rest.includes("--version")) {
    console.log(cliVersion());
    return 0;
  }
  return mod.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`sidekiq-bridge: ${e.message}`);
    process.exit(1);
  },
);
