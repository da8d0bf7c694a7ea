// `sidekiq-bridge contract`: the typed contract between Ruby job classes and
// Node (docs/CONTRACT.md). Each subcommand lives in src/tools/contract/.
import { mkdirSync, writeFileSync } from "node:fs";
import { readContractFile, stringifyContract } from "../contract/document.js";
import { generateTypes, loadSchemaCompiler } from "../contract/gen.js";
import { pullContract } from "../contract/pull.js";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { contractHandlers as contractAuditCheckHandlers } from "../contract/audit-check.js";
import { contractChanges, handlerDrift } from "../contract/drift.js";
import { exportContract, type HandlerContract } from "../../core/contract/handlers.js";
import { rubyStubs } from "../contract/ruby-stubs.js";
import type { AuditAddon } from "../migration/extension.js";
import { collectHandlers, emptyHandlers } from "../migration/collect-handlers.js";
import { CommandError, UsageError } from "./errors.js";
import { parseFlags } from "./flags.js";
import { runCommand } from "./run-command.js";

export const summary = "pull, generate and check the typed contract between Ruby job classes and Node";

const SUBCOMMAND_HELP: Record<string, string> = {
  pull: `  pull --ruby "CMD" [--out FILE] [--app NAME] [--sig DIR]... [FILE...]
        Runs the extractor shipped with sidekiq-bridge (ruby/contract-pull.rb)
        inside the Ruby app and writes the contract (default sidekiq-contract.json).
        CMD gets the script on stdin ("bundle exec ruby -", "bin/rails runner -"),
        or in place of {script}. FILE... are required first (an app without Rails);
        --sig reads RBS signatures (default: ./sig when present).`,
  gen: `  gen [--out FILE] CONTRACT...
        Writes TypeScript (default sidekiq-contract.ts) that makes client.job(name)
        and client.activeJob(name) take only the contract's classes, with their
        argument tuples (RBS types where the app has them). Needs the optional
        peer json-schema-to-typescript (a development dependency).`,
  export: `  export -r HANDLERS [--app NAME] [--out FILE]
        Writes the Node handlers' contract (default node-contract.json): every class
        HANDLERS registers, with the argument schema declared at register
        ({ contract: { args, options } }); a handler without one is unchecked.`,
  "ruby-stubs": `  ruby-stubs [--out FILE] CONTRACT
        Writes Ruby classes for a Node contract's handlers (default node_jobs.rb):
        NodeJobs::<Class>.perform_async(...) checks the arity and pushes with the
        handler's class name and options.`,
  check: `  check --committed FILE (--ruby "CMD" [pull options] [FILE...] | --current FILE) [-r HANDLERS]
        Compares the app's current contract (pulled now, or a file) with the
        committed one, and with the Node handlers of HANDLERS; exits 1 on drift.`,
};

const FOOTER = `Every problem the extractor meets (a class that fails to load, perform from
method_missing, a default JSON cannot carry) is one line on stderr and the
class is marked "unchecked" in the contract. An --out file's folders are made
when missing. See docs/CONTRACT.md.`;

export const help = `Usage: sidekiq-bridge contract <subcommand> [options]

Subcommands:
${Object.values(SUBCOMMAND_HELP).join("\n\n")}

${FOOTER}`;

/** `contract <subcommand> --help`: that subcommand's help alone. */
export function helpFor(argv: readonly string[]): string {
  const sub = argv[0];
  if (sub === undefined || !Object.hasOwn(SUBCOMMAND_HELP, sub)) return help;
  return `Usage: sidekiq-bridge contract ${sub} [options]\n\n${SUBCOMMAND_HELP[sub]}\n\n${FOOTER}`;
}

/** Writes an --out file, making its folders first. */
function writeOut(out: string, text: string): void {
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, text);
}

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
  writeOut(out, stringifyContract(contract));
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
  writeOut(out, await generateTypes(contracts, await loadSchemaCompiler()));
  process.stdout.write(`wrote ${out}: the job classes of ${contracts.map((c) => c.app).join(", ")}\n`);
  return 0;
}

/**
 * Loads a handlers module and what it registers, with each handler's declared
 * contract (`addons`: the add-ons whose option exports are not handlers).
 */
