// `sidekiq-bridge contract`: the typed contract between Ruby job classes and
// Node (docs/CONTRACT.md). Each subcommand lives in src/contract/.
import { writeFileSync } from "node:fs";
import { readContractFile, stringifyContract } from "../contract/document.js";
import { generateTypes, loadSchemaCompiler } from "../contract/gen.js";
import { pullContract } from "../contract/pull.js";
import { UsageError } from "./errors.js";
import { parseFlags } from "./flags.js";
import { runCommand } from "./run-command.js";

export const summary = "pull, generate and check the typed contract between Ruby job classes and Node";

export const help = `Usage: sidekiq-bridge contract <subcommand> [options]

Subcommands:
  pull --ruby "CMD" [--out FILE] [--app NAME] [--sig DIR]... [FILE...]
        Runs the extractor shipped with sidekiq-bridge (ruby/contract-pull.rb)
        inside the Ruby app and writes the contract (default sidekiq-contract.json).
        CMD gets the script on stdin ("bundle exec ruby -", "bin/rails runner -"),
        or in place of {script}. FILE... are required first (an app without Rails);
        --sig reads RBS signatures (default: ./sig when present).

  gen [--out FILE] CONTRACT...
        Writes TypeScript (default sidekiq-contract.ts) that makes client.job(name)
        and client.activeJob(name) take only the contract's classes, with their
        argument tuples (RBS types where the app has them). Needs the optional
        peer json-schema-to-typescript (a development dependency).

Every problem the extractor meets (a class that fails to load, perform from
method_missing, a default JSON cannot carry) is one line on stderr and the
class is marked "unchecked" in the contract. See docs/CONTRACT.md.`;

async function pull(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      ruby: { type: "string" },
      out: { type: "string" },
      app: { type: "string" },
      sig: { type: "string", multiple: true },
    },
    allowPositionals: true,
  });
  if (!values.ruby) throw new UsageError('say how to run Ruby in the app: --ruby "bundle exec ruby -"');
  const out = values.out ?? "sidekiq-contract.json";
  const { contract, notes } = await pullContract({
    ruby: values.ruby,
    ...(values.app ? { app: values.app } : {}),
    ...(values.sig ? { sig: values.sig } : {}),
    files: positionals,
    onNote: (l) => process.stderr.write(`${l}\n`),
  });
  writeFileSync(out, stringifyContract(contract));
  const classes = Object.values(contract.classes);
  const unchecked = classes.filter((c) => c.unchecked !== undefined).length;
  process.stdout.write(
    `wrote ${out}: ${classes.length} classes of ${contract.app}${unchecked ? `, ${unchecked} unchecked` : ""}${notes.length ? ` (${notes.length} notes above)` : ""}\n`,
  );
  return 0;
}

async function gen(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: { out: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length === 0) throw new UsageError("name the contract file(s): contract gen sidekiq-contract.json");
  const contracts = positionals.map((f) => readContractFile(f));
  const out = values.out ?? "sidekiq-contract.ts";
  writeFileSync(out, await generateTypes(contracts, await loadSchemaCompiler()));
  process.stdout.write(`wrote ${out}: the job classes of ${contracts.map((c) => c.app).join(", ")}\n`);
  return 0;
}

const SUBCOMMANDS: Record<string, (argv: string[]) => Promise<number>> = { pull, gen };

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  return runCommand(`contract${sub ? ` ${sub}` : ""}`, async () => {
    if (sub === undefined) throw new UsageError(`name a subcommand: ${Object.keys(SUBCOMMANDS).join(", ")}`);
    const fn = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
    if (!fn) throw new UsageError(`unknown subcommand "${sub}" (${Object.keys(SUBCOMMANDS).join(", ")})`);
    return fn(rest);
  });
}
