#!/usr/bin/env -S node --max-semi-space-size=2 --heap-growing-percent=50 --v8-pool-size=1
// sidekiq-bridge command line. Each command lives in its own module,
// `<name>-command.ts`, declared through command.ts, which parses its flags,
// writes its help and reports its errors. This map
// is the top layer's: it knows the add-ons, so it adds their commands and
// hands the commands that need them the add-ons' audit checks and tabs.

import { type CommandModule, NETWORK_TIMEOUT_FLAG } from "../tools/cli/command.js";
import { addonCommands, webTabs } from "./registry.js";
import { cliVersion } from "../tools/cli/version.js";

type Loader = () => Promise<CommandModule>;

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
  migrate: async () => (await import("../tools/cli/migrate-command.js")).migrateCommand(auditAddons),
  export: () => import("../tools/cli/export-command.js"),
  import: () => import("../tools/cli/import-command.js"),
  web: async () => (await import("../tools/cli/web-command.js")).webCommand(webTabs()),
  metrics: () => import("../tools/cli/metrics-command.js"),
  contract: async () => (await import("../tools/cli/contract-command.js")).contractCommand(auditAddons),
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
  return `Usage: sidekiq-bridge <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun sidekiq-bridge <command> --help for a command's options, --version for the version.\nREDIS_URL (or --redis) names the Redis; passwords in it are never printed.\nEvery command also takes:\n${NETWORK_TIMEOUT_FLAG}`;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === "-h" || cmd === "--help" || cmd === "help") {
    console.log(await help());
    return 0;
  }
  if (cmd === "--version") {
    console.log(cliVersion());
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, cmd)) {
    console.error(`sidekiq-bridge: unknown command "${cmd}"\n\n${await help()}`);
    return 2;
  }
  return (await load(cmd)).run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`sidekiq-bridge: ${e.message}`);
    process.exit(1);
  },
);
