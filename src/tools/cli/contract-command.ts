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
import { commandGroup, type CommandModule, commandSpec } from "./command.js";

/** Writes an --out file, making its folders first. */
function writeOut(out: string, text: string): void {
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, text);
}

/** How to pull the contract from the Ruby app (pull, check). */
const RUBY_FLAGS = {
  ruby: { value: "CMD", help: "how to run Ruby in the app" },
  app: { value: "NAME", help: "the app's name in the contract" },
  sig: { value: "DIR", help: "RBS signatures to read (repeatable)", multiple: true },
} as const;

/**
 * `sidekiq-bridge contract`. `addons`: the worker's add-ons, whose option
 * exports are not handlers, loaded only when needed (given by the command map,
 * src/assembly/main.ts).
 */
export function contractCommand(addons: () => Promise<readonly AuditAddon[]>): CommandModule {
  const pull = commandSpec({
    name: "contract pull",
    summary: "write the contract of the Ruby app's job classes",
    usage: '--ruby "CMD" [--out FILE] [--app NAME] [--sig DIR]... [FILE...]',
    about: `Runs the extractor shipped with sidekiq-bridge (ruby/contract-pull.rb)
inside the Ruby app and writes the contract (default sidekiq-contract.json).
CMD gets the script on stdin ("bundle exec ruby -", "bin/rails runner -"),
or in place of {script}. FILE... are required first (an app without Rails);
--sig reads RBS signatures (default: ./sig when present).`,
    flags: {
      ...RUBY_FLAGS,
      out: { value: "FILE", help: "where to write (default sidekiq-contract.json)", default: "sidekiq-contract.json" },
    },
    redis: false,
    positionals: Infinity,
    async run({ values, positionals }) {
      if (!values.ruby) throw new UsageError('say how to run Ruby in the app: --ruby "bundle exec ruby -"');
      const { out } = values;
      const { contract, notes } = await pullContract({
        ruby: values.ruby,
        ...(values.app ? { app: values.app } : {}),
        ...(values.sig.length ? { sig: values.sig } : {}),
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
    },
  });

  const gen = commandSpec({
    name: "contract gen",
    summary: "write the TypeScript types of contracts",
    usage: "[--out FILE] CONTRACT...",
    about: `Writes TypeScript (default sidekiq-contract.ts) that makes client.job(name)
and client.activeJob(name) take only the contract's classes, with their
argument tuples (RBS types where the app has them). Needs the optional
peer json-schema-to-typescript (a development dependency).`,
    flags: {
      out: { value: "FILE", help: "where to write (default sidekiq-contract.ts)", default: "sidekiq-contract.ts" },
    },
    redis: false,
    positionals: Infinity,
    async run({ values: { out }, positionals }) {
      if (positionals.length === 0)
        throw new UsageError("name the contract file(s): contract gen sidekiq-contract.json");
      const contracts = positionals.map((f) => readContractFile(f));
      writeOut(out, await generateTypes(contracts, await loadSchemaCompiler()));
      process.stdout.write(`wrote ${out}: the job classes of ${contracts.map((c) => c.app).join(", ")}\n`);
      return 0;
    },
  });

  /** Loads a handlers module and what it registers, with each handler's declared contract. */
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

  const exportCmd = commandSpec({
    name: "contract export",
    summary: "write the Node handlers' contract",
    usage: "-r HANDLERS [--app NAME] [--out FILE]",
    about: `Writes the Node handlers' contract (default node-contract.json): every class
HANDLERS registers, with the argument schema declared at register
({ contract: { args, options } }); a handler without one is unchecked.`,
    flags: {
      require: { short: "r", value: "HANDLERS", help: "the handlers module" },
      app: { value: "NAME", help: "the app's name in the contract (default node)", default: "node" },
      out: { value: "FILE", help: "where to write (default node-contract.json)", default: "node-contract.json" },
    },
    redis: false,
    async run({ values: { require, app, out } }) {
      if (!require) throw new UsageError("name the handlers module: contract export -r handlers.js");
      const contract = exportContract(app, await handlersOf(require, await addons()));
      writeOut(out, stringifyContract(contract));
      const all = Object.values(contract.classes);
      const unchecked = all.filter((c) => c.unchecked !== undefined).length;
      process.stdout.write(
        `wrote ${out}: ${all.length} handlers${unchecked ? `, ${unchecked} without an argument schema` : ""}\n`,
      );
      return 0;
    },
  });

  const stubs = commandSpec({
    name: "contract ruby-stubs",
    summary: "write Ruby classes for a Node contract's handlers",
    usage: "[--out FILE] CONTRACT",
    about: `Writes Ruby classes for a Node contract's handlers (default node_jobs.rb):
NodeJobs::<Class>.perform_async(...) checks the arity and pushes with the
handler's class name and options.`,
    flags: { out: { value: "FILE", help: "where to write (default node_jobs.rb)", default: "node_jobs.rb" } },
    redis: false,
    positionals: Infinity,
    async run({ values: { out }, positionals }) {
      if (positionals.length !== 1)
        throw new UsageError("name one Node contract: contract ruby-stubs node-contract.json");
      writeOut(out, rubyStubs(readContractFile(positionals[0]!), positionals[0]!));
      process.stdout.write(`wrote ${out}\n`);
      return 0;
    },
  });

  const check = commandSpec({
    name: "contract check",
    summary: "compare the app's contract with the committed one and the Node handlers",
    usage: '--committed FILE (--ruby "CMD" [pull options] [FILE...] | --current FILE) [-r HANDLERS]',
    about: `Compares the app's current contract (pulled now, or a file) with the
committed one, and with the Node handlers of HANDLERS; exits 1 on drift.`,
    flags: {
      committed: { value: "FILE", help: "the committed contract" },
      current: { value: "FILE", help: "the app's current contract, instead of pulling it" },
      ...RUBY_FLAGS,
      require: { short: "r", value: "HANDLERS", help: "the Node handlers module to compare too" },
    },
    redis: false,
    positionals: Infinity,
    async run({ values, positionals }) {
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
              ...(values.sig.length ? { sig: values.sig } : {}),
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
        const drift = handlerDrift([current], exportContract("node", await handlersOf(values.require, await addons())));
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
    },
  });

  return commandGroup({
    name: "contract",
    summary: "pull, generate and check the typed contract between Ruby job classes and Node",
    subcommands: { pull, gen, export: exportCmd, "ruby-stubs": stubs, check },
    footer: `Every problem the extractor meets (a class that fails to load, perform from
method_missing, a default JSON cannot carry) is one line on stderr and the
class is marked "unchecked" in the contract. An --out file's folders are made
when missing. See docs/CONTRACT.md.`,
  });
}