async function handlersOf(
  path: string,
  addons: readonly AuditAddon[],
): Promise<Map<string, HandlerContract | undefined>> {
  const found = new Map<string, HandlerContract | undefined>();
  let mod: unknown;
  try {
    mod = await import(pathToFileURL(resolve(path)).href);
  } catch (e) {
    throw new CommandError(`cannot load the handlers module ${path}: ${(e as Error).message}`, { cause: e });
  }
  const into = await collectHandlers(mod, emptyHandlers(), addons);
  for (const name of into.classes) found.set(name, contractAuditCheckHandlers(into).get(name));
  return found;
}

async function exportCmd(argv: string[], addons: readonly AuditAddon[]): Promise<number> {
  const { values } = parseFlags({
    args: argv,
    options: { require: { type: "string", short: "r" }, app: { type: "string" }, out: { type: "string" } },
  });
  if (!values.require) throw new UsageError("name the handlers module: contract export -r handlers.js");
  const contract = exportContract(values.app ?? "node", await handlersOf(values.require, addons));
  const out = values.out ?? "node-contract.json";
  writeOut(out, stringifyContract(contract));
  const all = Object.values(contract.classes);
  const unchecked = all.filter((c) => c.unchecked !== undefined).length;
  process.stdout.write(
    `wrote ${out}: ${all.length} handlers${unchecked ? `, ${unchecked} without an argument schema` : ""}\n`,
  );
  return 0;
}

async function stubs(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: { out: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError("name one Node contract: contract ruby-stubs node-contract.json");
  const out = values.out ?? "node_jobs.rb";
  writeOut(out, rubyStubs(readContractFile(positionals[0]!), positionals[0]!));
  process.stdout.write(`wrote ${out}\n`);
  return 0;
}

async function check(argv: string[], addons: readonly AuditAddon[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      committed: { type: "string" },
      current: { type: "string" },
      ruby: { type: "string" },
      app: { type: "string" },
      sig: { type: "string", multiple: true },
      require: { type: "string", short: "r" },
    },
    allowPositionals: true,
  });
  if (!values.committed) throw new UsageError("name the committed contract: --committed sidekiq-contract.json");
  if (!values.current === !values.ruby)
    throw new UsageError('give the current contract: --ruby "CMD" or --current FILE');
  const committed = readContractFile(values.committed);
  const current = values.current
    ? readContractFile(values.current)
    : (
        await pullContract({
          ruby: values.ruby!,
          app: values.app ?? committed.app,
          ...(values.sig ? { sig: values.sig } : {}),
          files: positionals,
          onNote: (l) => process.stderr.write(`${l}\n`),
        })
      ).contract;
  const changes = contractChanges(committed, current);
  const lines: string[] = [];
  lines.push(
    changes.length
      ? `${values.committed} is out of date with the app (${changes.length}):`
      : `${values.committed} matches the app`,
  );
  for (const c of changes) lines.push(`  ${c}`);
  let differ: string[] = [];
  if (values.require) {
    const drift = handlerDrift([current], exportContract("node", await handlersOf(values.require, addons)));
    differ = drift.differ;
    lines.push(
      differ.length
        ? `Node handlers that differ from the Ruby classes (${differ.length}):`
        : "the Node handlers agree with the Ruby classes",
    );
    for (const d of differ) lines.push(`  ${d}`);
    if (drift.unchecked.length)
      lines.push(`unchecked (no argument schema): ${drift.unchecked.map((u) => u.split(":")[0]).join(", ")}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return changes.length + differ.length > 0 ? 1 : 0;
}

const SUBCOMMANDS: Record<string, (argv: string[], addons: readonly AuditAddon[]) => Promise<number>> = {
  pull,
  gen,
  export: exportCmd,
  "ruby-stubs": stubs,
  check,
};

/** `addons`: the worker's add-ons, given by the command map (src/assembly/main.ts). */
export async function run(argv: string[], addons: readonly AuditAddon[]): Promise<number> {
  const [sub, ...rest] = argv;
  return runCommand(`contract${sub ? ` ${sub}` : ""}`, async () => {
    if (sub === undefined) throw new UsageError(`name a subcommand: ${Object.keys(SUBCOMMANDS).join(", ")}`);
    const fn = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
    if (!fn) throw new UsageError(`unknown subcommand "${sub}" (${Object.keys(SUBCOMMANDS).join(", ")})`);
    return fn(rest, addons);
  });
}
