#!/usr/bin/env node
// sidekiq-bridge command line.
import { workerCommand } from "./worker-command.js";

const HELP = `Usage: sidekiq-bridge <command> [options]

Commands:
  worker     run a Node worker in the Sidekiq fleet

Run sidekiq-bridge <command> --help for a command's options.`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case "worker":
      return workerCommand(rest);
    case undefined:
    case "-h":
    case "--help":
    case "help":
      console.log(HELP);
      return 0;
    default:
      console.error(`sidekiq-bridge: unknown command "${cmd}"\n\n${HELP}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`sidekiq-bridge: ${e.message}`);
    process.exit(1);
  },
);
