#!/usr/bin/env -S node --max-semi-space-size=2
// sidekiq-bridge command line. Each command lives in its own module,
// `<name>-command.ts`, exporting `summary`, `help` and `run(argv)`.

interface CommandModule {
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

// name -> [module file, export holding the command (default: the module itself)].
// A command whose module is not there yet is simply not offered.
const COMMANDS: Record<string, [file: string, exportName?: string]> = {
  worker: ["worker"],
  enqueue: ["enqueue"],
  stats: ["stats"],
  queues: ["queues"],
  processes: ["processes"],
  scheduled: ["sorted-set", "scheduled"],
  retries: ["sorted-set", "retries"],
  dead: ["sorted-set", "dead"],
  quiet: ["signal", "quiet"],
  stop: ["signal", "stop"],
  migrate: ["migrate"],
  export: ["export"],
  import: ["import"],
  cron: ["cron"],
};

async function load(name: string): Promise<CommandModule | undefined> {
  const [file, exportName] = COMMANDS[name]!;
  try {
    const mod = (await import(`./${file}-command.js`)) as Record<string, unknown>;
    return (exportName ? mod[exportName] : mod) as CommandModule;
  } catch (e) {
    // Only the command's own module missing means "not offered"; anything else is a bug to show.
    if (
      (e as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" &&
      (e as Error).message.includes(`${file}-command.`)
    )
      return undefined;
    throw e;
  }
}

async function help(): Promise<string> {
  const lines: string[] = [];
  for (const name of Object.keys(COMMANDS)) {
    const m = await load(name);
    if (m) lines.push(`  ${name.padEnd(10)} ${m.summary}`);
  }
  return `Usage: sidekiq-bridge <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun sidekiq-bridge <command> --help for a command's options.\nREDIS_URL (or --redis) names the Redis; passwords in it are never printed.`;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === "-h" || cmd === "--help" || cmd === "help") {
    console.log(await help());
    return 0;
  }
  const mod = cmd in COMMANDS ? await load(cmd) : undefined;
  if (!mod) {
    console.error(`sidekiq-bridge: unknown command "${cmd}"\n\n${await help()}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(mod.help);
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
